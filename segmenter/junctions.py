"""Junctions: the places between two Han characters where only the model can decide.

A text becomes a `TextPlan`: its runs (text.py), its model sequence (every non-space
character: punctuation, digits and Latin letters are context the model reads, even though
their own boundaries come from rules) and the junctions inside Han runs. `score_texts` (the
one scoring entry: Segmenter.score_texts, head discovery, self-training and the benchmark all
use it) cuts the model sequences into windows (whole sentences where they fit, else
overlapping: text.sentence_windows), encodes only the windows that hold a junction, and
gathers the per-head scores of every junction from the window that keeps it.
"""
from __future__ import annotations

import numpy as np

from .reader import WindowReader, progress_enabled
from .text import HAN_SPAN_RE, SENTENCE_END_RE, sentence_windows, split_runs
from .windows import OVERLAP, WINDOW, clamp_window


EMPTY = np.zeros(0, dtype=np.int64)  # no positions, no junctions: one read-only array for every such plan
EMPTY.setflags(write=False)


class TextPlan:
    """What one text needs from the model: its runs, its model sequence, its Han junctions."""

    __slots__ = ("text", "runs", "positions", "junctions", "scores")

    def __init__(self, text: str):
        self.text = text
        self.runs = split_runs(text)
        # positions[q] = index in `text` of the q-th non-space character (the model's q-th input).
        spans = [(r.start, r.end) for r in self.runs if r.kind != "space"]
        spaceless = len(spans) == len(self.runs)  # then every character is a model input: q = its index
        if spaceless:
            self.positions = np.arange(len(text), dtype=np.int64)
        else:
            self.positions = np.concatenate([np.arange(*span, dtype=np.int64) for span in spans] or [EMPTY])
        # A junction q (cut between model inputs q and q+1) between two Han characters needs
        # the model. A Han run may end in marks that belong to its last character (an accent,
        # a variation selector U+E0100…, a ZWJ): only the junctions between its leading Han
        # characters count, so that no word starts with a mark.
        han_ends = [(r.start, HAN_SPAN_RE.match(text, r.start).end()) for r in self.runs if r.kind == "han"]
        if spaceless:
            junctions = [np.arange(start, end - 1) for start, end in han_ends if end - start > 1]
        else:
            index_of = np.full(len(text) + 1, -1, dtype=np.int64)
            index_of[self.positions] = np.arange(len(self.positions))
            junctions = [np.arange(index_of[start], index_of[end - 1]) for start, end in han_ends if end - start > 1]
        self.junctions = np.concatenate(junctions) if junctions else EMPTY
        self.scores: np.ndarray | None = None  # (K, len(junctions)) once read


def score_texts(
    reader: WindowReader, texts: list[str], window: int = WINDOW, overlap: int = OVERLAP, batch_size: int = 64,
    show_progress=False
) -> list[TextPlan]:
    """Texts -> their TextPlans with plan.scores, (K heads of the reader, len(plan.junctions))."""
    plans = [TextPlan(text) for text in texts]
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
    jobs: list[tuple[TextPlan, int, int, int]] = []  # plan, window start, junction range kept
    windows: list[np.ndarray] = []
    for plan in plans:
        plan.scores = np.zeros((len(reader.heads), len(plan.junctions)), dtype=np.float32)
        if not len(plan.junctions):
            continue
        spaceless = len(plan.positions) == len(plan.text)
        sequence = (plan.text if spaceless
                    else "".join(plan.text[r.start : r.end] for r in plan.runs if r.kind != "space"))
        ids = reader.vocab.encode(sequence)
        if len(ids) <= window:  # one window keeps every junction: most sentences
            jobs.append((plan, 0, 0, len(plan.junctions)))
            windows.append(ids)
            continue
        # Windows end at sentence ends where they can (no overlap there: fewer tokens), else overlap.
        breaks = [m.end() for m in SENTENCE_END_RE.finditer(sequence)]
        for w in sentence_windows(len(ids), window, overlap, breaks):
            lo, hi = np.searchsorted(plan.junctions, [w.keep_start, w.keep_end])
            if hi > lo:
                jobs.append((plan, w.start, lo, hi))
                windows.append(ids[w.start : w.end])
    if not windows:
        return
    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(total=sum(len(w) for w in windows), unit="char", desc="segmenting", leave=False)
    try:
        results = reader.read(windows, batch_size, progress)
    finally:
        if progress is not None:
            progress.close()
    for (plan, start, lo, hi), scores in zip(jobs, results):
        plan.scores[:, lo:hi] = scores[:, plan.junctions[lo:hi] - start]
