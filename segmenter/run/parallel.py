"""Segment a stream of lines with N local worker processes, output in input order.

Why processes: one forward pass uses a few cores well but the Python around it (windows,
junctions, words) runs on one, so on a many-core machine N processes with cores // N engine
threads each go faster than one process with all the threads. Each worker loads the model
once (an initializer), then takes chunks of lines and sends back their words.

How a worker starts, gets its chunks and stops (the 'spawn' start method, a bounded number of
chunks in flight, Ctrl-C, a model that fails to load in a worker) is workers.py's: processes.py
starts the same workers for a Segmenter's helpers. This module is the front end: the arguments,
lines cut into pieces and chunks, the number of workers, and the words put back into lines.

The results do not depend on the number of workers or the chunk size: the encoder computes
every window with the same shape however windows are batched (reader.py).

workers="auto" (the default of segment_lines, segment_files and the CLI): one process (whose
threads share the cores, cores.py) for an input of less than AUTO_CHARS characters, or on one
core, or for a segmenter on one thread (num_threads=1); else one process per core: processes,
start-up included, go faster than one process's threads, whose Python (a third of the time)
holds the GIL.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
from collections import deque
from typing import Iterable, Iterator

from .cores import available_cores, threads_per_worker
from .lines import chunked, line_pieces, read_file_lines
from .workers import WorkerSpec, main_is_guarded, map_chunks

# A chunk of a stream of lines, one task of the worker processes: CHUNK_LINES lines (enough to
# fill batches of windows, few enough to stream), or fewer when they hold CHUNK_CHARS characters
# (the memory a task takes stays flat). Not cores.THREAD_CHUNKS or processes.PROCESS_CHUNKS:
# those cut one batch already in memory into shares of the cores.
CHUNK_LINES = 512
CHUNK_CHARS = 65_536
# workers="auto" starts processes once the input holds this many characters (read ahead before
# deciding): each worker's start-up (~1 s: imports and the model) is then a small part of the run.
AUTO_CHARS = 100_000


def auto_workers(segmenter=None, spec: WorkerSpec | None = None) -> int:
    """Processes for workers="auto" on a large input: one per core the segmenter may use (1 on
    one core, for num_threads=1, off the CPU, for the torch engine, whose threads scale, or
    under a __main__ script that spawned workers cannot import safely: main_is_guarded)."""
    cores = available_cores()
    if cores < 2 or multiprocessing.parent_process() is not None or not main_is_guarded():
        return 1
    if segmenter is not None:
        threads = getattr(segmenter.reader, "threads", 1)
        on_cpu = segmenter.device == "cpu" and segmenter.engine in ("onnx", "numpy")
    else:
        threads = spec.num_threads or cores
        on_cpu = spec.device == "cpu" and spec.engine != "torch"
    return max(1, min(cores, threads)) if on_cpu else 1


def choose_workers(pieces: Iterable[tuple[str, bool]], processes: int, limit: int | None = None):
    """(workers, the same pieces) for workers="auto": `processes` when the pieces hold at least
    `limit` (AUTO_CHARS) characters, read ahead to find out; else 1."""
    limit = AUTO_CHARS if limit is None else limit
    pieces = iter(pieces)
    if processes < 2:
        return 1, pieces
    ahead, chars = [], 0
    for piece in pieces:
        ahead.append(piece)
        chars += len(piece[0]) if isinstance(piece[0], str) else 0
        if chars >= limit:
            return processes, itertools.chain(ahead, pieces)
    return 1, iter(ahead)


def _checked_spec(segmenter, spec, workers, chunk_lines):
    """The arguments of segment_lines/segment_pieces, checked; the WorkerSpec workers build from."""
    if workers != "auto" and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers must be a positive int or 'auto', got {workers!r}")
    if not isinstance(chunk_lines, int) or isinstance(chunk_lines, bool) or chunk_lines < 1:
        raise ValueError(f"chunk_lines must be a positive int, got {chunk_lines!r}")
    if segmenter is None and spec is None:
        raise ValueError("give a segmenter or a WorkerSpec")
    if workers == "auto" or workers > 1:
        spec = spec or WorkerSpec.of(segmenter)
    return spec


def _worker_spec(spec: WorkerSpec, workers: int) -> WorkerSpec:
    if spec.num_threads is None:
        return WorkerSpec(**{**spec.__dict__, "num_threads": threads_per_worker(workers)})
    return spec


def segment_lines(
    lines: Iterable[str],
    *,
    segmenter=None,
    spec: WorkerSpec | None = None,
    workers: int | str = "auto",
    chunk_lines: int = CHUNK_LINES,
    max_in_flight: int | None = None,
    show_progress: bool | None = None,
) -> Iterator[list[str]]:
    """Words of each line, in input order, streamed (a generator; arguments checked at once).

    workers == 1 runs in this process with `segmenter` (built from `spec` if not given);
    workers > 1 starts that many processes that each build the segmenter from `spec` (or from
    `segmenter`'s settings) with cores // workers threads unless spec.num_threads is set;
    "auto" (the default): one process per core for an input of AUTO_CHARS characters or more
    (auto_workers), else this one.
    A line longer than lines.PIECE_CHARS is segmented in pieces (lines.line_pieces): the work
    per line is bounded; only its words are gathered. segment_pieces streams even those.
    """
    spec = _checked_spec(segmenter, spec, workers, chunk_lines)
    if isinstance(lines, (str, bytes)):  # iterating it would make every character a line
        raise TypeError(f"lines must be an iterable of str, one text each, not one {type(lines).__name__}: "
                        "segment_lines([text]), or segment(text)")
    pieces = (p for index, line in enumerate(lines) for p in line_pieces(_checked_line(line, index)))
    return _gather_lines(_segment_pieces(pieces, segmenter, spec, workers, chunk_lines, max_in_flight, show_progress))


def segment_pieces(pieces: Iterable[tuple[str, bool]], *, segmenter=None, spec: WorkerSpec | None = None,
                   workers: int | str = "auto", chunk_lines: int = CHUNK_LINES, max_in_flight: int | None = None,
                   show_progress: bool | None = None):
    """(words, ends_line) for (text, ends_line) pieces (lines.iter_pieces), in order: what the
    CLI streams, so that a line of any length goes through in bounded memory."""
    spec = _checked_spec(segmenter, spec, workers, chunk_lines)
    return _segment_pieces(pieces, segmenter, spec, workers, chunk_lines, max_in_flight, show_progress)


def _gather_lines(pieces):
    words: list[str] = []
    for piece_words, ends in pieces:
        words += piece_words
        if ends:
            yield words
            words = []


def _segment_pieces(pieces, segmenter, spec, workers, chunk_lines, max_in_flight, show_progress):
    from ..model.reader import progress_enabled

    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(unit="char", unit_scale=True, desc="segmenting", smoothing=0.1)
    in_flight: deque = deque()  # (characters, ends_line flags) of each chunk in flight

    def texts(chunks):
        for chunk in chunks:
            in_flight.append((sum(len(text) for text, _ in chunk), [ends for _, ends in chunk]))
            yield [text for text, _ in chunk]

    if workers == "auto":
        workers, pieces = choose_workers(pieces, auto_workers(segmenter, spec))
    chunks = texts(chunked(pieces, chunk_lines, CHUNK_CHARS, length=lambda piece: len(piece[0])))
    if workers == 1:
        local = segmenter or spec.build()
        results = (local.segment_batch(chunk, show_progress=False) for chunk in chunks)
    else:
        results = map_chunks(_worker_spec(spec, workers), chunks, workers, max_in_flight)
    try:
        for words_of_chunk in results:
            characters, ends = in_flight.popleft()
            yield from zip(words_of_chunk, ends)
            if progress is not None:
                progress.update(characters)
    finally:
        results.close()  # stops the workers at once when the consumer stops early
        if progress is not None:
            progress.close()


def _checked_line(line, index: int) -> str:
    if not isinstance(line, str):
        raise TypeError(f"lines[{index}] must be a str, got {type(line).__name__}")
    return line


def segment_files(paths: Iterable[str | os.PathLike], *, errors: str = "strict",
                  **options) -> Iterator[tuple[str, list[str]]]:
    """(path, words) for every line of every file, in order; options as in segment_lines.
    errors: "strict" (stop at bytes that are not UTF-8, naming the file and line) or "replace"
    (U+FFFD for them), as the command line's --encoding-errors."""
    if isinstance(paths, (str, bytes, os.PathLike)):  # iterating a path would read its characters
        raise TypeError(f"paths must be a list of file paths, not one path: segment_files([{os.fspath(paths)!r}])")
    if errors not in ("strict", "replace"):  # "ignore" and the like would drop text without a word
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    owners: deque = deque()  # the file of each line in flight

    def lines():
        for path in paths:
            for line in read_file_lines(path, errors):
                owners.append(os.fspath(path))
                yield line

    return ((owners.popleft(), words) for words in segment_lines(lines(), **options))
