"""The rules of rules.TABLE about numbers: a number and its unit (１９９７年), list numbers (１．),
ordinals in digits (第6), dates (MSR's １９９７年２月), digits with their measure word (MSR's ２０６个),
numbers in Han numerals (三十二, 百分之四十二点八) and how a numeral and its classifier split (两|个).

Each is a convention: (texts, ends, conventions, setting, word_table) -> ends (text.batch).
Which standard applies it, with which character lists, is its row in rules.toml (rules.TABLE).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from itertools import pairwise

import numpy as np

from ..text.batch import (
    FEW_WORDS,
    Texts,
    among_sorted,
    is_among,
    starts_word,
    with_ends,
    without_ends,
    word_starts,
)
from ..text.runs import LINE_BREAKS, attached_end

_DIGITS = "0123456789\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19"  # every number run holds one
_DIGIT_RUN = re.compile(r"[0-9\uff10-\uff19]+")
# The digits of a number run (text.runs), whatever stands between them (３．５, １－２, 3-5): the unit
# rules ask which digits a number is written in, not whether it is a range or a ratio.
_FULL_WIDTH = re.compile(r"[\uff10-\uff19]+(?:[\uff0e\uff1a\u2236\uff0f\uff0d][\uff10-\uff19]+)*")  # １９９７, ３．５
_ASCII_OR_FULL = re.compile(r"[0-9\uff10-\uff19]+(?:[.:\uff0e\uff1a\u2236/\uff0f\-\uff0d][0-9\uff10-\uff19]+)*")


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
    return without_ends(with_ends(ends, add), [end for _, end in joined])


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
    return without_ends(with_ends(ends, add), drop) if drop else ends


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
    owns = starts_word(drop - 1, ends, texts)  # the mark starts a word
    return without_ends(ends, drop[owns]) if owns.any() else ends


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
    return without_ends(ends, drop) if drop else ends


def join_digit_measures(texts, ends, c, on, word_table):
    """A number in digits takes the measure word after it (MSR: ２０６个, ６５０万元, １６岁,
    １０分钟, ６００平方米): the word right after the number's own word joins it when every character
    of it is one of `measure_chars` (the classifiers and `measure_units`). The number's word is its digits and what number_units joined to
    them (６５０万, １０月 + 份). Setting True: full-width digits (what the SIGHAN files write);
    "any": ASCII digits too. A word with another character stays apart (２０|天内, ７|支球队)."""
    measures = set(c.measure_chars)
    if not measures:
        return ends
    text = texts.text
    digits = _ASCII_OR_FULL if on == "any" else _FULL_WIDTH
    numbers = [(start, end) for start, end in _numbers_before_han(texts)
               if digits.fullmatch(text, start, end) and text[end] in measures]
    if not numbers:
        return ends
    starts = np.array([start for start, _ in numbers], dtype=np.int64)
    first = np.searchsorted(ends, starts, side="right")  # the word end after each number's start
    owns = starts_word(starts, ends, texts)  # the number starts a word
    drop = []
    for (start, end), at, own in zip(numbers, first.tolist(), owns.tolist()):
        if not own or at + 1 >= len(ends):
            continue
        number_end, measure_end = int(ends[at]), int(ends[at + 1])
        if number_end >= end and set(text[end:measure_end]) <= measures:  # the number's word, then the measure
            drop.append(number_end)
    return without_ends(ends, drop) if drop else ends


def join_han_numbers(texts, ends, c, on, word_table):
    """A number written in Han numerals (with one of `ordinal_marks` before it: an ordinal) loses
    the word ends inside it: 第十|五 -> 第十五, 三|十二 -> 三十二. Two or more numerals with a
    power among them (`han_powers`), not led by one of `unleading_powers`, or three digits and more
    (一九九八): 一一 and 万一 are left alone. A percentage too, with its decimals after one of
    `decimal_marks` (百分之|四十二|点|八 -> 百分之四十二点八)."""
    if not (c.han_powers or c.han_digits):
        return ends
    pattern = _han_number_pattern(c.han_digits, c.han_powers, c.percent, c.ordinal_marks, c.unleading_powers,
                                  c.decimal_marks)
    found = [match.span() for match in pattern.finditer(texts.text)]
    if not found:  # most texts: no number in Han numerals
        return ends
    spans = np.array(found, dtype=np.int64).reshape(-1, 2)
    sizes = spans[:, 1] - spans[:, 0] - 1  # the offsets inside each number
    inner = np.repeat(spans[:, 0] + 1 - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
    return without_ends(ends, inner) if len(inner) else ends


def split_counts(texts, ends, c, counts, word_table):
    """A word of a numeral (one or two characters) and a classifier splits before the
    classifier where the standard of `counts` writes them apart (_count_apart); a demonstrative
    and `one_numeral` (这一, 另一, 每一) split at every level. Only in a text with a numeral right
    before a classifier or `one_numeral`."""
    if not c.classifiers:
        return ends
    text = texts.text
    numerals = c.numerals + c.default_numerals + c.one_numeral + c.demonstratives
    having = texts.having(numerals, c.classifiers + c.one_numeral)
    if not having:
        return ends  # most texts: no numeral before a classifier
    if len(ends) <= FEW_WORDS:  # a sentence's words, in Python: the same tests in the same order
        cuts = _count_splits_few(texts, ends, c, counts, numerals, having)
        return with_ends(ends, cuts) if cuts else ends
    starts = word_starts(ends)
    lengths = ends - starts
    last = texts.codes[np.maximum(ends - 1, 0)] if len(ends) else np.zeros(0, np.int64)
    maybe = np.flatnonzero((lengths >= 2) & is_among(last, c.classifiers + c.one_numeral))
    # A word that splits starts with a numeral of some standard's list, an ordinal mark or a
    # demonstrative (_count_apart, _is_ordinal): the others are not looked at in Python.
    maybe = maybe[is_among(texts.codes[starts[maybe]], numerals + c.ordinal_marks)]
    maybe = maybe[among_sorted(texts.text_at(starts[maybe]), np.asarray(having, dtype=np.int64))]  # a text the early exit would have skipped
    cuts = [end - 1 for start, end in zip(starts[maybe].tolist(), ends[maybe].tolist())
            if (2 <= end - start <= 3 or end - start > 3 and _is_ordinal(text[start : end - 1], c))
            and (text[end - 1] in c.classifiers and _count_apart(text[start : end - 1], text[end - 1], c, counts)
                 or end - start == 2 and text[end - 1] in c.one_numeral and text[start] in c.demonstratives)]
    return with_ends(ends, cuts) if cuts else ends


def _count_splits_few(texts, ends: np.ndarray, c, counts: str, numerals: str, having: list[int]) -> list[int]:
    """split_counts' cuts of a few words (a sentence's), word by word in Python: a word of two
    characters or more that ends in a classifier or `one_numeral`, starts with one of `numerals` or
    an ordinal mark and lies in a text of `having`, tested as the numpy path tests it."""
    text, text_starts, having = texts.text, texts.starts.tolist(), set(having)
    last_chars, first_chars = c.classifiers + c.one_numeral, numerals + c.ordinal_marks
    cuts = []
    for start, end in pairwise([0, *ends.tolist()]):
        if (end - start >= 2 and text[end - 1] in last_chars and text[start] in first_chars
                and bisect_right(text_starts, start) - 1 in having
                and (end - start <= 3 or _is_ordinal(text[start : end - 1], c))
                and (text[end - 1] in c.classifiers and _count_apart(text[start : end - 1], text[end - 1], c, counts)
                     or end - start == 2 and text[end - 1] in c.one_numeral and text[start] in c.demonstratives)):
            cuts.append(end - 1)
    return cuts


def _count_apart(numeral: str, classifier: str, c, counts: str) -> bool:
    """Whether the standard of `counts` (one of COUNT_STANDARDS) writes `numeral` and `classifier` apart."""
    if counts != "coarse" and _is_ordinal(numeral, c):  # PKU, UD: 第十五 次, 第一 个
        return True
    if counts == "fine":  # UD-like: every count, but 这些 一些 这样 一样
        return all(ch in c.numerals for ch in numeral) and classifier not in c.fine_joins
    if counts == "default":  # PKU-like: 两 条, 一 年; but 一个 一些 这种
        return (all(ch in c.default_numerals for ch in numeral)
                or _is_one(numeral, c) and classifier not in c.one_joins)
    return _is_one(numeral, c) and classifier in c.coarse_one_splits  # MSR-like: 两个 一次; but 一 位, 一 项


def _is_one(numeral: str, c) -> bool:
    return len(numeral) == 1 and numeral in c.one_numeral


def _is_ordinal(numeral: str, c) -> bool:
    """An ordinal mark and Han numerals (第一, 第十五): MSR writes 第一次 whole, PKU and UD 第一 次."""
    digits = c.han_digits + c.han_powers  # join_han_numbers' lists
    return len(numeral) >= 2 and numeral[0] in c.ordinal_marks and all(ch in digits for ch in numeral[1:])


@lru_cache(maxsize=16)
def _han_number_pattern(digits: str, powers: str, percent: str = "", marks: str = "", unleading: str = "",
                        decimals: str = "") -> re.Pattern:
    """`percent` then numerals, and one of `decimals` and digits after it (百分之四十二点八); one
    of `marks` or none, then two numerals or more, one of them a power, not led by one of
    `unleading` (万一 亿万 are words, not numbers); or one of `marks` or none, then three digits
    or more."""
    leading = re.escape(digits + "".join(ch for ch in powers if ch not in unleading))
    numeral, digit, power = re.escape(digits + powers), re.escape(digits), re.escape(powers)
    mark = f"[{re.escape(marks)}]?" if marks else ""
    parts = []
    if percent and (digits or powers):  # first: the percentage is the longer match
        decimal = f"(?:[{re.escape(decimals)}][{digit}]+)?" if digits and decimals else ""
        parts.append(f"{re.escape(percent)}[{numeral}]+{decimal}")
    if powers and leading:  # the lookahead: a power comes after the digits, if any, that lead
        parts.append(f"{mark}(?={f'[{digit}]*' if digits else ''}[{power}])[{leading}][{numeral}]+")
    if digits:
        parts.append(f"{mark}[{digit}]{{3,}}")
    if not parts:
        return re.compile("(?!)")
    # The lookahead lets the regex engine skip ahead to a character that can start a number
    # (4x faster over a batch's text); the matches are the alternation's.
    firsts = re.escape("".join(sorted(set(percent[:1] + marks + digits + powers))))
    return re.compile(f"(?=[{firsts}])(?:{'|'.join(parts)})")
