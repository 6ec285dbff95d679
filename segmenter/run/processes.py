"""A Segmenter's helper processes: a large batch shared with processes that hold the same segmenter.

Why: on N cores, one process stays well short of N times its one thread however its threads
share the work (cores.py): the Python of windows, word decoding and conventions holds the GIL.
N processes do not share a GIL, and come close to N times one. So a Segmenter on the CPU with
onnxruntime and more than one core hands the chunks of a batch of PROCESS_CHARS characters or
more (segment_batch, tokenize_batch, lcut of a long text...) to cores - 1 helper processes and
cuts the others itself.

How, each for a cost that would otherwise show:
  * The parent works too, taking chunks from the same counter as the helpers. A helper starts
    in ~1 s (imports, the model: workers.WorkerSpec.build); until it has answered a first
    no-op task, the parent cuts every chunk alone, so no call waits for a start-up, and a
    short-lived Segmenter loses nothing.
  * A helper gets its next chunk from the callback of its last one (the executor's thread), not
    from the parent, which is busy with its own chunk: it never idles while chunks remain. At
    most IN_FLIGHT chunks per helper are handed out ahead, so the parent never waits long at
    the end of a batch for chunks it could have cut itself.
  * The pool stays up between calls (started on the first large one) and is rebuilt when what a
    helper copied has changed: the user dictionary (a new Snapshot once changed), the profile,
    standard, conventions or decoder weights (their pickled bytes), or the number of cores.
    A segmenter whose word table was replaced in place (research scripts do) has no helpers:
    they would read the folder's.
  * 'spawn' only (workers.py says why), hence none where a spawned process cannot start: inside
    a helper or a segment_lines worker, or under a __main__ script without a __name__ guard.
  * A helper that fails to start leaves the parent working alone (a warning, the same words).
  * A helper that dies (killed, out of memory) or whose pool another call replaced loses no
    chunk: the calling thread cuts the chunks it held, and the pool is let go (a warning).
  * A parent that dies (kill -9, out of memory) takes its helpers with it: each watches it
    (workers.start_worker) instead of waiting on the pool's queue forever.

The words do not depend on who cuts a chunk: each text is cut as it would be alone (reader.py),
and the helpers build the parent's segmenter from its settings.
"""
from __future__ import annotations

import logging
import multiprocessing
import pickle
import threading
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Callable, Iterator

from .cores import ChunkSizes, as_worker_task, in_worker_thread

logger = logging.getLogger(__name__)

# A batch is shared with helpers from PROCESS_CHARS characters (below: the calling thread,
# cores.py). A helper's chunk costs ~1 ms of pickling, and a small chunk is cut less efficiently
# per character (fewer windows per encoder run, more runs of the decoder): a chunk is 8 k
# characters (~0.1 s of work) or more, half a thread's smallest (cores.THREAD_CHUNKS: helpers
# share no GIL, so a smaller chunk pays off here). Every chunk
# pays a batch's fixed work again, most of it the word table's searches, which walk the table
# once per call (issue 57, one thread on 1,000 PKU sentences, 79 k characters: ~3% more CPU in
# 2 chunks than whole, ~15% in 5, ~30% in 10, as 8 k chunks a core made it): so one chunk a core
# up to 40 k characters (the 1,000 PKU sentences: one chunk of 39.5 k each on 2 cores), and
# chunks of about equal size beyond, taken in turn by whoever is free, which balances the cores
# at the end. A helper cuts its chunk whole (cores.text_slices).
PROCESS_CHARS = 8_192
PROCESS_CHUNKS = ChunkSizes(smallest=8_192, largest=40_960, per_worker=1)
IN_FLIGHT = 1  # chunks handed to each helper at a time (more: the parent may wait at a batch's end)


def chunk_chars(total: int, cores: int) -> int:
    """Characters per chunk of a batch of `total` characters shared by `cores` processes."""
    return PROCESS_CHUNKS.size(total, cores)


