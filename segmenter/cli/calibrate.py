"""Fit a model's standard to a few sentences segmented your way, in a copy of the model.

The copy's default follows those sentences (train/calibrate_standard.py says how).

Example:
  segmenter calibrate --gold my_50_sentences.txt --out my_model      # one sentence a line, words split by spaces
  segmenter -m my_model my_text.txt                                  # or Segmenter("my_model")
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from . import CLIError
from .options import model_folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, metavar="MODEL",
                        help="the model to calibrate: a folder, a shipped name (default, fast) or a hub name")
    parser.add_argument("--gold", required=True, metavar="FILE",
                        help="20-200 sentences segmented your way: one a line, words split by spaces")
    parser.add_argument("--out", required=True, metavar="DIR", help="the calibrated model folder (new or empty)")
    parser.add_argument("--sentences", type=int, default=200, metavar="N",
                        help="read the first N sentences (default: 200)")
    parser.add_argument("--no-words", dest="words", action="store_false",
                        help="fit the standard's rules and threshold only; learn no user dictionary entries from the "
                             "sentences (the strings they keep whole or cut where the model does not)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or log lines, warnings only")


def run(args: argparse.Namespace) -> int:
    from ..train.calibrate_standard import MIN_SENTENCES, calibrate

    folder = model_folder(args.model)
    if not Path(args.gold).is_file():
        raise CLIError(f"--gold {args.gold}: no such file")
    if args.sentences < MIN_SENTENCES:
        raise CLIError(f"--sentences must be at least {MIN_SENTENCES}, got {args.sentences}")
    typed = sys.argv[1:] if sys.argv[1:2] == ["calibrate"] else ["calibrate", "--gold", args.gold, "--out", args.out]
    try:
        result = calibrate(folder, args.gold, args.out, args.sentences,
                           command="segmenter " + shlex.join(map(str, typed)), words=args.words)
    except (ValueError, FileNotFoundError) as err:
        raise CLIError(str(err)) from None
    if not args.quiet:
        print(f"wrote {args.out}: {result.standard.about}, threshold at the profile's level "
              f"{result.standard.profile_level}, {len(result.words)} user dictionary entries; word F1 on them "
              f"{result.f1:.4f} (the standard alone: {result.f1_standard:.4f}; the general default: "
              f"{result.f1_default:.4f}), {result.seconds:.1f} s")
    return 0
