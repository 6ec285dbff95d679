"""`segmenter ray` on many files with one actor killed mid-way (issue 26, item 7): does the run
finish, and is every output the serial `segmenter` output, every line once?

    python benchmarks/ray_scale.py --files 1000 --report benchmarks/results/reliability.md

Inputs: FILES files of 20-50 lines (seeded) of the shared dev gold files
(../shared/corpora/gold/*_dev.txt) with their spaces removed, taken in turn from each corpus.
The Ray run: `python -m segmenter ray IN/*.txt OUT --local-cpus C --cpus-per-actor 0.5`
with SEGMENTER_RAY_KILL=N:MARKER (segmenter/scale/ray.py, SegmentBatch): the first actor that
reaches its N-th batch dies with os._exit(1); Ray restarts it and runs its batches again.
MARKER.log (one line per actor start and per batch) gives the actor starts and the batches that
ran twice. The serial reference: ONE `python -m segmenter IN/*.txt --threads 1 -q` (the files'
lines one after the other on stdout), cut back into files by their line counts. Both sides use
one engine thread per process (the actors get 0.5 CPU: one thread), so the arithmetic is the same.
"""
from __future__ import annotations

import argparse
import datetime
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO.parent / "shared" / "corpora" / "gold"
sys.path.insert(0, str(REPO))

from segmenter.run.lines import split_lines  # noqa: E402


def dev_lines() -> list[list[str]]:
    """The dev gold files' non-empty lines with spaces removed, one list per corpus."""
    corpora = []
    for path in sorted(GOLD.glob("*_dev.txt")):
        lines = [re.sub(r"\s+", "", line) for line in path.read_text(encoding="utf-8").split("\n")]
        corpora.append([line for line in lines if line])
    return corpora


def write_inputs(folder: Path, files: int, low: int, high: int, seed: int) -> tuple[int, int]:
    corpora, rng = dev_lines(), random.Random(seed)
    cursors = [0] * len(corpora)
    lines = chars = 0
    for number in range(files):
        which = number % len(corpora)
        corpus, count = corpora[which], rng.randint(low, high)
        chunk = [corpus[(cursors[which] + i) % len(corpus)] for i in range(count)]
        cursors[which] += count
        (folder / f"f{number:04d}.txt").write_text("\n".join(chunk) + "\n", encoding="utf-8")
        lines, chars = lines + count, chars + sum(map(len, chunk))
    return lines, chars


