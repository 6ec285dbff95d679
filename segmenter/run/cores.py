"""How many cores this process may use, and how to share them among threads and processes.

A leaf module (it imports nothing from the package): the engines (model/), the helper and worker
processes (processes.py, parallel.py) and the benchmarks all size their work from it, and
`WorkerThreads` is the package's one thread pool (the onnx engine's threads, which also run a
Segmenter's chunks, and the numpy engine's).

Inside one process, onnxruntime's own threads spin on the small matrices of a window batch, and
a third of the time is Python (windows, word decoding, conventions) that holds the GIL. So a
Segmenter on N cores runs its sessions on one intra-op thread each and cuts a large batch of
texts into chunks (`text_chunks`) that N `WorkerThreads` score and assemble at once:
onnxruntime releases the GIL, so one chunk's model runs while another's words are decoded.
Chunks are chosen from the texts' lengths alone and every text is cut as it would be alone, so
the words never depend on the threads.
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ChunkSizes:
    """How a batch of texts is cut for workers that each take a chunk at a time: `per_worker`
    chunks a worker, each of `smallest` characters at least and `largest` at most."""

    smallest: int
    largest: int
    per_worker: int

    def size(self, total: int, workers: int) -> int:
        """Characters per chunk of a batch of `total` characters shared by `workers`: chunks of
        about equal size (a batch of 100 k in chunks of at most 40 k: 3 of 33 k, not 40, 40, 20)."""
        size = max(self.smallest, min(self.largest, -(-total // (workers * self.per_worker))))
        return max(self.smallest, -(-total // max(1, -(-total // size))))


# Chunks for the threads of one process. Threads share a process's GIL, and what they gain is the
# model's runs (onnxruntime releases the GIL) overlapping the Python of another chunk, while
# every chunk pays a batch's fixed work again (word table searches, the encoder's runs of a few
# windows each, rules over the batch): issue 57, 2 cores, 1,000 PKU sentences in calls of 2 k,
# 4 k and 8 k characters ran 1.8x, 1.6x and 1.3x as long in 2 threads' chunks of 1 k characters
# or more as on one thread (benchmarks/results/history/call_sizes_7edaac3.md). So a batch is cut
# for threads from 2 * 16 k characters; a smaller one runs in the calling thread (its encoder runs
# shared from SHARED_READ_CHARS: benchmarks/results/call_sizes.md).
# One chunk a thread: more chunks a thread made calls of ~16 k characters slower on 2 cores than
# one thread. Helper processes take chunks from 8 k characters (processes.PROCESS_CHUNKS: no GIL
# between them, so a smaller chunk pays off there).
THREAD_CHUNKS = ChunkSizes(smallest=16_384, largest=16_384, per_worker=1)
# A read of fewer characters than this (the windows of one call, or of one chunk) runs every
# encoder batch in the calling thread: splitting the few, small batches of such a call among the
# reader's threads costs more in hand-offs and per-run overhead (~0.1 ms a run) than the second
# core gives back (issue 57, 2 cores: calls of 2 k and 4 k characters ~1.2x as long shared as
# in one thread, calls of 8 k and more faster shared).
SHARED_READ_CHARS = 8_192
# A batch of more than SLICE_CHARS characters is cut into as few slices of at most about that
# many as it takes, even where no other core shares it (one thread), scored and assembled one
# after the other: a batch's plans and the decoder's arrays grow with its characters, a slice's
# do not. Each slice pays a batch's fixed work again (most of it the word table's searches,
# which walk the table once per call): issue 57, a one-thread process segmenting 1,000 PKU
# sentences (79 k characters) peaked 156 MB whole, 145 MB in 2 slices (~3% more CPU), 141 MB in
# 3 (~5-8% more), 139 MB in 5 (~15% more); 3 keep the 150 MB of the issue with room. The words
# are those of the whole batch: every text is cut as it would be alone. Not in a helper or
# worker process: its chunks are bounded already (processes.PROCESS_CHUNKS, parallel.CHUNK_CHARS).
SLICE_CHARS = 32_768


def available_cores() -> int:
    """Cores this process may run on (the affinity mask in containers and under taskset)."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def threads_per_worker(workers: int, cores: int | None = None) -> int:
    """Threads for each of `workers` processes so that together they do not oversubscribe the cores."""
    return max(1, (cores or available_cores()) // workers)


_marks = threading.local()


def in_worker_thread() -> bool:
    """Whether this thread runs a task of a WorkerThreads pool: its work is already one share of
    the cores, and what it calls should not split it again."""
    return getattr(_marks, "worker", False)


def as_worker_task(function: Callable[[T], R], item: T) -> R:
    """function(item), run as a task of a pool (in_worker_thread is True meanwhile)."""
    _marks.worker = True
    try:
        return function(item)
    finally:
        _marks.worker = False


class WorkerThreads:
    """`count` threads, started on the first `map` (never for a Segmenter on one thread)."""

    def __init__(self, count: int, name: str = "segmenter"):
        self.count, self.name = count, name
        self._pool = None
        self._lock = threading.Lock()

    def __getstate__(self):  # threads and a lock do not pickle: a copy starts its own
        return {"count": self.count, "name": self.name}

    def __setstate__(self, state) -> None:
        self.__init__(state["count"], state["name"])

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """function(item) for each item, run by the threads, results in the items' order (a
        generator; an error is raised where its item's result would be, the items not yet
        started are dropped)."""
        with self._lock:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.count, thread_name_prefix=self.name)
            pool = self._pool
        futures = [pool.submit(as_worker_task, function, item) for item in items]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        """Let the threads end once their tasks are done (a later map starts new ones)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)


def text_chunks(lengths: list[int], threads: int, chunk_chars: int | None = None) -> list[list[int]]:
    """Indices of texts (by their lengths) in chunks for `threads` threads: texts of similar
    length together (their windows fill the same batches), each chunk of THREAD_CHUNKS' size
    (chunk_chars: that many, for helper processes that take chunks one by one: processes.py);
    [all indices] when the texts are too few to share."""
    total = sum(lengths)
    if threads < 2 or len(lengths) < 2 or (chunk_chars is None and total < 2 * THREAD_CHUNKS.smallest):
        return [list(range(len(lengths)))]
    return by_length(lengths, chunk_chars or THREAD_CHUNKS.size(total, threads))


def text_slices(lengths: list[int]) -> list[list[int]]:
    """Indices of texts in slices of at most about SLICE_CHARS characters, as few as that allows,
    of about equal size, cut one after another in one thread (memory: SLICE_CHARS says why);
    [all indices] for a batch of SLICE_CHARS characters or fewer, and in a helper or worker process."""
    import multiprocessing

    total = sum(lengths)
    slices = -(-total // SLICE_CHARS)
    if slices < 2 or len(lengths) < 2 or multiprocessing.parent_process() is not None:
        return [list(range(len(lengths)))]
    return by_length(lengths, -(-total // slices))


def by_length(lengths: list[int], size: int) -> list[list[int]]:
    """Indices of texts in chunks of about `size` characters, texts of similar length together
    (their windows fill the same batches), the longest first; a short last chunk (less than
    half a chunk) joins the one before."""
    chunks: list[list[int]] = [[]]
    chars = 0
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        if chars >= size:
            chunks.append([])
            chars = 0
        chunks[-1].append(index)
        chars += lengths[index]
    if len(chunks) > 1 and chars < size // 2:  # a short last chunk joins the one before
        chunks[-2].extend(chunks.pop())
    return chunks[::-1]  # the longest texts first: the last chunk to finish is a short one
