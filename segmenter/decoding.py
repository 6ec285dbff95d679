"""Word-level decoding: choose whole words, not junctions one at a time.

Cutting where a junction's score is above a threshold decides every junction alone, so a
three-character word survives only if both of its inner junctions score low, and the shipped
model's head cuts most of them. Here each Han run is segmented by dynamic programming
(a semi-Markov / Viterbi decoder) into the words w that maximize

    sum over cut junctions k of   beta * clip(s_k)            (s: the heads' score minus the threshold)
  + sum over words w of           alpha * A(w) * len(w)       (A: autonomy from raw text, wordstats.py)
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
whole where the heads' inner cuts are weak (a strong inner cut still wins), which the bonus
did before it. A table without the model leaves the term out.

After the Viterbi, join_cohesive joins two decoded words whose joined string the raw text
rarely breaks (生产|总值 -> 生产总值: 总值 nearly always follows 生产; 其|中 -> 其中), from the
table's counts; the autonomy above cannot see that (a frequent compound is as autonomous as
its halves, and the heads cut function words such as 其中 为了 以上 with some confidence).

The decoder works on per-junction scores only, so it does not care how they were computed
(torch, numpy, a distilled student): `cut_junctions(plan, combined, table, options)`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .junctions import TextPlan, ranks_in_groups
from .wordstats import WordTable


# join_cohesive passes at most (cut_junctions_batch). Six dev files, first 1,300 sentences, general:
# 2 against 1, mean +0.0001 at the default and fine levels (17 words of 7,800 sentences differ at
# the default: 人次 变电所 共和党 地下水 ...), coarse equal; a third pass changed nothing there.
COHESIVE_PASSES = 2
# best_words runs the Viterbi in Python for at most this many runs (a sentence's; a batch's groups of
# a few long ones): ~0.8 us a character against ~6 us a lockstep step of numpy's path for any
# number of runs (one run of 40 characters: 33 against 243 us; eight of 16: 106 against 126).
FEW_RUNS = 4


@dataclass(frozen=True)
class WordDecoding:
    """Weights of the word decoder. Chosen on dev files only; how, value by value: "How the
    decoder's weights were chosen" in segmenter/models/default/MODEL_CARD.md."""

    alpha: float = 0.2  # weight of word autonomy per character: small, it fixes the heads' 1-2 character mistakes
    beta: float = 1.0  # weight of the heads' junction scores
    clip: float = 8.0  # junction scores are clipped to [-clip, clip]: a very sure head is sure enough
    unseen: float = -1.0  # autonomy given to strings of 2+ characters the table lacks
    # Longest word considered (characters): a longer string the raw text repeats is nearly always
    # a phrase (国内生产总值); numbers and dates that long come from the conventions.
    max_len: int = 5
    # Added to a word of 3+ characters whose autonomy is at least `bonus_from`: 0, the unigram
    # term keeps 联合国-like units whole instead.
    bonus: float = 0.0
    bonus_from: float = 3.0
    gamma: float = 0.2  # weight of the unigram model's log p(w) per word (a table without one: no term)
    # Cohesive pairs (join_cohesive): two decoded words join into one of 3 / 4 characters when
    # the raw text rarely has the two-character part(s) without the rest. None: never.
    join3: float | None = 0.7  # 2+1 or 1+2: count(word) / count(its two-character part)
    # 2+1 also joins where the unigram model's log p(word) - log p(2) - log p(1) >= join3_logp
    # (世界|杯: MSR writes such words whole, PKU splits many). None: never, the default; the
    # standards set it (rules.TABLE's join3_logp row).
    join3_logp: float | None = None
    join4: float | None = 0.5  # 2+2: the larger of count(word) / count(half)
    join_min_count: int = 10  # the joined word must have been seen this often
    # Two decoded words of 2+ characters each, 5+ together (中华人民|共和国, longer than max_len):
    # they join when the string of up to three characters either side of their junction is a share
    # >= join_long of the occurrences of each side (join_long_words). None: never.
    join_long: float | None = None  # the standards set it (rules.TABLE's join_long row)
    # 1+1 (其|中, 为|了, 以|上): count(word) / the larger count of its two characters, and only
    # where the heads' score of the junction (threshold subtracted) is below join2_below: 他|说
    # is as cohesive, and the head is sure of that cut.
    join2: float | None = 0.015
    join2_below: float = 3.0
    # ... and also 1+1 where the unigram model has the pair e**join2_logp times likelier as one word
    # than as its two characters and the heads' score is below join2_logp_below (对|方 之|一: the
    # heads cut after a character that is mostly a word of its own). Conventions split the
    # function-word pairs this joins again (就是 -> 就|是, rules.split_function_words). None: never.
    join2_logp: float | None = 5.0
    join2_logp_below: float = 5.0
    # Four-character units the decoder left in pieces with a single character among them
    # (翻|山|越|岭, 自|力|更生, 鄂尔多|斯; join_units): they join when the four characters are a
    # share >= join_units of the occurrences of their most frequent inner two characters and
    # their autonomy is at least units_from. None: never.
    join_units: float | None = 0.3
    units_from: float = 2.0
    # ... seen this often (below join_min_count: the table's rare rows, 塞翁失马 seen 6 times). An
    # inner pair the table lacks counts as seen min_count - 1 times, the most it can have been:
    # 塞翁, 翁失 and 失马 occur only inside 塞翁失马, so the four are most of their occurrences.
    units_min_count: int = 5
    # ... and also where the unigram model has the four characters e**units_logp times likelier
    # as one word than as the decoder's pieces, their autonomy is at least units_logp_from, and
    # none of the four is a single-character word as common as e**units_common (的 在 和 是 了 年
    # 月 与 中: those make phrases, 的|基础|上, not idioms: 迄今|为|止, 鲜|为|人|知). None: never.
    units_logp: float | None = 12.0
    units_logp_from: float = 3.0
    units_common: float = -6.0

    def __post_init__(self):
        for name in ("max_len", "units_min_count"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an int >= 1, got {getattr(self, name)!r}")
        for name in ("alpha", "beta", "clip", "unseen", "bonus", "bonus_from", "join2_below", "join2_logp_below",
                     "units_from", "gamma", "units_logp_from", "units_common"):
            if not np.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        for name in ("join2_logp", "join3_logp", "units_logp"):
            if getattr(self, name) is not None and not np.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number or None (never join), got {getattr(self, name)!r}")
        for name in ("join2", "join3", "join4", "join_units", "join_long"):
            value = getattr(self, name)
            if value is not None and not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number or None (never join), got {value!r}")

    def word_values(self, autonomy: np.ndarray, room: np.ndarray, logp: np.ndarray | None = None) -> np.ndarray:
        """(..., L) autonomy of the words starting at a character (NaN = unknown), (...)
        characters left in its run from there, and (..., L) their unigram log p (None: no
        model) -> (..., L) value of each candidate word."""
        max_len = autonomy.shape[-1]
        known = np.where(np.isnan(autonomy), self.unseen, autonomy)
        known[..., 0] = np.nan_to_num(autonomy[..., 0], nan=0.0)  # unknown single characters: neutral
        lengths = np.arange(1, max_len + 1, dtype=np.float64)
        values = self.alpha * known * lengths
        if self.bonus:  # NaN >= x is False: unknown strings get no bonus
            values += np.where((lengths >= 3) & (autonomy >= self.bonus_from), self.bonus, 0.0)
        if logp is not None and self.gamma:
            values += self.gamma * logp
        values[lengths > room[..., None]] = -np.inf  # a word may not run past the end of its run
        return values


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
    """best_words for a few runs (FEW_RUNS): the same Viterbi, run by run in Python floats, where
    each of best_words' lockstep steps costs four numpy calls for a handful of numbers. The same
    candidates in the same order (lengths 1, 2, ...), the first best kept as argmax keeps it (a
    NaN first of all; every candidate -inf: the first, a word of one character), so the same words."""
    runs, n, max_len = values.shape
    ends = np.zeros((runs, n), dtype=bool)
    for r, (gain, value, size) in enumerate(zip(gains.tolist(), values.tolist(), sizes.tolist())):
        best, back = [0.0], [0]  # best[p]: the best value of the run's first p characters as words
        for end in range(1, n + 1):
            top, chosen = -math.inf, 1
            for length in range(1, max_len + 1):
                start = end - length
                candidate = (best[start] if start >= 0 else -math.inf) + value[max(start, 0)][length - 1]
                if candidate != candidate:
                    top, chosen = candidate, length
                    break
                if candidate > top:
                    top, chosen = candidate, length
            best.append(top + gain[end - 1])
            back.append(chosen)
        position = int(size)
        while position > 0:
            position -= back[position]
            if position > 0:
                ends[r, position - 1] = True
    return ends


def cut_junctions(plan: TextPlan, combined: np.ndarray, table: WordTable, options: WordDecoding) -> np.ndarray:
    """The cut decision of every junction of `plan` (bool, plan.junctions order).

    combined: (len(plan.junctions),) junction scores with the threshold already subtracted.
    A run whose junctions do not cover all its characters (marks attached inside it) keeps the
    threshold decision, s > 0. See cut_junctions_batch, which this is for one text.
    """
    return cut_junctions_batch([plan], [combined], table, options)[0]


def cut_junctions_batch(plans: list[TextPlan], combined: list, table: WordTable,
                        options: WordDecoding) -> list[np.ndarray]:
    """cut_junctions for many texts at once: the Han runs of all of them are decoded together,
    runs of similar sizes in one lockstep pass, so the Python work per step of the Viterbi is
    paid once per group of runs, not once per text (the same decisions as one text at a time:
    every run's dynamic program is its own row). combined[i] may be None for a text without
    junctions."""
    cuts = [np.zeros(0, dtype=bool) if c is None else np.asarray(c) > 0 for c in combined]
    live = [plan for plan, cut in zip(plans, cuts) if len(cut)]
    texts = [plan.text for plan in live]
    # The texts joined by "\n" (below): where each starts; the character before each junction;
    # the Han runs of 2+ characters (start, end).
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = np.cumsum(lengths + 1) - (lengths + 1)
    at = [plan.junctions if plan.spaceless else plan.positions[plan.junctions] for plan in live]
    at = np.concatenate(at or [np.zeros(0, np.int64)]) + np.repeat(offsets, [len(j) for j in at])
    runs = np.array([(offset, r.start, r.end) for offset, plan in zip(offsets.tolist(), live)
                     for r in plan.runs if r.kind == "han" and r.end - r.start > 1], dtype=np.int64).reshape(-1, 3)
    if not len(runs):
        return cuts
    # Per run: its characters and its first junction; a run is decoded when a junction follows
    # each of its characters but the last (one search over the whole batch: `at` is sorted).
    starts, ends = runs[:, 0] + runs[:, 1], runs[:, 0] + runs[:, 2]
    firsts = np.searchsorted(at, starts)
    whole = np.searchsorted(at, ends - 1) - firsts == ends - starts - 1
    starts, sizes, firsts = starts[whole], (ends - starts)[whole], firsts[whole]
    if not len(starts):
        return cuts
    # Autonomy (and log p) of every string inside a decoded run of the joined texts: a word may
    # not run past its run (word_values), so the strings that would are not looked up.
    joined = "\n".join(texts)
    run_of, inner = _run_characters(sizes)
    room = np.zeros(len(joined), dtype=np.int64)  # characters left in its run: no longer word is read
    room[starts[run_of] + inner] = sizes[run_of] - inner
    autonomy, logp = table.autonomy_and_logp(joined, options.max_len, room)
    flat = [c for c in combined if c is not None and len(c)]
    scores = np.clip(options.beta * np.concatenate(flat).astype(np.float64), -options.beta * options.clip,
                     options.beta * options.clip)
    cut = np.concatenate([c for c in cuts if len(c)])
    # Runs of similar sizes share one lockstep pass, so one long run does not pad all the others.
    order = np.argsort(sizes, kind="stable")
    for bucket in np.array_split(order, max(1, int(np.ceil(len(order) / 256)))):
        for group in _by_size(bucket, sizes):
            n = int(sizes[group].max())
            k = np.arange(n)
            inside = k[None, :] < sizes[group, None]  # (R, N)
            rows = np.where(inside, starts[group, None] + k[None, :], 0)
            values = options.word_values(autonomy[rows], np.where(inside, sizes[group, None] - k[None, :], 0),
                                         None if logp is None else logp[rows])
            has_junction = k[None, :] < sizes[group, None] - 1  # (R, N): a junction follows character k
            junction = np.where(has_junction, firsts[group, None] + k[None, :], 0)
            gains = np.where(has_junction, scores[junction], 0.0)
            cut[junction[has_junction]] = best_words(gains, values, sizes[group])[has_junction]
    if options.join_units is not None or options.units_logp is not None:
        join_units(cut, joined, starts, sizes, firsts, table, options)
    if any(getattr(options, name) is not None for name in ("join2", "join2_logp", "join3", "join4")):
        # A pass joins each word once, so a word it made may join again: 共|和|国 -> 共和|国 ->
        # 共和国 (of two overlapping pairs a pass takes the left one; left as 共和|国, join_long
        # glued 中华人民|共和 at the fine level). Only a two-character word that a pass made can join
        # again (a 3- or 4-character word is no pair's side), so the next pass runs only after one
        # (chosen: a 1+1 pair that overlapped one to its left costs a pass that changes nothing).
        for _ in range(COHESIVE_PASSES):
            if not join_cohesive(cut, scores, joined, starts, sizes, firsts, table, options):
                break
    if options.join_long is not None:
        join_long_words(cut, joined, starts, sizes, firsts, table, options)
    pieces = iter(np.split(cut, np.cumsum([len(c) for c in cuts if len(c)])[:-1]))
    return [next(pieces) if len(c) else c for c in cuts]


def _run_characters(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every character of runs of `sizes` characters, in order: its run and its index inside it."""
    run_of = np.repeat(np.arange(len(sizes)), sizes)
    return run_of, ranks_in_groups(sizes)


def _decoded_words(cut: np.ndarray, starts: np.ndarray, sizes: np.ndarray, firsts: np.ndarray):
    """The words the junction decisions `cut` make of the runs: per word, its run, its first
    character's position in the joined text, its length, and the junction after its last
    character (0 for a run's last word: there is none)."""
    run_of, k = _run_characters(sizes)
    position = starts[run_of] + k
    last = k == sizes[run_of] - 1
    junction = np.where(last, 0, firsts[run_of] + k)
    ends = np.flatnonzero(last | cut[junction] & ~last)  # characters that end a word
    word_start = np.concatenate([[0], ends[:-1] + 1])
    return run_of[ends], position[word_start], ends - word_start + 1, junction[ends]


def join_units(cut: np.ndarray, text: str, starts: np.ndarray, sizes: np.ndarray, firsts: np.ndarray, table: WordTable,
               options: WordDecoding) -> None:
    """Uncut (in place) the inside of four characters that the decoder left as 2-4 words, one
    of them a single character, where the raw text has the four as a unit: they are a share
    >= join_units of the occurrences of their most frequent inner two characters (山越 occurs
    mostly in 翻山越岭), their autonomy is >= units_from and the table counts them units_min_count
    times (its rare rows too: 塞翁失马, 6 times). Idioms and transliterations have
    single characters the heads cut off with confidence; 2+2 is join_cohesive's. Of
    overlapping candidates the most cohesive joins. Then, on the words that are left, the same
    by the table's unigram model (units_logp: the four far likelier as one word than as their
    pieces, and none of them a very common single-character word): 迄今|为|止 -> 迄今为止."""
    if options.join_units is not None:
        _join_four(cut, text, starts, sizes, firsts, table, options, _units_by_share, options.units_min_count)
    if options.units_logp is not None and table.unigram is not None:
        _join_four(cut, text, starts, sizes, firsts, table, options, _units_by_model, options.join_min_count)


def _join_four(cut, text, starts, sizes, firsts, table, options, judge, min_count: int) -> None:
    """join_units' pass with one criterion: judge(text, where, pieces, counts, table, options) ->
    (strength, chosen) per candidate, where `where` is the candidates' first characters,
    pieces = (lengths of all candidates' words, flat in candidate order; words per candidate) and
    counts the table's counts of the four characters; the strongest join first. Only the four
    characters the table counts `min_count` times may join: the others are not judged (most
    candidates are rarer), and leaving them out orders the rest as before (a stable sort)."""
    run, begin, length, after = _decoded_words(cut, starts, sizes, firsts)
    firsts_of, counts = [], []  # candidates: (first word, words) of 2-4 words in one run that make four characters
    for words in (2, 3, 4):
        first = np.arange(len(length) - words + 1)
        total = sum(length[first + i] for i in range(words))
        shortest = np.min([length[first + i] for i in range(words)], axis=0)
        same_run = run[first] == run[first + words - 1]
        firsts_of.append(first[same_run & (total == 4) & (shortest == 1)])
        counts.append(np.full(len(firsts_of[-1]), words))
    first, words = np.concatenate(firsts_of), np.concatenate(counts)
    seen = table.counts_at(text, begin[first], np.full(len(first), 4))
    frequent = seen >= min_count
    first, words, seen = first[frequent], words[frequent], seen[frequent]
    if not len(first):
        return
    word = np.repeat(first, words) + ranks_in_groups(words)
    strength, chosen = judge(text, begin[first], (length[word], words), seen, table, options)
    taken = np.zeros(len(length), dtype=bool)
    order = np.argsort(-strength, kind="stable")
    for c in order[chosen[order]].tolist():
        j, n = int(first[c]), int(words[c])
        if not taken[j : j + n].any():
            taken[j : j + n] = True
            cut[after[j : j + n - 1]] = False


def _units_by_share(text, where, pieces, counts, table, options):
    """The four characters' share of their most frequent inner two characters' occurrences. An
    inner pair the table lacks was seen fewer than its min_count times: it counts as min_count - 1."""
    inner = [(0, 2), (1, 2), (2, 2)]
    lacked = max(int(table.info.get("min_count", 1)) - 1, 1)
    pairs = table.counts_at(text, np.concatenate([where + offset for offset, _ in inner]), np.full(3 * len(where), 2))
    share = counts / np.where(pairs > 0, pairs, lacked).reshape(3, len(where)).max(axis=0)
    return share, ((share >= options.join_units)
                   & (table.autonomy_at(text, where, np.full(len(where), 4)) >= options.units_from))


def _units_by_model(text, where, pieces, counts, table, options):
    """log p(the four as one word) - the sum of log p of the decoder's pieces."""
    four, n = np.full(len(where), 4), len(where)
    margin = table.logp_margin_at(text, where, *pieces)
    singles = table.logp_at(text, np.concatenate([where + i for i in range(4)]), np.ones(4 * n, dtype=np.int64))
    common = singles.reshape(4, n).max(axis=0)  # the commonest single character among the four
    chosen = ((margin >= options.units_logp) & (table.autonomy_at(text, where, four) >= options.units_logp_from)
              & (common <= options.units_common))
    return margin, chosen


def join_cohesive(cut: np.ndarray, scores: np.ndarray, text: str, starts: np.ndarray, sizes: np.ndarray,
                  firsts: np.ndarray, table: WordTable, options: WordDecoding) -> bool:
    """Uncut (in place) the junction between two decoded words of a run whose joined string
    is cohesive in the raw text: of 2+2 characters, when one half is nearly always followed
    or preceded by the other (count(word) / count(half) >= join4: 生产|总值, 计划|生育); of
    2+1 or 1+2, when the two-character part mostly occurs inside it (>= join3: 新华|社); of
    1+1, when the pair is a share >= join2 of the more frequent character's occurrences and
    the heads' score `scores` (clipped, per junction) is below join2_below (其|中, not 他|说).
    With join3_logp, 2+1 also joins where the table's unigram model has the word far likelier
    than its two words (世界|杯); with join2_logp, 1+1 the same way where the heads' score is below
    join2_logp_below (对|方).

    The Viterbi's autonomy cannot see this: a frequent compound is as autonomous as its
    halves, and the heads cut between them with confidence. Counted pairs that are merely
    frequent (经济|发展) stay apart: 经济 occurs far more often without 发展. A word joins once
    a pass: of two overlapping pairs, the left one (cut_junctions_batch runs a second pass where
    the first joined: 共|和|国 -> 共和|国 -> 共和国). A table saved without counts joins nothing.

    cut: the decisions of all junctions of the runs (runs in the joined `text` at `starts`,
    `sizes` characters, their first junction at `firsts`), after the Viterbi. Returns whether a
    1+1 pair was chosen: only a two-character word a pass made can join again (2+1, 1+2, 2+2).
    """
    run, begin, lengths, after = _decoded_words(cut, starts, sizes, firsts)
    pair = np.flatnonzero(run[:-1] == run[1:])  # word j and j+1 in one run
    left, right = lengths[pair], lengths[pair + 1]
    kinds = ((left == 2) & (right == 2), (left == 2) & (right == 1), (left == 1) & (right == 2),
             (left == 1) & (right == 1))
    keep = (kinds[0] & (options.join4 is not None) | (kinds[1] | kinds[2]) & (options.join3 is not None)
            | kinds[3] & (options.join2 is not None or options.join2_logp is not None))
    pair, left, right = pair[keep], left[keep], right[keep]
    if not len(pair):
        return False
    # Only a pair the table counts join_min_count times may join: the others' parts are not looked up.
    whole = table.counts_at(text, begin[pair], left + right)
    frequent = whole >= options.join_min_count
    pair, left, right, whole = pair[frequent], left[frequent], right[frequent], whole[frequent]
    begin = begin[pair]
    two = np.minimum(left + right - 1, 2)  # 1+1: the single characters
    # count(word) / count of its first two characters, and of the two after the left word
    _, share_first, share_second = table.shares_at(text, begin, left + right, [(0, two)], [(left, two)],
                                                   whole=whole)
    two_chars = ((left == 1) & (right == 1) & (np.minimum(share_first, share_second) >= (options.join2 or np.inf))
                 & (scores[after[pair]] < options.join2_below))
    four = (left == 2) & (right == 2) & (np.maximum(share_first, share_second) >= (options.join4 or np.inf))
    three = (((left == 2) & (share_first >= (options.join3 or np.inf)))
             | ((right == 2) & (left == 1) & (share_second >= (options.join3 or np.inf))))
    if table.unigram is not None:  # by the unigram model, the pairs the counts did not join already
        if options.join3_logp is not None:
            _join_by_model(three, (left == 2) & (right == 1) & ~three, (2, 1), options.join3_logp, text, begin, table)
        if options.join2_logp is not None:  # ... 1+1 only where the heads cut without much confidence
            _join_by_model(two_chars, (left == 1) & (right == 1) & ~two_chars
                           & (scores[after[pair]] < options.join2_logp_below), (1, 1), options.join2_logp,
                           text, begin, table)
    chosen = pair[four | ((left + right == 3) & three) | two_chars]
    _join_pairs(cut, after, chosen)
    return bool(two_chars.any())


def _join_by_model(joined: np.ndarray, candidates: np.ndarray, pieces: tuple[int, int], least: float, text: str,
                   begin: np.ndarray, table: WordTable) -> None:
    """Mark (in place) in `joined` the candidate pairs (a bool mask over the pairs starting at
    `begin`) whose word the table's unigram model has e**least times likelier than its two words
    of `pieces` lengths: log p(word) - log p(left) - log p(right) >= least."""
    where = np.flatnonzero(candidates)
    margin = table.logp_margin_at(text, begin[where], [pieces] * len(where))
    joined[where[margin >= least]] = True


def join_long_words(cut: np.ndarray, text: str, starts: np.ndarray, sizes: np.ndarray, firsts: np.ndarray,
                    table: WordTable, options: WordDecoding) -> None:
    """Uncut (in place) the junction between two decoded words of 2+ characters each and 5+
    together whose junction the raw text rarely breaks: take up to three characters of each
    side (the table counts strings of up to six), and join when that string is a share >=
    join_long of the occurrences of both of its sides (华人民|共和国: 7,791 of 7,800 and of 8,898,
    so 中华人民|共和国 -> 中华人民共和国, longer than the decoder's max_len). 国内|生产总值 stays:
    内生产 is rare beside 国内. A word joins once: of two overlapping pairs, the left one.
    Chosen on the six dev files: neutral to +0.0002 on each, at every named standard."""
    run, begin, lengths, after = _decoded_words(cut, starts, sizes, firsts)
    pair = np.flatnonzero(run[:-1] == run[1:])
    left, right = lengths[pair], lengths[pair + 1]
    keep = (left >= 2) & (right >= 2) & (left + right >= 5)
    pair, left, right = pair[keep], np.minimum(left[keep], 3), np.minimum(right[keep], 3)
    if not len(pair):
        return
    around = begin[pair + 1] - left  # the string of `left` + `right` characters around the junction
    whole = table.counts_at(text, around, left + right)
    frequent = whole >= options.join_min_count  # the only pairs that may join: their sides are looked up
    pair, left, right, around, whole = (a[frequent] for a in (pair, left, right, around, whole))
    _, share_left, share_right = table.shares_at(text, around, left + right, [(0, left)], [(left, right)],
                                                 whole=whole)
    chosen = pair[np.minimum(share_left, share_right) >= options.join_long]
    _join_pairs(cut, after, chosen)


def _join_pairs(cut: np.ndarray, after: np.ndarray, chosen: np.ndarray) -> None:
    """Uncut the junction after word j for each chosen pair (j, j+1), in order; of two
    overlapping pairs (j and j+1 both chosen) only the left one joins, so a word joins once."""
    previous = -2
    for j in chosen.tolist():  # few: a Python loop keeps "the left one" simple
        if j != previous + 1:
            cut[after[j]] = False
            previous = j


def _by_size(runs: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """Split runs (sorted by size) where the size more than doubles: padding stays under 2x."""
    ordered, groups, first = sizes[runs], [], 0
    while first < len(runs):  # a group ends before the first run more than twice its first's size
        end = first + int(np.searchsorted(ordered[first:], 2 * ordered[first], side="right"))
        groups.append(runs[first:end])
        first = end
    return groups
