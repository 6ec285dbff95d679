"""Build the word-statistics table (ngrams.npz) that word-level decoding reads, from raw text.

Example (the table the embedded models ship: all of both files, 51.5 M Han characters, 19 min):
  segmenter ngrams --raw ../shared/corpora/raw/pretrain_raw.txt ../shared/corpora/raw/extra_raw.txt \\
      --min-count 10 --out segmenter/models/default

It also fits the unigram word model that the decoder adds per word (train/unigram.py: EM over
the same text, --unigram-rounds; 0 leaves it out). Then `Segmenter(decode="words")` uses it (a
model folder without it keeps `decode="threshold"`). Raw text only: never pass gold files.
Counting 8 M characters takes one to two minutes on one core; all 59 M characters of both files
take 19 minutes and 14 GB of memory.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import CLIError
from .options import check_raw


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--raw", nargs="+", required=True, metavar="FILE", help="raw UTF-8 text, one text a line")
    parser.add_argument("--out", required=True, metavar="DIR_OR_FILE",
                        help="model folder (writes ngrams.npz there) or a .npz file name")
    parser.add_argument("--chars", nargs="+", type=int, default=None, metavar="N",
                        help="read at most N characters of each file (one N for all, or one per file; default: all)")
    parser.add_argument("--max-n", type=int, default=6, help="longest n-gram counted (default: 6)")
    parser.add_argument("--min-count", type=int, default=10, help="keep n-grams seen at least this often (default: 10)")
    parser.add_argument("--unigram-rounds", type=int, default=8,
                        help="EM rounds of the unigram word model over the same text (default: 8; 0: no model)")
    parser.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    from ..wordstats import WordTable, sample_raw_lines

    check_raw(args.raw)
    chars = args.chars or [None]
    if len(chars) == 1:
        chars = chars * len(args.raw)
    if len(chars) != len(args.raw) or any(c is not None and c < 1 for c in chars):
        raise CLIError(f"--chars takes one positive number, or one per --raw file ({len(args.raw)}), got {args.chars}")
    if args.max_n < 1 or args.min_count < 1:
        raise CLIError(f"--max-n and --min-count must be at least 1, got {args.max_n} and {args.min_count}")
    if args.unigram_rounds < 0:
        raise CLIError(f"--unigram-rounds must be 0 (no model) or more, got {args.unigram_rounds}")
    out = Path(args.out)
    if not out.is_dir() and out.suffix != ".npz":
        raise CLIError(f"--out {out}: expected an existing model folder or a file name ending in .npz")
    started = time.time()
    try:
        lines = sample_raw_lines(args.raw, chars)
        table = WordTable.from_texts(lines, max_n=args.max_n, min_count=args.min_count)
        if args.unigram_rounds:
            from ..train.unigram import fit_unigram

            table = table.with_unigram(fit_unigram(table, lines, args.unigram_rounds))
    except (OSError, ValueError) as err:
        raise CLIError(str(err)) from None
    path = table.save(out)
    if (path.parent / "config.json").is_file():  # a model folder: its entry in checksums.json (integrity.py)
        from ..integrity import update_manifest

        update_manifest(path.parent, [path.name])
    if not args.quiet:
        print(f"wrote {path}: {len(table):,} n-grams (n <= {args.max_n}, seen >= {args.min_count} times) from "
              f"{table.info['chars']:,} Han characters{', with a unigram word model' if table.unigram else ''}, "
              f"{path.stat().st_size / 2**20:.1f} MiB, {time.time() - started:.0f} s")
    return 0
