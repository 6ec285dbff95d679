"""Conventions no head can learn: how a segmentation standard writes numbers, dates and counts.

The heads read one junction between two Han characters at a time, so a number written in
digits (a rule's run, text.py) never joins a Han character, and nothing in raw text says
whether 一个 is one word: that is a decision of the standard, not of the language.

    number + unit   １９９７年 ２月 ５日 ３０万 ２亿     PKU and MSR: one word      UD: 1996 年
    date            １９９７年２月５日                  MSR: one word              PKU: three
    count           一 个, 两 条, 这 一                  PKU, UD: apart              MSR: 一个
    suffix          经营者 浙江省 中国队                  PKU and MSR: one word      UD: 中国 队

So the rules follow the granularity, and the three named levels follow the three standards of
the gold files: **default** is PKU-like, **coarse** MSR-like, **fine** UD-like. At every level a
number written in full-width digits takes the unit after it (the SIGHAN corpora, typeset the
way mainland print is, write dates with full-width digits and join them; UD writes ASCII
digits and keeps them apart, so ASCII digits are left alone). From the default up, a
two-character word takes a suffix where the word table knows the three characters as a unit
(`suffixes`: those that cost ud_gsdsimp_dev nothing; `coarse_suffixes`, which UD keeps apart,
only coarser); coarser, a date's parts join; finer, a numeral splits from
its classifier and no suffix joins. Chosen rule by rule, suffix by suffix, on the dev files
(benchmarks/results/conventions_dev.md); Segmenter(conventions=None) turns them all off, which
is the heads-and-raw-text-only setting (benchmark setting segmenter:plain).

A rule moves word ends inside the words the decoder chose; a user dictionary (dictionary.py)
still wins over it, and the words still join back to the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .profile import GRANULARITY_NAMES
from .text import HAN_SPAN_RE, Run, attached_end

DEFAULT_GRANULARITY = GRANULARITY_NAMES["default"]  # finer levels split counts; from it up suffixes join; coarser, dates


@dataclass(frozen=True)
class Conventions:
    """Which rules run, and on what. Empty strings turn a rule off."""

    units: str = "年月日号时分秒万亿"  # a full-width number takes the first of these after it
    ascii_digits: bool = False  # True: numbers in ASCII digits take their unit too
    date_units: str = "年月日号时分"  # coarse: number+unit words in a row make one date
    suffixes: str = "社部化院县员界业率厂制力"  # default and coarser: a two-character word takes one of these
    coarse_suffixes: str = "会性者市省局区队国团"  # coarser only (UD keeps these apart: 上海 市, 中国 队)
    numerals: str = "一二三四五六七八九十两几这那每各某哪半"  # fine: these, then a classifier, split
    classifiers: str = "个年名次位种项条件家天份批部座张只支台场届期篇片些样类岁户把本封架辆艘棵头匹根颗层门所间句首枚段笔代轮步"

    def __post_init__(self):
        for name in ("units", "date_units", "suffixes", "coarse_suffixes", "numerals", "classifiers"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Conventions.{name} must be a str of characters, got {type(getattr(self, name)).__name__}")


def apply_conventions(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions, granularity: float, word_table=None) -> np.ndarray:
    """Word ends of `text` (sorted, the last is len(text)) after the rules of `granularity`
    (a number in [0, 1]: below the default, counts split; from the default up, suffixes join;
    above it, dates join). word_table (wordstats.WordTable): a suffix joins only where the
    three characters are a string of the raw text with autonomy >= 0; None: wherever it follows."""
    if conventions.units and any(run.kind == "number" for run in runs):  # most texts have no number
        ends = _number_units(text, runs, ends, conventions, join_dates=granularity > DEFAULT_GRANULARITY)
    suffixes = conventions.suffixes + (conventions.coarse_suffixes if granularity > DEFAULT_GRANULARITY else "")
    if granularity >= DEFAULT_GRANULARITY and suffixes:
        ends = _join_suffixes(text, ends, suffixes, word_table)
    if granularity < DEFAULT_GRANULARITY and conventions.numerals and conventions.classifiers:
        starts = np.concatenate([[0], ends[:-1]])
        cuts = [end - 1 for start, end in zip(starts.tolist(), ends.tolist())
                if 2 <= end - start <= 3 and text[end - 1] in conventions.classifiers
                and all(c in conventions.numerals for c in text[start : end - 1])]
        if cuts:
            ends = np.union1d(ends, np.array(cuts, dtype=np.int64))
    return ends


def _number_units(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions, join_dates: bool) -> np.ndarray:
    """A number run followed at once by a unit: the unit ends the number's word (１９９７年|底);
    with join_dates, such words in a row of date units make one word (１９９７年１２月)."""
    digits = _ASCII_OR_FULL if conventions.ascii_digits else _FULL_WIDTH
    drop, add, dates = [], [], []  # dates: (start, end) of the number+unit words
    for run, after in zip(runs, runs[1:]):
        if run.kind == "number" and after.kind == "han" and after.start == run.end and text[run.end] in conventions.units:
            if digits.fullmatch(text, run.start, run.end):
                drop.append(run.end)  # the unit joins the number ...
                add.append(attached_end(text, run.end + 1))  # ... and only the unit (with its marks: 亿\ufe0f)
                if text[run.end] in conventions.date_units:
                    dates.append((run.start, run.end + 1))
    if join_dates:
        drop += [end for (_, end), (start, _) in zip(dates, dates[1:]) if end == start]  # nothing between: one date
    if not drop:
        return ends
    return np.setdiff1d(np.union1d(ends, np.array(add, dtype=np.int64)), np.array(drop, dtype=np.int64))


def _join_suffixes(text: str, ends: np.ndarray, suffixes: str, word_table) -> np.ndarray:
    """A two-character Han word followed by a one-character word from `suffixes` becomes one
    word (经营|者 -> 经营者, 浙江|省 -> 浙江省). (A joined word cannot take a second suffix: the
    word before a candidate has two characters, a suffix one.)"""
    if not _any_of(suffixes).search(text):  # most texts: nothing to do
        return ends
    starts = np.concatenate([[0], ends[:-1]])
    lengths = ends - starts
    after_pair = np.flatnonzero((lengths[1:] == 1) & (lengths[:-1] == 2)) + 1  # one-character words after two
    candidates = [k for k in after_pair.tolist() if text[starts[k]] in suffixes and HAN_SPAN_RE.fullmatch(text, starts[k - 1], ends[k])]
    if not candidates:
        return ends
    if word_table is not None:  # NaN (a string the table lacks) is not >= 0
        autonomy = word_table.autonomy_at(text, starts[np.array(candidates) - 1], np.full(len(candidates), 3))
        candidates = [k for k, a in zip(candidates, autonomy.tolist()) if a >= 0]
    return np.delete(ends, [k - 1 for k in candidates])


@lru_cache(maxsize=16)
def _any_of(characters: str) -> re.Pattern:
    return re.compile(f"[{re.escape(characters)}]")


DEFAULT_CONVENTIONS = Conventions()
_FULL_WIDTH = re.compile(r"[\uff10-\uff19]+(?:[\uff0e\uff1a][\uff10-\uff19]+)*")  # １９９７, ３．５
_ASCII_OR_FULL = re.compile(r"[0-9\uff10-\uff19]+(?:[.:\uff0e\uff1a][0-9\uff10-\uff19]+)*")
