"""The conventions of rules.TABLE that move word ends by the words themselves, not by numbers:
surnames, suffixes, repeated marks, function words, coverbs and compounds ((texts, ends, conventions,
setting, word_table) -> ends, text.batch).

Each function's docstring says what it does; which standard applies it, with which character lists
and thresholds, is its row in rules.toml (rules.TABLE), and where each came from its origin there.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

from ..text.batch import (
    FEW_WORDS,
    Texts,
    among_sorted,
    any_of,
    is_among,
    ranks_in_groups,
    starts_word,
    with_ends,
    without_ends,
    word_starts,
)
from ..text.runs import HAN_SPAN_RE, code_points, han_mask


def split_surnames(texts, ends, c, on, word_table):
    """A three-character Han word that starts with a surname and reads as a personal name
    splits after the surname (江泽民 -> 江|泽民): its first two characters occur in it at least
    `name_share` of the time in the raw text (not 金融|业), no character of the given name is a
    transliteration's (莫斯科) and it does not end in a suffix."""
    text = texts.text
    if not c.surnames or not any_of(c.surnames).search(text):
        return ends
    starts = word_starts(ends)
    suffixes = c.suffixes  # join_suffixes' list: a word ending in one is no name
    threes = np.flatnonzero(ends - starts == 3)
    candidates = [k for k in threes[is_among(texts.codes[starts[threes]], c.surnames)].tolist()
                  if HAN_SPAN_RE.fullmatch(text, starts[k], ends[k])
                  and not any(ch in c.foreign for ch in text[starts[k] + 1 : ends[k]])
                  and text[ends[k] - 1] not in suffixes]
    if candidates and word_table is not None:
        _, share = word_table.shares_at(text, starts[np.array(candidates)], 3, [(0, 2)])
        candidates = [k for k, v in zip(candidates, share.tolist()) if not v < c.name_share]  # NaN: unknown, kept
    return with_ends(ends, starts[np.array(candidates, dtype=np.int64)] + 1) if candidates else ends


def join_suffixes(texts, ends, c, on, word_table):
    return _join_suffixes(texts, ends, c.suffixes, word_table)


def join_coarse_suffixes(texts, ends, c, on, word_table):
    return _join_suffixes(texts, ends, c.coarse_suffixes, word_table)


def _join_suffixes(texts: Texts, ends: np.ndarray, suffixes: str, word_table) -> np.ndarray:
    """A two-character Han word followed by a one-character word from `suffixes` becomes one
    word (经营|者 -> 经营者), where the word table has the three characters with autonomy >= 0. A
    joined word takes no second suffix (the word before a candidate has two characters), so the
    two suffix rows give the words one pass over both lists would."""
    text = texts.text
    if not suffixes or not any_of(suffixes).search(text):  # most texts: nothing to do
        return ends
    # Each one-character word k from `suffixes` after a two-character word, the three characters
    # Han, and where word k - 1 starts
    if len(ends) <= FEW_WORDS:  # a sentence's words, in Python: word k is text[bounds[k] : bounds[k + 1]]
        bounds = [0, *ends.tolist()]
        candidates = [k for k in range(1, len(bounds) - 1)
                      if bounds[k + 1] - bounds[k] == 1 and bounds[k] - bounds[k - 1] == 2
                      and text[bounds[k]] in suffixes and HAN_SPAN_RE.fullmatch(text, bounds[k - 1], bounds[k + 1])]
        pair_starts = [bounds[k - 1] for k in candidates]
    else:
        starts = word_starts(ends)
        lengths = ends - starts
        after_pair = np.flatnonzero((lengths[1:] == 1) & (lengths[:-1] == 2)) + 1  # one-character words after two
        candidates = [k for k in after_pair[is_among(texts.codes[starts[after_pair]], suffixes)].tolist()
                      if HAN_SPAN_RE.fullmatch(text, starts[k - 1], ends[k])]
        pair_starts = starts[np.array(candidates, dtype=np.int64) - 1]
    if candidates and word_table is not None:  # NaN (a string the table lacks) is not >= 0
        autonomy = word_table.autonomy_at(text, np.asarray(pair_starts, dtype=np.int64), np.full(len(candidates), 3))
        candidates = [k for k, a in zip(candidates, autonomy.tolist()) if a >= 0]
    return np.delete(ends, [k - 1 for k in candidates]) if candidates else ends


