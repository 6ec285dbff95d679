"""Segment text files (or stdin) line by line; words joined by a delimiter. UTF-8 in and out.

Everything that can be checked without the model is checked before it loads: the input files,
the user dictionaries (read whole: a bad line stops here, naming the file and line), the output
path, the model's name; an input without a single line is answered without loading the model.

Standard input that is a pipe or a terminal streams (inputs.py): each line's words are written
as soon as it is segmented, what has arrived meanwhile is segmented in one batch
(available_chunks), and a line that cannot be decoded ends the run (exit 2, naming it) after
every line before it is written.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
from typing import Iterable, Iterator, TextIO

from ..run.lines import UndecodableLine, check_utf8, iter_pieces
from . import CLIError
from .inputs import check_encoded, check_encoding_name, encoding_hint, is_utf8, line_available, open_input
from .output import atomic_output, check_output, silence_stdout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="UTF-8 text files (default: stdin; '-' is stdin); a BOM at the start of each is dropped")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.add_argument("-d", "--delimiter", nargs="?", default=" ", const=" ",
                        help="string between words (default, and -d alone as in jieba: one space); whitespace "
                             "between words is dropped, the delimiter stands for it, except with -d '' (each line "
                             "comes out as it came in, its end written \\n)")
    parser.add_argument("-m", "--model", default=None,
                        help="model folder, hub name, or a shipped model: default (the embedded one), fast")
    parser.add_argument("-s", "--standard", default=None, choices=STANDARD_CHOICES,
                        help="how words are written: general, pku, msr or ud (default: the model's own, general for the shipped ones) "
                             "(README: Granularity and standards)")
    parser.add_argument("-g", "--granularity", default="default",
                        help="finer or coarser words within the standard: fine, default, coarse, or a number in [0, 1]")
    parser.add_argument("--batch-size", type=int, default=64, help="windows per forward pass (default: 64)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    parser.add_argument("--encoding", default="utf-8", metavar="NAME",
                        help="the inputs' encoding: utf-8 (default), gb18030 (GBK, GB2312), big5, utf-16, ... "
                             "(output is UTF-8)")
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
    # jieba's command line (python -m jieba) has these: they mean the same here, or say why not.
    parser.add_argument("-a", "--cut-all", action="store_true", help="jieba's full mode: the same as --mode full")
    parser.add_argument("-n", "--no-hmm", action="store_true",
                        help="accepted and ignored, as HMM=False in the API: there is no HMM, the heads decide")
    parser.add_argument("-D", "--dict", default=None, help=argparse.SUPPRESS)
    parser.add_argument("-p", "--pos", nargs="?", const="_", default=None, help=argparse.SUPPRESS)


def jieba_options(args: argparse.Namespace) -> None:
    """jieba's -a is --mode full; its -D and -p have nothing to act on here: say so, and what to use."""
    if args.dict is not None:
        raise CLIError(f"-D {args.dict}: there is no dictionary to replace here, the heads segment; "
                       "-u FILE keeps a user dictionary's words whole, -m MODEL segments with another model")
    if args.pos is not None:
        raise CLIError("-p: there is no part-of-speech tagging here")
    if args.cut_all:
        if args.mode not in ("default", "full"):
            raise CLIError(f"-a is --mode full; it cannot go with --mode {args.mode}")
        args.mode = "full"


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


class Reading:
    """The input being read (its stream), so that available_chunks can ask whether its next
    line has arrived."""

    stream = None

    def line_available(self) -> bool:
        return self.stream is None or line_available(self.stream)


def read_pieces(path: str, errors: str, encoding: str = "utf-8",
                reading: Reading | None = None) -> Iterator[tuple[str, bool]]:
    """(text, ends_line) pieces of a file's lines (or stdin for '-'), as segmenter.lines reads
    them (a very long line in pieces: flat memory); errors as CLIError, except UndecodableLine
    (raised as it is: decode_error makes the message)."""
    name = "<stdin>" if path == "-" else path
    try:
        stream, name = open_input(path, encoding, errors)
        if reading is not None:
            reading.stream = stream
        try:
            yield from without_bom(iter_pieces(stream, name, errors))
        finally:
            if path != "-":
                stream.close()
    except IsADirectoryError:
        raise CLIError(f"{path} is a directory; give text files") from None
    except OSError as err:  # cannot open, or an I/O error mid-file (the consumer's own errors never land here)
        raise CLIError(f"cannot read {name}: {err.strerror or err}") from None


def decode_error(err: UndecodableLine, encoding: str) -> CLIError:
    """The one line for bytes that do not decode: where, and what they look like."""
    return CLIError(f"{err}; {encoding_hint(err, encoding)}")


