"""Conventions no head can learn: how a segmentation standard writes numbers, counts and names.

The heads read one junction between two Han characters at a time, so a number written in
digits (a rule's run, text.py) never joins a Han character, and nothing in raw text says
whether 两个 is one word: that is a decision of the standard, not of the language.

    number + unit   １９９７年 ２月 ５日 ３０万 ２亿     PKU and MSR: one word      UD: 1996 年
    Han numerals    三十二 第十五 一九九八              all three: one word
    percentage      百分之四十二点八                    PKU and MSR: one word
    date            １９９７年２月５日                  MSR: one word              PKU: three
    count           两 个, 三 条, 几 年                  PKU, UD: apart              MSR: 两个
    count with 一    一 个, 这 一                        UD: apart                   PKU: each way, MSR: 一个
    ordinal         第十五 次, 第一 个                   PKU, UD: apart              MSR: 第一次
    name            江 泽民, 周 恩来                     PKU, UD: surname apart      MSR: 江泽民
    suffix          经营者 浙江省 中国队                  PKU and MSR: one word      UD: 中国 队
    function word   就 是, 已 有, 也 要 (but 已经 也许)   all three: apart
    marks           —— ……                              PKU: one word              MSR: — — … …

The three named levels follow the three standards of the gold files: **default** is
PKU-like, **coarse** MSR-like, **fine** UD-like; which rule runs at which level is decided in
one place, levels.Rules. At every level:
  - a number in full-width digits takes the unit after it (the SIGHAN corpora, typeset as
    mainland print is, join them; UD writes ASCII digits apart, so those are left alone);
  - a number in Han numerals is one word whatever the heads cut inside it (第十|五 -> 第十五:
    numbers are too many and too rare for the word table; `_join_han_numbers`);
  - a two-character word led by a function word (`function_words`: 就 已 也 ...) or ended by a
    particle (`particles`: 着 过 得) splits unless the unigram model has it far likelier as one
    word (已经 也许 stay; `_split_function_words`): the heads join such pairs because they are
    frequent, and raw text can tell 已有 from 已经 only within such a closed class.
By level (levels.Rules): a two-character word takes a suffix where the word table knows the
three characters as a unit (`suffixes` from the default up, `coarse_suffixes` coarser only);
counts split from their classifier as each standard writes them (`_count_apart`); a
three-character name splits after its surname at the default and finer (`_split_surnames`:
the surname list, a raw-text check, no sounds of a transliteration: 莫斯科 stays whole);
coarser, a date's parts join and runs of dashes or dots split.
Each rule was kept where the dev files gained (benchmarks/results/conventions_dev.md);
Segmenter(conventions=None) turns them all off: the heads-and-raw-text-only setting
(benchmark setting segmenter:plain).

A rule moves word ends inside the words the decoder chose; a user dictionary (dictionary.py)
still wins over it, and the words still join back to the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np

from .levels import Rules
from .text import HAN_SPAN_RE, Run, attached_end

NAME_SHARE = 0.5  # a name's first two characters occur in it at least this share of the time (raw text)


@dataclass(frozen=True)
class Conventions:
    """Which rules run, and on what. Empty strings turn a rule off."""

    units: str = "年月日号时分秒万亿"  # a full-width number takes the first of these after it
    ascii_digits: bool = False  # True: numbers in ASCII digits take their unit too
    date_units: str = "年月日号时分"  # coarse: number+unit words in a row make one date
    # default and coarser: a two-character word takes one of these
    suffixes: str = ("社部化院县员界业率厂制力费价镇点片金"
                     "台式额线馆室师度品感学户器厅展期")
    # coarser only (UD keeps these apart: 上海 市, 中国 队)
    coarse_suffixes: str = "会性者市省局区队国团"
    numerals: str = "一二三四五六七八九十两几这那每各某哪半"  # fine: these, then a classifier, split
    # at the default, these split from any classifier ...
    default_numerals: str = "二三四五六七八九十两几半"
    one_joins: str = "个些样家代"  # ... and 一 from any but these (PKU: 一个, 一 年)
    # coarser, 一 splits from these only (MSR: 一 位, 一次)
    coarse_one_splits: str = "位项条座支场份张名届句棵轮步"
    demonstratives: str = "这那"  # 这一 and 那一 split at every level (PKU and MSR: 这 一)
    # default and finer: a three-character word that starts with a surname splits after it
    surnames: str = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐"
                     "许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
                     "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹"
                     "薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
    # sounds of transliterated names (莫斯科): not a surname's name
    foreign: str = "斯克尔利维埃鲁门尼伦特森迪莱拉里诺亚夫娃卡罗曼布"
    # coarse: a run of one of these (—— ……) splits into single marks, as MSR writes them
    split_marks: str = "\u2014\u2026"
    # every level: a number in Han numerals is one word (三十二, 第十五, 一九九八): one with a
    # 十 百 千, or three and more digits, optionally after 第; its inner word ends go
    han_digits: str = "〇零一二三四五六七八九两几"
    han_powers: str = "十百千万亿"
    # ... and so is a percentage in them (百分之十八, 百分之四十二点八): PKU, MSR
    percent: str = "百分之"
    classifiers: str = ("个年名次位种项条件家天份批部座张只支台场届期篇片些样类岁户把"
                        "本封架辆艘棵头匹根颗层门所间句首枚段笔代轮步")
    # every level: a two-character word led by one of these splits after it (就|是, 已|有) unless
    # the unigram model has log p(word) - log p(first) - log p(second) > function_pair_logp (已经,
    # 就业): the heads join such pairs because they are frequent. Only characters that cost no dev
    # file anything (how each was chosen: the default model's card, segmenter/models/default).
    function_words: str = "都也就更已将曾他没仍只给仅"
    particles: str = "着过得"  # ... and one that ends with one of these splits before it (有|着, 想|过)
    function_pair_logp: float = 6.5  # e**6.5 times likelier as one word: 就是 is not, 已经 is

    def __post_init__(self):
        for name in (field.name for field in fields(self) if isinstance(field.default, str)):  # the character lists
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Conventions.{name} must be a str of characters, "
                                f"got {type(getattr(self, name)).__name__}")
        if not (isinstance(self.function_pair_logp, (int, float)) and np.isfinite(self.function_pair_logp)):
            raise ValueError(f"Conventions.function_pair_logp must be a finite number, got {self.function_pair_logp!r}")


def apply_conventions(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions,
                      rules: "Rules | str | float", word_table=None) -> np.ndarray:
    """Word ends of `text` (sorted, the last is len(text)) after the conventions a level applies
    (`rules`: levels.Rules, or a granularity that names them). word_table (wordstats.WordTable):
    a suffix joins only where the three characters are a string of the raw text with autonomy
    >= 0, a name splits only where its raw-text counts say so; None: wherever the text allows."""
    if not isinstance(rules, Rules):
        rules = Rules.at(rules)
    if conventions.units and any(run.kind == "number" for run in runs):  # most texts have no number
        ends = _number_units(text, runs, ends, conventions, join_dates=rules.join_dates)
    if conventions.han_powers or conventions.han_digits:
        ends = _join_han_numbers(text, ends, conventions)
    if conventions.split_marks and rules.split_marks:
        ends = _split_marks(text, runs, ends, conventions.split_marks)
    if conventions.surnames and rules.split_surnames:
        ends = _split_surnames(text, ends, conventions, word_table)
    suffixes = conventions.suffixes + (conventions.coarse_suffixes if rules.coarse_suffixes else "")
    if rules.join_suffixes and suffixes:
        ends = _join_suffixes(text, ends, suffixes, word_table)
    if conventions.classifiers:
        ends = _split_counts(text, ends, conventions, rules.counts)
    if ((conventions.function_words or conventions.particles)
            and word_table is not None and word_table.unigram is not None):
        ends = _split_function_words(text, ends, conventions, word_table)
    return ends


def _split_function_words(text: str, ends: np.ndarray, conventions: Conventions, word_table) -> np.ndarray:
    """A two-character Han word led by one of conventions.function_words, or ended by one of
    conventions.particles, splits in two (就是 -> 就|是, 有着 -> 有|着), unless the word table's
    unigram model has the word more than e**function_pair_logp times likelier than its two
    characters as words (已经, 也许, 觉得 stay)."""
    if not _any_of(conventions.function_words + conventions.particles).search(text):
        return ends
    starts = np.concatenate([[0], ends[:-1]])
    candidates = np.array([k for k in np.flatnonzero(ends - starts == 2).tolist()
                           if (text[starts[k]] in conventions.function_words
                               or text[starts[k] + 1] in conventions.particles)
                           and HAN_SPAN_RE.fullmatch(text, starts[k], ends[k])], dtype=np.int64)
    if not len(candidates):
        return ends
    begin = starts[candidates]
    apart = word_table.logp_margin_at(text, begin, [(1, 1)] * len(begin)) <= conventions.function_pair_logp
    return np.union1d(ends, begin[apart] + 1) if apart.any() else ends


def _split_counts(text: str, ends: np.ndarray, conventions: Conventions, counts: str) -> np.ndarray:
    """A word of a numeral (one or two characters) and a classifier splits before the
    classifier where the level's standard writes them apart (_count_apart); 这一 and 那一 split
    at every level."""
    numerals = conventions.numerals + conventions.default_numerals + "一" + conventions.demonstratives
    if not _count_pattern(numerals, conventions.classifiers + "一").search(text):
        return ends  # most texts: no numeral before a classifier
    starts = np.concatenate([[0], ends[:-1]])
    cuts = [end - 1 for start, end in zip(starts.tolist(), ends.tolist())
            if (2 <= end - start <= 3 or end - start > 3 and _is_ordinal(text[start : end - 1], conventions))
            and (text[end - 1] in conventions.classifiers
                                          and _count_apart(text[start : end - 1], text[end - 1], conventions, counts)
                                          or end - start == 2 and text[end - 1] == "一"
                                             and text[start] in conventions.demonstratives)]
    return np.union1d(ends, np.array(cuts, dtype=np.int64)) if cuts else ends


def _count_apart(numeral: str, classifier: str, conventions: Conventions, counts: str) -> bool:
    """Whether the standard of `counts` (levels.Rules.counts) writes `numeral` and `classifier` apart."""
    if counts != "coarse" and _is_ordinal(numeral, conventions):  # PKU, UD: 第十五 次, 第一 个
        return True
    if counts == "fine":  # UD-like: every count
        return all(c in conventions.numerals for c in numeral)
    if counts == "default":  # PKU-like: 两 条, 一 年; but 一个 一些 这种
        return (all(c in conventions.default_numerals for c in numeral)
                or numeral == "一" and classifier not in conventions.one_joins)
    # MSR-like: 两个 一次; but 一 位, 一 项
    return numeral == "一" and classifier in conventions.coarse_one_splits


def _is_ordinal(numeral: str, conventions: Conventions) -> bool:
    """第 and Han numerals (第一, 第十五): MSR writes 第一次 whole, PKU and UD 第一 次."""
    return (len(numeral) >= 2 and numeral[0] == "第"
            and all(c in conventions.han_digits + conventions.han_powers for c in numeral[1:]))


def _number_units(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions,
                  join_dates: bool) -> np.ndarray:
    """A number run followed at once by a unit: the unit ends the number's word (１９９７年|底);
    with join_dates, such words in a row of date units make one word (１９９７年１２月)."""
    digits = _ASCII_OR_FULL if conventions.ascii_digits else _FULL_WIDTH
    drop, add, dates = [], [], []  # dates: (start, end) of the number+unit words
    for run, after in zip(runs, runs[1:]):
        if (run.kind == "number" and after.kind == "han" and after.start == run.end
                and text[run.end] in conventions.units):
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


def _join_han_numbers(text: str, ends: np.ndarray, conventions: Conventions) -> np.ndarray:
    """A number written in Han numerals (with 第 before it: an ordinal) loses the word ends
    inside it: 第十|五 -> 第十五, 三|十二 -> 三十二. Two or more numerals with a power among
    them (十 百 千 万 亿), or three digits and more (一九九八): 一一 and 万一 are left alone. A
    percentage too, with its decimals (百分之|四十二|点|八 -> 百分之四十二点八)."""
    pattern = _han_number_pattern(conventions.han_digits, conventions.han_powers, conventions.percent)
    inner = [k for match in pattern.finditer(text) for k in range(match.start() + 1, match.end())]
    return np.setdiff1d(ends, np.array(inner, dtype=np.int64)) if inner else ends


def _split_marks(text: str, runs: list[Run], ends: np.ndarray, marks: str) -> np.ndarray:
    """A run of one repeated mark from `marks` (—— ……) becomes one word per mark."""
    cuts = [k for run in runs if run.kind == "punct" and run.end - run.start > 1 and text[run.start] in marks
            for k in range(run.start + 1, run.end) if text[k] == text[run.start]]
    return np.union1d(ends, np.array(cuts, dtype=np.int64)) if cuts else ends


def _split_surnames(text: str, ends: np.ndarray, conventions: Conventions, word_table) -> np.ndarray:
    """A three-character Han word that starts with a surname and reads as a personal name
    splits after the surname (江泽民 -> 江|泽民): its first two characters occur mostly inside
    it in the raw text (not 金融|业), and no character of the given name is a transliteration's."""
    if not _any_of(conventions.surnames).search(text):
        return ends
    starts = np.concatenate([[0], ends[:-1]])
    candidates = [k for k in np.flatnonzero(ends - starts == 3).tolist()
                  if text[starts[k]] in conventions.surnames and HAN_SPAN_RE.fullmatch(text, starts[k], ends[k])
                  and not any(c in conventions.foreign for c in text[starts[k] + 1 : ends[k]])
                  and text[ends[k] - 1] not in conventions.suffixes]
    if not candidates:
        return ends
    if word_table is not None:
        _, share = word_table.shares_at(text, starts[np.array(candidates)], 3, [(0, 2)])
        candidates = [k for k, v in zip(candidates, share.tolist()) if not v < NAME_SHARE]  # NaN: unknown, kept
    return np.union1d(ends, starts[np.array(candidates, dtype=np.int64)] + 1) if candidates else ends