def split_marks(texts, ends, c, on, word_table):
    """A run of one repeated mark from `split_marks` (—— ……) becomes one word per mark."""
    if not c.split_marks:
        return ends
    text, starts = texts.text, texts.starts.tolist()
    cuts = [starts[i] + k for i in texts.having(c.split_marks) for run in texts.runs[i]
            if run.kind == "punct" and run.end - run.start > 1 and text[starts[i] + run.start] in c.split_marks
            for k in range(run.start + 1, run.end) if text[starts[i] + k] == text[starts[i] + run.start]]
    return with_ends(ends, cuts) if cuts else ends


def split_function_words(texts, ends, c, setting, word_table):
    """A two-character Han word led by one of `function_words`, or ended by one of `particles`,
    or by one of `object_pronouns` (说你 -> 说|你, a verb and its object), splits in two
    (就是 -> 就|是, 有着 -> 有|着), unless its second character is one of
    `bound_ends`, which make words of a demonstrative (这里 这么 这儿), or the word table's
    unigram model has the word more than e**function_pair_logp times likelier than its two
    characters as words (已经, 也许, 觉得 stay), or it is one of `keep_pairs`, words of their own
    that the model rates no likelier than a phrase (为了, 除了, 可是, 不过). Without a unigram model nothing tells 已有 from
    已经: the rule does not run. A word ended by one of `verb_particles` (a verb's 着) splits
    up to the higher e**verb_particle_logp: the model rates a frequent verb with its 着 (看着 望着)
    as a word, and annotators still write it apart; lexicalized ones stay (接着 随着). Setting
    "coarse" (MSR) keeps whole the words led by one of `coarse_leads` (不是 不要) and the pairs of
    `coarse_pairs` (也是 都是), as MSR writes them. A three-character Han word led by a function
    word splits after it (不|需要, 应|注意, 最|常见) unless the model has it more than
    e**function_triple_logp times likelier whole than as that character and the two after it
    (不得不 stays; where the two after it are no word of the model's, the word stays too); one
    ended by one of `function_ends` splits before it the same way (生活|中, 尤其|是, 范围|内,
    标志|着, 之类|的)."""
    particles = c.particles + c.verb_particles + c.object_pronouns
    if (not (c.function_words or particles or c.function_ends) or word_table is None or word_table.unigram is None
            or not any_of(c.function_words + particles + c.function_ends).search(texts.text)):
        return ends
    if len(ends) <= FEW_WORDS:  # a sentence's words: in Python, the same splits
        cuts = _function_word_splits_few(texts.text, ends, c, particles, setting, word_table)
        return with_ends(ends, cuts) if cuts else ends
    starts = word_starts(ends)
    pairs = starts[ends - starts == 2]
    first, second = texts.codes[pairs], texts.codes[pairs + 1]
    led = is_among(first, c.function_words) & ~is_among(second, c.bound_ends) | is_among(second, particles)
    led[led] = ~_among_pairs(first[led], second[led], c.keep_pairs, "keep_pairs")  # only the led are asked
    if setting == "coarse":
        led[led] = ~is_among(first[led], c.coarse_leads) & ~_among_pairs(first[led], second[led], c.coarse_pairs)
    begin = pairs[led & han_mask(first) & han_mask(second)]
    cuts = [np.zeros(0, np.int64)]
    if len(begin):
        limit = np.where(is_among(texts.codes[begin + 1], c.verb_particles), c.verb_particle_logp, c.function_pair_logp)
        cuts.append(begin[word_table.logp_margin_at(texts.text, begin, [(1, 1)] * len(begin)) <= limit] + 1)
    triples = starts[ends - starts == 3]
    triples = triples[han_mask(texts.codes[triples]) & han_mask(texts.codes[triples + 1]) & han_mask(texts.codes[triples + 2])]
    lead, end = texts.codes[triples], texts.codes[triples + 2]
    led = is_among(lead, c.function_words)
    if setting == "coarse":
        led &= ~is_among(lead, c.coarse_leads)
    # 1|2 (不|需要) or 2|1 (生活|中) unless the model has the three e**function_triple_logp times likelier whole
    for begin, pieces, cut in ((triples[led], (1, 2), 1), (triples[is_among(end, c.function_ends)], (2, 1), 2)):
        if len(begin):
            cuts.append(begin[word_table.logp_margin_at(texts.text, begin, [pieces] * len(begin))
                              <= c.function_triple_logp] + cut)
    cuts = np.concatenate(cuts)
    return with_ends(ends, cuts) if len(cuts) else ends