def without_bom(pieces: Iterable[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
    """The pieces with a BOM (U+FEFF) at the start of the first one dropped, as Python's
    utf-8-sig reads it: a mark some editors put in front of a file, not text (segmented, it
    would come out as an invisible word of its own). The API keeps a text as given."""
    pieces = iter(pieces)
    for text, ends in pieces:
        yield text.removeprefix("\ufeff"), ends
        break
    yield from pieces


def check_decoding(paths: list[str], encoding: str = "utf-8") -> None:
    """Stop at bytes that do not decode in a regular input file before the model loads: a fast
    streaming pass (lines.check_utf8), with read_pieces' message. stdin cannot be read twice."""
    for path in paths:
        if path == "-" or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as stream:
                if is_utf8(encoding):
                    check_utf8(stream, path)
                else:
                    check_encoded(stream, path, encoding)
        except UndecodableLine as err:
            raise decode_error(err, encoding) from None
        except OSError as err:
            raise CLIError(f"cannot read {path}: {err.strerror or err}") from None


def load_user_dictionaries(paths: list[str]):
    """The -u files in one UserDictionary, each read whole before the model loads."""
    from ..words.dictionary import UserDictionary

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
    from ..words.dictionary import UserDictionary

    dictionary = UserDictionary()
    dictionary.load_folder(folder)
    dictionary.restore(extra.records())
    return dictionary


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


def available_chunks(items: Iterable, line_ready, size: int, max_chars: int) -> Iterator[list]:
    """Lists of items ((text, ends_line) pieces, or lines) as lines.chunked makes them (`size`
    items or `max_chars` characters), but cut short where the next line has not arrived yet
    (line_ready() is False: a pipe that waits), so that what has arrived is segmented and written
    before the reader waits. Bytes that do not decode (UndecodableLine) are raised after the
    chunk of the good lines before them."""
    chunk: list = []
    chars = 0
    try:
        for item in items:
            chunk.append(item)
            chars += len(item if isinstance(item, str) else item[0])
            if len(chunk) >= size or chars >= max_chars or not line_ready():
                yield chunk
                chunk, chars = [], 0
    except UndecodableLine as err:
        error = err
    else:
        error = None
    if chunk:
        yield chunk
    if error is not None:
        raise error


def mode_batch(segmenter, texts: list[str], mode: str) -> list[list[str]]:
    """--mode search / full for a batch of lines: jieba's cut_for_search / cut(cut_all=True) of
    each, the same words, with the heads read for the whole batch at once (as segment_batch
    reads them) and the lines shared by the reader's threads."""
    from ..model.profile import GRANULARITY_NAMES
    from ..run.cores import in_worker_thread, text_chunks
    from ..words.search_modes import full_mode_tokens, search_tokens

    level = segmenter.granularity
    if mode == "search":  # as JiebaCalls.tokenize(mode="search")
        levels = [level, *sorted({v for v in GRANULARITY_NAMES.values() if v < level})]
    else:  # as JiebaCalls.full_tokens
        levels = sorted(set(GRANULARITY_NAMES.values()) | {level})
    dictionary = segmenter.user_dictionary.snapshot()  # one for every line and level

    def words_of(indices: list[int]) -> list[list[str]]:
        plans = segmenter.score_texts([texts[i] for i in indices], show_progress=False)
        per_level = [segmenter.assemble(plans, g, dictionary=dictionary) for g in levels]
        found = []
        for k, i in enumerate(indices):
            tokens = [tokens_of_level[k] for tokens_of_level in per_level]
            tokens = (search_tokens(texts[i], tokens[0], tokens[1:], segmenter.word_table) if mode == "search"
                      else full_mode_tokens(tokens))
            found.append([word for word, _, _ in tokens])
        return found

    threads = getattr(segmenter.reader, "workers", None)
    chunks = (text_chunks([len(t) for t in texts], threads.count) if threads and not in_worker_thread()
              else [list(range(len(texts)))])
    if len(chunks) < 2:
        return words_of(chunks[0]) if texts else []
    words: list = [None] * len(texts)
    for chunk, found in zip(chunks, threads.map(words_of, chunks)):
        for i, line_words in zip(chunk, found):
            words[i] = line_words
    return words


def segment_here(segmenter, chunks: Iterable[list], mode: str, progress=None) -> Iterator[list[tuple[list[str], bool]]]:
    """[(words, ends_line), ...] for each chunk, segmented in this process: its (text, ends_line)
    pieces in default mode, its whole lines in search and full modes."""
    for chunk in chunks:
        if mode == "default":
            texts, ends = [text for text, _ in chunk], [end for _, end in chunk]
            words = segmenter.segment_batch(texts, show_progress=False)
        else:
            texts, ends = chunk, [True] * len(chunk)
            words = mode_batch(segmenter, texts, mode)
        yield list(zip(words, ends))
        if progress is not None:
            progress.update(sum(map(len, texts)))


def flushed(chunks: Iterable[list], out: TextIO) -> Iterator:
    """The pieces of each chunk, `out` flushed once a chunk's pieces are all written (before the
    next chunk waits for input)."""
    for results in chunks:
        yield from results
        out.flush()


def until_error(pieces: Iterable, failed: list) -> Iterator:
    """The pieces up to bytes that do not decode: the error is kept in `failed`, to be raised once
    the words of every line before it are written (worker processes take chunks ahead)."""
    try:
        yield from pieces
    except UndecodableLine as err:
        failed.append(err)


def run(args: argparse.Namespace) -> int:
    """Every line of every file: segmented in this process a chunk at a time (segment_here), as
    it arrives on a pipe; or in N worker processes (parallel.segment_pieces) with --workers N, or
    with the default --workers auto on a large input file (the same output either way, in input
    order)."""
    jieba_options(args)
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
    try:
        encoding = check_encoding_name(args.encoding)
    except ValueError as err:
        raise CLIError(str(err)) from None
    user_dictionary = load_user_dictionaries(args.user_dict)
    check_output(args.output, files)
    if args.encoding_errors == "strict":
        check_decoding(files, encoding)

    from concurrent.futures.process import BrokenProcessPool

    from ..arguments import resolve_device
    from ..model.folders import ModelLoadError, resolve_model_folder

    try:  # the device and the model's name, checked whatever the input (an empty one too)
        resolve_device(args.device)  # fail here, not once in each worker
        folder = resolve_model_folder(args.model)
    except (ModelLoadError, ValueError, TypeError) as err:
        raise CLIError(str(err)) from None
    reading = Reading()
    pieces = (piece for path in files for piece in read_pieces(path, args.encoding_errors, encoding, reading))
    try:
        pieces = peek(pieces)
    except UndecodableLine as err:  # the first line of standard input
        raise decode_error(err, encoding) from None
    if pieces is None:  # no input line: nothing to segment, no model to load
        with atomic_output(args.output):
            return 0

    from ..api import Segmenter
    from ..run.lines import write_pieces
    from ..run.parallel import CHUNK_CHARS, CHUNK_LINES, auto_workers, choose_workers, segment_pieces
    from ..run.workers import WorkerSpec
    from ..standards.conventions import Conventions

    show_progress = not args.quiet and sys.stderr.isatty() and any(p != "-" for p in files)
    failed: list[UndecodableLine] = []
    try:
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
        with atomic_output(args.output) as out:
            if workers == 1:  # a chunk at a time, each written as soon as it is segmented
                items = pieces if args.mode == "default" else whole_lines(pieces)
                chunks = available_chunks(items, reading.line_available, CHUNK_LINES, CHUNK_CHARS)
                with progress_bar(show_progress) as progress:
                    # One write_pieces for the whole run: a long line's pieces may fall in two
                    # chunks, and only write_pieces knows the line is already started.
                    write_pieces(out, flushed(segment_here(segmenter, chunks, args.mode, progress), out),
                                 args.delimiter)
            else:
                words = segment_pieces(until_error(pieces, failed), segmenter=segmenter, spec=spec,
                                       workers=workers, show_progress=show_progress)
                write_pieces(out, words, args.delimiter)
                out.flush()
                if failed:
                    raise failed[0]
    except UndecodableLine as err:  # standard input's: the lines before it are written
        raise decode_error(err, encoding) from None
    except (ModelLoadError, ValueError, TypeError) as err:  # raised in a worker, re-raised here
        raise CLIError(str(err)) from None
    except BrokenProcessPool:
        raise CLIError("a worker process died (out of memory?); "
                       "try fewer --workers or a smaller --batch-size") from None
    except BrokenPipeError:  # `segmenter --workers 4 big.txt | head`: stop quietly
        silence_stdout()
    return 0


@contextlib.contextmanager
def progress_bar(show: bool):
    """A bar of characters segmented (stderr a terminal, an input file, no -q), else None."""
    from ..model.reader import progress_enabled

    if not progress_enabled(show):
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(unit="char", unit_scale=True, desc="segmenting", smoothing=0.1)
    try:
        yield bar
    finally:
        bar.close()