class SegmenterProcesses:
    """The helper processes of one Segmenter (none until a large batch needs them)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._key: tuple | None = None
        self._ready: Future | None = None  # the first no-op task: done once a helper has started
        self._guarded: bool | None = None  # workers.main_is_guarded(), asked once

    def __getstate__(self):  # a pool does not pickle; a copy starts its own
        return {}

    def __setstate__(self, state) -> None:
        self.__init__()

    def helpers_for(self, cores: int, chars: int) -> int:
        """Helper processes for a batch of `chars` characters on `cores` cores (0: none)."""
        if cores < 2 or chars < PROCESS_CHARS or in_worker_thread() or multiprocessing.parent_process() is not None:
            return 0
        if self._guarded is None:
            from .workers import main_is_guarded

            self._guarded = main_is_guarded()
        return cores - 1 if self._guarded else 0

    def map(self, segmenter, helpers: int, cut_here: Callable[[list[int]], list], chunks: list[list[int]],
            texts: list[str], granularity, batch_size: int, words_only: bool) -> Iterator[list]:
        """cut_here(chunk)'s result for each chunk (of indices into texts), in the chunks' order (a
        generator): the helpers cut some of them, this thread the others, and those a helper lost
        (its process died, or its pool was replaced by another call's: the pool is then let go,
        and the next large batch starts a new one)."""
        pool, ready = self._pool_for(segmenter, helpers)  # this call's pool, even if another call replaces it
        missing = object()
        results: list = [missing] * len(chunks)
        errors: list[BaseException] = []  # a helper's error: raised here, as this thread's would be
        lost: set[int] = set()  # chunks handed to a helper that will never answer: cut here
        gave_up = [False]  # was any chunk lost? then the pool is let go at the end
        changed = threading.Condition()
        claimed = [0]  # the next chunk nobody has taken

        def claim() -> int | None:
            with changed:
                if errors or claimed[0] >= len(chunks):
                    return None
                claimed[0] += 1
                return claimed[0] - 1

        def store(index: int, value=missing, error: BaseException | None = None) -> None:
            with changed:
                if isinstance(error, (BrokenProcessPool, CancelledError, RuntimeError)):
                    lost.add(index)  # RuntimeError: submit to a pool shut down meanwhile
                    gave_up[0] = True
                elif error is not None:
                    errors.append(error)
                else:
                    results[index] = value
                changed.notify_all()

        def hand_out() -> None:  # runs in the parent's thread or in the executor's, never both on one chunk
            index = claim()
            if index is None:
                return
            try:
                future = pool.submit(_cut_chunk, [texts[i] for i in chunks[index]], granularity, batch_size,
                                     words_only)
            except Exception as err:  # a pool broken or shut down meanwhile
                return store(index, error=err)
            future.add_done_callback(lambda done: received(index, done))

        def received(index: int, done: Future) -> None:
            error = CancelledError() if done.cancelled() else done.exception()
            if error is not None:
                return store(index, error=error)
            store(index, done.result())
            hand_out()

        def start(done: Future) -> None:
            if not done.cancelled() and done.exception() is None:
                for _ in range(IN_FLIGHT * helpers):
                    hand_out()

        if ready is not None:
            ready.add_done_callback(start)  # at once when the helpers are up, else when they are
        try:
            for index in range(len(chunks)):
                while True:
                    with changed:
                        if errors:
                            raise errors[0]
                        if results[index] is not missing:
                            break
                        mine = index if index in lost else None
                        lost.discard(index)
                    mine = claim() if mine is None else mine
                    if mine is not None:
                        store(mine, as_worker_task(cut_here, chunks[mine]))  # one thread: the cores are shared
                        continue
                    with changed:  # every chunk is taken: wait for a helper's
                        while results[index] is missing and not errors and index not in lost:
                            changed.wait()
                value, results[index] = results[index], None  # handed to the caller, not kept
                yield value
        finally:
            with changed:  # a stop (an error, Ctrl-C, a consumer gone): no more chunks to helpers
                claimed[0] = len(chunks)
            if gave_up[0] and self._pool is pool:
                logger.warning("segmenter: a helper process stopped answering; this thread cut its chunks")
                self.close()

    def _pool_for(self, segmenter, helpers: int) -> tuple[ProcessPoolExecutor | None, Future | None]:
        """(pool, its readiness: a Future), after starting a pool if none holds the segmenter as
        it is now; (None, None) when helpers cannot start (the parent works alone)."""
        from ..words.dictionary import UserDictionary
        from .workers import WorkerSpec, start_worker

        spec = WorkerSpec.of(segmenter, num_threads=1)
        snapshot = segmenter.user_dictionary.snapshot()
        settings = pickle.dumps(replace(spec, user_dictionary=None))
        with self._lock:
            key = self._key
            if key is not None and key[0] == helpers and key[1] is snapshot and key[2] == settings:
                return self._pool, self._ready
            self._close_locked()
            spec = replace(spec, user_dictionary=UserDictionary.of_snapshot(snapshot))
            try:
                self._pool = ProcessPoolExecutor(helpers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=start_worker, initargs=(spec,))
                self._ready = self._pool.submit(_started)
            except Exception as err:  # no processes here (a sandbox, a limit): the parent works alone
                logger.warning("segmenter: no helper processes (%s); segmenting on one core", err)
                self._pool, self._ready = None, None
            if self._ready is not None:
                self._ready.add_done_callback(self._check_started)
            self._key = (helpers, snapshot, settings)
            return self._pool, self._ready

    def _check_started(self, ready: Future) -> None:
        error = None if ready.cancelled() else ready.exception()
        if error is not None:
            logger.warning("segmenter: the helper processes did not start (%s: %s); segmenting on one core",
                           type(error).__name__, error)

    def close(self) -> None:
        """Stop the helpers (a later large batch starts new ones)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        pool, self._pool, self._ready, self._key = self._pool, None, None, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _started() -> bool:
    """The first task: done once a helper has loaded the model (raises what its loading raised)."""
    from .workers import worker_segmenter

    return worker_segmenter() is not None


def _cut_chunk(texts: list[str], granularity, batch_size: int, words_only: bool) -> list:
    """In a helper: words (or tokens) of a chunk's texts, as the parent would cut them."""
    from .workers import worker_segmenter

    return worker_segmenter()._batch(texts, granularity, batch_size, False, words_only)
