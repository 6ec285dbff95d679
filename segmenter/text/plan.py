"""Junctions: the places between two Han characters where only the model can decide.

A text becomes a `TextPlan`: its runs (runs.py), its model sequence (every non-space
character: punctuation, digits and Latin letters are context the model reads, even though
their own boundaries come from rules) and the junctions inside Han runs; a batch's plain texts
without spaces, most text, are planned together (plan_texts). `score_texts` (the
one scoring entry: Segmenter.score_texts, head discovery, self-training and the benchmark all
use it) cuts the model sequences into windows (whole sentences of one line where they fit,
else overlapping: windows.sentence_windows), encodes only the windows that hold a junction, and
gathers the per-head scores of every junction from the window that keeps it.
"""
from __future__ import annotations

from itertools import repeat
from operator import itemgetter

import numpy as np

from ..model.reader import WindowReader, progress_enabled
from .batch import ranks_in_groups
from .runs import (
    HAN_SPAN_RE,
    LINE_BREAKS,
    PLAIN_KINDS,
    Run,
    is_plain,
    is_plain_spaceless,
    plain_runs,
    split_runs,
)
from .windows import OVERLAP, SENTENCE_END_RE, WINDOW, clamp_window, sentence_windows

EMPTY = np.zeros(0, dtype=np.int64)  # no positions, no junctions: one read-only array for every such plan
EMPTY.setflags(write=False)
# 0, 1, 2, ...: a spaceless plan's positions, a view of these where it is no longer (read only, shared)
_COUNTING = np.arange(4096, dtype=np.int64)
_COUNTING.setflags(write=False)
_KIND = itemgetter(0)  # a text.Run's kind


class TextPlan:
    """What one text needs from the model: its runs, its model sequence, its Han junctions."""

    __slots__ = ("text", "runs", "positions", "junctions", "scores")

    def __init__(self, text: str):
        self.text = text
        plain = is_plain(text)  # split_runs and the Han runs below both ask
        self.runs = runs = split_runs(text, plain)
        self.scores: np.ndarray | None = None  # (K, len(junctions)) once read
        # A junction q (cut between model inputs q and q+1) between two Han characters needs
        # the model. A Han run may end in marks that belong to its last character (an accent,
        # a variation selector U+E0100…, a ZWJ): only the junctions between its leading Han
        # characters count, so that no word starts with a mark. A text of plain characters
        # (runs.is_plain) has no marks: its Han runs end where their Han characters do.
        han = [(r.start, r.end if plain else HAN_SPAN_RE.match(text, r.start).end()) for r in runs if r.kind == "han"]
        if "space" not in map(_KIND, runs):  # every character is a model input: q = its index
            self.positions = _counting(len(text))
            junctions = [q for start, end in han for q in range(start, end - 1)]
            self.junctions = np.array(junctions, dtype=np.int64) if junctions else EMPTY
            return
        # positions[q] = index in `text` of the q-th non-space character (the model's q-th input).
        spans = [(r.start, r.end) for r in runs if r.kind != "space"]
        self.positions = np.concatenate([np.arange(*span, dtype=np.int64) for span in spans] or [EMPTY])
        index_of = np.full(len(text) + 1, -1, dtype=np.int64)
        index_of[self.positions] = np.arange(len(self.positions))
        junctions = [np.arange(index_of[start], index_of[end - 1]) for start, end in han if end - start > 1]
        self.junctions = np.concatenate(junctions) if junctions else EMPTY

    @classmethod
    def spaceless_of(cls, text: str, runs: list[Run], junctions: np.ndarray) -> TextPlan:
        """The plan of a text without a space run, its runs and junctions found (plan_texts):
        every character is a model input."""
        plan = cls.__new__(cls)
        plan.text, plan.runs, plan.junctions, plan.scores = text, runs, junctions, None
        plan.positions = _counting(len(text))
        return plan

    @property
    def spaceless(self) -> bool:
        """Every character is a model input: input q is text[q], and the model sequence is the text."""
        return len(self.positions) == len(self.text)


def _counting(size: int) -> np.ndarray:
    """0, 1, ..., size - 1: a spaceless plan's positions, a read-only view of _COUNTING where it is no longer."""
    return _COUNTING[:size] if size <= len(_COUNTING) else np.arange(size, dtype=np.int64)


# plan_texts plans a batch of fewer characters text by text: together, its dozens of numpy calls
# cost more than the texts' own regex passes below a few hundred characters.
TOGETHER_FROM = 512


