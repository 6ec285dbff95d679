"""Time, speed over the run and peak memory of `segmenter IN -o OUT` on big inputs (issue 26, item 4):
a file of many lines (up to a gigabyte) and one line without a newline (up to 100 MB).

    python benchmarks/big_input.py --file-mb 10 1000 --line-mb 1 10 100

Sizes are in MB of UTF-8 (10^6 bytes; Han text is 3 bytes a character). The text is the shared
raw corpus (pretrain_raw.txt then extra_raw.txt), cycled when the size asks for more; a line is
that text with its newlines removed. The CLI runs as a user runs it, with its defaults (workers
"auto": one process per core for a large input) unless --threads / --workers say otherwise, and
`-d ''`, so the output must be the input again: it is compared byte for byte, streamed.

Memory is the whole process tree's, sampled every --every seconds from /proc: the sum of the
resident sets (RSS, which counts a page shared by the workers once per process: the model's
mapped files, Python's libraries) and the sum of the proportional sets (PSS, which splits a shared
page between its processes: what the run costs the machine). Speed is taken from the output file's
growth between samples: characters per second in each tenth of the output, to show that it does
not fall as the input grows; and the largest PSS sum in each tenth of the run's time, to show that
memory does not climb.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RAW = REPO.parent / "shared" / "corpora" / "raw"
CORPORA = [RAW / "pretrain_raw.txt", RAW / "extra_raw.txt"]
MB = 1_000_000


def write_text(path: Path, nbytes: int, one_line: bool) -> int:
    """Write about `nbytes` bytes of the raw corpora to `path` (whole lines, or one line without a
    newline); return the number of characters written."""
    size = chars = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while size < nbytes:
            for corpus in CORPORA:
                with open(corpus, encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        line = line.rstrip("\n") if one_line else line
                        data = line.encode("utf-8")
                        if size + len(data) > nbytes and size:
                            return chars
                        out.write(line)
                        size, chars = size + len(data), chars + len(line)
    return chars


def tree(pid: int) -> list[int]:
    """pid and all its descendants (from /proc/*/task/*/children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    todo += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return found


def memory_kb(pids: list[int]) -> tuple[int, int, int]:
    """(sum of RSS, sum of PSS, largest RSS) in KiB over the processes, from smaps_rollup."""
    rss = pss = largest = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                fields = {line.split(":")[0]: int(line.split()[1]) for line in handle if line.split()[-1] == "kB"}
        except (OSError, ValueError, IndexError):
            continue
        rss, pss, largest = rss + fields.get("Rss", 0), pss + fields.get("Pss", 0), max(largest, fields.get("Rss", 0))
    return rss, pss, largest


def same_bytes(left: Path, right: Path, block: int = 1 << 24) -> bool:
    """Whether the output is the input, its one final newline aside (the CLI ends every line)."""
    if right.stat().st_size not in (left.stat().st_size, left.stat().st_size + 1):
        return False
    with open(left, "rb") as a, open(right, "rb") as b:
        while True:
            x = a.read(block)
            y = b.read(len(x)) if x else b.read()
            if not x:
                return y in (b"", b"\n")
            if x != y:
                return False


def run(path: Path, out: Path, chars: int, args) -> dict:
    command = [sys.executable, "-m", "segmenter", str(path), "-o", str(out), "-d", "", "-q", "-m", args.model]
    command += ["--threads", str(args.threads)] if args.threads else []
    command += ["--workers", str(args.workers)] if args.workers else []
    part_glob = f".{out.name}.*.part"  # the CLI writes to a hidden part file and renames it at the end
    samples = []  # (seconds, output bytes, RSS sum, PSS sum, largest RSS, processes)
    with tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(command, stderr=stderr)
        while child.poll() is None:
            time.sleep(args.every)
            parts = list(out.parent.glob(part_glob))
            written = parts[0].stat().st_size if parts else 0
            pids = tree(child.pid)
            samples.append((time.perf_counter() - started, written, *memory_kb(pids), len(pids)))
        seconds = time.perf_counter() - started
        if child.returncode:
            stderr.seek(0)
            raise SystemExit(f"`{' '.join(command)}` failed ({child.returncode}):\n{stderr.read().decode()[-2000:]}")
    total = out.stat().st_size
    tenths = []  # chars/s in each tenth of the output, from the samples that bound it
    for k in range(10):
        lo, hi = total * k / 10, total * (k + 1) / 10
        inside = [s for s in samples if lo <= s[1] <= hi]
        if len(inside) >= 2 and inside[-1][1] > inside[0][1]:
            share = (inside[-1][1] - inside[0][1]) / total
            tenths.append(round(share * chars / (inside[-1][0] - inside[0][0])))
    # The largest PSS sum in each tenth of the run's time: flat memory is the same figure in each.
    pss_tenths = [round(max((s[3] for s in samples if k * seconds / 10 <= s[0] < (k + 1) * seconds / 10),
                            default=0) / 1024) for k in range(10)]
    return {
        "seconds": round(seconds, 1), "chars_per_s": round(chars / seconds),
        "tenths_chars_per_s": tenths, "tenths_pss_mib": pss_tenths,
        "peak_rss_sum_mib": round(max((s[2] for s in samples), default=0) / 1024, 1),
        "peak_pss_sum_mib": round(max((s[3] for s in samples), default=0) / 1024, 1),
        "peak_rss_one_mib": round(max((s[4] for s in samples), default=0) / 1024, 1),
        "processes": max((s[5] for s in samples), default=1),
        "lossless": same_bytes(path, out),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--file-mb", type=float, nargs="*", default=[10], help="files of lines, MB")
    parser.add_argument("--line-mb", type=float, nargs="*", default=[1, 10], help="one line without a newline, MB")
    parser.add_argument("--model", default="default", help="the CLI's -m (default: default)")
    parser.add_argument("--threads", type=int, default=None, help="the CLI's --threads (default: its own)")
    parser.add_argument("--workers", default=None, help="the CLI's --workers (default: its own, auto)")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between memory samples")
    parser.add_argument("--work", type=Path, default=None, help="folder for the input and output (default: a temporary one)")
    args = parser.parse_args(argv)
    print(f"{'input':>16} {'chars':>12} {'seconds':>8} {'chars/s':>8} {'RSS sum':>8} {'PSS sum':>8} {'RSS max':>8}"
          f" {'lossless':>8}  chars/s by tenth of the output", flush=True)
    with tempfile.TemporaryDirectory(prefix="segmenter-big-", dir=args.work) as work:
        for kind, sizes in (("file", args.file_mb), ("line", args.line_mb)):
            for size in sizes:
                path, out = Path(work) / "in.txt", Path(work) / "out.txt"
                chars = write_text(path, int(size * MB), one_line=kind == "line")
                row = run(path, out, chars, args)
                print(f"{f'{size:g} MB {kind}':>16} {chars:>12,} {row['seconds']:>8} {row['chars_per_s']:>8,}"
                      f" {row['peak_rss_sum_mib']:>8} {row['peak_pss_sum_mib']:>8} {row['peak_rss_one_mib']:>8}"
                      f" {str(row['lossless']):>8}  {' '.join(f'{v:,}' for v in row['tenths_chars_per_s'])}"
                      f"  | PSS MiB by tenth of the time: {' '.join(map(str, row['tenths_pss_mib']))}", flush=True)
                path.unlink()
                out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
