"""The word table's rare strings (train/rare_strings.py) on six dev files: which counts and autonomies.

The shipped table keeps the n-grams the raw text holds min_count (10) times, plus the rare words
that `segmenter ngrams --rare-count 5` adds. This counts the same raw text (all of
pretrain_raw.txt and extra_raw.txt, as the shipped table) down to 3, and scores the general
standard with the table's frequent rows alone and with the rare strings of each (count, autonomy)
added. First --sentences of each dev file; held out: the sentences after them up to 4,000 of
pku_dev, msr_dev and weibo_dev. Dev files only. Counting takes about 7 minutes and 7 GB.

    python benchmarks/rare_strings_dev.py   # writes benchmarks/results/rare_strings_dev.md
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from character_lists_dev import DEV, HELD_OUT, dev_arguments, scorer  # noqa: E402
from segmenter.api import Segmenter  # noqa: E402
from segmenter.train.rare_strings import RARE_AUTONOMY, RARE_COUNT, with_rare_strings  # noqa: E402
from segmenter.train.ngram_counting import build_word_table, sample_raw_lines  # noqa: E402

RAW = [ROOT.parent / "shared" / "corpora" / "raw" / name for name in ("pretrain_raw.txt", "extra_raw.txt")]
VARIANTS = ((3, 1.0), (3, 2.0), (3, 3.0), (5, 1.0), (5, 2.0), (5, 3.0), (7, 2.0))  # (rare count, autonomy)


def main() -> None:
    args = dev_arguments(__doc__, "rare_strings_dev.md")
    started = time.perf_counter()
    seg = Segmenter(standard="general")
    shipped = seg.word_table
    frequent = shipped.pruned(shipped.info["min_count"])  # the table `--rare-count 0` writes
    lines = sample_raw_lines(RAW, [None, None])
    counted = build_word_table(lines, max_n=shipped.max_n, min_count=min(c for c, _ in VARIANTS))
    text = "\n".join(lines)
    tables = {(count, autonomy): with_rare_strings(frequent, counted, text, count, autonomy)
              for count, autonomy in VARIANTS}
    del counted, text, lines
    shipped_variant = (RARE_COUNT, RARE_AUTONOMY)
    same = all(np.array_equal(tables[shipped_variant].tables[n][0], shipped.tables[n][0]) for n in shipped.tables)

    def rows(files, f1) -> list[str]:
        base = f1(word_table=frequent)
        out = ["| rare strings | added | " + " | ".join(files) + " | mean |", "|---|--:" + "|--:" * (len(files) + 1) + "|",
               "| none (F1) | 0 | " + " | ".join(f"{x:.4f}" for x in base) + f" | **{base.mean():.4f}** |"]
        for (count, autonomy), table in tables.items():
            delta = f1(word_table=table) - base
            mark = " ✓" if (count, autonomy) == shipped_variant else ""
            out.append(f"| seen {count}-{shipped.info['min_count'] - 1} times, autonomy >= {autonomy:g}{mark} | "
                       f"{len(table) - len(frequent):,} | " + " | ".join(f"{x:+.4f}" for x in delta)
                       + f" | **{delta.mean():+.4f}** |")
        seg.word_table = shipped
        return out + [""]

    out = ["# The word table's rare strings on six dev files", "",
           f"Written by `python benchmarks/rare_strings_dev.py --sentences {args.sentences}` (SECONDS s). Word F1 of "
           "the general standard (embedded default model, word decoding) with the shipped table's rows seen "
           f"{shipped.info['min_count']} times or more, then the change when the rare strings of the same raw text "
           "(51.5 M Han characters) are added: strings of 2-5 characters seen from the count given up to "
           f"{shipped.info['min_count'] - 1} times, with at least the autonomy given, that are not a phrase or a "
           "fragment (train/rare_strings.py), and the characters seen that often. ✓: the shipped table "
           f"(`segmenter ngrams --rare-count {RARE_COUNT} --rare-autonomy {RARE_AUTONOMY:g}`; "
           f"{'the same strings as' if same else 'NOT the same strings as'} the shipped ngrams.npz).", "",
           f"## First {args.sentences} sentences of each dev file", ""]
    out += rows(DEV, scorer(seg, DEV, 0, args.sentences))
    out += [f"## Held out: sentences {args.sentences + 1}-4,000", ""]
    out += rows(HELD_OUT, scorer(seg, HELD_OUT, args.sentences, 4000 - args.sentences))
    out[2] = out[2].replace("SECONDS", f"{time.perf_counter() - started:.0f}")
    Path(args.out).write_text("\n".join(out), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
