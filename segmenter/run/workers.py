"""The worker-process side of segmenting in several processes: what a worker builds its
segmenter from (WorkerSpec), how it starts (start_worker), and a pool that streams chunks of
lines through such workers in order (map_chunks).

Apart from parallel.py because two callers start these workers: parallel.segment_lines and
segment_files (a stream of lines, `--workers`) through map_chunks, and processes.py (a
Segmenter's helpers for one large batch) with its own pool and start_worker. This module
imports neither of them, nor api.py.

Design choices, each for a failure seen elsewhere:
  * 'spawn' start method: torch's thread pools and fork do not mix (forked children can hang
    on a lock held by a thread that was not copied). Spawned workers import segmenter afresh,
    and run the __main__ script's top level again: main_is_guarded says whether that is safe.
  * The WorkerSpec carries the Segmenter class itself (pickled by reference: unpickling it in
    a worker imports its module), so this module never imports api.py, which reaches it
    through parallel.py and processes.py.
  * ProcessPoolExecutor, not multiprocessing.Pool: a worker killed by the OOM killer makes
    the executor raise BrokenProcessPool; Pool would wait forever for the lost chunk.
  * Bounded in-flight chunks (submit + deque, not Pool.imap, whose feeder thread reads the
    whole input ahead): memory stays at a few chunks whatever the corpus size.
  * Workers ignore Ctrl-C; the parent stops them, so an interrupt prints one line, not N
    tracebacks. A worker ends with its parent, even one killed outright (_exit_with_parent).
  * A model that fails to load in a worker is not raised there (the executor would only say
    "initializer failed"): the error is kept and raised with the first chunk, so the caller
    sees the real ModelLoadError.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..model.profile import HeadProfile
from ..standards.conventions import DEFAULT_CONVENTIONS


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to build the same Segmenter as the parent (picklable)."""

    model: str | None
    # The class to build (api.Segmenter, or the parent's subclass): WorkerSpec.of takes the parent's.
    segmenter_class: type = field(kw_only=True)
    profile: HeadProfile | None = None
    device: str = "cpu"
    batch_size: int = 64
    granularity: str | float = "default"
    window: int | None = None
    overlap: int | None = None
    num_threads: int | None = None
    # The parent's user dictionary (add_word / load_userdict), so workers cut the same words.
    user_dictionary: object | None = None
    engine: str = "auto"  # arguments.ENGINES; a segmenter's own is passed on, so workers run the same one
    decode: str | None = None  # the parent's decoder (api.py; None: the profile's), so workers cut the same words
    conventions: object | None = DEFAULT_CONVENTIONS  # the parent's conventions (None: off), likewise
    word_decoding: object | None = None  # the parent's decoder weights (None: the defaults)
    standard: object | None = None  # the parent's standard (levels.Standard; None: the model's default)

    @classmethod
    def of(cls, segmenter, num_threads: int | None = None) -> "WorkerSpec":
        return cls(
            str(segmenter.folder), segmenter.profile, str(segmenter.device), segmenter.batch_size,
            segmenter.granularity, segmenter.window, segmenter.overlap, num_threads,
            getattr(segmenter, "user_dictionary", None), segmenter.engine, getattr(segmenter, "decode", "threshold"),
            getattr(segmenter, "conventions", DEFAULT_CONVENTIONS), getattr(segmenter, "word_decoding", None),
            getattr(segmenter, "standard", None), segmenter_class=type(segmenter),
        )

    def build(self):
        sizes = {k: v for k, v in (("window", self.window), ("overlap", self.overlap)) if v is not None}
        segmenter = self.segmenter_class(
            self.model, profile=self.profile, device=self.device, batch_size=self.batch_size,
            num_threads=self.num_threads, granularity=self.granularity, engine=self.engine, decode=self.decode,
            conventions=self.conventions, **sizes, **({} if self.standard is None else {"standard": self.standard}),
        )
        if self.word_decoding is not None:
            segmenter.word_decoding = self.word_decoding
        if self.user_dictionary is not None:
            segmenter.user_dictionary = self.user_dictionary
        return segmenter


# -- the worker side: module globals, one set per worker process ------------------------------
_worker_segmenter = None
_worker_error: BaseException | None = None


def start_worker(spec: WorkerSpec) -> None:
    """A worker process's initializer (here, and for a Segmenter's helpers: processes.py)."""
    global _worker_segmenter, _worker_error
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    try:
        # No word-table indexes (table.WordTable.build_indexes): 20 MB and ~0.3 s of start-up a
        # worker, for lookups about as fast without them on a chunk's sorted queries.
        _worker_segmenter = spec.build()
    except Exception as err:  # raised with the first chunk, where the parent can see it
        _worker_error = err


def _exit_with_parent() -> None:
    """End this worker when the process that started it ends. A parent killed outright (SIGKILL,
    the OOM killer) never shuts its pool down, and a worker waiting on the pool's queue (whose
    write end it holds too, so no end of file comes) would wait for a task forever, holding its
    model's memory: a killed CLI run left its helper processes behind. The parent's sentinel
    (multiprocessing.parent_process) turns ready when the parent is gone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="segmenter-parent-watch", daemon=True).start()


def worker_segmenter():
    """This worker's segmenter (raises what building it raised)."""
    if _worker_error is not None:
        raise _worker_error
    return _worker_segmenter


def _segment_chunk(lines: list[str]) -> list[list[str]]:
    return worker_segmenter().segment_batch(lines, show_progress=False)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Drop queued chunks and end the workers without waiting for the chunks they hold (Ctrl-C
    stops in a fraction of a second, not after each worker's chunk: seconds)."""
    # terminate_workers() is Python 3.14+; before it, the executor's own process table, taken
    # before shutdown(), which sets it to None (terminating after it ended nothing).
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    # Reaped here, so that the executor's thread, which the interpreter joins at exit, sees each
    # worker gone; one that outlives SIGTERM (still starting, under load) is killed.
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join(timeout=2)


def map_chunks(spec: WorkerSpec, chunks: Iterable[list[str]], workers: int, max_in_flight: int | None = None):
    """Words of each chunk's lines, one list per chunk, in input order, from `workers` processes.

    At most `max_in_flight` chunks (default 2 per worker: one running, one queued) are read
    ahead of the consumer."""
    limit = max(1, max_in_flight or 2 * workers)
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=start_worker, initargs=(spec,)
    )
    pending: deque = deque()
    finished = False
    try:
        for chunk in chunks:
            pending.append(pool.submit(_segment_chunk, chunk))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # an error, an interrupt, or a consumer that stopped early
            _stop_now(pool)


def main_is_guarded() -> bool:
    """Whether spawned workers can start here: 'spawn' runs the __main__ script again in each
    worker, so a script without `if __name__ == "__main__":` would segment its input again
    there and fail. True for the REPL, `python -c`, notebooks, `python -m segmenter`, and a
    script that has such a guard at its top level; False for a script without one."""
    import ast
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(getattr(main, "__spec__", None), "name", None) in ("segmenter", "segmenter.__main__"):
        return True
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    tests = [ast.unparse(node.test) for node in tree.body if isinstance(node, ast.If)]
    return any("__name__" in test and "__main__" in test for test in tests)
