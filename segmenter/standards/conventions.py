"""Conventions no head can learn: how a segmentation standard writes numbers, counts and names.

The heads read one junction between two Han characters at a time, so a number written in
digits (a rule's run, text.py) never joins a Han character, and nothing in raw text says
whether 两个 is one word: that is a decision of the standard, not of the language.

    number + unit   １９９７年 ２月 ５日 ３０万 ２亿     PKU and MSR: one word      UD: 1996 年
                    30万 2亿 (ASCII digits)             all: one word
    Han numerals    三十二 第十五 一九九八              all three: one word
    第 + digits      第6 第１２                          all: one word
    percentage      百分之四十二点八                    PKU and MSR: one word
    date            １９９７年２月５日                  MSR: one word              PKU: three
    count           两 个, 三 条, 几 年                  PKU, UD: apart              MSR: 两个
    digits+measure  ２０６ 个, ６５０万 元                PKU, UD: apart              MSR: ２０６个 ６５０万元
    count with 一    一 个, 这 一                        UD: apart                   PKU: each way, MSR: 一个
    but 些 样        这些 一些 这样 一样                  all: one word
    ordinal         第十五 次, 第一 个                   PKU, UD: apart              MSR: 第一次
    name            江 泽民, 周 恩来                     PKU, UD: surname apart      MSR: 江泽民
    suffix          经营者 出版社, 浙江省 中国队            PKU, MSR: one word          UD: 中国 队
    function word   就 是, 已 有, 不 是 (but 已经 也许)   PKU: apart                 MSR, UD: 不是 也是
                    不 需要, 应 注意 (but 不得不)          all: apart (MSR: 不需要)
                    生活 中, 尤其 是 (but 为什么)         all: apart
    function word   你好 为什么 有的 (a list)             all: one word
    verb + pronoun  说 你, 叫 他 (but 其他 自我)          all: apart
    a verb's 着      看 着, 带 着 (but 接着 随着)         all: apart
    coverb          成 为, 位 于 (but 因为 由于 认为)     UD: apart                  PKU, MSR: 成为 位于
    compound        高等 法院, 联合国 大会 (but 画蛇添足)  all: apart
    marks           —— ……                              PKU: one word              MSR: — — … …
    list number     １．急性期 (a line's first word)     PKU: １． one word         MSR, UD: apart

Each convention is a row of one ordered table, rules.TABLE: its name, what it does, the
function that applies it, its character lists and thresholds, and its setting in each named
standard (levels.Standard); the decoder's joins are rows of the same table. At every standard:
  - a number in full-width digits takes the unit after it (the SIGHAN corpora, typeset as
    mainland print is, join them); one in ASCII digits does at PKU and MSR only (UD writes
    1996 年, and the general standard follows it);
  - a number in Han numerals is one word whatever the heads cut inside it (第十|五 -> 第十五:
    numbers are too many and too rare for the word table);
  - a two-character word led by a function word (就 已 也 不 这 ...) or ended by a particle (着 过
    得 了) or a personal pronoun (说|你: a verb and its object) splits unless the unigram model
    has it far likelier as one word (已经 也许 其他 stay) or it is a word of its own that the
    model cannot tell from a phrase (为了 除了 可是: a list): the
    heads join such pairs because they are frequent, and raw text can tell 已有 from 已经 only
    within such a closed class (MSR and UD keep 不是 也是 都是 whole); a verb's 着 needs a higher
    likelihood to stay (看|着, but 接着 随着); a three-character word led by a function word splits
    after it the same way, at its own threshold (不|需要, 应|注意, but 不得不), and one ended by a
    function character before it (生活|中, 尤其|是, but 为什么); and a few function words the heads
    cut inside (你|好, 为|什么, 有|的: both characters are frequent words) join again, from a list;
  - a word of four or five characters splits in two where the raw text holds both parts mostly
    apart from it (高等|法院, 联合国|大会): the unigram model fits what recurs, phrases too.
By standard: a two-character word takes a suffix where the word table knows the three
characters as a unit; counts split from their classifier as each standard writes them; a
three-character name splits after its surname (the surname list, a raw-text check, no sounds of
a transliteration: 莫斯科 stays whole); dates join and runs of dashes or dots split (MSR).
Each rule was kept where the dev files gained (rules.py says how, row by row; together they gain on
each standard's own dev file: benchmarks/results/conventions_dev.md);
Segmenter(conventions=None) turns them all off: the heads-and-raw-text-only setting
(benchmark setting segmenter:plain).

A rule moves word ends inside the words the decoder chose; a user dictionary (dictionary.py)
still wins over it, and the words still join back to the text.
"""
from __future__ import annotations