def plan_texts(texts: list[str]) -> list[TextPlan]:
    """[TextPlan(text) for text in texts], the texts of plain characters without whitespace (most
    text: runs.is_plain_spaceless) together: their runs by runs.plain_runs over them joined, and
    their junctions (the characters of a Han run but its last) from those runs' arrays."""
    joined = "".join(texts)
    if len(joined) < TOGETHER_FROM:  # a sentence or a few: numpy's fixed costs would exceed the work
        return [TextPlan(text) for text in texts]
    plans: list[TextPlan | None] = [None] * len(texts)
    if is_plain_spaceless(joined):  # most batches: every text, asked at once
        together = list(range(len(texts)))
    else:
        together = []
        for i, text in enumerate(texts):
            if is_plain_spaceless(text):
                together.append(i)
            else:  # marks, spaces or another script: a plan of its own
                plans[i] = TextPlan(text)
    if not together:
        return plans
    lengths = np.fromiter((len(texts[i]) for i in together), dtype=np.int64, count=len(together))
    text_starts = np.cumsum(lengths) - lengths
    starts, ends, kinds = plain_runs(joined if len(together) == len(texts) else "".join(texts[i] for i in together),
                                     text_starts)
    # Text t's runs are runs[first[t] : first[t + 1]], in its own offsets (tuple.__new__, not a
    # Python-level Run(...) per run).
    first = np.searchsorted(starts, text_starts).tolist() + [len(starts)]
    offset = np.repeat(text_starts, np.diff(first))
    runs = list(map(tuple.__new__, repeat(Run), zip(map(PLAIN_KINDS.__getitem__, kinds.tolist()),
                                                     (starts - offset).tolist(), (ends - offset).tolist())))
    # The junctions: each character of a Han run of two or more but its last, in its text's
    # offsets; text t's are those of its runs, junctions[bounds[t] : bounds[t + 1]]. Read only:
    # the plans share the array.
    han = np.flatnonzero((kinds == PLAIN_KINDS.index("han")) & (ends - starts > 1))
    sizes = ends[han] - starts[han] - 1
    junctions = np.repeat(starts[han] - offset[han], sizes) + ranks_in_groups(sizes)
    junctions.setflags(write=False)
    bounds = np.searchsorted(np.repeat(han, sizes), first).tolist()
    spaceless_of = TextPlan.spaceless_of
    for t, i in enumerate(together):
        a, b = bounds[t], bounds[t + 1]
        plans[i] = spaceless_of(texts[i], runs[first[t] : first[t + 1]], junctions[a:b] if b > a else EMPTY)
    return plans


_LINE_BREAKS = frozenset(LINE_BREAKS)  # a space run holding one of these starts a new line


def line_starts(plan: TextPlan) -> list[int]:
    """The model inputs that start a line after the first, ascending (inputs: non-space characters)."""
    if plan.spaceless:  # no space run, no line break
        return []
    breaks = [r.end for r in plan.runs if r.kind == "space" and not _LINE_BREAKS.isdisjoint(plan.text[r.start : r.end])]
    if not breaks:
        return []
    starts = np.searchsorted(plan.positions, breaks).tolist()  # the first input at or after each break
    return sorted({q for q in starts if 0 < q < len(plan.positions)})


def score_texts(
    reader: WindowReader, texts: list[str], window: int = WINDOW, overlap: int = OVERLAP, batch_size: int = 64,
    show_progress=False
) -> list[TextPlan]:
    """Texts -> their TextPlans with plan.scores, (K heads of the reader, len(plan.junctions))."""
    plans = plan_texts(texts)
    read_junction_scores(reader, plans, window, overlap, batch_size, show_progress)
    return plans


def stacked_scores(plans: list[TextPlan], heads: int) -> np.ndarray:
    """The scores of all plans side by side: (heads, total junctions), in plan order."""
    return np.concatenate([p.scores for p in plans], axis=1) if plans else np.zeros((heads, 0), dtype=np.float32)


