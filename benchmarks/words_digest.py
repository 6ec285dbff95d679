"""A digest of the words: did a change of code change any word?

For each shipped model, each named standard and each granularity, the words of the first N
sentences of each dev file are hashed (sha256 over the words joined by spaces, one text a line):
one line per setting, and a digest of them all. Two commits that print the same lines segment
those texts the same way; a refactor must. Dev files only (nothing here reads a test file).

    python benchmarks/words_digest.py                  # first 1,000 sentences of each dev file
    python benchmarks/words_digest.py --sentences 200 --out /tmp/digest.txt

The scores are read once per model and text set, and each standard and granularity assembled
from them (Segmenter.assemble), as segment_batch does.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

GOLD = Path(os.environ.get("SEGMENTER_GOLD", Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "gold"))
DEV_FILES = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")
STANDARDS = ("general", "pku", "msr", "ud")
GRANULARITIES = ("fine", "default", "coarse")
MODELS = ("default", "fast")


def dev_texts(name: str, count: int) -> list[str]:
    texts = []
    with open(GOLD / f"{name}.txt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                texts.append("".join(line.split()))
                if len(texts) == count:
                    break
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1000, help="first N sentences of each dev file")
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--out", type=Path, help="also write the lines here")
    args = parser.parse_args(argv)

    from segmenter import Segmenter

    texts = [text for name in DEV_FILES for text in dev_texts(name, args.sentences)]
    lines, total = [], hashlib.sha256()
    for model in args.models:
        segmenter = Segmenter(model, processes=False)
        plans = segmenter.score_texts(texts, show_progress=False)
        for standard in STANDARDS:
            for granularity in GRANULARITIES:
                tokens = segmenter.assemble(plans, granularity, standard=standard)
                digest = hashlib.sha256("\n".join(" ".join(t[0] for t in text) for text in tokens).encode()).hexdigest()
                line = f"{model:8s} {standard:8s} {granularity:8s} {digest[:16]}"
                lines.append(line)
                total.update(line.encode())
                print(line, flush=True)
    lines.append(f"all {len(texts)} texts {total.hexdigest()[:16]}")
    print(lines[-1])
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
