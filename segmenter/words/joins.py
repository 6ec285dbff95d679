"""The joins after the word decoder's Viterbi (decoding.py): two or more decoded words become one
where the raw text's word table says the joined string is a unit. Each works in place on the
junction decisions `cut` of the Han runs decoded together (cut_junctions_batch's, laid out once
for all joins: DecodedRuns, in the batch text, text.batch.Texts) and reads its thresholds from
weights.WordDecoding.

join_cohesive joins two decoded words whose joined string the raw text rarely breaks
(生产|总值 -> 生产总值: 总值 nearly always follows 生产; 其|中 -> 其中), from the table's counts; the
decoder's autonomy cannot see that (a frequent compound is as autonomous as its halves, and the
heads cut function words such as 其中 为了 以上 with some confidence).
join_units does the same for four characters the heads cut into pieces (翻|山|越|岭 -> 翻山越岭),
join_long_words for two words of 2+ characters, 5+ together (中华人民|共和国).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..text.batch import ranks_in_groups, run_characters
from .table import WordTable
from .weights import WordDecoding


class DecodedRuns(NamedTuple):
    """The characters of the Han runs the decoder decodes together (cut_junctions_batch), laid out
    once for every join: per character of the runs (C,), in order, its run, its position in the
    joined text, whether it is its run's last, and the junction after it (0 for a run's last
    character: there is none)."""

    run_of: np.ndarray
    position: np.ndarray
    last: np.ndarray
    junction: np.ndarray

    @classmethod
    def of(cls, starts: np.ndarray, sizes: np.ndarray, firsts: np.ndarray) -> DecodedRuns:
        """The layout of runs at `starts` in the joined text, of `sizes` characters, their first
        junction at `firsts` (R,)."""
        run_of, k = run_characters(sizes)
        last = k == sizes[run_of] - 1
        return cls(run_of, starts[run_of] + k, last, np.where(last, 0, firsts[run_of] + k))


def _decoded_words(cut: np.ndarray, runs: DecodedRuns):
    """The words the junction decisions `cut` make of the runs: per word, its run, its first
    character's position in the joined text, its length, and the junction after its last
    character (0 for a run's last word: there is none)."""
    ends = np.flatnonzero(runs.last | cut[runs.junction] & ~runs.last)  # characters that end a word
    word_start = np.concatenate([[0], ends[:-1] + 1])
    return runs.run_of[ends], runs.position[word_start], ends - word_start + 1, runs.junction[ends]


def join_units(cut: np.ndarray, text: str, runs: DecodedRuns, table: WordTable, options: WordDecoding) -> None:
    """Uncut (in place) the inside of four characters that the decoder left as 2-4 words, one
    of them a single character, where the raw text has the four as a unit: they are a share
    >= join_units of the occurrences of their most frequent inner two characters (山越 occurs
    mostly in 翻山越岭), their autonomy is >= units_from and the table counts them units_min_count
    times (its rare rows too: 塞翁失马, 6 times). Idioms and transliterations have
    single characters the heads cut off with confidence; 2+2 is join_cohesive's. Of
    overlapping candidates the most cohesive joins. Then, on the words that are left, the same
    by the table's unigram model (units_logp: the four far likelier as one word than as their
    pieces, and none of them a very common single-character word): 迄今|为|止 -> 迄今为止."""
    found = None  # the decoded words and their four-character candidates, shared by both passes
    if options.join_units is not None:
        found = _four_candidates(cut, text, runs, table)
        if _join_four(cut, text, found, table, options, _units_by_share, options.units_min_count):
            found = None  # words joined: the second pass reads the words now
    if options.units_logp is not None and table.unigram is not None:
        found = found or _four_candidates(cut, text, runs, table)
        _join_four(cut, text, found, table, options, _units_by_model, options.join_min_count)


def _four_candidates(cut, text, runs: DecodedRuns, table) -> tuple:
    """(the decoded words: run, begin, length, after), then the candidates: 2-4 words of one run
    that make four characters, one of them a single character (first word, words), and the
    table's count of each candidate's four characters."""
    run, begin, length, after = _decoded_words(cut, runs)
    firsts_of, counts = [], []
    for words in (2, 3, 4):
        first = np.arange(len(length) - words + 1)
        total = sum(length[first + i] for i in range(words))
        shortest = np.min([length[first + i] for i in range(words)], axis=0)
        same_run = run[first] == run[first + words - 1]
        firsts_of.append(first[same_run & (total == 4) & (shortest == 1)])
        counts.append(np.full(len(firsts_of[-1]), words))
    first, words = np.concatenate(firsts_of), np.concatenate(counts)
    return (run, begin, length, after), first, words, table.counts_at(text, begin[first], np.full(len(first), 4))


def _join_four(cut, text, found, table, options, judge, min_count: int) -> bool:
    """join_units' pass with one criterion over the candidates `found` (_four_candidates):
    judge(text, where, pieces, counts, table, options) -> (strength, chosen) per candidate, where
    `where` is the candidates' first characters, pieces = (lengths of all candidates' words, flat
    in candidate order; words per candidate) and counts the table's counts of the four
    characters; the strongest join first. Only the four characters the table counts `min_count`
    times may join: the others are not judged (most candidates are rarer), and leaving them out
    orders the rest as before (a stable sort). Returns whether any joined."""
    (_, begin, length, after), first, words, seen = found
    frequent = seen >= min_count
    first, words, seen = first[frequent], words[frequent], seen[frequent]
    if not len(first):
        return False
    word = np.repeat(first, words) + ranks_in_groups(words)
    strength, chosen = judge(text, begin[first], (length[word], words), seen, table, options)
    taken = np.zeros(len(length), dtype=bool)
    order = np.argsort(-strength, kind="stable")
    for c in order[chosen[order]].tolist():
        j, n = int(first[c]), int(words[c])
        if not taken[j : j + n].any():
            taken[j : j + n] = True
            cut[after[j : j + n - 1]] = False
    return bool(taken.any())


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


def join_cohesive(cut: np.ndarray, scores: np.ndarray, text: str, runs: DecodedRuns, table: WordTable,
                  options: WordDecoding) -> bool:
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

    cut: the decisions of all junctions of the `runs` (in the joined `text`), after the Viterbi.
    Returns whether a 1+1 pair was chosen: only a two-character word a pass made can join again
    (2+1, 1+2, 2+2).
    """
    run, begin, lengths, after = _decoded_words(cut, runs)
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
    join_pairs(cut, after, chosen)
    return bool(two_chars.any())


def _join_by_model(joined: np.ndarray, candidates: np.ndarray, pieces: tuple[int, int], least: float, text: str,
                   begin: np.ndarray, table: WordTable) -> None:
    """Mark (in place) in `joined` the candidate pairs (a bool mask over the pairs starting at
    `begin`) whose word the table's unigram model has e**least times likelier than its two words
    of `pieces` lengths: log p(word) - log p(left) - log p(right) >= least."""
    where = np.flatnonzero(candidates)
    margin = table.logp_margin_at(text, begin[where], [pieces] * len(where))
    joined[where[margin >= least]] = True


def join_long_words(cut: np.ndarray, text: str, runs: DecodedRuns, table: WordTable, options: WordDecoding) -> None:
    """Uncut (in place) the junction between two decoded words of 2+ characters each and 5+
    together whose junction the raw text rarely breaks: take up to three characters of each
    side (the table counts strings of up to six), and join when that string is a share >=
    join_long of the occurrences of both of its sides (华人民|共和国: 7,791 of 7,799 and of 8,898,
    so 中华人民|共和国 -> 中华人民共和国, longer than the decoder's max_len). 国内|生产总值 stays:
    内生产 is rare beside 国内. A word joins once: of two overlapping pairs, the left one."""
    run, begin, lengths, after = _decoded_words(cut, runs)
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
    join_pairs(cut, after, chosen)


def join_pairs(cut, after, chosen) -> None:
    """Uncut the junction after word j for each chosen pair (j, j+1), in order; of two
    overlapping pairs (j and j+1 both chosen) only the left one joins, so a word joins once.
    cut, after: arrays or lists (decoding_few's Python decoder passes lists); chosen ascending."""
    previous = -2
    for j in chosen if isinstance(chosen, list) else chosen.tolist():  # few: a Python loop keeps "the left one" simple
        if j != previous + 1:
            cut[after[j]] = False
            previous = j
