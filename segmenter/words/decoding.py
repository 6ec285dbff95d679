"""Word-level decoding: choose whole words, not junctions one at a time.

Cutting where a junction's score is above a threshold decides every junction alone, so a
three-character word survives only if both of its inner junctions score low, and the shipped
model's head cuts most of them. Here each Han run is segmented by dynamic programming
(a semi-Markov / Viterbi decoder) into the words w that maximize

    sum over cut junctions k of   beta * clip(s_k)            (s: the heads' score minus the threshold)
  + sum over words w of           alpha * A(w) * len(w)       (A: autonomy from raw text, table.py)
                                + bonus  if len(w) >= 3 and A(w) >= bonus_from
                                + gamma * log p(w)          (p: the table's unigram word model)

A string the word table does not hold (never seen in the raw text, pruned, or longer than its
max_n) gets `unseen` in place of A; single characters are neutral (A = 0) when unseen. With
alpha = 0, gamma = 0, no bonus and no joins this cuts exactly where s > 0, the threshold decoder.

Why these terms (benchmarks/ablation.py): autonomy alone (the self-training teacher's
decoder) prefers the pieces of a compound — 负责|人, 联合|国 — because a frequent
two-character word is more autonomous than the whole; a small alpha lets it fix the heads'
one- and two-character mistakes. The unigram term says what autonomy cannot: how often the
raw text uses a string *as a word* (fitted by EM over all segmentations of the raw text,
train/unigram.py). 主义 is autonomous, but most of its occurrences are inside 社会主义, so its
probability is far below what its raw count gives it; the term keeps units such as 联合国
whole where the heads' inner cuts are weak (a strong inner cut still wins); the bonus term
does the same by autonomy alone (0 by default). A table without the model leaves the term out.

After the Viterbi, joins.py joins decoded words whose joined string the raw text rarely
breaks (生产|总值 -> 生产总值, 其|中 -> 其中, 翻|山|越|岭): cut_junctions_batch runs them on its cuts.

The decoder works on per-junction scores only, so it does not care how they were computed
(torch, numpy, a distilled student): `cut_junctions(plan, combined, table, options)`.
"""
from __future__ import annotations

from itertools import accumulate, pairwise

import numpy as np

from ..text.batch import Texts, run_characters
from ..text.plan import TextPlan
from ..text.runs import is_plain
from .decoding_few import cut_junctions_few, viterbi_run
from .joins import DecodedRuns, join_cohesive, join_long_words, join_units
from .table import WordTable
from .weights import WordDecoding

# join_cohesive passes at most (cut_junctions_batch): a second joins what a first made (共和|国).
COHESIVE_PASSES = 2
# best_words runs the Viterbi run by run in Python floats for at most this many runs (a
# sentence's; a batch's groups of a few long ones): a step of the numpy lockstep costs a few
# numpy calls whatever the number of runs, more than a few runs' whole step in Python.
FEW_RUNS = 4
# A batch text (text.batch.Texts) of at most this many characters (a sentence's, a few short ones
# batched) is decoded in plain Python (decoding_few.py: the same words, no numpy call but the
# lookups of its strings). Assembling one pku_dev sentence of 5-15 characters: 192 us against 602
# through numpy; of 80-120: 1.5 ms against 2.5. segment_batch of one text or of 2-8 texts of the
# six dev files (issue 57, sixth stop, best of 5 over 80 calls a size, AVX2 machine): 128-160
# characters 3.7 ms against 5.1 through numpy, 160-192 4.2 against 5.5, 192-224 4.7 against 6.1,
# 224-256 5.2 against 6.6; 256-320 about even (6.5 against 6.6).
FEW_CHARS = 256


