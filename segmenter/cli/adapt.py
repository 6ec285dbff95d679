"""Adapt a model to your own raw text, without labels: a copy of the model whose word table knows your domain's words.

Example (the embedded default adapted to the MSR dev text, spaces removed; figures in benchmarks/results/adapt.md):
  segmenter adapt --raw my_domain.txt --out my_model
  segmenter -m my_model my_domain.txt          # or Segmenter("my_model")

The n-grams of the raw text that the model's table (ngrams.npz) lacks are added with their
autonomy (segmenter/train/adapt.py says why this recipe); weights and head profile stay as they are,
so it takes seconds, and model.onnx, when the folder has one, still runs. With --refine the head
is then fine-tuned on the same text, labelled by the adapted model's own pipeline (segmenter
refine's recipe; needs the training stack: pip install "segmenter-heads[train]", torch first).
Raw text only: never pass gold (segmented) files, and never a test file you mean to score on.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from . import CLIError
from .options import add_raw, check_raw, model_folder, positive


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, metavar="MODEL",
                        help="the model to adapt: a folder, a shipped name (default, fast) or a hub name "
                             "(default: default)")
    add_raw(parser, required=True)
    parser.add_argument("--out", required=True, metavar="DIR", help="the adapted model folder (new or empty)")
    parser.add_argument("--min-count", type=positive(int), default=None, metavar="N",
                        help="add the raw text's n-grams seen at least N times "
                             "(default: 2 from 100k Han characters, else 5)")
    parser.add_argument("--refine", action="store_true",
                        help="then fine-tune the head on the same text, labelled by the adapted model's own "
                             "pipeline (segmenter refine's recipe; needs torch)")
    parser.add_argument("--threads", type=positive(int), default=None,
                        help="torch threads of --refine (default: all cores)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of --refine's training (default: 0); results move a little between seeds")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or log lines, warnings only")


def run(args: argparse.Namespace) -> int:
    from ..train.adapt import adapt, examples_text

    folder = model_folder(args.model)
    check_raw(args.raw)
    if Path(args.out).expanduser().resolve() == folder.resolve():
        raise CLIError(f"--out {args.out} is the model folder itself; choose a new folder")
    # The command line as typed, for the profile and the model card (main(argv) in a test: rebuilt).
    typed = sys.argv[1:] if sys.argv[1:2] == ["adapt"] else ["adapt", "--raw", *args.raw, "--out", args.out]
    command = "segmenter " + " ".join(shlex.quote(str(a)) for a in typed)
    if args.seed != 0 and not args.refine:
        raise CLIError("--seed is the seed of --refine's training; without --refine nothing is random")
    result = adapt(folder, args.raw, args.out, min_count=args.min_count, command=command, refine=args.refine,
                   threads=args.threads, seed=args.seed)
    if not args.quiet:
        minutes_per_million = result.seconds / 60 / max(result.chars, 1) * 1e6
        refined = ("" if result.refined is None else
                   f", head refined on {result.refined['label_chars']:,} characters "
                   f"(the pipeline moved {100 * result.refined['pipeline_changed']:.1f}% of its cuts)")
        print(f"wrote {result.folder}: {result.added:,} n-grams added (seen >= {result.min_count} times) to the "
              f"table of {result.base.name}{refined}, from {result.chars:,} characters in {result.seconds:.1f} s "
              f"({minutes_per_million:.2f} min per million characters)")
        if result.examples:
            print(f"most frequent strings added (occurrences in the text): {examples_text(result.examples)}")
        if result.refine_skipped:
            print("--refine skipped: the text adds no string to the table, so the head is left as it is")
    return 0
