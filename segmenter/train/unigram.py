"""A unigram word model over the word table's strings, fitted by EM on raw text (no labels).

Autonomy (wordstats.py) says how freely a string combines with what is around it; it cannot say
how often the string is used *as a word*. 主义 is autonomous, yet in news most of its
occurrences sit inside 社会主义; raw counts cannot tell either, since every occurrence of 社会主义
is also one of 主义. A unigram language model can: p(w) for every string w of the table, the
probabilities that maximize the likelihood of the raw text summed over all of its segmentations
into such strings. EM finds them (forward-backward over each Han run, as in Deligne & Bimbot's
multigrams and SentencePiece's unigram model): the expected number of times w is a word, over
all segmentations weighted by their probability, is w's count in the next round. A string that
is almost always part of a longer one ends with an expected count near 0.

The decoder adds gamma * log p(w) per word (decoding.py): a segmentation into words the raw text
uses as words scores higher. Counted on raw text only: a training-time tool (numpy), run by
`segmenter ngrams` when it writes the table.

Shapes: the runs of all lines are joined into one string of C characters; `index` is (C, L), the
table row of text[i : i + l + 1] (-1 where it is no candidate: not in the table, or past the end
of its run). Runs are sorted longest first, so at step t of the lockstep dynamic program the runs
still active are a prefix of the list.
"""
from __future__ import annotations

import logging
import time
from typing import Iterable

import numpy as np

from ..text.runs import HAN_SPAN_RE, code_points
from ..words.hashindex import find_keys, hash_step
from ..words.table import UNIGRAM_FLOOR as FLOOR_COUNT
from ..words.table import WordTable

log = logging.getLogger(__name__)


def table_rows(table: WordTable, text: str, max_len: int) -> np.ndarray:
    """(len(text), max_len) int64: the row of text[i : i + l + 1] among all the table's strings
    (rows count through n = 1, 2, … in order), -1 where the table lacks it."""
    codepoints = code_points(text)
    rows = np.full((len(text), max_len), -1, dtype=np.int64)
    hashes = np.zeros(len(text), dtype=np.uint64)
    offset = 0
    for n in range(1, min(max_len, len(text)) + 1):
        keys = table.tables[n][0] if n in table.tables else np.zeros(0, np.uint64)
        hashes = hash_step(hashes[: len(text) - n + 1], codepoints[n - 1 :])
        slot, found = find_keys(keys, hashes)
        rows[: len(hashes), n - 1] = np.where(found, slot + offset, -1)
        offset += len(keys)
    return rows


def _log_probabilities(expected: np.ndarray) -> tuple[np.ndarray, float]:
    """Expected word counts -> log p of each string, and of a string at the floor count."""
    total = expected.sum()
    return np.log(expected / total), float(np.log(FLOOR_COUNT / total))


def _logsumexp(terms: np.ndarray) -> np.ndarray:
    top = terms.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    return safe + np.log(np.exp(terms - safe[:, None]).sum(axis=1))


