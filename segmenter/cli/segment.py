"""Segment text files (or stdin) line by line; words joined by a delimiter."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from . import CLIError

CHUNK_LINES = 512  # lines segmented together: enough to fill batches, small enough to stream


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (default: stdin; '-' is stdin)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.add_argument("-d", "--delimiter", default=" ", help="string between words (default: one space)")
    parser.add_argument("-m", "--model", default=None, help="model folder or hub name (default: the embedded model)")
    parser.add_argument("-g", "--granularity", default="default", help="fine, default, coarse, or a number in [0, 1]")
    parser.add_argument("--batch-size", type=int, default=64, help="windows per forward pass (default: 64)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument(
        "--encoding-errors",
        choices=("strict", "replace"),
        default="strict",
        help="undecodable bytes: stop with the file and line (strict), or write U+FFFD and go on (replace)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def parse_granularity(value: str):
    try:
        return float(value)
    except ValueError:
        return value


def read_lines(path: str, errors: str) -> Iterator[str]:
    """Lines of a file (or stdin for '-') without their line ending, decoded as UTF-8."""
    if path == "-":
        stream = sys.stdin.buffer
        name = "<stdin>"
    else:
        if os.path.isdir(path):
            raise CLIError(f"{path} is a directory; give text files")
        try:
            stream = open(path, "rb")
        except OSError as err:
            raise CLIError(f"cannot read {path}: {err.strerror}") from None
        name = path
    with contextlib.closing(stream) if path != "-" else contextlib.nullcontext(stream):
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8", errors=errors)
            except UnicodeDecodeError as err:
                raise CLIError(
                    f"{name}, line {number}: bytes that are not UTF-8 at column {err.start + 1}; "
                    "convert the file to UTF-8 or pass --encoding-errors replace"
                ) from None
            yield line.rstrip("\r\n") if line.endswith("\n") else line


def chunks(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@contextlib.contextmanager
def atomic_output(path: str | None):
    """Yield a text stream; for a file, write a temporary beside it and rename it on success."""
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"-o {path} is a directory; give a file name")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent or ".")
    except OSError as err:
        raise CLIError(f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def run(args: argparse.Namespace) -> int:
    from ..model import ModelLoadError
    from ..segmenter import Segmenter

    files = args.files or ["-"]
    for path in files:  # fail before loading the model when an input is missing
        if path != "-" and not os.path.exists(path):
            raise CLIError(f"{path}: no such file")
        if path != "-" and os.path.isdir(path):
            raise CLIError(f"{path} is a directory; give text files")
    try:
        segmenter = Segmenter(
            args.model,
            device=args.device,
            batch_size=args.batch_size,
            num_threads=args.threads,
            granularity=parse_granularity(args.granularity),
        )
    except (ModelLoadError, ValueError, TypeError) as err:
        raise CLIError(str(err)) from None

    show_progress = not args.quiet and sys.stderr.isatty() is not None and any(p != "-" for p in files)
    progress = None
    if show_progress:
        from tqdm.auto import tqdm

        total = sum(os.path.getsize(p) for p in files if p != "-")
        progress = tqdm(total=total, unit="B", unit_scale=True, desc="segmenting", disable=args.quiet)
    try:
        with atomic_output(args.output) as out:
            for path in files:
                for chunk in chunks(read_lines(path, args.encoding_errors), CHUNK_LINES):
                    for words in segmenter.segment_batch(chunk, show_progress=False):
                        out.write(args.delimiter.join(w for w in words if not w.isspace()) + "\n")
                    if progress is not None:
                        progress.update(sum(len(line.encode("utf-8")) + 1 for line in chunk))
            out.flush()
    except BrokenPipeError:
        # The reader went away (`segmenter big.txt | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        if progress is not None:
            progress.close()
    return 0
