"""Refine a model on raw text: its head learns the words its own full pipeline finds.

Example (how the embedded default was made from the distilled student; its model card has the
exact command):
  segmenter refine -m FOLDER --raw ../shared/corpora/raw/pretrain_raw.txt ../shared/corpora/raw/extra_raw.txt \\
      --chars 4000000 --out refined

On your own domain, `segmenter adapt --raw my_domain.txt --out adapted --refine` adapts the table and then
runs this on the same text, in one command.
Needs the training stack (pip install "segmenter-heads[train]", torch first; "[onnx]" to export the
graph again). Raw text only: never pass gold (segmented) files.
"""
from __future__ import annotations

import argparse

from ..standards.levels import STANDARDS
from . import CLIError
from .options import add_raw, check_raw, model_folder, positive


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, metavar="MODEL",
                        help="a one-head model: a folder or a shipped name (default: default)")
    add_raw(parser, required=True)
    parser.add_argument("--out", required=True, metavar="DIR", help="the refined model folder (new or empty)")
    parser.add_argument("--chars", type=positive(int), default=4_000_000,
                        help="raw characters labelled and trained on (default: 4,000,000)")
    parser.add_argument("--mix", type=float, default=0.5,
                        help="share of the pipeline's hard cut in each target (default: 0.5)")
    parser.add_argument("--agree", nargs="+", default=[], metavar="STANDARD", choices=sorted(STANDARDS),
                        help="the pipeline's cut enters a target only where these standards' words cut alike "
                             "(the model's own standard too); elsewhere the head keeps its own score "
                             "(the embedded default's fifth round: --agree pku msr ud)")
    parser.add_argument("--lr", type=positive(float), default=5e-4, help="learning rate (default: 5e-4)")
    parser.add_argument("--epochs", type=positive(float), default=1.0, help="passes over the labelled text (default: 1)")
    parser.add_argument("--minutes", type=positive(float), default=30.0, help="stop training after this long (default: 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the raw-text sample and of training (default: 0)")
    parser.add_argument("--threads", type=positive(int), default=None, help="torch threads (default: all cores)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or log lines, warnings only")


def run(args: argparse.Namespace) -> int:
    from ..train.refine import RefineConfig, refine

    folder = model_folder(args.model)
    check_raw(args.raw)
    try:
        config = RefineConfig(model=args.model or str(folder), raw=args.raw, out=args.out, chars=args.chars,
                              mix=args.mix, agree=tuple(args.agree), lr=args.lr, epochs=args.epochs,
                              minutes=args.minutes, seed=args.seed)
        record = refine(config, threads=args.threads)
    except ValueError as err:
        raise CLIError(str(err)) from None
    if not args.quiet:
        print(f"wrote {args.out}: head refined on {record['label_chars']:,} raw characters "
              f"(the pipeline moved {100 * record['pipeline_changed']:.1f}% of its cuts) "
              f"in {record['minutes']:.1f} min")
    return 0
