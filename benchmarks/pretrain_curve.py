"""Learning curve of a `segmenter pretrain` run, as a markdown table (and its PNG beside it).

Reads RUN/learning_curve.jsonl, which the run writes at every evaluation, and prints one row
per evaluation: tokens seen, wall time, held-out MLM loss and accuracy, and the best head's
boundary AUC and boundary F1 (s > 0) on the dev gold given to `--gold` (formerly `--eval-gold`). With --fit-auc
it also fits AUC = a + b * log10(tokens) to the evaluations from --fit-from-tokens on, and says
how many tokens (and hours at the run's own tokens/s) that line would need to reach the AUC
given: an extrapolation, labelled as one, not a measurement.

    python benchmarks/pretrain_curve.py runs/char-bert --png benchmarks/results/char_bert_curve.png \
        --fit-auc 0.88 > benchmarks/results/char_bert_curve.md
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import numpy as np


def read_records(run: Path) -> list[dict]:
    lines = (run / "learning_curve.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def table(records: list[dict]) -> list[str]:
    rows = ["| step | tokens seen | minutes | held-out MLM loss | MLM accuracy | best head | boundary AUC | boundary F1 (s>0) |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in records:
        head = "L{}H{}".format(*r["best_head"]) if r.get("best_head") else "–"
        auc = f"{r['best_auc']:.3f}" if r.get("best_auc") is not None else "–"
        f1 = f"{r['best_f1']:.3f}" if r.get("best_f1") is not None else "–"
        rows.append(f"| {r['step']:,} | {r['tokens_seen']:,} | {r['minutes']:.1f} | {r['eval_loss']:.3f} "
                    f"| {r['eval_acc']:.3f} | {head} | {auc} | {f1} |")
    return rows


def extrapolate(records: list[dict], target: float, from_tokens: int) -> str:
    points = [(r["tokens_seen"], r["best_auc"]) for r in records
              if r.get("best_auc") is not None and r["tokens_seen"] >= from_tokens]
    if len(points) < 3:
        return "Too few evaluations to fit a trend."
    tokens, auc = np.array(points, dtype=float).T
    slope, intercept = np.polyfit(np.log10(tokens), auc, 1)
    last = records[-1]
    speed = last["tokens_seen"] / (last["minutes"] * 60)
    line = (f"Log-linear fit over {len(points)} evaluations from {points[0][0]:,} tokens: "
            f"AUC = {intercept:.3f} + {slope:.3f} × log10(tokens).")
    if slope <= 0:
        return line + " The AUC is not rising: no extrapolation."
    needed = 10 ** ((target - intercept) / slope)
    hours = needed / speed / 3600
    return (line + f" Extrapolated, not measured: AUC {target} at about {needed:.2g} tokens, "
            f"{hours:,.0f} hours at this run's {speed:,.0f} tokens/s. A short run's trend: the curve bends where "
            "masked-LM starts to work, so read it as an order of magnitude.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the pretraining run's folder (--out of segmenter pretrain)")
    parser.add_argument("--png", type=Path, help="copy the run's learning_curve.png here")
    parser.add_argument("--fit-auc", type=float, help="extrapolate the AUC trend to this value")
    parser.add_argument("--fit-from-tokens", type=int, default=2_000_000,
                        help="fit only evaluations after this many tokens (default: 2,000,000; warm-up excluded)")
    args = parser.parse_args()
    records = read_records(args.run)
    if not records:
        raise SystemExit(f"{args.run}/learning_curve.jsonl has no evaluations yet")
    card = (args.run / "MODEL_CARD.md").read_text(encoding="utf-8")
    commands = [line for line in card.splitlines() if re.match(r"\d+\. `segmenter pretrain", line)]
    command = shlex.join(["python", "benchmarks/pretrain_curve.py", *sys.argv[1:]])
    print(f"Learning curve of `{args.run}` (`{command}`), from its "
          "`learning_curve.jsonl`. Sittings, from its MODEL_CARD.md:\n")
    print("\n".join(commands) + "\n")
    print("\n".join(table(records)))
    if args.fit_auc is not None:
        print("\n" + extrapolate(records, args.fit_auc, args.fit_from_tokens))
    if args.png:
        shutil.copyfile(args.run / "learning_curve.png", args.png)


if __name__ == "__main__":
    main()