def run(command: list[str], log: Path, env: dict | None = None) -> tuple[int, float]:
    started = time.perf_counter()
    with open(log, "wb") as stderr:
        code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env, check=False).returncode
    return code, time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--lines", type=int, nargs=2, default=[20, 50], metavar=("MIN", "MAX"), help="lines per file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kill-at", type=int, default=5, help="the batch (of one actor) at which it dies")
    parser.add_argument("--local-cpus", type=int, default=2)
    parser.add_argument("--cpus-per-actor", type=float, default=0.5)
    parser.add_argument("--lines-per-batch", type=int, default=256)
    parser.add_argument("--model", default=None, help="default: the embedded model")
    parser.add_argument("--report", type=Path, default=None, help="append the markdown section to this file")
    parser.add_argument("--ray-log", type=Path, default=None, help="keep the Ray run's stderr and MARKER.log here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="segmenter-rayscale-") as work:
        work = Path(work)
        inputs, out = work / "in", work / "out"
        inputs.mkdir()
        lines, chars = write_inputs(inputs, args.files, *args.lines, args.seed)
        names = sorted(p.name for p in inputs.glob("*.txt"))
        print(f"{args.files} files, {lines} lines, {chars} characters", flush=True)
        model = ["-m", args.model] if args.model else []

        marker = work / "killed"
        env = {**os.environ, "SEGMENTER_RAY_KILL": f"{args.kill_at}:{marker}", "PYTHONPATH": str(REPO)}
        ray_command = [sys.executable, "-m", "segmenter", "ray", str(inputs / "*.txt"), str(out), *model,
                       "--local-cpus", str(args.local_cpus), "--cpus-per-actor", str(args.cpus_per_actor),
                       "--lines-per-batch", str(args.lines_per_batch)]
        code, ray_seconds = run(ray_command, work / "ray.log", env)
        stderr = (work / "ray.log").read_text(encoding="utf-8", errors="replace")
        summary = re.search(r"^(\d+) files, (\d+) lines, .*, (\d+) actors\).*$", stderr, re.MULTILINE)
        print(f"segmenter ray: exit {code}, {ray_seconds:.1f} s; {summary.group(0) if summary else 'no summary'}",
              flush=True)
        if code != 0:
            print(stderr[-5000:], file=sys.stderr)
        events = (work / "killed.log").read_text(encoding="utf-8").split("\n")[:-1] if marker.exists() else []
        if args.ray_log:
            args.ray_log.write_text(stderr + "\n--- MARKER.log\n" + "\n".join(events) + "\n", encoding="utf-8")
        killed = sum(" killed " in e for e in events)
        killed_at = [e.split(" ", 2)[2].replace(str(inputs) + os.sep, "") for e in events if " killed " in e]
        starts = sum(e.endswith(" start") for e in events)
        batches = Counter(e.split(" ", 2)[2] for e in events if " batch " in e)
        twice = sum(1 for n in batches.values() if n > 1)
        actors = int(summary.group(3)) if summary else 0
        duplicates = re.search(r"\((\d+) lines computed twice", stderr)

        serial_command = [sys.executable, "-m", "segmenter", *(str(inputs / n) for n in names), *model,
                          "--threads", "1", "-q"]
        started = time.perf_counter()
        serial = subprocess.run(serial_command, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                                check=False)
        serial_seconds = time.perf_counter() - started
        rows = serial.stdout.split(b"\n")
        identical = missing = 0
        at = 0
        for name in names:
            count = len(split_lines((inputs / name).read_bytes()))
            expected = b"".join(row + b"\n" for row in rows[at:at + count])
            at += count
            target = out / name
            if not target.exists():
                missing += 1
            elif target.read_bytes() == expected:
                identical += 1
        out_lines = sum(len(split_lines(p.read_bytes())) for p in out.glob("*.txt"))
        leftovers = len(list(out.rglob("*.part")))
        print(f"serial: exit {serial.returncode}, {serial_seconds:.1f} s; identical {identical}/{len(names)}, "
              f"missing {missing}, output lines {out_lines}/{lines}", flush=True)

    quoted = " ".join(a if re.fullmatch(r"[\w./:=-]+", a) else f"'{a}'" for a in ray_command[1:])
    quoted = quoted.replace(str(inputs), "IN").replace(str(out), "OUT")
    section = f"""
## Ray at scale: `segmenter ray` with one actor killed mid-way (issue 26, item 7)

    python benchmarks/ray_scale.py --files {args.files}{' --report ' + str(args.report) if args.report else ''}

Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Ray command
(`SEGMENTER_RAY_KILL={args.kill_at}:MARKER`): `python {quoted}`; serial reference:
`python -m segmenter IN/f0000.txt … --threads 1 -q`, cut into files by their line counts.

| files | lines | characters | actors | killed actors (batch's first line) | actor starts | batches run twice | lines computed twice (writer) | seconds (ray) | seconds (serial) | exit | outputs identical | missing | output lines | .part left |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|
| {args.files:,} | {lines:,} | {chars:,} | {actors} | {killed} ({', '.join(killed_at)}) | {starts} | {twice} | {duplicates.group(1) if duplicates else 0} | {ray_seconds:.1f} | {serial_seconds:.1f} | {code} | **{identical:,} / {len(names):,}** | {missing} | {out_lines:,} | {leftovers} |
"""
    print(section)
    if args.report:
        with open(args.report, "a", encoding="utf-8") as report:
            report.write(section)
    ok = code == 0 and serial.returncode == 0 and identical == len(names) and out_lines == lines and killed == 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
