"""The conventions of numbers, dates and counts on dev: what they do, together, at each standard.

For each dev file: word F1 and recall by word length of the embedded default with each named
standard (levels.STANDARDS), with the conventions (conventions.py) and without them (the heads
and the word table alone), and the calibrated choice (first 100 sentences of that dev file pick
among the standards and a fitted profile; figures on the sentences after them). This is the
table that set the rules and the thresholds of the ud (fine) and msr (coarse) standards
(segmenter/standards/rules.toml's origin lines cite it). Dev
files only.

    python benchmarks/conventions_dev.py      # writes benchmarks/results/conventions_dev.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import length_table, score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402
from segmenter.standards.levels import standard_named  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev")
CALIBRATION = 100


def row(label: str, gold, output) -> str:
    scores = score(gold, output)
    recall = " / ".join(f"{r:.2f}" for r in length_table(scores)["R"])
    return f"| {label} | {scores.F1:.4f} | {recall} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1500, help="dev sentences scored, after the first 100 (default: 1500)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "conventions_dev.md"))
    args = parser.parse_args()
    from segmenter.train.head_discovery import calibrated_choice

    plain, ruled = Segmenter(conventions=None), Segmenter()
    lines = [
        f"Word F1 and recall by word length (1 / 2 / 3 / 4 / 5+) of the embedded default on dev sentences "
        f"{CALIBRATION + 1}-{CALIBRATION + args.sentences} of each file (the first {CALIBRATION} calibrate). "
        f"Written by `python benchmarks/conventions_dev.py --sentences {args.sentences}`.", "",
    ]
    for name in DEV:
        gold_all = read_gold(GOLD / f"{name}.txt", CALIBRATION + args.sentences)
        calibration, gold = gold_all[:CALIBRATION], gold_all[CALIBRATION:]
        texts = ["".join(words) for words in gold]
        lines += [f"## {name} ({len(gold)} sentences)", "", "| setting | F1 | recall by length |", "|---|--:|---|"]
        for standard in ("ud", "pku", "msr", "general"):
            plain.standard = ruled.standard = standard_named(standard)
            lines.append(row(f"{standard}, no conventions", gold, plain.segment_batch(texts)))
            lines.append(row(f"{standard}, conventions", gold, ruled.segment_batch(texts)))
        profile, level, results = calibrated_choice(None, calibration, f"calibrated on {name} ({CALIBRATION} sentences)")
        chosen = Segmenter(profile=profile, granularity=level)
        picked = profile.source.split(": ")[-1]
        lines.append(row(f"calibrated (chose {picked})", gold, chosen.segment_batch(texts)))
        lines += ["", "F1 of each candidate on the calibration sentences: "
                  + ", ".join(f"{k} {v:.4f}" for k, v in results.items()), ""]
        print("\n".join(lines[-16:]), flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