def _function_word_splits_few(text: str, ends: np.ndarray, c, particles: str, setting, word_table) -> list[int]:
    """The ends split_function_words adds to a few words, word by word in Python: the same tests
    in the same order as its numpy path (tests/test_small_path.py runs both), the unigram margins
    of the candidates asked once per kind of split, as there."""
    keep_pairs = _pair_set(c.keep_pairs, "keep_pairs")
    coarse = setting == "coarse"
    coarse_pairs = _pair_set(c.coarse_pairs) if coarse else frozenset()
    pairs, limits, leads, lasts = [], [], [], []  # two-character words to split; three-character ones (1|2, 2|1)
    start = 0
    for end in ends.tolist():
        size = end - start
        if size == 2:
            first, second = text[start], text[start + 1]
            if ((first in c.function_words and second not in c.bound_ends or second in particles)
                    and first + second not in keep_pairs
                    and not (coarse and (first in c.coarse_leads or first + second in coarse_pairs))
                    and HAN_SPAN_RE.fullmatch(text, start, end)):
                pairs.append(start)
                limits.append(c.verb_particle_logp if second in c.verb_particles else c.function_pair_logp)
        elif size == 3 and HAN_SPAN_RE.fullmatch(text, start, end):
            if text[start] in c.function_words and not (coarse and text[start] in c.coarse_leads):
                leads.append(start)
            if text[start + 2] in c.function_ends:
                lasts.append(start)
        start = end
    # (starts, pieces, the margin at or below which each splits, where it splits)
    kinds = ((pairs, (1, 1), limits, 1), (leads, (1, 2), [c.function_triple_logp] * len(leads), 1),
             (lasts, (2, 1), [c.function_triple_logp] * len(lasts), 2))
    cuts = []
    for begins, pieces, limits, cut in kinds:
        if begins:
            margins = word_table.logp_margins_few(text, begins, pieces)
            cuts.extend(begin + cut for begin, margin, limit in zip(begins, margins, limits) if margin <= limit)
    return cuts


def split_coverbs(texts, ends, c, on, word_table):
    """A two-character Han word ended by one of `coverbs` (为 于) splits before it: 成为 -> 成|为,
    位于 -> 位|于, 称为, 属于 (UD writes the verb and its 为 or 于 apart), but the pairs of
    `coverb_keeps`, words of their own (因为 由于 认为 关于: UD writes them whole)."""
    if not c.coverbs or not any_of(c.coverbs).search(texts.text):
        return ends
    starts = word_starts(ends)
    pairs = starts[ends - starts == 2]
    first, second = texts.codes[pairs], texts.codes[pairs + 1]
    split = (is_among(second, c.coverbs) & han_mask(first)
             & ~_among_pairs(first, second, c.coverb_keeps, "coverb_keeps"))
    return with_ends(ends, pairs[split] + 1) if split.any() else ends


