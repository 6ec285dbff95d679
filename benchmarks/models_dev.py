"""The shipped models on dev: word F1 of each (model, decoder) on the first N sentences of the
dev files, with chars/s of `Segmenter.segment_batch` in the same run (1 thread by default).

This is the table that picked the embedded default: the distilled student with word decoding
against the 6-layer model it was distilled from, each with the threshold and with word
decoding. Dev files only; the test files are for benchmarks/run.py.

    python benchmarks/models_dev.py                  # writes benchmarks/results/models_dev.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev")
# The retired `accurate` model (no longer shipped): its recipe (docs/models.md) writes it here;
# its rows are left out without it.
ACCURATE = ROOT / "runs" / "selftrained"
ROWS = (("default", None, "threshold"), ("default", None, "words"), ("accurate", str(ACCURATE), "threshold"),
        ("accurate", str(ACCURATE), "words"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "models_dev.md"))
    args = parser.parse_args()
    gold = {name: read_gold(GOLD / f"{name}.txt", args.sentences) for name in DEV}
    lines = [
        f"Word F1 on the first {args.sentences} sentences of each dev file; chars/s of `segment_batch` on all of "
        f"them, {args.threads} thread(s), this machine, one run. Written by `python benchmarks/models_dev.py"
        f" --sentences {args.sentences} --threads {args.threads}`. Both decoders run with the conventions of "
        f"numbers and suffixes (conventions.py), at the default granularity.", "",
        "| model | decode | " + " | ".join(DEV) + " | chars/s |", "|---|---|" + "--:|" * (len(DEV) + 1),
    ]
    for label, model, decode in ROWS:
        if model == str(ACCURATE) and not (ACCURATE / "config.json").is_file():
            print(f"{ACCURATE}: no `accurate` model (docs/models.md has its recipe); its rows are left out")
            continue
        seg = Segmenter(model, decode=decode, num_threads=args.threads)
        seg.segment_batch(["".join(words) for words in gold[DEV[0]][:20]])  # warm-up
        cells, chars, seconds = [], 0, 0.0
        for name in DEV:
            texts = ["".join(words) for words in gold[name]]
            start = time.perf_counter()
            output = seg.segment_batch(texts)
            seconds += time.perf_counter() - start
            chars += sum(map(len, texts))
            cells.append(f"{score(gold[name], [[w for w in ws if not w.isspace()] for ws in output]).F1:.3f}")
        lines.append(f"| {label} | {decode} | " + " | ".join(cells) + f" | {chars / seconds:,.0f} |")
        print(lines[-1], flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
