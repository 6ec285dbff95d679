"""Segment text files (or stdin) line by line; words joined by a delimiter. UTF-8 in and out.

Everything that can be checked without the model is checked before it loads: the input files,
the user dictionaries (read whole: a bad line stops here, naming the file and line), the output
path; an input without a single line is answered without loading the model.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator

from ..lines import UndecodableLine, check_utf8, iter_pieces
from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="UTF-8 text files (default: stdin; '-' is stdin); a BOM at the start of each is dropped")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.add_argument("-d", "--delimiter", default=" ",
                        help="string between words (default: one space); whitespace between words is dropped, "
                             "the delimiter stands for it, except with -d '' (each line comes out as it came in)")
    parser.add_argument("-m", "--model", default=None,
                        help="model folder, hub name, or a shipped model: default (the embedded one), accurate, fast")
    parser.add_argument("-s", "--standard", default=None, choices=STANDARD_CHOICES,
                        help="how words are written: general, pku, msr or ud (default: the model's own, general for the shipped ones) "
                             "(README: Granularity and standards)")
    parser.add_argument("-g", "--granularity", default="default",
                        help="finer or coarser words within the standard: fine, default, coarse, or a number in [0, 1]")
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
        "--workers", type=workers_count, default="auto", metavar="N",
        help="segment in N processes, each with cores/N threads; same output, in order (default: auto, "
             "one process per core for input files of 100,000 characters or more, else one; "
             "standard input stays in one)",
    )
    parser.add_argument(
        "-u", "--user-dict", action="append", default=[], metavar="FILE",
        help="a jieba-format user dictionary (`word [freq] [tag]` a line) whose words stay whole; repeatable",
    )
    parser.add_argument(
        "--mode", choices=("default", "search", "full"), default="default",
        help="default: the words, tiling the line; search: each word after its sub-words (jieba's "
        "cut_for_search); full: every candidate word of the granularity levels (jieba's cut_all)",
    )
    parser.add_argument(
        "--conventions", choices=("default", "ascii", "off"), default="default",
        help="rules of numbers, counts and suffixes (README: Granularity and standards): default; ascii: "
        "numbers in ASCII digits take their unit too (1997年, as PKU/MSR write it); "
        "off: the heads and word table alone",
    )
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar (there is none unless stderr is a terminal)")


STANDARD_CHOICES = ("general", "pku", "msr", "ud")  # levels.STANDARDS (not imported: --help stays light)
# --conventions -> Conventions(**kwargs)
CONVENTION_CHOICES = {"default": {}, "ascii": {"ascii_digits": True}, "off": None}


def workers_count(value: str):
    """--workers: a number, or auto (parallel.auto_workers)."""
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, got {value!r}") from None


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
            yield from without_bom(iter_pieces(sys.stdin.buffer, name, errors))
        else:
            with open(path, "rb") as stream:
                yield from without_bom(iter_pieces(stream, name, errors))
    except UndecodableLine as err:
        raise CLIError(f"{err}; convert the file to UTF-8 or pass --encoding-errors replace") from None
    except IsADirectoryError:
        raise CLIError(f"{path} is a directory; give text files") from None
    except OSError as err:  # cannot open, or an I/O error mid-file (the consumer's own errors never land here)
        raise CLIError(f"cannot read {name}: {err.strerror or err}") from None


def without_bom(pieces: Iterable[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
    """The pieces with a BOM (U+FEFF) at the start of the first one dropped, as Python's
    utf-8-sig reads it: a mark some editors put in front of a file, not text (segmented, it
    would come out as an invisible word of its own). The API keeps a text as given."""
    pieces = iter(pieces)
    for text, ends in pieces:
        yield text.removeprefix("\ufeff"), ends
        break
    yield from pieces


def check_decoding(paths: list[str]) -> None:
    """Stop at bytes that are not UTF-8 in a regular input file before the model loads: a fast
    streaming pass (lines.check_utf8), with read_pieces' message. stdin cannot be read twice."""
    for path in paths:
        if path == "-" or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as stream:
                check_utf8(stream, path)
        except UndecodableLine as err:
            raise CLIError(f"{err}; convert the file to UTF-8 or pass --encoding-errors replace") from None
        except OSError as err:
            raise CLIError(f"cannot read {path}: {err.strerror or err}") from None