def join_function_words(texts, ends, c, on, word_table):
    """A word of `joined_words` (function words and a greeting whose characters are each a
    frequent word: 你好 为什么 有的 有时) that the decoder left in pieces becomes one word, where
    the pieces are whole words: the word starts a word and ends one (所有|的 keeps 有的 apart:
    有 is inside 所有)."""
    if not c.joined_words.strip():
        return ends
    found = [(m.start(), m.end()) for m in _words_pattern(c.joined_words).finditer(texts.text)]
    if not found:
        return ends
    begin, end = np.array(found, dtype=np.int64).T
    whole = starts_word(begin, ends, texts) & among_sorted(end, ends)
    inner = [k for b, e in zip(begin[whole].tolist(), end[whole].tolist()) for k in range(b + 1, e)]
    return without_ends(ends, inner) if inner else ends


@lru_cache(maxsize=8)
def _words_pattern(words: str) -> re.Pattern:
    """Words written with spaces between them -> a pattern that finds any of them, longest first."""
    return re.compile("|".join(map(re.escape, sorted(set(words.split()), key=len, reverse=True))))


def split_compounds(texts, ends, c, on, word_table):
    """A Han word of four or five characters splits in two words of two or more (高等法院 ->
    高等|法院, 联合国|大会) where it is less than `compound_share` of the raw-text occurrences of
    each of the two: both stand free of it, so it is two words that often meet, not one. 画蛇添足
    and 迄今为止 stay (73% of 画蛇's occurrences are inside the first, 43% of 迄今's inside the
    second); so does 金融危机, 18% of 危机's.
    Of a five-character word's two ways (2+3, 3+2), the one whose larger share is smaller. A word
    the table never saw whole, or one of whose parts it never saw, stays; so does one with a Han
    numeral or an ordinal mark (the number rows' lists: 第九十五, 二十五年) or a sound of a
    transliteration (split_surnames' `foreign`: 巴西利亚, 安东尼奥)."""
    if not c.compound_share or word_table is None:
        return ends
    text = texts.text
    # Other rows' lists: numbers are the number rows' words, transliterations no compounds.
    kept = c.han_digits + c.han_powers + c.ordinal_marks + c.foreign
    if len(ends) <= FEW_WORDS:  # a sentence's words: the candidates and their shares in Python
        begin, lengths = _compound_candidates_few(text, ends, kept)
        if not begin:  # most sentences
            return ends
        cuts = _compound_cuts_few(text, begin, lengths, word_table, c.compound_share)
        return with_ends(ends, cuts) if cuts else ends
    begin, lengths = _compound_candidates(texts, ends, kept)
    if not len(begin):
        return ends
    whole = word_table.counts_at(text, begin, lengths)  # looked up once for both ways to cut
    # The larger share of each way to cut (inf where a part was never seen, NaN where neither was;
    # both compare false): at 2, and at 3 for five characters.
    best, cut = np.full(len(begin), np.inf), np.zeros(len(begin), dtype=np.int64)
    for at in (2, 3):
        ways = np.flatnonzero(lengths - at >= 2)
        _, left, right = word_table.shares_at(text, begin[ways], lengths[ways], [(0, at)], [(at, lengths[ways] - at)],
                                              whole=whole[ways])
        larger = np.where(whole[ways] > 0, np.maximum(left, right), np.inf)
        better = larger < best[ways]
        best[ways[better]], cut[ways[better]] = larger[better], at
    split = best < c.compound_share
    return with_ends(ends, begin[split] + cut[split]) if split.any() else ends


