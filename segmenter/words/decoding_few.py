"""The word decoder for a few characters (one `lcut` of a short sentence): decoding.py's
cut_junctions_batch in plain Python, the same decisions, with no numpy call but one word-table
lookup of every string of the text.

A short text's decoder run through numpy costs ~1,300 calls on arrays of a handful of numbers
(the Viterbi's lockstep, the joins' candidates, ~20 lookups of a few strings each), several
times the model's own run. Here the text's strings (every start, every length up to the table's
max_n) are looked up once (WordTable._values: the same search and the same values as every
lookup of decoding.py and joins.py), and the rest is Python on those numbers, term by term as
the numpy code computes it (the same float64 operations in the same order, NaN where numpy has
NaN), so that the words are the batch path's (tests/test_small_path.py checks both ways on
random and dev texts; benchmarks/words_digest.py the batch path).

`viterbi_run` is the one Python Viterbi: this path's, and decoding.best_words' for a few runs.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from itertools import pairwise

import numpy as np

from .hashindex import text_hashes
from .joins import join_pairs
from .weights import WordDecoding

INF = math.inf
_MAX_FLOAT = float(np.finfo(np.float64).max)  # what np.nan_to_num makes of inf


def viterbi_run(gain: list[float], value: list[list[float]], size: int, n: int | None = None) -> list[int]:
    """The best words of one run of `size` characters: the characters that end a word before
    the run's end (ascending). gain[k]: the score gained by a word ending after character k;
    value[k][l - 1]: the value of the word of l characters starting at k (-inf where it does not
    fit). The candidates of each end in order of length, the first best kept (as numpy's argmax: a
    NaN first of all; every candidate -inf: a word of one character). n: the characters the
    program runs over (decoding.best_words pads a group of runs to its longest; the words of the
    run's own `size` are the same)."""
    n = size if n is None else n
    max_len = len(value[0]) if value else 0
    best, back = [0.0], [0]  # best[p]: the best value of the run's first p characters as words
    # Words longer than the characters before an end: -inf + the value of the word at the run's
    # start, never above the best, but NaN (first of all) where that value is NaN or +inf: the
    # lengths where it is, ascending (most runs: none).
    beyond = [length for length, v in enumerate(value[0] if value else [], 1) if math.isnan(v) or v == INF]
    for end in range(1, n + 1):
        top, chosen = -INF, 1
        for length in range(1, min(max_len, end) + 1):
            candidate = best[end - length] + value[end - length][length - 1]
            if candidate != candidate:
                top, chosen = candidate, length
                break
            if candidate > top:
                top, chosen = candidate, length
        else:
            for length in beyond:
                if length > end:
                    top, chosen = math.nan, length
                    break
        best.append(top + gain[end - 1])
        back.append(chosen)
    return word_ends(back, size)


def word_ends(back: list[int], size: int) -> list[int]:
    """The characters that end a word before the run's end (ascending), walked back from the run's
    end through back[p], the length of the last word of the best words of the first p characters."""
    ends, position = [], size
    while position > 0:
        position -= back[position]
        if position > 0:
            ends.append(position - 1)
    return ends[::-1]


def _min(a: float, b: float) -> float:
    """np.minimum of two floats: NaN if either is."""
    return a if a != a or a < b else b


def _max(a: float, b: float) -> float:
    """np.maximum of two floats: NaN if either is."""
    return a if a != a or a > b else b


def _divide(a: float, b: float) -> float:
    """a / b as numpy divides float64 (errstate ignored): x / 0 = ±inf, 0 / 0 = NaN."""
    if b == 0:
        return math.nan if a == 0 or a != a else math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


class _Strings:
    """The strings of `text` of 1..max_n characters, looked up on first use, a length at a time:
    autonomy, counts and log p by (start, length), as WordTable's *_at lookups give them (the
    same hashes, hashindex.text_hashes; the same search and values, WordTable.look_up_few)."""

    def __init__(self, table, text: str):
        self.table, self.size, self.max_n = table, len(text), table.max_n
        self.longest = min(self.max_n, len(text))  # the lengths looked up
        self.logp = table.unigram is not None  # whether log p can be read
        columns = ("autonomy", "counts") + (("logp",) if self.logp else ())  # rows' order
        self.missing = {name: float(table._column(1, name)[1]) for name in columns}
        self.columns = columns
        self.hashes = text_hashes(text, self.longest)  # [n - 1][start]
        self._rows: dict[int, list[list[float]]] = {}  # n -> [column][start] (rows)

    def rows(self, n: int) -> list[list[float]]:
        """[column][start] of the strings of n characters (1 <= n <= longest), columns in the order
        of self.columns: every column of a length from one search (WordTable.look_up_few), on
        first use of that length."""
        rows = self._rows.get(n)
        if rows is None:
            rows = self._rows[n] = self.table.look_up_few(n, self.hashes[n - 1], self.columns)
        return rows

    def row(self, name: str, n: int) -> list[float]:
        """Column `name` of the strings of n characters (1 <= n <= longest), by start."""
        return self.rows(n)[self.columns.index(name)]

    def count(self, start: int, length: int) -> float:
        if 1 <= length <= self.longest and 0 <= start <= self.size - length:
            return self.rows(length)[1][start]
        return self.missing["counts"]

    def autonomy_of(self, start: int, length: int) -> float:
        if 1 <= length <= self.longest and 0 <= start <= self.size - length:
            return self.rows(length)[0][start]
        return self.missing["autonomy"]

    def logp_of(self, start: int, length: int) -> float:
        if self.logp and 1 <= length <= self.longest and 0 <= start <= self.size - length:
            return self.rows(length)[2][start]
        return self.missing["logp"]

    def margin(self, start: int, pieces) -> float:
        """WordTable.logp_margin_at of one string: log p(whole) minus each piece's, left to right."""
        margin, at = self.logp_of(start, sum(pieces)), start
        for length in pieces:
            margin -= self.logp_of(at, length)
            at += length
        return margin


class TextLookups:
    """A word table for one short text (words/assembly.py makes one a call): its *_at lookups of
    that text (the conventions': shares_at, autonomy_at, counts_at, logp_at, logp_margin_at, logp_margins_few)
    answered from one lookup of all its strings, the values WordTable's own would give; any other
    text, and everything else, goes to the table. Made for one call and dropped: nothing is kept
    from one text to the next."""

    def __init__(self, table, text: str):
        self.table, self.text = table, text
        self.unigram, self.info, self.max_n = table.unigram, table.info, table.max_n  # read a few times a call
        self.strings = _Strings(table, text)

    def __getattr__(self, name):
        return getattr(self.table, name)

    def _values_at(self, text, starts, lengths, read):
        starts = np.asarray(starts, dtype=np.int64).tolist()
        return np.array([read(s, n) for s, n in zip(starts, _each(lengths, len(starts)))], dtype=np.float64)

    def counts_at(self, text, starts, lengths):
        if text is not self.text:
            return self.table.counts_at(text, starts, lengths)
        return self._values_at(text, starts, lengths, self.strings.count)

    def autonomy_at(self, text, starts, lengths):
        if text is not self.text:
            return self.table.autonomy_at(text, starts, lengths)
        return self._values_at(text, starts, lengths, self.strings.autonomy_of)

    def logp_at(self, text, starts, lengths):
        if text is not self.text or not self.strings.logp:
            return self.table.logp_at(text, starts, lengths)
        return self._values_at(text, starts, lengths, self.strings.logp_of)

    def logp_margin_at(self, text, starts, pieces, sizes=None):
        if text is not self.text or not self.strings.logp:
            return self.table.logp_margin_at(text, starts, pieces, sizes)
        starts = np.asarray(starts, dtype=np.int64).tolist()
        if sizes is not None:  # every string's pieces, flat
            flat, pieces, used = np.asarray(pieces, dtype=np.int64).tolist(), [], 0
            for size in np.asarray(sizes, dtype=np.int64).tolist():
                pieces.append(flat[used : used + size])
                used += size
        return np.array([self.strings.margin(s, [int(n) for n in p]) for s, p in zip(starts, pieces)],
                        dtype=np.float64)

    def logp_margins_few(self, text, starts, pieces):
        if text is not self.text or not self.strings.logp:
            return self.table.logp_margins_few(text, starts, pieces)
        return [self.strings.margin(start, pieces) for start in starts]

    def shares_at(self, text, starts, lengths, *parts, whole=None):
        if text is not self.text:
            return self.table.shares_at(text, starts, lengths, *parts, whole=whole)
        begin, count = np.asarray(starts, dtype=np.int64).tolist(), self.strings.count
        wholes = ([count(s, n) for s, n in zip(begin, _each(lengths, len(begin)))] if whole is None
                  else np.asarray(whole, dtype=np.float64).tolist())
        out = [np.array(wholes, dtype=np.float64)]
        for part in parts:
            spans = [(_each(offset, len(begin)), _each(size, len(begin))) for offset, size in part]
            shares = []
            for i, (s, w) in enumerate(zip(begin, wholes)):
                largest = None
                for offsets, sizes in spans:
                    c = count(s + offsets[i], sizes[i])
                    largest = c if largest is None else _max(largest, c)
                shares.append(_divide(w, largest))
            out.append(np.array(shares, dtype=np.float64))
        return out


def _each(value, count: int) -> list[int]:
    """An int, or one per string (a sequence or array of `count`), as `count` Python ints: what
    np.broadcast_to gives the *_at lookups' arguments, without its cost (a few us a call)."""
    if np.ndim(value) == 0:
        return [int(value)] * count
    values = np.asarray(value, dtype=np.int64).ravel().tolist()
    return values * count if len(values) == 1 and count != 1 else values


def cut_junctions_few(plans, combined: list, table, options: WordDecoding, texts, passes: int) -> list[np.ndarray]:
    """decoding.cut_junctions_batch for a few characters (texts: the plans' batch, text.batch.Texts;
    passes: join_cohesive's at most, decoding.COHESIVE_PASSES)."""
    joined = texts.text
    # The junctions of the batch, in order: the character before each (in `joined`), its margin;
    # text i's are those of bounds[i] : bounds[i + 1].
    at, flat, bounds = [], [], [0]
    offsets = texts.starts.tolist()
    for plan, margins, offset in zip(plans, combined, offsets):
        if margins is not None and len(margins):
            before = plan.junctions if plan.spaceless else plan.positions[plan.junctions]
            at.extend([q + offset for q in before.tolist()] if offset else before.tolist())
            flat.extend(np.asarray(margins).tolist())
        bounds.append(len(flat))
    cut = [m > 0 for m in flat]  # the threshold's decisions, until the decoder's replace them
    runs = []  # (start in joined, size, first junction) of each decoded run
    for plan, offset, (a, b) in zip(plans, offsets, pairwise(bounds)):
        if a == b:
            continue
        for r in plan.runs:
            if r.kind == "han" and r.end - r.start > 1:
                start, end = offset + r.start, offset + r.end
                first = bisect_left(at, start)
                if bisect_left(at, end - 1) - first == end - start - 1:
                    runs.append((start, end - start, first))
    if runs:
        _decode_runs(cut, flat, runs, joined, table, options, passes)
    return [np.array(cut[a:b], dtype=bool) for a, b in pairwise(bounds)]


def _decode_runs(cut: list[bool], flat: list[float], runs: list[tuple[int, int, int]], joined: str, table,
                 options: WordDecoding, passes: int) -> None:
    """The words of each decoded run (start in `joined`, size, first junction), then the joins:
    `cut` (the batch's junctions, the threshold's decisions) set in place; flat: their margins."""
    beta, clip = options.beta, options.clip
    scores = [min(max(beta * m, -beta * clip), beta * clip) for m in flat]
    strings = table.strings if isinstance(table, TextLookups) and table.text is joined else _Strings(table, joined)
    # the lengths a word may have (in the longest run) and the table may hold
    known = range(1, min(options.max_len, strings.longest, max(size for _, size, _ in runs)) + 1)
    autonomy = [strings.row("autonomy", n) for n in known]
    logp = [strings.row("logp", n) for n in known] if strings.logp and options.gamma else None
    for start, size, first in runs:
        value = _run_values(autonomy, logp, strings, options, start, size)
        gain = [scores[first + k] for k in range(size - 1)] + [0.0]
        ends = set(viterbi_run(gain, value, size))
        for k in range(size - 1):
            cut[first + k] = k in ends
    if options.joins_units:
        _join_units(cut, runs, strings, table, options)
    if options.joins_cohesive:
        for _ in range(passes):
            if not _join_cohesive(cut, scores, runs, strings, table, options):
                break
    if options.join_long is not None:
        _join_long_words(cut, runs, strings, options)


def _run_values(autonomy: list, logp: list | None, strings: _Strings, options: WordDecoding, start: int,
                size: int) -> list[list[float]]:
    """WordDecoding.word_values of the words of one run of `size` characters at `start` (inside
    the text: every string of the run is a string of it), [k][n - 1]: the word of n characters
    at start + k (-inf past the run's end or max_len). autonomy, logp: the strings' rows of each
    length the table may hold (_Strings.row), logp None: no unigram term. The same float64
    operations in the same order as numpy's."""
    max_len = options.max_len
    known_rows = len(autonomy)  # longer: not in the table
    alpha, unseen, bonus, gamma = options.alpha, options.unseen, options.bonus, options.gamma
    bonus_from = options.bonus_from
    unseen_logp = strings.missing.get("logp", 0.0)
    out = []
    for k in range(size):
        at = start + k
        fits = min(size - k, max_len)
        known = min(fits, known_rows)
        values = []
        for n in range(fits):  # the word of n + 1 characters
            if n < known:
                a = autonomy[n][at]
                p = logp[n][at] if logp is not None else 0.0
            else:
                a, p = math.nan, unseen_logp
            if a != a:
                value = alpha * (0.0 if n == 0 else unseen) * float(n + 1)
            elif n == 0 and (a == INF or a == -INF):  # np.nan_to_num's ends
                value = alpha * math.copysign(_MAX_FLOAT, a) * 1.0
            else:
                value = alpha * a * float(n + 1)
            if bonus:
                value += bonus if n >= 2 and a >= bonus_from else 0.0
            if logp is not None:
                value += gamma * p
            values.append(value)
        if fits < max_len:
            values.extend([-INF] * (max_len - fits))
        out.append(values)
    return out


def _decoded_words(cut: list[bool], runs) -> list[tuple[int, int, int, int]]:
    """joins._decoded_words: (run, first character in the text, length, junction after it or 0)."""
    words = []
    for r, (start, size, first) in enumerate(runs):
        begin = 0
        for k in range(size):
            last = k == size - 1
            if last or cut[first + k]:
                words.append((r, start + begin, k - begin + 1, 0 if last else first + k))
                begin = k + 1
    return words




def _join_units(cut, runs, strings: _Strings, table, options: WordDecoding) -> None:
    """joins.join_units."""
    found = None
    if options.join_units is not None:
        found = _four_candidates(cut, runs, strings)
        if _join_four(cut, found, strings, table, options, "share", options.units_min_count):
            found = None
    if options.units_logp is not None and table.unigram is not None:
        found = found or _four_candidates(cut, runs, strings)
        _join_four(cut, found, strings, table, options, "model", options.join_min_count)


def _four_candidates(cut, runs, strings: _Strings):
    words = _decoded_words(cut, runs)
    candidates = []  # (first word, words), 2-word ones first, then 3, then 4, each by first word
    run_of, lengths = [w[0] for w in words], [w[2] for w in words]
    for count in (2, 3, 4):
        for first in range(len(words) - count + 1):
            if run_of[first] == run_of[first + count - 1]:
                group = lengths[first : first + count]
                if sum(group) == 4 and min(group) == 1:
                    candidates.append((first, count))
    return words, [(first, count, strings.count(words[first][1], 4)) for first, count in candidates]


def _join_four(cut, found, strings: _Strings, table, options, judge: str, min_count: int) -> bool:
    words, candidates = found
    candidates = [c for c in candidates if c[2] >= min_count]
    if not candidates:
        return False
    judged = []  # (strength, chosen)
    lacked = max(int(table.info.get("min_count", 1)) - 1, 1)  # a pair the table lacks: at most this often
    for first, count, seen in candidates:
        where = words[first][1]
        if judge == "share":
            pairs = [strings.count(where + offset, 2) for offset in (0, 1, 2)]
            largest = None
            for p in pairs:
                p = p if p > 0 else float(lacked)
                largest = p if largest is None else _max(largest, p)
            share = seen / largest
            judged.append((share, share >= options.join_units
                           and strings.autonomy_of(where, 4) >= options.units_from))
        else:
            margin = strings.margin(where, [words[first + i][2] for i in range(count)])
            common = None
            for i in range(4):
                single = strings.logp_of(where + i, 1)
                common = single if common is None else _max(common, single)
            judged.append((margin, margin >= options.units_logp
                           and strings.autonomy_of(where, 4) >= options.units_logp_from
                           and common <= options.units_common))
    # np.argsort(-strength, kind="stable"): descending, ties in order, NaN last
    order = sorted(range(len(judged)), key=lambda c: (judged[c][0] != judged[c][0],
                                                      0.0 if judged[c][0] != judged[c][0] else -judged[c][0]))
    taken = [False] * len(words)
    for c in order:
        if not judged[c][1]:
            continue
        first, count, _ = candidates[c]
        if not any(taken[first : first + count]):
            for j in range(first, first + count):
                taken[j] = True
            for j in range(first, first + count - 1):
                cut[words[j][3]] = False
    return any(taken)


def _join_cohesive(cut, scores, runs, strings: _Strings, table, options: WordDecoding) -> bool:
    """joins.join_cohesive."""
    words = _decoded_words(cut, runs)
    no_join2 = options.join2 or INF
    no_join3, no_join4 = options.join3 or INF, options.join4 or INF
    chosen, any_two = [], False
    for j in range(len(words) - 1):
        if words[j][0] != words[j + 1][0]:
            continue
        left, right = words[j][2], words[j + 1][2]
        if not (left == 2 and right == 2 and options.join4 is not None
                or (left == 2 and right == 1 or left == 1 and right == 2) and options.join3 is not None
                or left == 1 and right == 1 and (options.join2 is not None or options.join2_logp is not None)):
            continue
        begin = words[j][1]
        whole = strings.count(begin, left + right)
        if not whole >= options.join_min_count:
            continue
        two = min(left + right - 1, 2)
        share_first = _divide(whole, strings.count(begin, two))
        share_second = _divide(whole, strings.count(begin + left, two))
        score = scores[words[j][3]]
        two_chars = (left == 1 and right == 1 and _min(share_first, share_second) >= no_join2
                     and score < options.join2_below)
        four = left == 2 and right == 2 and _max(share_first, share_second) >= no_join4
        three = (left == 2 and share_first >= no_join3) or (right == 2 and left == 1 and share_second >= no_join3)
        if table.unigram is not None:
            if options.join3_logp is not None and left == 2 and right == 1 and not three:
                three = strings.margin(begin, (2, 1)) >= options.join3_logp
            if (options.join2_logp is not None and left == 1 and right == 1 and not two_chars
                    and score < options.join2_logp_below):
                two_chars = strings.margin(begin, (1, 1)) >= options.join2_logp
        any_two = any_two or two_chars
        if four or (left + right == 3 and three) or two_chars:
            chosen.append(j)
    if chosen:
        join_pairs(cut, [word[3] for word in words], chosen)
    return any_two


def _join_long_words(cut, runs, strings: _Strings, options: WordDecoding) -> None:
    """joins.join_long_words."""
    words = _decoded_words(cut, runs)
    chosen = []
    for j in range(len(words) - 1):
        if words[j][0] != words[j + 1][0]:
            continue
        left, right = words[j][2], words[j + 1][2]
        if not (left >= 2 and right >= 2 and left + right >= 5):
            continue
        left, right = min(left, 3), min(right, 3)
        around = words[j + 1][1] - left
        whole = strings.count(around, left + right)
        if not whole >= options.join_min_count:
            continue
        share_left = _divide(whole, strings.count(around, left))
        share_right = _divide(whole, strings.count(around + left, right))
        if _min(share_left, share_right) >= options.join_long:
            chosen.append(j)
    if chosen:
        join_pairs(cut, [word[3] for word in words], chosen)
