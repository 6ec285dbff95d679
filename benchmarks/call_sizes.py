"""Time by call size: one thread against every core, for batches of a few to many thousand characters.

The first N sentences of a gold file (spaces removed) are segmented in `segment_batch` calls of
~SIZE characters each (bench.measure.timed_chunks: consecutive sentences, each call ending with
the one that reaches SIZE), for each SIZE, by three Segmenters, each in a process of its own
(a clean cache, no thread of another setting):

    one thread     Segmenter(num_threads=1)
    threads        Segmenter(processes=False): the process's threads only (a server's)
    default        Segmenter(): threads, and helper processes from processes.PROCESS_CHARS

Each process warms up on the whole input twice (with a pause, so that the default's helper is up),
then times PASSES passes per size and keeps the best; the settings run in turns, ROUNDS times,
and the table gives each one's best. A row's `× one thread` is one thread's time over the
setting's: below 1, the cores made that call size slower. The words are the same in every
setting (tests/test_cores_default.py, test_processes.py); this measures time alone.

    python benchmarks/call_sizes.py --markdown benchmarks/results/call_sizes.md
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT.parent / "shared" / "corpora" / "gold" / "pku_test.txt"
SETTINGS = {"one thread": {"num_threads": 1}, "threads": {"processes": False}, "default": {}}
SIZES = (2_048, 4_096, 8_192, 16_384, 40_000, 0)  # 0: the whole input in one call

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from segmenter import Segmenter
from segmenter.bench.measure import timed_chunks

if __name__ == "__main__":
    texts, options, sizes, passes = json.load(sys.stdin)
    segmenter = Segmenter(**options)
    segmenter.segment_batch(texts)
    time.sleep(1.5)  # the default's helper process starts in the background meanwhile
    segmenter.segment_batch(texts)
    seconds = {}
    for size in sizes:
        calls = timed_chunks(texts, size) if size else [texts]
        for call in calls:
            segmenter.segment_batch(call)
        best = float("inf")
        for _ in range(passes):
            start = time.perf_counter()
            for call in calls:
                segmenter.segment_batch(call)
            best = min(best, time.perf_counter() - start)
        seconds[size] = best
    print(json.dumps(seconds))
"""


def run_setting(texts: list[str], options: dict, sizes, passes: int) -> dict[int, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], input=json.dumps([texts, options, list(sizes), passes]),
                          capture_output=True, text=True, check=True, timeout=1800)
    return {int(size): value for size, value in json.loads(done.stdout).items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, default=GOLD)
    parser.add_argument("--limit", type=int, default=1000, help="sentences (default 1000)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="characters a call; 0: all at once")
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--markdown", type=Path, help="write the table there too")
    args = parser.parse_args(argv)

    from segmenter.train.corpus import read_gold

    texts = ["".join(words) for words in read_gold(args.gold, args.limit)]
    chars = sum(map(len, texts))
    best = {name: dict.fromkeys(args.sizes, float("inf")) for name in SETTINGS}
    started = time.time()
    for _ in range(args.rounds):
        for name, options in SETTINGS.items():
            for size, seconds in run_setting(texts, options, args.sizes, args.passes).items():
                best[name][size] = min(best[name][size], seconds)

    from segmenter.bench.report import host_info, machine_line

    command = "python benchmarks/call_sizes.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    labels = [f"{size:,}" if size else f"all ({chars:,})" for size in args.sizes]
    out = [
        "# Time by call size", "",
        f"Command: `{command}` ({time.time() - started:.0f} s). Machine: {machine_line(host_info(('segmenter',)))}. "
        f"{args.gold.name}, first {len(texts)} sentences ({chars:,} characters), spaces removed, in `segment_batch` "
        f"calls of about the characters of each column; ms for the whole input, the best of {args.passes} passes "
        f"in each of {args.rounds} rounds, each setting in a process of its own (the script's docstring).", "",
        "| setting | " + " | ".join(labels) + " |", "|---|" + "--:|" * len(labels),
    ]
    one = best["one thread"]
    for name in SETTINGS:
        cells = [f"{1000 * best[name][s]:.0f}" + ("" if name == "one thread" else f" ({one[s] / best[name][s]:.2f}×)")
                 for s in args.sizes]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "(×: one thread's time over the setting's; below 1, the cores made that call size slower.)"]
    text = "\n".join(out) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