def _compound_candidates(texts: Texts, ends: np.ndarray, kept: str) -> tuple[np.ndarray, np.ndarray]:
    """(starts, sizes) of split_compounds' candidates: the words of four or five Han characters
    alone, none of them one of `kept`. Per character of the words of four or five, whether it
    breaks that, then per word whether one does."""
    starts = word_starts(ends)
    maybe = np.flatnonzero((ends - starts >= 4) & (ends - starts <= 5))
    if not len(maybe):
        return maybe, maybe
    size = ends[maybe] - starts[maybe]
    codes = texts.codes[np.repeat(starts[maybe], size) + ranks_in_groups(size)]
    breaks = ~han_mask(codes) | is_among(codes, kept)
    candidates = maybe[~np.logical_or.reduceat(breaks, np.cumsum(size) - size)]
    return starts[candidates], ends[candidates] - starts[candidates]


def _compound_candidates_few(text: str, ends: np.ndarray, kept: str) -> tuple[list[int], list[int]]:
    """_compound_candidates of a few words, word by word in Python (as lists)."""
    begin, sizes, start = [], [], 0
    for end in ends.tolist():
        if (4 <= end - start <= 5 and HAN_SPAN_RE.fullmatch(text, start, end)
                and not any(ch in kept for ch in text[start:end])):
            begin.append(start)
            sizes.append(end - start)
        start = end
    return begin, sizes


def _compound_cuts_few(text: str, begin: list[int], sizes: list[int], word_table, share: float) -> list[int]:
    """split_compounds' cuts of a few candidates (starts `begin`, `sizes` characters), in Python:
    every count from one lookup (the whole word, and both parts of each way to cut it), then the
    same float64 shares and comparisons as the numpy code. A word's count is > 0 wherever a
    share is taken, so no share is NaN: a part never seen gives inf, as x / 0 does in numpy."""
    spans = []  # (start, length): each candidate whole, then the two parts of each way to cut it
    for start, size in zip(begin, sizes):
        spans.append((start, size))
        spans.extend(span for at in (2, 3) if size - at >= 2 for span in ((start, at), (start + at, size - at)))
    starts, lengths = zip(*spans)
    counts = iter(word_table.counts_at(text, np.array(starts, dtype=np.int64),
                                       np.array(lengths, dtype=np.int64)).tolist())
    cuts = []
    for start, size in zip(begin, sizes):
        whole, best, cut = next(counts), math.inf, 0
        for at in (2, 3):
            if size - at < 2:
                continue
            left, right = next(counts), next(counts)
            if whole > 0:
                larger = max(whole / left if left else math.inf, whole / right if right else math.inf)
                if larger < best:
                    best, cut = larger, at
        if best < share:
            cuts.append(start + cut)
    return cuts


def _among_pairs(first: np.ndarray, second: np.ndarray, pairs: str, name: str = "coarse_pairs") -> np.ndarray:
    """Whether each two-character string (its code points `first` and `second`) is one of `pairs`
    (two-character strings written one after another, the Conventions field `name`)."""
    return among_sorted(first * 0x110000 + second, _pair_codes(pairs, name))  # Texts.codes: int64


@lru_cache(maxsize=16)
def _pair_set(pairs: str, name: str = "coarse_pairs") -> frozenset[str]:
    """The two-character strings of `pairs` (written one after another, as _pair_codes reads them
    and with its error): _among_pairs' members as strings, for a few words in Python."""
    _pair_codes(pairs, name)  # the check of the list
    return frozenset(pairs[k : k + 2] for k in range(0, len(pairs), 2))


@lru_cache(maxsize=16)
def _pair_codes(pairs: str, name: str = "coarse_pairs") -> np.ndarray:
    """Two-character strings written one after another ("也是都是") -> one int64 code each; `name`:
    the Conventions field they come from, for the error. Cached, as text.batch.codes_of is: every call
    of split_function_words asks for keep_pairs' codes (read only, never written)."""
    if len(pairs) % 2:
        raise ValueError(f"Conventions.{name} must be two-character pairs written one after another, "
                         f"got {len(pairs)} characters: {pairs!r}")
    codes = code_points(pairs).astype(np.int64)
    return np.unique(codes[0::2] * 0x110000 + codes[1::2])  # sorted, for among_sorted
