"""Build segmenter/analyse/idf.txt.gz, the IDF table of the keyword extractors, from raw text.

Documents are lines: the non-empty lines of pretrain_raw.txt numbered (from 0) k * --pretrain-every,
and those of extra_raw.txt whose number modulo 10 is one of --extra-offsets, each segmented by
the embedded default model; idf = log(N / df) of the words seen in >= --min-df lines
(segmenter/train/idf.py). No gold file is read. Lines of extra_raw.txt numbered 5 modulo 10
never enter the sample: benchmarks/keywords.py takes held-out text from them.

The shipped table was built by (2 CPU cores shared with other jobs, the onnx engine, 1 process):

    python benchmarks/build_idf.py --pretrain-every 2 --extra-offsets 0,3,7 --min-df 2 \
        --out segmenter/analyse/idf.txt.gz

It printed: 442,589 documents, 20,137,099 characters, 1128 s (18.8 min; 15.8 min of CPU);
103,957 words (min-df 2), IDF 2.93..12.31, median 11.39; idf.txt.gz 0.50 MiB (1.6 MiB unzipped).
`--limit 50 --out /tmp/idf.txt.gz` is a smoke run of a few seconds.
"""
from __future__ import annotations

import argparse
import sys
import time
from itertools import chain
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.train.idf import build_idf, sample_lines, write_idf  # noqa: E402

RAW = ROOT.parent / "shared" / "corpora" / "raw"
HELD_OUT = 5  # extra_raw.txt lines numbered 5 modulo 10


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pretrain", default=str(RAW / "pretrain_raw.txt"))
    parser.add_argument("--extra", default=str(RAW / "extra_raw.txt"))
    parser.add_argument("--pretrain-every", type=int, default=2)
    parser.add_argument("--extra-offsets", default="0,3,7", help="line numbers modulo 10 to take (5 is held out)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many lines of each file (a smoke run)")
    parser.add_argument("--min-df", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "segmenter" / "analyse" / "idf.txt.gz"))
    args = parser.parse_args(argv)

    offsets = tuple(int(k) for k in args.extra_offsets.split(","))
    if HELD_OUT in offsets:
        parser.error(f"--extra-offsets: {HELD_OUT} is held out for benchmarks/keywords.py")
    lines = chain(sample_lines(args.pretrain, args.pretrain_every, limit=args.limit),
                  sample_lines(args.extra, 10, offsets, limit=args.limit))
    start = time.perf_counter()
    table, documents, chars = build_idf(lines, min_df=args.min_df, workers=args.workers, show_progress=True)
    seconds = time.perf_counter() - start
    out = write_idf(args.out, table)
    values = sorted(table.values())
    print(f"{documents:,} documents, {chars:,} characters, {seconds:.0f} s; {len(table):,} words "
          f"(min-df {args.min_df}), IDF {values[0]:.2f}..{values[-1]:.2f}, median {values[len(values) // 2]:.2f}; "
          f"{out} {out.stat().st_size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
