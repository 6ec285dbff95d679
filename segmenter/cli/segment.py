"""Segment text files (or stdin) line by line; words joined by a delimiter. UTF-8 in and out."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from ..lines import UndecodableLine, iter_pieces
from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (default: stdin; '-' is stdin)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.add_argument("-d", "--delimiter", default=" ", help="string between words (default: one space)")
    parser.add_argument("-m", "--model", default=None, help="model folder or hub name (default: the embedded model)")
    parser.add_argument("-g", "--granularity", default="default", help="fine, default, coarse, or a number in [0, 1]")
    parser.add_argument("--batch-size", type=int, default=64, help="windows per forward pass (default: 64)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    parser.add_argument(
        "--encoding-errors",
        choices=("strict", "replace"),
        default="strict",
        help="undecodable bytes: stop with the file and line (strict), or write U+FFFD and go on (replace)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N",
        help="segment in N processes, each with cores/N threads; same output, in order (default: 1)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def parse_granularity(value: str):
    try:
        return float(value)
    except ValueError:
        return value


def read_pieces(path: str, errors: str) -> Iterator[tuple[str, bool]]:
    """(text, ends_line) pieces of a file's lines (or stdin for '-'), as segmenter.lines reads
    them (a very long line in pieces: flat memory); errors as CLIError."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            yield from iter_pieces(sys.stdin.buffer, name, errors)
        else:
            with open(path, "rb") as stream:
                yield from iter_pieces(stream, name, errors)
    except UndecodableLine as err:
        raise CLIError(f"{err}; convert the file to UTF-8 or pass --encoding-errors replace") from None
    except IsADirectoryError:
        raise CLIError(f"{path} is a directory; give text files") from None
    except OSError as err:  # cannot open, or an I/O error mid-file (the consumer's own errors never land here)
        raise CLIError(f"cannot read {name}: {err.strerror or err}") from None


@contextlib.contextmanager
def atomic_output(path: str | None):
    """Yield a UTF-8 text stream; for a file, write a temporary beside it and rename it on success.

    A failed write (disk full) becomes a CLIError; a broken pipe is left to the caller. An
    existing path that is not a regular file (/dev/null, a FIFO) is written in place: a
    rename would replace the device itself.
    """
    if path is None:
        if getattr(sys.stdout, "encoding", "utf-8").lower() not in ("utf-8", "utf8") and hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(encoding="utf-8")  # input is read as UTF-8 whatever the locale: so is output
        with _write_errors("standard output", on_error=silence_stdout):
            yield sys.stdout
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"-o {path} is a directory; give a file name")
    if target.is_symlink():
        target = target.resolve()  # replace the file it points to, not the link
    if target.exists() and not target.is_file():
        with _write_errors(path), open(target, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        return
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent or ".")
    except OSError as err:
        raise CLIError(f"cannot write {path}: {err.strerror}") from None
    try:
        with _write_errors(path):
            os.chmod(temporary, _file_mode(target))  # mkstemp's 0600 would stick to the output
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                yield stream
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _write_errors(where: str, on_error=None):
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as err:
        if on_error is not None:
            on_error()
        raise CLIError(f"cannot write {where}: {err.strerror or err}") from None


def _file_mode(target: Path) -> int:
    """The mode the output should have: the old file's, else what open() would give (umask)."""
    if target.is_file():
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail (and print) again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run(args: argparse.Namespace) -> int:
    """Every line of every file through segmenter.scale.workers.segment_pieces: in this process, or
    in N worker processes with --workers N (the same output either way, in input order)."""
    from concurrent.futures.process import BrokenProcessPool

    from ..lines import write_pieces
    from ..model import ModelLoadError, resolve_model_folder
    from ..scale.workers import WorkerSpec, segment_pieces
    from ..api import resolve_device

    files = args.files or ["-"]
    for path in files:  # fail before loading the model when an input is missing
        if path != "-" and not os.path.exists(path):
            raise CLIError(f"{path}: no such file")
        if path != "-" and os.path.isdir(path):
            raise CLIError(f"{path} is a directory; give text files")
    if args.workers < 1:
        raise CLIError(f"--workers must be at least 1, got {args.workers}")
    show_progress = not args.quiet and sys.stderr.isatty() and any(p != "-" for p in files)
    try:
        resolve_device(args.device)  # fail here, not once in each worker
        spec = WorkerSpec(
            str(resolve_model_folder(args.model)), device=args.device, batch_size=args.batch_size,
            granularity=parse_granularity(args.granularity), num_threads=args.threads,
        )
        segmenter = spec.build() if args.workers == 1 else None  # load errors surface before any output
        pieces = (piece for path in files for piece in read_pieces(path, args.encoding_errors))
        with atomic_output(args.output) as out:
            words = segment_pieces(pieces, segmenter=segmenter, spec=spec, workers=args.workers, show_progress=show_progress)
            write_pieces(out, words, args.delimiter)
            out.flush()
    except (ModelLoadError, ValueError, TypeError) as err:  # raised in a worker, re-raised here
        raise CLIError(str(err)) from None
    except BrokenProcessPool:
        raise CLIError("a worker process died (out of memory?); try fewer --workers or a smaller --batch-size") from None
    except BrokenPipeError:  # `segmenter --workers 4 big.txt | head`: stop quietly
        silence_stdout()
    return 0