def best_words(gains: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Viterbi over word ends for R runs at once (in lockstep over character positions).

    gains:  (R, N) weighted junction score gained by a word ending after character k
            (0 for the run's last character);
    values: (R, N, L) value of the word starting at k of length l+1 (-inf where impossible);
    sizes:  (R,) characters of each run (N = max(sizes)).
    Returns (R, N) bool: True where a word ends after character k (before the run's end).
    """
    runs, n, max_len = values.shape
    if runs <= FEW_RUNS:
        return _best_words_few(gains, values, sizes)
    # ending[:, e, l]: the value of the word of l + 1 characters whose last is character e (it
    # starts at e - l; where that is before the run, any value: its start's best is -inf below).
    last = np.arange(n)[:, None]
    ending = values[:, np.maximum(last - np.arange(max_len), 0), np.arange(max_len)]  # (R, N, L)
    # best[:, max_len + p]: the best value of the run's first p characters as words; the max_len
    # columns of -inf before p = 0 make the starts of the words ending at `end` one reversed
    # slice, lengths 1, 2, ... in order (the same candidates, and ties, as those that fit).
    best = np.full((runs, max_len + n + 1), -np.inf)
    best[:, max_len] = 0.0
    back = np.ones((runs, n + 1), dtype=np.int64)
    rows = np.arange(runs)
    for end in range(1, n + 1):
        candidates = best[:, max_len + end - 1 : end - 1 : -1] + ending[:, end - 1]  # (R, L): length l + 1
        k = candidates.argmax(axis=1)
        best[:, max_len + end] = candidates[rows, k] + gains[:, end - 1]
        back[:, end] = k + 1
    # walk back from each run's end, all runs together
    ends = np.zeros((runs, n), dtype=bool)
    position = sizes.astype(np.int64).copy()
    while True:
        active = position > 0
        if not active.any():
            break
        position[active] -= back[rows[active], position[active]]
        inner = active & (position > 0)
        ends[rows[inner], position[inner] - 1] = True
    return ends


def _best_words_few(gains: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """best_words for a few runs (FEW_RUNS): decoding_few.viterbi_run, the one Python Viterbi, run
    by run in Python floats, where each of best_words' lockstep steps costs four numpy calls for
    a handful of numbers. The same candidates in the same order (lengths 1, 2, ...), the first best
    kept as argmax keeps it (a NaN first of all; every candidate -inf: the first, a word of one
    character), so the same words (tests/test_decoding.py runs both)."""
    runs, n, _ = values.shape
    ends = np.zeros((runs, n), dtype=bool)
    for r, (gain, value, size) in enumerate(zip(gains.tolist(), values.tolist(), sizes.tolist())):
        ends[r, viterbi_run(gain, value, int(size), n)] = True
    return ends


def cut_junctions(plan: TextPlan, combined: np.ndarray, table: WordTable, options: WordDecoding) -> np.ndarray:
    """The cut decision of every junction of `plan` (bool, plan.junctions order).

    combined: (len(plan.junctions),) junction scores with the threshold already subtracted.
    A run whose junctions do not cover all its characters (marks attached inside it) keeps the
    threshold decision, s > 0. See cut_junctions_batch, which this is for one text.
    """
    return cut_junctions_batch([plan], [combined], table, options)[0]


def cut_junctions_batch(plans: list[TextPlan], combined: list, table: WordTable,
                        options: WordDecoding, texts: Texts | None = None) -> list[np.ndarray]:
    """cut_junctions for many texts at once: the Han runs of all of them are decoded together,
    runs of similar sizes in one lockstep pass, so the Python work per step of the Viterbi is
    paid once per group of runs, not once per text (the same decisions as one text at a time:
    every run's dynamic program is its own row). combined[i] may be None for a text without
    junctions. texts: the plans' batch (text.batch.Texts), where the caller has it already: the
    decoder reads the word table over texts.text, as the conventions after it do."""
    if texts is None:
        texts = Texts([plan.text for plan in plans], [plan.runs for plan in plans])
    if len(texts.text) <= FEW_CHARS:
        return cut_junctions_few(plans, combined, table, options, texts, COHESIVE_PASSES)
    # The junctions of all texts side by side: text i's are cut[bounds[i] : bounds[i + 1]], the
    # threshold's decisions until the decoder's replace them.
    counts = [0 if c is None else len(c) for c in combined]
    bounds = [0, *accumulate(counts)]
    alive = [i for i, count in enumerate(counts) if count]
    live = [plans[i] for i in alive]
    flat = np.concatenate([combined[i] for i in alive] or [np.zeros(0, np.float32)])
    cut = flat > 0
    # In the batch's text: where each text starts; the character before each junction; the Han
    # runs of 2+ characters (start, end).
    offsets = texts.starts[alive]
    at = [plan.junctions if plan.spaceless else plan.positions[plan.junctions] for plan in live]
    at = np.concatenate(at or [np.zeros(0, np.int64)]) + np.repeat(offsets, [len(j) for j in at])
    starts, ends = _han_runs(live, offsets, at)
    if not len(starts):
        return _per_text(cut, bounds)
    # Per run: its characters and its first junction; a run is decoded when a junction follows
    # each of its characters but the last (one search over the whole batch: `at` is sorted).
    firsts = np.searchsorted(at, starts)
    whole = np.searchsorted(at, ends - 1) - firsts == ends - starts - 1
    starts, sizes, firsts = starts[whole], (ends - starts)[whole], firsts[whole]
    if not len(starts):
        return _per_text(cut, bounds)
    # Autonomy (and log p) of every string inside a decoded run of the batch text: a word may
    # not run past its run (word_values), so the strings that would are not looked up.
    joined = texts.text
    run_of, inner = run_characters(sizes)
    room = np.zeros(len(joined), dtype=np.int64)  # characters left in its run: no longer word is read
    room[starts[run_of] + inner] = sizes[run_of] - inner
    autonomy, logp = table.autonomy_and_logp(joined, options.max_len, room)
    # Each candidate word's value, once for every character of the batch (elementwise: a
    # character's row is the same whichever group reads it); a group gathers its runs' rows.
    word_values = options.word_values(autonomy, room, logp)
    scores = np.clip(options.beta * flat.astype(np.float64), -options.beta * options.clip, options.beta * options.clip)
    # Runs of similar sizes share one lockstep pass, so one long run does not pad all the others.
    order = np.argsort(sizes, kind="stable")
    for bucket in np.array_split(order, max(1, int(np.ceil(len(order) / 256)))):
        for group in _by_size(bucket, sizes):
            n = int(sizes[group].max())
            k = np.arange(n)
            inside = k[None, :] < sizes[group, None]  # (R, N)
            values = word_values[np.where(inside, starts[group, None] + k[None, :], 0)]
            values[~inside] = -np.inf  # past a run's end: no word starts there
            has_junction = k[None, :] < sizes[group, None] - 1  # (R, N): a junction follows character k
            junction = np.where(has_junction, firsts[group, None] + k[None, :], 0)
            gains = np.where(has_junction, scores[junction], 0.0)
            cut[junction[has_junction]] = best_words(gains, values, sizes[group])[has_junction]
    runs = DecodedRuns.of(starts, sizes, firsts)  # what each join reads of the runs' characters
    if options.joins_units:
        join_units(cut, joined, runs, table, options)
    if options.joins_cohesive:
        # A pass joins each word once, so a word it made may join again: 共|和|国 -> 共和|国 ->
        # 共和国 (of two overlapping pairs a pass takes the left one; left as 共和|国, join_long
        # glued 中华人民|共和 at the fine level). Only a two-character word that a pass made can join
        # again (a 3- or 4-character word is no pair's side), so the next pass runs only after one
        # (chosen: a 1+1 pair that overlapped one to its left costs a pass that changes nothing).
        for _ in range(COHESIVE_PASSES):
            if not join_cohesive(cut, scores, joined, runs, table, options):
                break
    if options.join_long is not None:
        join_long_words(cut, joined, runs, table, options)
    return _per_text(cut, bounds)


def _per_text(cut: np.ndarray, bounds: list[int]) -> list[np.ndarray]:
    """The decisions of all junctions -> each text's, cut[bounds[i] : bounds[i + 1]] (views)."""
    return [cut[a:b] for a, b in pairwise(bounds)]


def _han_runs(plans: list[TextPlan], offsets: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) in the batch's text of the Han runs of 2+ characters of `plans` (their
    texts at `offsets`; `at`: their junctions' characters there, sorted), in text order. In a
    plain text (runs.is_plain: no mark after a Han character) a Han run is a stretch of Han
    characters, and a junction follows each but its last: its runs of 2+ are the stretches of
    consecutive junctions, each one character longer, found by numpy. The others' from their runs."""
    if is_plain("".join(plan.text for plan in plans)):  # most batches: every text, asked at once
        plain = np.ones(len(plans), dtype=bool)
    else:
        plain = np.array([is_plain(plan.text) for plan in plans], dtype=bool)
    plain_at = at[np.repeat(plain, [len(plan.junctions) for plan in plans])]  # the plain texts' junctions
    breaks = np.flatnonzero(np.diff(plain_at) != 1) + 1  # a stretch starts where a junction does not follow one
    starts = plain_at[np.concatenate([np.zeros(1, np.int64), breaks])] if len(plain_at) else plain_at
    ends = plain_at[np.concatenate([breaks - 1, [len(plain_at) - 1]])] + 2 if len(plain_at) else plain_at
    if plain.all():
        return starts, ends
    others = np.array([(offset + r.start, offset + r.end) for offset, plan, p in zip(offsets.tolist(), plans, plain)
                       if not p for r in plan.runs if r.kind == "han" and r.end - r.start > 1],
                      dtype=np.int64).reshape(-1, 2)
    order = np.argsort(np.concatenate([starts, others[:, 0]]), kind="stable")
    return np.concatenate([starts, others[:, 0]])[order], np.concatenate([ends, others[:, 1]])[order]


def _by_size(runs: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """Split runs (sorted by size) where the size more than doubles: padding stays under 2x."""
    ordered, groups, first = sizes[runs], [], 0
    while first < len(runs):  # a group ends before the first run more than twice its first's size
        end = first + int(np.searchsorted(ordered[first:], 2 * ordered[first], side="right"))
        groups.append(runs[first:end])
        first = end
    return groups