def _join_suffixes(text: str, ends: np.ndarray, suffixes: str, word_table) -> np.ndarray:
    """A two-character Han word followed by a one-character word from `suffixes` becomes one
    word (经营|者 -> 经营者, 浙江|省 -> 浙江省). (A joined word cannot take a second suffix: the
    word before a candidate has two characters, a suffix one.)"""
    if not _any_of(suffixes).search(text):  # most texts: nothing to do
        return ends
    starts = np.concatenate([[0], ends[:-1]])
    lengths = ends - starts
    after_pair = np.flatnonzero((lengths[1:] == 1) & (lengths[:-1] == 2)) + 1  # one-character words after two
    candidates = [k for k in after_pair.tolist()
                  if text[starts[k]] in suffixes and HAN_SPAN_RE.fullmatch(text, starts[k - 1], ends[k])]
    if not candidates:
        return ends
    if word_table is not None:  # NaN (a string the table lacks) is not >= 0
        autonomy = word_table.autonomy_at(text, starts[np.array(candidates) - 1], np.full(len(candidates), 3))
        candidates = [k for k, a in zip(candidates, autonomy.tolist()) if a >= 0]
    return np.delete(ends, [k - 1 for k in candidates])


@lru_cache(maxsize=16)
def _count_pattern(numerals: str, classifiers: str) -> re.Pattern:
    return re.compile(f"[{re.escape(numerals)}][{re.escape(classifiers)}]")


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
    return re.compile("|".join(parts) or "(?!)")


@lru_cache(maxsize=16)
def _any_of(characters: str) -> re.Pattern:
    return re.compile(f"[{re.escape(characters)}]")


DEFAULT_CONVENTIONS = Conventions()
_FULL_WIDTH = re.compile(r"[\uff10-\uff19]+(?:[\uff0e\uff1a][\uff10-\uff19]+)*")  # １９９７, ３．５
_ASCII_OR_FULL = re.compile(r"[0-9\uff10-\uff19]+(?:[.:\uff0e\uff1a][0-9\uff10-\uff19]+)*")