@contextlib.contextmanager
def atomic_output(path: str | None):
    """Yield a UTF-8 text stream; for a file, write a temporary beside it and rename it on success.

    A failed write (disk full) becomes a CLIError; a broken pipe is left to the caller. An
    existing path that is not a regular file (/dev/null, a FIFO) is written in place: a
    rename would replace the device itself.
    """
    if path is None:
        if (getattr(sys.stdout, "encoding", "utf-8").lower() not in ("utf-8", "utf8")
                and hasattr(sys.stdout, "reconfigure")):
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
        handle, temporary = _part_file(target)
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


def _part_file(target: Path) -> tuple[int, str]:
    """(descriptor, path) of a new `.OUT.<pid>.part` beside `target`, mode 0600. First removes the
    part files of earlier runs that were killed (their process is gone: `kill -9` skips the
    cleanup), so that leftovers do not pile up; those of runs still going are left alone."""
    folder = target.parent
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([0-9]+)\.part")
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            found = pattern.fullmatch(name)
            if found and (int(found.group(1)) == os.getpid() or not _running(int(found.group(1)))):
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
    temporary = str(folder / f".{target.name}.{os.getpid()}.part")
    return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temporary


def _running(pid: int) -> bool:
    """Is process `pid` alive? True where that cannot be told (not POSIX, where os.kill(pid, 0)
    would end the process instead of asking): a part file is then kept, never one of a live run removed."""
    if os.name != "posix" or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's live process
        return True
    return True


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


def load_user_dictionaries(paths: list[str]):
    """The -u files in one UserDictionary, each read whole before the model loads."""
    from ..dictionary import UserDictionary

    dictionary = UserDictionary()
    for path in paths:
        if os.path.isdir(path):
            raise CLIError(f"-u {path} is a directory; give a user dictionary file")
        if not os.path.isfile(path):
            raise CLIError(f"-u {path}: no such file")
        try:
            dictionary.load(path)
        except OSError as err:
            raise CLIError(f"-u {path}: cannot read: {err.strerror or err}") from None
        except ValueError as err:
            raise CLIError(str(err)) from None
    return dictionary


def with_saved_words(folder, extra):
    """The user words saved in a model folder (Segmenter.save_pretrained), then those of `extra`."""
    from ..dictionary import UserDictionary

    dictionary = UserDictionary()
    dictionary.load_folder(folder)
    dictionary.restore(extra.records())
    return dictionary


def check_output(path: str | None, inputs: list[str] = ()) -> None:
    """Fail before the model loads when -o cannot be written (atomic_output would only find out
    after it), or is one of the `inputs` (its file is replaced at the end: that text would be gone)."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"-o {path} is a directory; give a file name")
    if target.exists() and any(name != "-" and os.path.samefile(name, target) for name in inputs):
        raise CLIError(f"-o {path} is also an input file; write the words to another file")
    folder = target.resolve().parent if target.is_symlink() else target.parent
    if not folder.is_dir():
        raise CLIError(f"cannot write {path}: its folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) and not (target.exists() and not target.is_file()):
        raise CLIError(f"cannot write {path}: no permission to create files in {folder}")


def peek(lines: Iterable[str]) -> Iterator[str] | None:
    """The same lines, or None when there are none (then no model needs to load)."""
    lines = iter(lines)
    first = next(lines, None)
    return None if first is None else itertools.chain([first], lines)


def whole_lines(pieces: Iterable[tuple[str, bool]]) -> Iterator[str]:
    """Lines again from (text, ends_line) pieces."""
    parts: list[str] = []
    for text, ends in pieces:
        parts.append(text)
        if ends:
            yield "".join(parts)
            parts = []


def mode_words(segmenter, lines: Iterable[str], mode: str) -> Iterator[list[str]]:
    """--mode search / full: jieba's cut_for_search / cut(cut_all=True), a line at a time."""
    for line in lines:
        yield segmenter.lcut_for_search(line) if mode == "search" else segmenter.lcut(line, cut_all=True)


