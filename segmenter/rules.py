"""Every rule of a segmentation standard, as one ordered table (TABLE, at the end of this file).

Two kinds of rule, both decisions of a standard that no head can learn (conventions.py says why):
  - a **convention** moves word ends inside the words the decoder chose (１９９７|年 -> １９９７年);
    its function takes (texts, ends, conventions, setting, word_table) and returns the ends: texts
    (`Texts`) is one or many texts joined by SEPARATOR, ends the sorted word ends of the joined
    text, so that a rule runs once over a whole batch (one regex pass, one word-table lookup);
  - a **decoder join** sets an option of the word decoder (decoding.WordDecoding) before it runs;
    its function takes (decoding, setting) and returns the decoding.
A row (`Rule`) is a rule's name, what it does, that function, the character lists and thresholds
it reads (its `params`: together they are the fields of conventions.Conventions) and its setting
in each named standard: False (off), True or a value (on, with that value). A standard
(levels.Standard) is one setting per row (levels.Rules, built from the rows); conventions run in
table order (conventions.apply_conventions), decoder joins likewise (levels.Level.at), and
`segmenter calibrate` tries each row's `search` values. Removing a row removes its rule, switch
and parameters everywhere; adding a rule is one row.

The order matters where two rules touch the same words: a surname splits before a suffix joins
(江泽民 -> 江|泽民, never 泽民+suffix first), counts split after both (十五|部 joined, then split).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from .text import HAN_SPAN_RE, LINE_BREAKS, Run, attached_end, code_points, han_mask

STANDARD_NAMES = ("pku", "msr", "ud", "general")  # the named standards (levels.STANDARDS), each row's `at`
COUNT_STANDARDS = ("fine", "default", "coarse")  # how a standard writes counts: UD's, PKU's, MSR's


@dataclass(frozen=True)
class Rule:
    name: str  # its switch in a standard (a field of levels.Rules)
    about: str
    run: Callable  # what it does (a convention's or a decoder join's function: see above)
    at: dict  # {standard name: setting}; False or None: off
    params: dict | None = None  # {Conventions field: default}: the character lists and thresholds it reads
    decoder: bool = False  # a decoder join: run(decoding, setting), called whatever the setting
    choices: tuple | None = (False, True)  # the settings a standard may give it; None: any
    search: tuple = (False, True)  # the settings `segmenter calibrate` tries; (): it keeps the standard's
    needs: str | None = None  # it runs only where this row is on too

    def __post_init__(self):
        if set(self.at) != set(STANDARD_NAMES):
            raise ValueError(f"rule {self.name!r} needs a setting for each of {STANDARD_NAMES}, got {sorted(self.at)}")


def is_on(setting) -> bool:
    return setting is not False and setting is not None


# --- conventions: (texts, ends, conventions, setting, word_table) -> ends --------------------------

# Between two texts of a batch: no character list of a rule may hold it (conventions.py checks), so
# no regex, run or word of a rule reaches across it. Two characters: the one mark that takes the
# character after it (a ZWJ ending a text, text.attached_end) takes the first, never the next text;
# word ends inside a separator or at its end are not any text's (Texts.split drops them).
SEPARATOR = "\n\n"


class Texts:
    """Texts joined by SEPARATOR, with their runs (text.py, each in its own text's offsets): what
    the conventions run over. A batch's word ends are the sorted ends in the joined `text`: each
    text's own, shifted by its start, and the end of each separator."""

    __slots__ = ("_codes", "lengths", "runs", "starts", "text")

    def __init__(self, texts: list[str], runs: list[list[Run]]):
        self.text = SEPARATOR.join(texts)
        self.runs = runs
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.starts = np.cumsum(self.lengths + len(SEPARATOR)) - self.lengths - len(SEPARATOR)  # (n,) in `text`
        self._codes = None

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def codes(self) -> np.ndarray:
        """Code points of `text` (text.code_points), computed once."""
        if self._codes is None:
            self._codes = code_points(self.text)
        return self._codes

    def text_at(self, positions) -> np.ndarray:
        """Index of the text that holds each character offset (of a text, not of a separator)."""
        return np.searchsorted(self.starts, positions, side="right") - 1

    def having(self, characters: str, then: str | None = None) -> list[int]:
        """The texts that hold one of `characters` (followed at once by one of `then`), in order."""
        if not characters or not _any_of(characters).search(self.text):  # most texts hold no digit: no numpy
            return []
        hit = _in(self.codes, characters)
        if then is not None:
            hit = hit[:-1] & _in(self.codes[1:], then)
        return np.unique(self.text_at(np.flatnonzero(hit))).tolist()

    def join(self, ends: list[np.ndarray]) -> np.ndarray:
        """Each text's sorted word ends -> the batch's."""
        sizes = np.fromiter(map(len, ends), dtype=np.int64, count=len(ends))
        joined = np.concatenate([np.zeros(0, np.int64), *ends]).astype(np.int64) + np.repeat(self.starts, sizes)
        return np.sort(np.concatenate([joined, self.starts[1:]]))

    def owners(self, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the ends of texts, the text of each): ends inside or at the end of a separator are dropped."""
        owner = np.searchsorted(self.starts, ends, side="left") - 1
        keep = ends - self.starts[owner] <= self.lengths[owner]
        return ends[keep], owner[keep]

    def split(self, ends: np.ndarray) -> list[np.ndarray]:
        """The batch's word ends -> each text's, in its own offsets (Texts.join undone)."""
        ends, owner = self.owners(ends)
        return np.split(ends - self.starts[owner], np.cumsum(np.bincount(owner, minlength=len(self)))[:-1])


def _in(codes: np.ndarray, characters: str) -> np.ndarray:
    """Which code points are among `characters`."""
    return _among_sorted(codes, _codes_of(characters))


def _among_sorted(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """np.isin(values, members) for sorted unique `members`: one search, no sort. A rule asks this
    of a sentence's few hundred code points a dozen times a call, where np.isin's sorting of both
    arrays cost more than the rest of the rule (a sixth of a one-sentence `lcut`)."""
    if not len(members):
        return np.zeros(np.shape(values), dtype=bool)
    return members[np.minimum(np.searchsorted(members, values), len(members) - 1)] == values


def _with(ends: np.ndarray, add) -> np.ndarray:
    """np.union1d(ends, add) for sorted unique `ends`: a search for each of `add`, no sort of all ends."""
    add = np.unique(np.asarray(add, dtype=np.int64))
    slot = np.searchsorted(ends, add)
    new = slot == len(ends)
    new[~new] = ends[slot[~new]] != add[~new]
    return np.insert(ends, slot[new], add[new])


def _without(ends: np.ndarray, drop) -> np.ndarray:
    """np.setdiff1d(ends, drop) for sorted unique `ends`."""
    drop = np.asarray(drop, dtype=np.int64)
    slot = np.searchsorted(ends, drop)
    found = slot < len(ends)
    found[found] = ends[slot[found]] == drop[found]
    return np.delete(ends, slot[found])


def _word_starts(ends: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, np.int64), ends[:-1]])


def _starts_word(at: np.ndarray, ends: np.ndarray, texts: Texts) -> np.ndarray:
    """Whether each offset of `at` (in texts.text) starts a word: a word ends right before it, or
    a text starts there."""
    return _among_sorted(at, ends) | _among_sorted(at, texts.starts)  # both sorted and unique


_DIGITS = "0123456789\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19"  # every number run holds one


def _numbers_before_han(texts: Texts) -> list[tuple[int, int]]:
    """(start, end) in texts.text of each number run followed at once by a Han run."""
    starts = texts.starts.tolist()
    return [(starts[i] + run.start, starts[i] + run.end) for i in texts.having(_DIGITS)
            for run, after in pairwise(texts.runs[i])
            if run.kind == "number" and after.kind == "han" and after.start == run.end]


def number_units(texts, ends, c, on, word_table):
    """A number run followed at once by a unit: the unit ends the number's word (１９９７年|底).
    Setting True: numbers in full-width digits (ASCII ones too with conventions.ascii_digits);
    "any": in either (PKU and MSR write 1997年 as they write １９９７年)."""
    text = texts.text
    if not c.units:
        return ends
    digits = _ASCII_OR_FULL if on == "any" or c.ascii_digits else _FULL_WIDTH
    joined = [(start, end) for start, end in _numbers_before_han(texts) if text[end] in c.units
              and (digits.fullmatch(text, start, end)
                   or text[end] in c.ascii_units and _ASCII_OR_FULL.fullmatch(text, start, end))]
    if not joined:
        return ends
    add = [attached_end(text, end + 1) for _, end in joined]  # only the unit (with its marks: 亿\ufe0f)
    return _without(_with(ends, add), [end for _, end in joined])


def join_list_numbers(texts, ends, c, on, word_table):
    """A line that opens with a list number, one or two digits and a period right after them,
    writes the two as one word: １．|急性期 (PKU's People's Daily). Setting True: the full-width
    period of `list_marks`' first character; "any": the others too (1. as well as １．)."""
    marks = c.list_marks if on == "any" else c.list_marks[:1]
    if not marks:
        return ends
    text, starts = texts.text, texts.starts.tolist()
    drop, add = [], []
    for i in texts.having(_DIGITS, marks):
        for run in texts.runs[i]:
            start, end = starts[i] + run.start, starts[i] + run.end
            if (run.kind == "number" and end - start <= 2 and end < len(text) and text[end] in marks
                    and _DIGIT_RUN.fullmatch(text, start, end) and _opens_line(text, starts[i], start)):
                drop.append(end)
                add.append(end + 1)
    return _without(_with(ends, add), drop) if drop else ends


def join_ordinal_digits(texts, ends, c, on, word_table):
    """An ordinal mark (第) that is a word of its own takes the number in digits right after it:
    第|6 -> 第6, 第|１２|届 -> 第１２|届 (a unit the number took stays with it). 勃艮第|6 is left alone."""
    if not c.ordinal_marks:
        return ends
    text, starts = texts.text, texts.starts.tolist()
    drop = []
    for i in texts.having(c.ordinal_marks, _DIGITS):
        for before, run in pairwise(texts.runs[i]):
            at = starts[i] + run.start  # the number's first character, right after the mark
            if run.kind == "number" and before.kind == "han" and before.end == run.start and text[at - 1] in c.ordinal_marks:
                drop.append(at)
    if not drop:
        return ends
    drop = np.array(drop, dtype=np.int64)
    owns = _starts_word(drop - 1, ends, texts)  # the mark starts a word
    return _without(ends, drop[owns]) if owns.any() else ends


def _opens_line(text: str, text_start: int, at: int) -> bool:
    """Whether only spaces stand between `at` and its text's start (at text_start) or a line break."""
    while at > text_start and text[at - 1] in " \t\u3000":
        at -= 1
    return at == text_start or text[at - 1] in LINE_BREAKS


def join_dates(texts, ends, c, on, word_table):
    """Number+unit words (number_units joined them) of date units in a row, nothing between them,
    make one word (１９９７年|１２月 -> １９９７年１２月)."""
    text = texts.text
    if not c.date_units:
        return ends
    numbers = [(start, end) for start, end in _numbers_before_han(texts) if text[end] in c.date_units]
    if not numbers:
        return ends
    number_ends = np.array([end for _, end in numbers], dtype=np.int64)
    slot = np.minimum(np.searchsorted(ends, number_ends), len(ends) - 1)
    ending = (ends[slot] == number_ends).tolist()
    dates = [(start, end + 1) for (start, end), is_end in zip(numbers, ending) if not is_end]  # the unit joined
    drop = [end for (_, end), (start, _) in pairwise(dates) if end == start]
    return _without(ends, drop) if drop else ends


def join_digit_measures(texts, ends, c, on, word_table):
    """A number in digits takes the measure word after it (MSR: ２０６个, ６５０万元, １６岁,
    １０分钟, ６００平方米): the word right after the number's own word joins it when every character
    of it is one of `measure_chars`. The number's word is its digits and what number_units joined to
    them (６５０万, １０月 + 份). Setting True: full-width digits (what the SIGHAN files write);
    "any": ASCII digits too. A word with another character stays apart (２０|天内, ７|支球队)."""
    if not c.measure_chars:
        return ends
    text = texts.text
    digits = _ASCII_OR_FULL if on == "any" else _FULL_WIDTH
    numbers = [(start, end) for start, end in _numbers_before_han(texts)
               if digits.fullmatch(text, start, end) and text[end] in c.measure_chars]
    if not numbers:
        return ends
    measures = set(c.measure_chars)
    starts = np.array([start for start, _ in numbers], dtype=np.int64)
    first = np.searchsorted(ends, starts, side="right")  # the word end after each number's start
    owns = _starts_word(starts, ends, texts)  # the number starts a word
    drop = []
    for (start, end), at, own in zip(numbers, first.tolist(), owns.tolist()):
        if not own or at + 1 >= len(ends):
            continue
        number_end, measure_end = int(ends[at]), int(ends[at + 1])
        if number_end >= end and set(text[end:measure_end]) <= measures:  # the number's word, then the measure
            drop.append(number_end)
    return _without(ends, drop) if drop else ends


def join_han_numbers(texts, ends, c, on, word_table):
    """A number written in Han numerals (with 第 before it: an ordinal) loses the word ends
    inside it: 第十|五 -> 第十五, 三|十二 -> 三十二. Two or more numerals with a power among
    them (十 百 千 万 亿), or three digits and more (一九九八): 一一 and 万一 are left alone. A
    percentage too, with its decimals (百分之|四十二|点|八 -> 百分之四十二点八)."""
    if not (c.han_powers or c.han_digits):
        return ends
    pattern = _han_number_pattern(c.han_digits, c.han_powers, c.percent)
    spans = np.array([match.span() for match in pattern.finditer(texts.text)], dtype=np.int64).reshape(-1, 2)
    sizes = spans[:, 1] - spans[:, 0] - 1  # the offsets inside each number
    inner = np.repeat(spans[:, 0] + 1 - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
    return _without(ends, inner) if len(inner) else ends


def split_surnames(texts, ends, c, on, word_table):
    """A three-character Han word that starts with a surname and reads as a personal name
    splits after the surname (江泽民 -> 江|泽民): its first two characters occur in it at least
    `name_share` of the time in the raw text (not 金融|业), no character of the given name is a
    transliteration's (莫斯科) and it does not end in a suffix."""
    text = texts.text
    if not c.surnames or not _any_of(c.surnames).search(text):
        return ends
    starts = _word_starts(ends)
    suffixes = getattr(c, "suffixes", "")  # join_suffixes' list, where that row is in the table
    threes = np.flatnonzero(ends - starts == 3)
    candidates = [k for k in threes[_in(texts.codes[starts[threes]], c.surnames)].tolist()
                  if HAN_SPAN_RE.fullmatch(text, starts[k], ends[k])
                  and not any(ch in c.foreign for ch in text[starts[k] + 1 : ends[k]])
                  and text[ends[k] - 1] not in suffixes]
    if candidates and word_table is not None:
        _, share = word_table.shares_at(text, starts[np.array(candidates)], 3, [(0, 2)])
        candidates = [k for k, v in zip(candidates, share.tolist()) if not v < c.name_share]  # NaN: unknown, kept
    return _with(ends, starts[np.array(candidates, dtype=np.int64)] + 1) if candidates else ends


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
    if not suffixes or not _any_of(suffixes).search(text):  # most texts: nothing to do
        return ends
    starts = _word_starts(ends)
    lengths = ends - starts
    after_pair = np.flatnonzero((lengths[1:] == 1) & (lengths[:-1] == 2)) + 1  # one-character words after two
    candidates = [k for k in after_pair[_in(texts.codes[starts[after_pair]], suffixes)].tolist()
                  if HAN_SPAN_RE.fullmatch(text, starts[k - 1], ends[k])]
    if candidates and word_table is not None:  # NaN (a string the table lacks) is not >= 0
        autonomy = word_table.autonomy_at(text, starts[np.array(candidates) - 1], np.full(len(candidates), 3))
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
    return _with(ends, cuts) if cuts else ends


def split_counts(texts, ends, c, counts, word_table):
    """A word of a numeral (one or two characters) and a classifier splits before the
    classifier where the standard of `counts` writes them apart (_count_apart); 这一, 另一 and 每一
    split at every level. Only in a text with a numeral right before a classifier or 一."""
    if not c.classifiers:
        return ends
    text = texts.text
    numerals = c.numerals + c.default_numerals + "一" + c.demonstratives
    having = texts.having(numerals, c.classifiers + "一")
    if not having:
        return ends  # most texts: no numeral before a classifier
    starts = _word_starts(ends)
    lengths = ends - starts
    last = texts.codes[np.maximum(ends - 1, 0)] if len(ends) else np.zeros(0, np.int64)
    maybe = np.flatnonzero((lengths >= 2) & _in(last, c.classifiers + "一"))
    maybe = maybe[_among_sorted(texts.text_at(starts[maybe]), np.asarray(having, dtype=np.int64))]  # a text the early exit would have skipped
    cuts = [end - 1 for start, end in zip(starts[maybe].tolist(), ends[maybe].tolist())
            if (2 <= end - start <= 3 or end - start > 3 and _is_ordinal(text[start : end - 1], c))
            and (text[end - 1] in c.classifiers and _count_apart(text[start : end - 1], text[end - 1], c, counts)
                 or end - start == 2 and text[end - 1] == "一" and text[start] in c.demonstratives)]
    return _with(ends, cuts) if cuts else ends


def _count_apart(numeral: str, classifier: str, c, counts: str) -> bool:
    """Whether the standard of `counts` (one of COUNT_STANDARDS) writes `numeral` and `classifier` apart."""
    if counts != "coarse" and _is_ordinal(numeral, c):  # PKU, UD: 第十五 次, 第一 个
        return True
    if counts == "fine":  # UD-like: every count, but 这些 一些 这样 一样
        return all(ch in c.numerals for ch in numeral) and classifier not in c.fine_joins
    if counts == "default":  # PKU-like: 两 条, 一 年; but 一个 一些 这种
        return all(ch in c.default_numerals for ch in numeral) or numeral == "一" and classifier not in c.one_joins
    return numeral == "一" and classifier in c.coarse_one_splits  # MSR-like: 两个 一次; but 一 位, 一 项


def _is_ordinal(numeral: str, c) -> bool:
    """第 and Han numerals (第一, 第十五): MSR writes 第一次 whole, PKU and UD 第一 次."""
    digits = getattr(c, "han_digits", "") + getattr(c, "han_powers", "")  # join_han_numbers' lists
    return len(numeral) >= 2 and numeral[0] == "第" and all(ch in digits for ch in numeral[1:])


def split_function_words(texts, ends, c, setting, word_table):
    """A two-character Han word led by one of `function_words`, or ended by one of `particles`,
    splits in two (就是 -> 就|是, 有着 -> 有|着), unless its second character is one of
    `bound_ends`, which make words of a demonstrative (这里 这么 这儿), or the word table's
    unigram model has the word more than e**function_pair_logp times likelier than its two
    characters as words (已经, 也许, 觉得 stay). Without a unigram model nothing tells 已有 from
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
    particles = c.particles + c.verb_particles
    if (not (c.function_words or particles or c.function_ends) or word_table is None or word_table.unigram is None
            or not _any_of(c.function_words + particles + c.function_ends).search(texts.text)):
        return ends
    starts = _word_starts(ends)
    pairs = starts[ends - starts == 2]
    first, second = texts.codes[pairs], texts.codes[pairs + 1]
    led = _in(first, c.function_words) & ~_in(second, c.bound_ends) | _in(second, particles)
    if setting == "coarse":
        led &= ~_in(first, c.coarse_leads) & ~_among_pairs(first, second, c.coarse_pairs)
    begin = pairs[led & han_mask(first) & han_mask(second)]
    cuts = [np.zeros(0, np.int64)]
    if len(begin):
        limit = np.where(_in(texts.codes[begin + 1], c.verb_particles), c.verb_particle_logp, c.function_pair_logp)
        cuts.append(begin[word_table.logp_margin_at(texts.text, begin, [(1, 1)] * len(begin)) <= limit] + 1)
    triples = starts[ends - starts == 3]
    triples = triples[han_mask(texts.codes[triples]) & han_mask(texts.codes[triples + 1]) & han_mask(texts.codes[triples + 2])]
    lead, end = texts.codes[triples], texts.codes[triples + 2]
    led = _in(lead, c.function_words)
    if setting == "coarse":
        led &= ~_in(lead, c.coarse_leads)
    # 1|2 (不|需要) or 2|1 (生活|中) unless the model has the three e**function_triple_logp times likelier whole
    for begin, pieces, cut in ((triples[led], (1, 2), 1), (triples[_in(end, c.function_ends)], (2, 1), 2)):
        if len(begin):
            cuts.append(begin[word_table.logp_margin_at(texts.text, begin, [pieces] * len(begin))
                              <= c.function_triple_logp] + cut)
    cuts = np.concatenate(cuts)
    return _with(ends, cuts) if len(cuts) else ends


def split_coverbs(texts, ends, c, on, word_table):
    """A two-character Han word ended by one of `coverbs` (为 于) splits before it: 成为 -> 成|为,
    位于 -> 位|于, 称为, 属于 (UD writes the verb and its 为 or 于 apart), but the pairs of
    `coverb_keeps`, words of their own (因为 由于 认为 关于: UD writes them whole)."""
    if not c.coverbs or not _any_of(c.coverbs).search(texts.text):
        return ends
    starts = _word_starts(ends)
    pairs = starts[ends - starts == 2]
    first, second = texts.codes[pairs], texts.codes[pairs + 1]
    split = (_in(second, c.coverbs) & han_mask(first)
             & ~_among_pairs(first, second, c.coverb_keeps, "coverb_keeps"))
    return _with(ends, pairs[split] + 1) if split.any() else ends


def _among_pairs(first: np.ndarray, second: np.ndarray, pairs: str, name: str = "coarse_pairs") -> np.ndarray:
    """Whether each two-character string (its code points `first` and `second`) is one of `pairs`
    (two-character strings written one after another, the Conventions field `name`)."""
    return _among_sorted(first * 0x110000 + second, _pair_codes(pairs, name))  # Texts.codes: int64


def _pair_codes(pairs: str, name: str = "coarse_pairs") -> np.ndarray:
    """Two-character strings written one after another ("也是都是") -> one int64 code each; `name`:
    the Conventions field they come from, for the error."""
    if len(pairs) % 2:
        raise ValueError(f"Conventions.{name} must be two-character pairs written one after another, "
                         f"got {len(pairs)} characters: {pairs!r}")
    codes = code_points(pairs).astype(np.int64)
    return np.unique(codes[0::2] * 0x110000 + codes[1::2])  # sorted, for _among_sorted


# --- decoder joins: (decoding, setting) -> decoding ------------------------------------------------

def pair_joins(decoding, on):
    """Off: the decoder joins no cohesive 2+1, 1+2 or 2+2 pair (decoding.join_cohesive), 1+1 still."""
    return decoding if on else replace(decoding, join3=None, join4=None)


def join3_logp(decoding, logp):
    """A number: 2+1 pairs also join where the unigram model has the word e**logp times likelier
    than its two words, unless the decoder was given a join3_logp of its own."""
    return replace(decoding, join3_logp=logp) if logp is not None and decoding.join3_logp is None else decoding


def join_long(decoding, share):
    """A number: two decoded words of 2+ characters each, 5+ together, join where the string
    around their junction is that share of both sides' occurrences (decoding.join_long_words),
    unless the decoder was given a join_long of its own."""
    return replace(decoding, join_long=share) if share is not None and decoding.join_long is None else decoding


@lru_cache(maxsize=16)
def _han_number_pattern(digits: str, powers: str, percent: str = "") -> re.Pattern:
    """`percent` then numerals, and 点 and digits after them (百分之四十二点八); 第? then two
    numerals or more, one of them a power, not led by 万 or 亿 (万一 亿万 are words, not
    numbers); or 第? then three digits or more."""
    leading = re.escape(digits + powers.replace("万", "").replace("亿", ""))
    numeral, digit, power = re.escape(digits + powers), re.escape(digits), re.escape(powers)
    parts = []
    if percent and (digits or powers):  # first: the percentage is the longer match
        parts.append(f"{re.escape(percent)}[{numeral}]+{f'(?:点[{digit}]+)?' if digits else ''}")
    if powers:  # the lookahead: a power comes after the digits, if any, that lead
        parts.append(f"第?(?={f'[{digit}]*' if digits else ''}[{power}])[{leading}][{numeral}]+")
    if digits:
        parts.append(f"第?[{digit}]{{3,}}")
    if not parts:
        return re.compile("(?!)")
    # The lookahead lets the regex engine skip ahead to a character that can start a number
    # (4x faster over a batch's text); the matches are the alternation's.
    firsts = re.escape("".join(sorted(set(percent[:1] + "第" + digits + powers))))
    return re.compile(f"(?=[{firsts}])(?:{'|'.join(parts)})")


@lru_cache(maxsize=16)
def _any_of(characters: str) -> re.Pattern:
    """A pattern that finds any of `characters`: a rule's first test of a text, before numpy."""
    return re.compile(f"[{re.escape(characters)}]")


@lru_cache(maxsize=32)
def _codes_of(characters: str) -> np.ndarray:
    """The code points of `characters`, sorted and unique (_among_sorted's members)."""
    return np.unique(code_points(characters))


_DIGIT_RUN = re.compile(r"[0-9\uff10-\uff19]+")
# The digits of a number run (text.py), whatever stands between them (３．５, １－２, 3-5): the unit
# rules ask which digits a number is written in, not whether it is a range or a ratio.
_FULL_WIDTH = re.compile(r"[\uff10-\uff19]+(?:[\uff0e\uff1a\u2236\uff0f\uff0d][\uff10-\uff19]+)*")  # １９９７, ３．５
_ASCII_OR_FULL = re.compile(r"[0-9\uff10-\uff19]+(?:[.:\uff0e\uff1a\u2236/\uff0f\-\uff0d][0-9\uff10-\uff19]+)*")


def _at(general, pku, msr, ud) -> dict:
    return {"general": general, "pku": pku, "msr": msr, "ud": ud}


EVERY = _at(True, True, True, True)  # a rule every named standard applies (calibrate leaves it on: search=())
# 2+1 pairs the unigram model has e**7 times likelier as one word join (世界|杯 -> 世界杯, as MSR
# writes it; chosen on msr_dev).
JOIN3_LOGP = 7.0
# 华人民|共和国 is 7,791 of 7,800 and of 8,898 occurrences: 中华人民共和国 joins. Chosen on the six dev
# files (first 1,000 sentences): 0.5 to 0.9 all within +0.0002 of off on each file, at each standard.
JOIN_LONG = 0.7

# The rules, in the order they run. Each was kept where the dev files gained
# (benchmarks/results/conventions_dev.md, standards_dev.md); the settings of `general` were chosen
# on the mean F1 of six dev files, none below jieba (benchmarks/standards_dev.py).
TABLE = (
    Rule("number_units", "a number in full-width digits (any: in ASCII digits too) takes the unit after it: "
                         "１９９７年 ３０万 (UD: 1996 年; but 30万 at every setting)",
         number_units, _at(True, "any", "any", True), choices=(False, True, "any"), search=(True, "any"),
         params=dict(
             units="年月日号时分秒万亿",
             ascii_units="万亿",  # ... and these, whatever their digits: UD writes 1996 年 but 30万
             ascii_digits=False)),  # True: ASCII digits take their unit too (the SIGHAN files write full-width)
    # pku_dev writes a line's １． whole (7 times, never apart), msr_dev apart (10 times); derm_dev
    # writes １． and 1. whole (118 lines). The general standard's "any": the six dev files' mean.
    Rule("join_list_numbers", "a line's list number takes its period: １． (PKU; any: 1. too)",
         join_list_numbers, _at("any", True, False, False), choices=(False, True, "any"),
         search=(False, True, "any"), params=dict(list_marks="\uff0e.")),
    # Every dev file writes 第 with the digits after it, never apart: weibo_dev 48 times (第2 集),
    # msr_dev 10, ud_gsdsimp_dev 10 (第18 届), pku_dev 3 (第１１ 期).
    Rule("join_ordinal_digits", "第 takes the number in digits after it: 第6 第１２ (as 第十五 in Han numerals)",
         join_ordinal_digits, EVERY, params=dict(ordinal_marks="第")),
    Rule("join_han_numbers", "a number in Han numerals is one word: 三十二 第十五 一九九八 百分之四十二点八",
         join_han_numbers, EVERY, search=(), params=dict(
             han_digits="〇零一二三四五六七八九两几", han_powers="十百千万亿", percent="百分之")),
    Rule("split_surnames", "a three-character name splits after its surname: 江|泽民 (PKU, UD; MSR: 江泽民)",
         split_surnames, _at(False, True, False, True), params=dict(
             surnames=("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡"
                       "余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙"
                       "史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"),
             foreign="斯克尔利维埃鲁门尼伦特森迪莱拉里诺亚夫娃卡罗曼布",  # sounds of transliterated names
             name_share=0.5)),  # its first two characters occur in the name this share of the time (raw text)
    Rule("join_suffixes", "a two-character word takes a suffix: 足球|界 -> 足球界, 出版|社 (PKU, MSR; UD apart)",
         join_suffixes, _at(True, True, True, False), params=dict(
             suffixes="社部化院县员界业率厂制力费价镇点片金台式额线馆室师度品感学户器厅展期")),
    Rule("coarse_suffixes", "... and one of these: 上海|市 -> 上海市, 中国|队 -> 中国队 (MSR; PKU, UD apart)",
         join_coarse_suffixes, _at(True, False, True, False), needs="join_suffixes", params=dict(
             coarse_suffixes="会性者市省局区队国团")),
    Rule("join_dates", "number+unit words of a date in a row make one word: １９９７年２月 (MSR)",
         join_dates, _at(False, False, True, False), params=dict(date_units="年月日号时分")),
    # msr_dev writes a number in digits with the measure word after it whole (first 1,300 sentences:
    # ２０６个 ６５０万元 １６岁 １０分钟, 379 words; the digits apart from a Han word 34 times, 20 of them
    # before 人, which is not a measure character); PKU, UD and the other dev files write them apart.
    Rule("join_digit_measures", "a number in digits takes the measure word after it: ２０６个 ６５０万元 "
                                "１０分钟 (MSR; PKU, UD: ２０６ 个)",
         join_digit_measures, _at(False, False, True, False), choices=(False, True, "any"),
         search=(False, True, "any"), params=dict(
             measure_chars=("个年名次位种项条件家天份批部座张只支台场届期篇片些样类岁户把本封架辆艘棵头匹根颗层门"
                            "所间句首枚段笔代轮步声团道幕眼口副群块元米吨亩斤克里度倍秒钟美平方立公顷厘毫千百"
                            "万亿多余瓦小时周月日号分"))),
    Rule("split_marks", "a run of dashes or dots splits into single marks: —— -> — — (MSR)",
         split_marks, _at(False, False, True, False), params=dict(split_marks="\u2014\u2026")),
    Rule("counts", "a numeral and its classifier split as the standard writes counts: "
                   "fine 两|个 一|个 (UD), default 两|个 but 一个 (PKU), coarse 两个 but 一|位 (MSR)",
         split_counts, _at("default", "default", "coarse", "fine"), choices=COUNT_STANDARDS, search=COUNT_STANDARDS,
         params=dict(
             numerals="一二三四五六七八九十两几这那每各某哪半",  # fine: these, then a classifier, split ...
             fine_joins="些样",  # ... but these (UD's dev file: 这些 一些 这样 一样 那样 whole 22 times, never apart)
             default_numerals="二三四五六七八九十两几半",  # default: these split from any classifier ...
             one_joins="个些样家代",  # ... and 一 from any but these (PKU: 一个, 一 年)
             coarse_one_splits="位项条座支场份张名届句棵轮步",  # coarse: 一 splits from these only (MSR: 一 位, 一次)
             demonstratives="这那另每某",  # 这一 另一 每一 split at every level (every gold file: 这 一)
             classifiers=("个年名次位种项条件家天份批部座张只支台场届期篇片些样类岁户把"
                          "本封架辆艘棵头匹根颗层门所间句首枚段笔代轮步声丝团道幕眼口副群块"))),
    # A three-character word led by a function word, e**10 (of 8, 10, 12, six dev files' mean, first
    # 1,300 sentences: +0.0009 at 10, every file and every standard on its own file up; sentences
    # 1,301-4,000 of pku_dev, msr_dev, weibo_dev: +0.0001 to +0.0006): 不|需要 4.8, 应|注意 6.2, 最|常见 6.9
    # split, as the dev files write them (73 such words split right, 8 wrong: 不仅仅 5.9, 只不过 5.5);
    # 不得不 11.7 stays. Ended by one of function_ends, at the same threshold: 生活|中 3.8, 尤其|是 6.8,
    # 标志|着 7.1 (each character kept where the six dev files' mean rose with no file lower, of 30 tried:
    # mean +0.0011, every file up, each standard on its own file up; sentences 1,301-4,000 of pku_dev,
    # msr_dev, weibo_dev: +0.0013, +0.0011, +0.0007). 地 (不停|地, mean +0.0001) is left out: it
    # split nouns, 目的|地 发源|地.
    # The function words: one-character adverbs, pronouns, demonstratives and modals, chosen on the
    # six dev files' mean (benchmarks/character_lists_dev.py); e**6.5: 就是 is not likelier as one
    # word, 已经 is. A verb's 着, e**8 (of 7-9, six dev files' mean and sentences 1,301-4,000 of
    # pku_dev, msr_dev and weibo_dev, every standard on its own file: all gain or hold): 看着 6.8,
    # 带着 7.4, 望着 7.5 split, as every dev file writes them; 接着 8.3, 随着 9.4 stay.
    Rule("split_function_words", "a two-character word led by a function word or ended by a particle "
                                 "splits: 就|是 不|是 已|有 有|着 (but 已经 也许, by the unigram model; MSR: 不是 也是); "
                                 "so does a three-character one led or ended by one: 不|需要 生活|中 (but 不得不)",
         split_function_words, _at(True, True, "coarse", True), choices=(False, True, "coarse"), search=(),
         params=dict(
             function_words="都也就更已将曾他没仍只给仅不这那又让才最很再我你她它可应", particles="着过得了",
             bound_ends="里么儿", function_pair_logp=6.5, verb_particles="着", verb_particle_logp=8.0,
             function_triple_logp=10.0, function_ends="是中着内为出的",
             coarse_leads="不",  # "coarse" keeps these words whole ...
             coarse_pairs="也是都是")),  # ... and these pairs (two characters each)
    # ud_gsdsimp_dev writes a verb and its 为 or 于 apart (成 为 22 times, 位 于 16, 称 为 6, 生 于 5,
    # 属 于 5, 作 为 4; never whole) and these pairs whole: 由于 9, 因为 8, 认为 5, 行为 4, 对于 4,
    # 关于 2, 终于 1, 较为 1, 更为 1; PKU and MSR write 成为 位于 whole.
    Rule("split_coverbs", "a two-character word ended by 为 or 于 splits: 成|为 位|于 称|为 "
                          "(UD; but 因为 由于 认为 关于)",
         split_coverbs, _at(False, False, False, True), params=dict(
             coverbs="为于",
             coverb_keeps="由于因为认为行为对于关于终于较为更为以为至于等于身为无为")),
    Rule("pair_joins", "the decoder joins cohesive 2+1, 1+2 and 2+2 pairs: 新华社 生产总值 (PKU, MSR; UD: 1+1 only)",
         pair_joins, _at(True, True, True, False), decoder=True),
    Rule("join3_logp", "the decoder joins 2+1 pairs the unigram model has e**value times likelier as one "
                       "word: 世界杯 (MSR)",
         join3_logp, _at(JOIN3_LOGP, None, JOIN3_LOGP, None), decoder=True, choices=None, search=(None, JOIN3_LOGP)),
    Rule("join_long", "the decoder joins two words of 2+ characters, 5+ together, whose junction the raw text "
                      "rarely breaks: 中华人民共和国 (PKU, MSR; UD: 中华 人民 共和国)",
         join_long, _at(JOIN_LONG, JOIN_LONG, JOIN_LONG, None), decoder=True, choices=None, search=(None, JOIN_LONG)),
)