from dataclasses import astuple, field, fields, make_dataclass
from functools import lru_cache

import numpy as np

from ..arguments import is_finite_number
from ..text.batch import SEPARATOR, Texts
from ..text.runs import Run
from .levels import Rules
from .rules import TABLE, Rule, is_on


def _check(conventions) -> None:
    for f in fields(conventions):
        value = getattr(conventions, f.name)
        if isinstance(f.default, str) and not isinstance(value, str):  # the character lists
            raise TypeError(f"Conventions.{f.name} must be a str of characters, got {type(value).__name__}")
        if isinstance(f.default, float) and not is_finite_number(value):
            raise ValueError(f"Conventions.{f.name} must be a finite number, got {value!r}")


# The parameters of every row of rules.TABLE, with the defaults the rows give them: a row's
# character lists and thresholds are fields here, so removing a row removes them. An empty
# string turns off what a list feeds (Conventions(units="") joins no number and its unit).
Conventions = make_dataclass(
    "Conventions",
    [(name, type(value), field(default=value)) for row in TABLE for name, value in (row.params or {}).items()],
    frozen=True, namespace={"__post_init__": _check, "__module__": __name__,
                            "__doc__": "The character lists and thresholds the rules read (rules.TABLE's params)."})


def apply_conventions(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions,
                      rules: Rules | str | float, word_table=None, table: tuple[Rule, ...] = TABLE) -> np.ndarray:
    """Word ends of `text` (sorted, the last is len(text)) after the conventions of `table` that
    `rules` has on (levels.Rules, or a granularity that names them), in table order. word_table
    (wordstats.WordTable): a suffix joins only where the three characters are a string of the raw
    text with autonomy >= 0, a name splits only where its raw-text counts say so; None: wherever
    the text allows. One text of apply_to_texts (a text alone is its own joined text)."""
    return apply_to_texts(Texts([text], [runs]), ends, conventions, rules, word_table, table)


def apply_to_texts(texts: Texts, ends: np.ndarray, conventions: Conventions, rules: Rules | str | float,
                   word_table=None, table: tuple[Rule, ...] = TABLE) -> np.ndarray:
    """apply_conventions to a batch at once: `ends` are the batch's word ends in texts.text (rule_texts.Texts:
    Texts.join and Texts.split go from and to each text's), each rule runs once over them all. The
    words are each text's alone would get: no rule reaches across a separator."""
    if not isinstance(rules, Rules):
        rules = Rules.at(rules)
    if len(texts) > 1 and not _joinable(conventions):  # a character list holds the separator: one by one
        return texts.join([apply_to_texts(Texts([texts.text[start : start + length]], [runs]), own, conventions,
                                          rules, word_table, table)
                           for start, length, runs, own in zip(texts.starts.tolist(), texts.lengths.tolist(),
                                                               texts.runs, texts.split(ends))])
    for row in table:
        setting = getattr(rules, row.name)
        if not row.decoder and is_on(setting) and (row.needs is None or is_on(getattr(rules, row.needs))):
            ends = row.run(texts, ends, conventions, setting, word_table)
    return ends


@lru_cache(maxsize=16)
def _joinable(conventions: Conventions) -> bool:
    """Whether no character list of `conventions` holds a character of the separator."""
    return not any(isinstance(value, str) and set(value) & set(SEPARATOR) for value in astuple(conventions))


DEFAULT_CONVENTIONS = Conventions()
