"""Time and peak memory of `segmenter FILE -o OUT` on ONE line without a newline, of N million
characters of Han text (the shared raw corpus with its newlines removed, repeated if needed).

    python benchmarks/long_line.py --sizes 1 10 --threads 1

Sizes are in millions of CHARACTERS (the UTF-8 file is about 3x that in bytes). Peak RSS is the
child's own (os.wait4 -> ru_maxrss), as benchmarks/memory.py measures it. The output is checked
to be the input (-d '': words joined by nothing).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "raw" / "pretrain_raw.txt"


def han_text(chars: int) -> str:
    with open(CORPUS, encoding="utf-8", errors="replace") as handle:
        text = handle.read(chars + chars // 20 + 1000).replace("\n", "")
    while len(text) < chars:
        text += text
    return text[:chars]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10], help="millions of characters")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per run")
    args = parser.parse_args(argv)
    print(f"{'M chars':>8} {'MB (bytes)':>10} {'seconds':>8} {'chars/s':>9} {'peak RSS MB':>12} {'lossless':>8}", flush=True)
    with tempfile.TemporaryDirectory(prefix="segmenter-longline-") as work:
        for size in args.sizes:
            text = han_text(int(size * 1_000_000))
            path, out = Path(work) / "in.txt", Path(work) / "out.txt"
            path.write_text(text, encoding="utf-8")
            nbytes = path.stat().st_size
            command = [sys.executable, "-m", "segmenter", str(path), "-o", str(out), "-d", "", "-q"]
            if args.threads:
                command += ["--threads", str(args.threads)]
            with tempfile.TemporaryFile() as stderr:
                started = time.perf_counter()
                child = subprocess.Popen(command, stderr=stderr)
                timer = threading.Timer(args.timeout, child.kill) if args.timeout else None
                if timer:
                    timer.start()
                _, status, usage = os.wait4(child.pid, 0)
                if timer:
                    timer.cancel()
                child.returncode = os.waitstatus_to_exitcode(status)
                seconds = time.perf_counter() - started
            rss = usage.ru_maxrss / 1024
            ok = out.is_file() and out.read_text(encoding="utf-8").rstrip("\n") == text
            print(f"{size:>8g} {nbytes / 1e6:>10.1f} {seconds:>8.1f} {len(text) / seconds:>9.0f} {rss:>12.1f} {str(ok):>8}"
                  f" rc={child.returncode}", flush=True)
            path.unlink()
            if out.exists():
                out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