def fit_unigram(table: WordTable, lines: Iterable[str], iterations: int = 8, prior: np.ndarray | None = None) -> dict:
    """Fit p(w) over the table's strings on the Han runs of `lines`; returns {"logp": {n: float16
    log-probabilities of table.tables[n]'s strings}, "unseen": log-probability of a string the
    table lacks, "words": expected words in the text, "chars": its Han characters,
    "log_likelihood": per round, the text's log-likelihood per character before that round's
    update (EM never lowers it)}.

    prior: pseudo-counts, one per string in the table's row order (n = 1, 2, … as table_rows
    numbers them), added to every round's expected counts and the first round's model: MAP-EM
    under a Dirichlet prior, a model refitted on a small text that stays near another one
    (benchmarks/adapt_variants_dev.py refits the shipped model on a domain's text so; `segmenter
    adapt` does not: it lost F1 on dev). None: plain EM from the table's raw counts."""
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be an int >= 1, got {iterations!r}")
    runs = sorted((m.group() for line in lines for m in HAN_SPAN_RE.finditer(line)), key=len, reverse=True)
    if not runs:
        raise ValueError("the raw text holds no Han characters: no word model to fit")
    max_len = table.max_n
    text = "".join(runs)
    sizes = np.array([len(r) for r in runs])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    run_of = np.repeat(np.arange(len(runs)), sizes)
    offset = np.arange(len(text)) - starts[run_of]  # position inside its run
    index = table_rows(table, text, max_len)
    index[np.arange(1, max_len + 1)[None, :] > (sizes[run_of] - offset)[:, None]] = -1  # past the run's end
    # A single character the table lacks (rarer than min_count) stays possible, at the floor.
    ns = sorted(table.tables)
    counts = np.concatenate([table.tables[n][2].astype(np.float64) for n in ns])
    if prior is None:
        prior, floor = np.zeros(len(counts)), FLOOR_COUNT
        expected = np.maximum(counts, floor)  # round 0: the raw counts
    else:
        prior = np.asarray(prior, dtype=np.float64)
        if prior.shape != counts.shape:
            raise ValueError(f"prior must hold one pseudo-count per string of the table ({len(counts):,}), "
                             f"got shape {prior.shape}")
        if not np.all(np.isfinite(prior)) or np.any(prior < 0):
            raise ValueError("prior must hold finite pseudo-counts >= 0, got a negative, NaN or infinite one")
        # A string the text never uses keeps its pseudo-count, not FLOOR_COUNT: on a small text the
        # floor would lift every string the prior rates rarer than it (most of a large table's).
        floor = np.finfo(np.float64).tiny
        expected = np.maximum(prior, floor)  # round 0: the prior's model
    # Boundary t of run r (t = 0 … size) lives at bound[r] + t of one flat array.
    bound = starts + np.arange(len(runs))
    history = []
    for round_ in range(iterations):
        started = time.perf_counter()
        logp, unseen = _log_probabilities(expected)
        word = np.where(index >= 0, logp[np.maximum(index, 0)], -np.inf)  # (C, L) log p of each candidate
        word[:, 0] = np.where(index[:, 0] >= 0, word[:, 0], unseen)
        forward = np.full(len(text) + len(runs), -np.inf)
        forward[bound] = 0.0
        for t in range(1, int(sizes[0]) + 1):
            r = np.arange(np.searchsorted(-sizes, -t, side="right"))  # runs of t characters or more
            terms = np.full((len(r), max_len), -np.inf)
            for length in range(1, min(t, max_len) + 1):  # the word ending at boundary t
                terms[:, length - 1] = forward[bound[r] + t - length] + word[starts[r] + t - length, length - 1]
            forward[bound[r] + t] = _logsumexp(terms)
        backward = np.full(len(text) + len(runs), -np.inf)
        backward[bound + sizes] = 0.0
        for t in range(int(sizes[0]) - 1, -1, -1):
            r = np.arange(np.searchsorted(-sizes, -(t + 1), side="right"))  # runs longer than t
            terms = np.full((len(r), max_len), -np.inf)
            for length in range(1, max_len + 1):  # the word starting at boundary t
                fits = t + length <= sizes[r]
                terms[fits, length - 1] = backward[bound[r][fits] + t + length] + word[starts[r][fits] + t, length - 1]
            backward[bound[r] + t] = _logsumexp(terms)
        total = forward[bound + sizes]  # log-likelihood of each run
        at = bound[run_of] + offset  # boundary before each character
        posterior = np.zeros(len(counts))
        for length in range(1, max_len + 1):
            hit = index[:, length - 1] >= 0
            q = np.exp(forward[at[hit]] + word[hit, length - 1] + backward[at[hit] + length] - total[run_of[hit]])
            np.add.at(posterior, index[hit, length - 1], q)
        expected = np.maximum(posterior + prior, floor)
        history.append(float(total.sum() / len(text)))
        log.info("unigram round %d: log-likelihood %.4f per character (%.1f s)",
                 round_ + 1, total.sum() / len(text), time.perf_counter() - started)
    words = float(posterior.sum())
    logp, unseen = _log_probabilities(expected)
    bounds = np.cumsum([0] + [len(table.tables[n][0]) for n in ns])
    return {"logp": {n: logp[bounds[i] : bounds[i + 1]].astype(np.float16) for i, n in enumerate(ns)},
            "unseen": unseen, "words": words, "chars": len(text),
            "log_likelihood": history}
