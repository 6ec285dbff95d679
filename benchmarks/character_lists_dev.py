"""The conventions' character lists on six dev files: what each character of a list does.

For the function words, particles, object pronouns, classifiers and demonstratives of
segmenter/standards/rules.toml (conventions.Conventions; their origin lines cite this script): word
F1 of the general standard, embedded default model, on the first sentences of each dev file with
the shipped lists, then the change when one character is taken out of its list (those in it) or
put in (the candidates tried and left out); and keep_pairs, the words the function-word rule
leaves whole (为了 除了 可是), emptied, and joined_words, the function words joined again where the
decoder left them in pieces (你|好 为|什么), emptied. The same on held-out sentences 1,301-4,000 of the
three larger files (pku_dev, msr_dev, weibo_dev), which chose nothing. The heads are run once;
only the conventions change between rows. Dev files only.

    python benchmarks/character_lists_dev.py   # writes benchmarks/results/character_lists_dev.md
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.standards.conventions import DEFAULT_CONVENTIONS  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")
HELD_OUT = ("pku_dev", "msr_dev", "weibo_dev")
# The characters each list is measured for: the shipped ones (each taken out) or, for the long
# classifier list, those its last change added; then those tried and left out (each put in).
MEASURED = {"function_words": None, "particles": None, "object_pronouns": None, "bound_ends": None,
            "classifiers": "声丝团道幕眼口副群块", "demonstratives": None}  # None: all
LEFT_OUT = {
    "function_words": "还太被把对在有每各本其自正并总好会要多常较一",
    "particles": "的地",
    "object_pronouns": "它您",
    "bound_ends": "",
    "classifiers": "阵下点番对双",
    "demonstratives": "",
}


def scorer(seg: Segmenter, files: tuple[str, ...], first: int, count: int):
    """Word F1 per file of `seg` on sentences first+1..first+count, the heads run once:
    f1(**attributes) -> (len(files),) array, with those attributes of `seg` set (conventions=,
    word_decoding=, standard=). Only word assembly runs again for each call."""
    gold = {name: read_gold(GOLD / f"{name}.txt", first + count)[first:] for name in files}
    plans = {name: seg.score_texts(["".join(words) for words in gold[name]], show_progress=False) for name in files}

    def f1(**attributes) -> np.ndarray:
        for name, value in attributes.items():
            setattr(seg, name, value)
        return np.array([score(gold[name], [[t.word for t in ts] for ts in seg.assemble(plans[name])]).F1
                         for name in files])
    return f1


def variants():
    """(label, conventions) for each character of each list: out of the list, or into it."""
    for field, left_out in LEFT_OUT.items():
        shipped = getattr(DEFAULT_CONVENTIONS, field)
        for ch in dict.fromkeys(MEASURED[field] or shipped):
            yield f"{field} without {ch}", replace(DEFAULT_CONVENTIONS, **{field: shipped.replace(ch, "")})
        for ch in left_out:
            yield f"{field} with {ch} (left out)", replace(DEFAULT_CONVENTIONS, **{field: shipped + ch})
    # keep_pairs (two-character words the function-word rule leaves whole: 为了 除了 可是) as a whole
    yield "keep_pairs empty (为了 除了 可是 ... split like any pair)", replace(DEFAULT_CONVENTIONS, keep_pairs="")
    # joined_words (function words the heads cut inside, joined again: 你好 为什么 有的) as a whole
    yield ("joined_words empty (你好 为什么 有的 ... left as the decoder cut them)",
           replace(DEFAULT_CONVENTIONS, joined_words=""))


def table(title: str, files, f1, rows) -> list[str]:
    base = f1(conventions=DEFAULT_CONVENTIONS)
    lines = [f"## {title}", "", "| lists | " + " | ".join(files) + " | mean |", "|---" + "|--:" * (len(files) + 1) + "|",
             "| shipped (F1) | " + " | ".join(f"{x:.4f}" for x in base) + f" | **{base.mean():.4f}** |"]
    for label, conventions in rows:
        delta = f1(conventions=conventions) - base
        lines.append(f"| {label} | " + " | ".join(f"{x:+.4f}" for x in delta) + f" | **{delta.mean():+.4f}** |")
    return lines + [""]


def dev_arguments(doc: str, results: str) -> argparse.Namespace:
    """The command line of the dev-file scripts that use `scorer`: --sentences (the first ones of
    each dev file; held out: the next ones up to 4,000) and --out (default benchmarks/results/RESULTS)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1300, help="first sentences of each dev file (default: 1300)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / results))
    return parser.parse_args()


def main() -> None:
    args = dev_arguments(__doc__, "character_lists_dev.md")
    started = time.perf_counter()
    seg = Segmenter(standard="general")
    c = DEFAULT_CONVENTIONS
    lines = ["# The conventions' character lists on six dev files", "",
             f"Written by `python benchmarks/character_lists_dev.py --sentences {args.sentences}`. Word F1 of the "
             "general standard (embedded default model) with the shipped lists, then the change when one character "
             "leaves its list or joins it. Shipped:", "",
             f"- function_words `{c.function_words}` (and `coarse_leads` `{c.coarse_leads}`, `coarse_pairs` "
             f"`{c.coarse_pairs}` for MSR's \"coarse\")",
             f"- particles `{c.particles}`; object_pronouns `{c.object_pronouns}` (说|你 给|我); bound_ends `{c.bound_ends}` (这里 这么 stay whole); keep_pairs "
             f"`{c.keep_pairs}` (words of their own, whole at every standard); joined_words `{c.joined_words}` "
             "(joined where the decoder left them in pieces)",
             f"- classifiers `{c.classifiers}`; demonstratives `{c.demonstratives}` (这一 另一 每一 split)", "",
             "A list gained a character where the six files' mean gained and the held-out sentences did not "
             "lose; the function words are one-character adverbs, pronouns, demonstratives and modals, "
             "the classifiers those of counts (一声 一道 一丝: 一 apart at the default counts).", ""]
    rows = list(variants())
    lines += table(f"First {args.sentences} sentences of each dev file", DEV, scorer(seg, DEV, 0, args.sentences), rows)
    lines += table(f"Held out: sentences {args.sentences + 1}-4,000", HELD_OUT,
                   scorer(seg, HELD_OUT, args.sentences, 4000 - args.sentences), rows)
    lines[2] = lines[2].replace("`. Word", f"` ({time.perf_counter() - started:.0f} s). Word", 1)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
