"""Requests that arrive together are segmented in one batch.

A request's texts wait in a queue; a collector takes everything queued after a short wait
(Limits.batch_wait_ms, and while the batch before is still being segmented), groups it by
(standard, granularity, mode, offsets) and makes one call per group in a worker thread, so the
event loop stays free to take requests. Each request gets back its own texts' words, the same as
the words of its texts segmented alone (segment_batch's words do not depend on the batch).
"""
from __future__ import annotations

import asyncio
import copy
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from .limits import Limits, RequestError, SegmentRequest

log = logging.getLogger("segmenter.serve")


class Views:
    """The segmenter as seen at each standard: the server's own, or a shallow copy of it with
    another standard (the same reader, word table and user dictionary: no second model)."""

    def __init__(self, segmenter):
        self.segmenter, self._views = segmenter, {}

    def at(self, standard: str | None):
        if standard is None or standard == self.segmenter.standard.name:
            return self.segmenter
        view = self._views.get(standard)
        if view is None:
            from ..standards.levels import standard_named

            view = copy.copy(self.segmenter)
            view.standard = standard_named(standard)
            self._views[standard] = view
        return view


def search_words(segmenter, texts: list[str], granularity=None) -> list[list]:
    """tokenize(text, mode="search") of each text, the scores read once for the batch: each level's
    words from one assembly call (Segmenter.assemble), then search_modes.search_tokens."""
    from ..model.profile import GRANULARITY_NAMES
    from ..words.search_modes import search_tokens

    level = segmenter.granularity if granularity is None else granularity
    finer = sorted({v for v in GRANULARITY_NAMES.values() if v < level})
    plans = segmenter.score_texts(texts, show_progress=False)
    snapshot = segmenter.user_dictionary.snapshot()  # one for all levels, as _level_tokens
    levels = [segmenter.assemble(plans, g, dictionary=snapshot) for g in [level, *finer]]
    return [search_tokens(text, levels[0][i], [tokens[i] for tokens in levels[1:]], segmenter.word_table)
            for i, text in enumerate(texts)]


def segment_group(views: Views, key: tuple, texts: list[str]) -> list[list]:
    """One call for a group of texts: words (offsets: [word, start, end] triples)."""
    standard, granularity, mode, offsets = key
    segmenter = views.at(standard)
    if mode == "search":
        tokens = search_words(segmenter, texts, granularity)
    elif offsets:
        tokens = segmenter.tokenize_batch(texts, granularity, show_progress=False)
    else:
        return segmenter.segment_batch(texts, granularity, show_progress=False)
    if offsets:
        return [[[w, s, e] for w, s, e in text_tokens] for text_tokens in tokens]
    return [[w for w, _, _ in text_tokens] for text_tokens in tokens]


class _Item:
    __slots__ = ("chars", "future", "request")

    def __init__(self, request: SegmentRequest, future: asyncio.Future):
        self.request, self.future = request, future
        self.chars = sum(map(len, request.texts))


class Batcher:
    def __init__(self, views: Views, limits: Limits, metrics, executor: ThreadPoolExecutor):
        self.views, self.limits, self.metrics, self.executor = views, limits, metrics, executor
        self._items: list[_Item] = []
        self._ready: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._ready = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._collect())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        for item in self._items:
            if not item.future.done():
                item.future.set_exception(RequestError(503, "the service is shutting down"))

    async def segment(self, request: SegmentRequest) -> list[list]:
        """The words of a request's texts, from the next batch; a RequestError 504 after
        Limits.timeout_s (the batch still runs: its words for this request are dropped)."""
        if self._task is None:
            self.start()
        future = asyncio.get_running_loop().create_future()
        self._items.append(_Item(request, future))
        self._ready.set()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.limits.timeout_s or None)
        except asyncio.TimeoutError:
            future.cancel()
            raise RequestError(504, f"no words within the timeout of {self.limits.timeout_s:g} s (--timeout)",
                               limit="timeout_s", max=self.limits.timeout_s) from None

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._ready.wait()
            if self.limits.batch_wait_ms:
                await asyncio.sleep(self.limits.batch_wait_ms / 1000)
            batch, chars = [], 0
            while self._items and (not batch or chars + self._items[0].chars <= self.limits.max_batch_chars):
                item = self._items.pop(0)
                if not item.future.done():  # a request that timed out before its batch: skipped
                    batch.append(item)
                    chars += item.chars
            if not self._items:
                self._ready.clear()
            groups: dict[tuple, list[_Item]] = {}
            for item in batch:
                groups.setdefault(item.request.key, []).append(item)
            for key, items in groups.items():
                texts = [text for item in items for text in item.request.texts]
                began = time.perf_counter()
                try:
                    found = await loop.run_in_executor(self.executor, segment_group, self.views, key, texts)
                except Exception as err:
                    log.exception("segmenting a batch of %d texts failed", len(texts))
                    for item in items:
                        if not item.future.done():
                            item.future.set_exception(err)
                    continue
                self.metrics.batch(len(texts), time.perf_counter() - began)
                start = 0
                for item in items:
                    end = start + len(item.request.texts)
                    if not item.future.done():
                        item.future.set_result(found[start:end])
                    start = end
