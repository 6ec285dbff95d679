"""1+1 joins by the unigram model on six dev files: the grid that chose join2_logp and its bound.

word_joins.join_cohesive joins two single characters the heads cut when the raw text's counts
say they belong together (join2); with join2_logp it also joins them where the table's unigram
model has the pair e**join2_logp times likelier as one word than as its two characters and the
heads' score of the cut is below join2_logp_below (对|方 之|一). This script scores the grid:
word F1 of the embedded default, each named standard on its own dev file and the general standard
on all six (first sentences), and the general standard on held-out sentences 1,301-4,000 of the
three larger files, which chose nothing. The heads are run once; only word assembly changes.

    python benchmarks/pair_model_dev.py   # writes benchmarks/results/pair_model_dev.md
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from character_lists_dev import DEV, HELD_OUT, dev_arguments, scorer  # noqa: E402

from segmenter.api import Segmenter  # noqa: E402
from segmenter.words.decoding import WordDecoding  # noqa: E402
from segmenter.standards.levels import STANDARDS  # noqa: E402

# (join2_logp, join2_logp_below); None: the 1+1 join by the model off. The first is the shipped setting.
GRID = ((WordDecoding.join2_logp, WordDecoding.join2_logp_below), (None, None), (4.0, 5.0), (4.5, 5.0), (5.5, 5.0),
        (6.0, 5.0), (7.0, 5.0), (5.0, 3.0), (5.0, 4.0), (5.0, 6.0), (5.0, 8.0))
OWN_FILE = {"pku": "pku_dev", "msr": "msr_dev", "ud": "ud_gsdsimp_dev"}


def decoding(logp, below) -> WordDecoding:
    if logp is None:
        return replace(WordDecoding(), join2_logp=None)
    return replace(WordDecoding(), join2_logp=logp, join2_logp_below=below)


def main() -> None:
    args = dev_arguments(__doc__, "pair_model_dev.md")
    started = time.perf_counter()
    seg = Segmenter(standard="general")
    first = scorer(seg, DEV, 0, args.sentences)
    held_out = scorer(seg, HELD_OUT, args.sentences, 4000 - args.sentences)
    own = [(name, DEV.index(file)) for name, file in OWN_FILE.items()]
    header = (["join2_logp", "below"] + list(DEV) + ["mean"] + [f"`{name}` on {DEV[i]}" for name, i in own]
              + [f"held out {name}" for name in HELD_OUT] + ["held-out mean"])
    rows = []
    for logp, below in GRID:
        options = decoding(logp, below)
        general = first(word_decoding=options, standard=STANDARDS["general"])
        standards = [first(word_decoding=options, standard=STANDARDS[name])[i] for name, i in own]
        later = held_out(word_decoding=options, standard=STANDARDS["general"])
        cells = ["off" if logp is None else f"{logp:g}", "" if below is None else f"{below:g}"]
        cells += [f"{x:.4f}" for x in general] + [f"**{general.mean():.4f}**"] + [f"{x:.4f}" for x in standards]
        cells += [f"{x:.4f}" for x in later] + [f"**{later.mean():.4f}**"]
        rows.append("| " + " | ".join(cells) + " |")
    lines = ["# 1+1 joins by the unigram model on six dev files", "",
             f"Written by `python benchmarks/pair_model_dev.py --sentences {args.sentences}` "
             f"({time.perf_counter() - started:.0f} s). Word F1 of the embedded default: the general standard on the "
             f"first {args.sentences} sentences of each dev file, each named standard on its own file, and the general "
             f"standard on held-out sentences {args.sentences + 1}-4,000. The first row is the shipped setting "
             "(decoding.WordDecoding); off: no 1+1 join by the model (join2's counts still join).", "",
             "| " + " | ".join(header) + " |", "|---|---" + "|--:" * (len(header) - 2) + "|", *rows, ""]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
