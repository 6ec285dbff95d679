"""Should `adapt --refine` skip a text that adds no string to the table? Dev files only.

`segmenter adapt --refine` adapts the word table to a raw text, then fine-tunes the head on the
same text (train/refine.py). The question here is one rule: where the text adds no string to the
table, skip the fine-tuning (the folder is the table's) or run it as on any other text.

Texts: each of the six dev files whole, and its first --slice sentences, each with its spaces
removed (raw text, no labels), each adapted to itself and scored on itself (the first --sentences
sentences), word F1 of the general default. Only texts that add no string differ between the two
rules; on the others both run the same code, so they are listed and not run again. For each text
that adds none: the table alone (the rule on: what `adapt --refine` writes) and the refined head
over --seeds (the rule off: `adapt` then train.refine on the table's folder, exactly what
`adapt --refine` runs when it does not skip).

    python benchmarks/adapt_refine_skip_dev.py    # writes benchmarks/results/adapt_refine_skip_dev.md
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.adapt import adapt  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402
from segmenter.train.refine import RefineConfig, refine  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")


def f1(folder: Path | None, gold: list, raw: list[str]) -> float:
    seg = Segmenter(folder, num_threads=None) if folder is not None else Segmenter(num_threads=None)
    return score(gold, seg.segment_batch(raw, show_progress=False)).F1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1300, help="score on the text's first N sentences")
    parser.add_argument("--slice", type=int, default=500, help="the second text of each file: its first N sentences")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--files", nargs="+", choices=DEV, default=list(DEV), help="the dev files (default: all six)")
    parser.add_argument("--markdown", default=str(ROOT / "benchmarks" / "results" / "adapt_refine_skip_dev.md"))
    args = parser.parse_args()
    started = time.time()
    rows, others = [], []
    for name in args.files:
        every = read_gold(GOLD / f"{name}.txt")
        texts = [(f"{name}, whole ({len(every):,} sentences)", every)]
        if len(every) > args.slice:
            texts.append((f"{name}, first {args.slice} sentences", every[: args.slice]))
        for label, sentences in texts:
            raw = ["".join(words) for words in sentences]
            gold = sentences[: args.sentences]
            with tempfile.TemporaryDirectory() as scratch:
                path = Path(scratch) / "raw.txt"
                path.write_text("\n".join(raw) + "\n", encoding="utf-8")
                table = adapt(None, [path], Path(scratch) / "table")
                if table.added:
                    others.append(f"{label}: {table.added:,} string{'s' * (table.added != 1)} added "
                                  f"(min count {table.min_count}), "
                                  "the rule does not apply")
                    print(others[-1], flush=True)
                    continue
                base = f1(None, gold, raw[: len(gold)])
                kept = f1(table.folder, gold, raw[: len(gold)])
                refined = []
                for seed in args.seeds:
                    out = Path(scratch) / f"refined_{seed}"
                    record = refine(RefineConfig(model=str(table.folder), raw=[str(path)], out=str(out), command="",
                                                 model_name="the adapted table", split_long=True, seed=seed))
                    refined.append(f1(out, gold, raw[: len(gold)]))
                    print(label, seed, refined[-1], record["label_chars"], record["training"], flush=True)
            rows.append((label, table.han_chars, table.min_count, len(gold), base, kept, refined))
            print(rows[-1], flush=True)
    seeds = ", ".join(map(str, args.seeds))
    command = f"python benchmarks/adapt_refine_skip_dev.py --sentences {args.sentences} --slice {args.slice}" + (
        "" if args.seeds == [0, 1, 2] else " --seeds " + " ".join(map(str, args.seeds))) + (
        "" if args.files == list(DEV) else " --files " + " ".join(args.files))
    lines = [
        "# `adapt --refine` on a text that adds no string: skip the head's fine-tuning or not", "",
        "Dev files only. Each text (a dev file whole, and its first sentences) has its spaces removed (raw text, no "
        "labels), is adapted to itself and scored on itself (its first sentences), word F1 of the general default. "
        "rule on: `adapt --refine` skips the fine-tuning where the text adds no string, and the folder is the "
        "table's; rule off: the head is fine-tuned there too (train/refine.py's default recipe, `split_long`, as "
        f"`adapt --refine` runs it), once per seed ({seeds}): the mean, and the lowest and highest change.", "",
        f"Command: `{command}` ({time.time() - started:.0f} s, 2 cores shared with other work).", "",
        "| text | Han chars | min count | sentences scored | general | rule on (table alone) | rule off: refined, "
        "mean | Δ vs rule on | Δ, seeds |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for label, chars, min_count, scored, base, kept, refined in rows:
        mean = sum(refined) / len(refined)
        lines.append(f"| {label} | {chars:,} | {min_count} | {scored:,} | {base:.4f} | {kept:.4f} | {mean:.4f} | "
                     f"{mean - kept:+.4f} | {min(refined) - kept:+.4f} to {max(refined) - kept:+.4f} |")
    if rows:
        on = sum(r[5] for r in rows) / len(rows)
        off = sum(sum(r[6]) / len(r[6]) for r in rows) / len(rows)
        lines.append(f"| mean | | | | {sum(r[4] for r in rows) / len(rows):.4f} | {on:.4f} | {off:.4f} | "
                     f"{off - on:+.4f} | |")
        # The choice: keep the rule only where refining these texts loses on the mean; a tie (or a
        # gain) drops it, the simpler recipe (refine every text).
        verdict = ("the rule stays: refining a text that adds no string lowers its F1" if round(off - on, 4) < 0
                   else "the rule goes: refining a text that adds no string does not lower its F1")
        lines += ["", f"Mean Δ {off - on:+.4f}: {verdict} (a tie would drop it, the simpler recipe)."]
    lines += ["", "Texts that add strings (both rules run the same code on them):", "",
              *(f"- {line}" for line in others)]
    Path(args.markdown).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