def run(args: argparse.Namespace) -> int:
    """Every line of every file through segmenter.parallel.segment_pieces: in this process, or
    in N worker processes with --workers N, or with the default --workers auto on a large input
    (the same output either way, in input order)."""
    files = args.files or ["-"]
    for path in files:  # fail before loading the model (and torch) when an input is missing
        if path != "-" and not os.path.exists(path):
            raise CLIError(f"{path}: no such file")
        if path != "-" and os.path.isdir(path):
            raise CLIError(f"{path} is a directory; give text files")
    if args.workers != "auto" and args.workers < 1:
        raise CLIError(f"--workers must be at least 1, got {args.workers}")
    if args.mode != "default" and args.workers != "auto" and args.workers > 1:
        raise CLIError(f"--mode {args.mode} runs in one process; drop --workers")
    user_dictionary = load_user_dictionaries(args.user_dict)
    check_output(args.output, files)
    if args.encoding_errors == "strict":
        check_decoding(files)
    pieces = peek(piece for path in files for piece in read_pieces(path, args.encoding_errors))
    if pieces is None:  # no input line: nothing to segment, no model to load
        with atomic_output(args.output):
            return 0

    from concurrent.futures.process import BrokenProcessPool

    from ..api import Segmenter
    from ..arguments import resolve_device
    from ..conventions import Conventions
    from ..lines import write_pieces
    from ..model import ModelLoadError, resolve_model_folder
    from ..parallel import WorkerSpec, auto_workers, choose_workers, segment_pieces

    show_progress = not args.quiet and sys.stderr.isatty() and any(p != "-" for p in files)
    try:
        resolve_device(args.device)  # fail here, not once in each worker
        folder = resolve_model_folder(args.model)
        if len(user_dictionary):  # -u adds to the words a folder was saved with, as add_word would
            user_dictionary = with_saved_words(folder, user_dictionary)
        spec = WorkerSpec(
            str(folder), device=args.device, batch_size=args.batch_size,
            granularity=parse_granularity(args.granularity), num_threads=args.threads, standard=args.standard,
            user_dictionary=user_dictionary if len(user_dictionary) else None,
            conventions=(None if CONVENTION_CHOICES[args.conventions] is None
                         else Conventions(**CONVENTION_CHOICES[args.conventions])),
            segmenter_class=Segmenter,
        )
        workers = args.workers
        if workers == "auto":  # processes for a large input (read ahead to know), else this one
            # Standard input may be a stream (tail -f log | segmenter): reading ahead would hold
            # back its first lines, so it stays in this process.
            processes = auto_workers(spec=spec) if args.mode == "default" and "-" not in files else 1
            workers, pieces = choose_workers(pieces, processes)
        segmenter = spec.build() if workers == 1 else None  # load errors surface before any output
        if args.mode == "default":
            words = segment_pieces(pieces, segmenter=segmenter, spec=spec, workers=workers,
                                   show_progress=show_progress)
        else:  # search / full mode read whole lines
            words = ((line_words, True) for line_words in mode_words(segmenter, whole_lines(pieces), args.mode))
        with atomic_output(args.output) as out:
            write_pieces(out, words, args.delimiter)
            out.flush()
    except (ModelLoadError, ValueError, TypeError) as err:  # raised in a worker, re-raised here
        raise CLIError(str(err)) from None
    except BrokenProcessPool:
        raise CLIError("a worker process died (out of memory?); "
                       "try fewer --workers or a smaller --batch-size") from None
    except BrokenPipeError:  # `segmenter --workers 4 big.txt | head`: stop quietly
        silence_stdout()
    return 0
