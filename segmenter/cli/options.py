"""Options that several commands share, defined once so that they read the same everywhere:

  --raw FILE…  raw text, one text a line
  --gold FILE  a *dev* gold file (never a test)    --gold-sentences N  how many of its sentences

(-m/--model, --out and --batch-size are each command's own; model_folder resolves -m.)

An option's old name stays accepted, hidden from --help, so that no command line breaks.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from . import CLIError


def add_raw(parser: argparse.ArgumentParser, dest: str = "raw", required: bool = False, old: str | None = None) -> None:
    parser.add_argument("--raw", nargs="+", dest=dest, required=required, metavar="FILE",
                        help="raw UTF-8 text files, one text a line")
    if old:
        parser.add_argument(old, nargs="+", dest=dest, help=argparse.SUPPRESS)


def check_raw(paths) -> None:
    """Every --raw file exists (checked before anything loads): else a CLIError naming it."""
    for path in paths or []:
        if not Path(path).is_file():
            raise CLIError(f"--raw {path}: no such file")


def add_gold(parser, dest: str, sentences_dest: str, use: str, sentences: int, old: str | None = None,
             old_sentences: str | None = None, many: bool = False) -> None:
    """--gold FILE (what it is used for: `use`; many: FILE…) and --gold-sentences N (default `sentences`)."""
    files = {"nargs": "+", "default": []} if many else {}
    parser.add_argument("--gold", dest=dest, metavar="FILE", **files,
                        help=f"{'*dev* gold files' if many else 'a *dev* gold file'} (never a test file): {use}")
    parser.add_argument("--gold-sentences", dest=sentences_dest, type=int, default=None, metavar="N",
                        help=f"sentences of --gold used (default: {sentences})")
    for name, target in ((old, dest), (old_sentences, sentences_dest)):
        if name:
            extra = files if target == dest else {"type": int}
            parser.add_argument(name, dest=target, help=argparse.SUPPRESS, **extra)


def positive(kind=int):
    """An argparse type: a number of `kind` (int or float) above 0, else the option's one-line
    error ("argument --threads: must be a positive int, got '-1'") instead of a traceback from
    wherever the value is first used (torch.set_num_threads, a range step, a layer size)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive {kind.__name__}, got {text!r}")
        return value

    parse.__name__ = f"positive {kind.__name__}"
    return parse


def non_negative_int(text: str) -> int:
    """An argparse type: an int >= 0 (a head's index, an overlap)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, got {text!r}")
    return value


def model_folder(name: str | None) -> Path:
    """The model folder of -m/--model (downloaded when a hub name), checked: else a CLIError."""
    from ..model.folders import ModelLoadError, check_folder, resolve_model_folder

    try:
        folder = resolve_model_folder(name)
        check_folder(folder)
    except (ModelLoadError, TypeError) as err:
        raise CLIError(str(err)) from None
    return folder
