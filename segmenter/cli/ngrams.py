"""Build the word-statistics table (ngrams.npz) that word-level decoding reads, from raw text.

Example (the table the embedded models ship: all of both files, 51.5 M Han characters, 27 min):
  segmenter ngrams --raw ../shared/corpora/raw/pretrain_raw.txt ../shared/corpora/raw/extra_raw.txt \\
      --min-count 10 --rare-count 5 --out segmenter/model/shipped/default

It also fits the unigram word model that the decoder adds per word (train/unigram.py: EM over
the same text, --unigram-rounds; 0 leaves it out), and adds the text's rare words: strings seen
--rare-count times or more but fewer than --min-count, with an autonomy of --rare-autonomy or more
(train/rare_strings.py: 画蛇添足, seen 8 times; --rare-count 0 leaves them out). Then
`Segmenter(decode="words")` uses it (a model folder without it keeps `decode="threshold"`).
Raw text only: never pass gold files. Counting 8 M characters takes one to two minutes on one
core; all 59 M characters of both files take 27 minutes and 14 GB of memory.
"""
from __future__ import annotations

import argparse
import math
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
    parser.add_argument("--rare-count", type=int, default=None,
                        help="also keep strings seen this often, below --min-count, that read as words "
                             "(default: train/rare_strings.RARE_COUNT, 5; 0: none)")
    parser.add_argument("--rare-autonomy", type=float, default=None,
                        help="the autonomy (a z-score) a rare string needs (default: RARE_AUTONOMY, 2)")
    parser.add_argument("--unigram-rounds", type=int, default=8,
                        help="EM rounds of the unigram word model over the same text (default: 8; 0: no model)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or log lines, warnings only")


def run(args: argparse.Namespace) -> int:
    from ..train.ngram_counting import build_word_table, sample_raw_lines
    from ..train.rare_strings import RARE_AUTONOMY, RARE_COUNT, with_rare_strings

    check_raw(args.raw)
    chars = args.chars or [None]
    if len(chars) == 1:
        chars = chars * len(args.raw)
    if len(chars) != len(args.raw) or any(c is not None and c < 1 for c in chars):
        raise CLIError(f"--chars takes one positive number, or one per --raw file ({len(args.raw)}), got {args.chars}")
    if args.max_n < 1 or args.min_count < 1:
        raise CLIError(f"--max-n and --min-count must be at least 1, got {args.max_n} and {args.min_count}")
    args.rare_count = RARE_COUNT if args.rare_count is None else args.rare_count
    args.rare_autonomy = RARE_AUTONOMY if args.rare_autonomy is None else args.rare_autonomy
    if args.rare_count < 0 or math.isnan(args.rare_autonomy):
        raise CLIError(f"--rare-count must be 0 (none) or more and --rare-autonomy a number, got {args.rare_count} "
                       f"and {args.rare_autonomy}")
    rare = 0 < args.rare_count < args.min_count
    if args.unigram_rounds < 0:
        raise CLIError(f"--unigram-rounds must be 0 (no model) or more, got {args.unigram_rounds}")
    out = Path(args.out)
    if not out.is_dir() and out.suffix != ".npz":
        raise CLIError(f"--out {out}: expected an existing model folder or a file name ending in .npz")
    if not out.is_dir() and not out.parent.is_dir():  # found now, not after the counting (minutes)
        raise CLIError(f"--out {out}: its folder {out.parent} does not exist")
    started = time.time()
    try:
        lines = sample_raw_lines(args.raw, chars)
        # Counted once, down to the rare count: pruning keeps the autonomies (z-scored over all types).
        counted = build_word_table(lines, max_n=args.max_n, min_count=args.rare_count if rare else args.min_count)
        table = counted.pruned(args.min_count) if rare else counted
        if args.unigram_rounds:
            from ..train.unigram import fit_unigram

            table = table.with_unigram(fit_unigram(table, lines, args.unigram_rounds))
        if rare:
            frequent = len(table)
            table = with_rare_strings(table, counted, "\n".join(lines), args.rare_count, args.rare_autonomy)
    except (OSError, ValueError) as err:
        raise CLIError(str(err)) from None
    path = table.save(out)
    if (path.parent / "config.json").is_file():  # a model folder: its entry in checksums.json (integrity.py)
        from ..model.integrity import update_manifest

        update_manifest(path.parent, [path.name])
    if not args.quiet:
        seen = (f"{frequent:,} seen >= {args.min_count} times and {len(table) - frequent:,} rare words seen "
                f">= {args.rare_count}" if rare else f"seen >= {args.min_count} times")
        print(f"wrote {path}: {len(table):,} n-grams (n <= {args.max_n}, {seen}) from "
              f"{table.info['chars']:,} Han characters{', with a unigram word model' if table.unigram else ''}, "
              f"{path.stat().st_size / 2**20:.1f} MiB, {time.time() - started:.0f} s")
    return 0