def read_junction_scores(
    reader: WindowReader, plans: list[TextPlan], window: int, overlap: int, batch_size: int, show_progress=None
) -> None:
    """Fill plan.scores, (K, len(plan.junctions)), for every plan; windows batch across texts."""
    window, overlap = clamp_window(window, overlap, reader.max_positions)
    heads = len(reader.heads)
    todo = [plan for plan in plans if len(plan.junctions)]
    for plan in plans:
        if not len(plan.junctions):
            plan.scores = np.zeros((heads, 0), dtype=np.float32)
    if not todo:
        return
    # The model sequences of the batch side by side, encoded at once: ids[base[p] + q] is plan p's q-th input.
    sequences = [plan.text if plan.spaceless
                 else "".join(plan.text[r.start : r.end] for r in plan.runs if r.kind != "space") for plan in todo]
    if len(todo) == 1 and len(sequences[0]) <= window and not line_starts(todo[0]):
        _read_one_window(reader, todo[0], reader.vocab.encode(sequences[0]), show_progress)
        return
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(todo))
    base = np.cumsum(lengths) - lengths
    ids = reader.vocab.encode("".join(sequences))
    # One window a plan (most sentences fit: it keeps every junction), except for the long ones
    # and those of several lines: a window never holds two lines (the model sequence leaves the
    # line break out, so one window would read the end of a line run on into the next), and a
    # text's words are those of its lines segmented one by one.
    per_plan = np.array([len(plan.junctions) for plan in todo], dtype=np.int64)
    # Per window: its plan, where it starts in `ids`, its size, the first junction it keeps, how many.
    owner, starts, sizes = np.arange(len(todo)), base.copy(), lengths.copy()
    first, kept = np.zeros(len(todo), dtype=np.int64), per_plan.copy()
    lines = [line_starts(plan) for plan in todo]
    plan_first = np.cumsum(per_plan) - per_plan  # where each plan's junctions start in `junctions`
    junctions = np.concatenate([plan.junctions for plan in todo])
    several = [p for p in range(len(todo)) if lengths[p] > window or lines[p]]
    if several:
        # Windows end at sentence ends where they can (no overlap there: fewer tokens), else overlap.
        found = []  # (plan, window start in its sequence, size, first input it keeps, input past its last)
        for p in several:
            for a, b in zip([0, *lines[p]], [*lines[p], int(lengths[p])]):  # each line's inputs [a, b)
                breaks = [m.end() - a for m in SENTENCE_END_RE.finditer(sequences[p], a, b)]
                found.extend((p, a + w.start, w.end - w.start, a + w.keep_start, a + w.keep_end)
                             for w in sentence_windows(b - a, window, overlap, breaks))
        p, offset, size, keep_start, keep_end = (np.array(column, dtype=np.int64) for column in zip(*found))
        # The junctions each window keeps, its plan's [lo, hi): one search over the plans' junctions
        # each shifted to where its plan starts in `ids` (base), so that they ascend across plans.
        placed = junctions + np.repeat(base, per_plan)
        lo = np.searchsorted(placed, base[p] + keep_start) - plan_first[p]
        count = np.searchsorted(placed, base[p] + keep_end) - plan_first[p] - lo
        keeps = count > 0  # a window that keeps no junction is not read
        p, offset, size, lo, count = (column[keeps] for column in (p, offset, size, lo, count))
        short = np.setdiff1d(np.arange(len(todo)), several)
        owner, first = np.concatenate([short, p]), np.concatenate([first[short], lo])
        order = np.lexsort((first, owner))  # plan by plan, its windows in order: their junctions in order
        owner, first = owner[order], first[order]
        starts = np.concatenate([starts[short], base[p] + offset])[order]
        sizes = np.concatenate([sizes[short], size])[order]
        kept = np.concatenate([kept[short], count])[order]
    windows = [ids[a:b] for a, b in zip(starts.tolist(), (starts + sizes).tolist())]
    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(total=int(sizes.sum()), unit="char", desc="segmenting", leave=False)
    try:
        results = reader.read(windows, batch_size, progress)
    finally:
        if progress is not None:
            progress.close()
    # Window w's scores are columns column[w] ... column[w] + sizes[w] - 2 of `read`'s, side by
    # side; the junction q of its plan (between inputs q and q + 1) is column[w] + q - its offset.
    column = np.cumsum(sizes - 1) - (sizes - 1)
    # Every junction is kept by one window, and the windows go plan by plan, in order: their
    # kept junctions, one after the other, are the plans' junctions in plan order.
    kept_junctions = junctions[np.repeat(plan_first[owner] + first, kept) + ranks_in_groups(kept)]
    where = np.repeat(column - (starts - base[owner]), kept) + kept_junctions
    gathered = np.concatenate(results, axis=1)[:, where].astype(np.float32, copy=False)
    for plan, a, b in zip(todo, plan_first.tolist(), (plan_first + per_plan).tolist()):
        plan.scores = gathered[:, a:b]


def _read_one_window(reader: WindowReader, plan: TextPlan, ids: np.ndarray, show_progress) -> None:
    """read_junction_scores of one text that fits one window (a short sentence): the window is its
    model sequence, and its junctions are the window's columns (no window table to build)."""
    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(total=len(ids), unit="char", desc="segmenting", leave=False)
    try:
        result = reader.read_one(ids)
        if progress is not None:
            progress.update(len(ids))
    finally:
        if progress is not None:
            progress.close()
    # every column a junction (a text of Han characters alone): the columns as they are, no gather
    whole = len(plan.junctions) == result.shape[1]
    plan.scores = (result if whole else result[:, plan.junctions]).astype(np.float32, copy=False)
