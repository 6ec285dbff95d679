"""Conventions no head can learn: how a segmentation standard writes numbers, counts and names.

The heads read one junction between two Han characters at a time, so a number written in
digits (a run of its own, text.runs) never joins a Han character, and nothing in raw text says
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
Where each rule's setting and each list came from is its origin line in rules.toml;
Segmenter(conventions=None) turns them all off: the heads-and-raw-text-only setting
(benchmark setting segmenter:plain).

A rule moves word ends inside the words the decoder chose; a user dictionary (dictionary.py)
still wins over it, and the words still join back to the text.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from functools import lru_cache

import numpy as np

from ..arguments import is_finite_number
from ..text.batch import SEPARATOR, Texts
from ..text.runs import Run
from .data import PARAMS as _DEFAULT
from .levels import Rules
from .rules import TABLE, Rule, is_on


@dataclass(frozen=True)
class Conventions:
    """The character lists and thresholds the rules read: one field a parameter of a row of
    rules.TABLE, in table order, its default from rules.toml (where each says what it is and
    where it came from). A character list is a str of characters; an empty one turns off what it
    feeds (Conventions(units="") joins no number and its unit)."""

    # number_units
    units: str = _DEFAULT["units"]
    ascii_units: str = _DEFAULT["ascii_units"]
    ascii_digits: bool = _DEFAULT["ascii_digits"]
    # join_list_numbers
    list_marks: str = _DEFAULT["list_marks"]
    # join_ordinal_digits (join_han_numbers and split_compounds read it too)
    ordinal_marks: str = _DEFAULT["ordinal_marks"]
    # join_han_numbers
    han_digits: str = _DEFAULT["han_digits"]
    han_powers: str = _DEFAULT["han_powers"]
    unleading_powers: str = _DEFAULT["unleading_powers"]
    percent: str = _DEFAULT["percent"]
    decimal_marks: str = _DEFAULT["decimal_marks"]
    # split_surnames
    surnames: str = _DEFAULT["surnames"]
    foreign: str = _DEFAULT["foreign"]
    name_share: float = _DEFAULT["name_share"]
    # join_suffixes, coarse_suffixes
    suffixes: str = _DEFAULT["suffixes"]
    coarse_suffixes: str = _DEFAULT["coarse_suffixes"]
    # join_dates
    date_units: str = _DEFAULT["date_units"]
    # join_digit_measures: a measure word is made of classifiers and these
    measure_units: str = _DEFAULT["measure_units"]
    # split_marks
    split_marks: str = _DEFAULT["split_marks"]
    # counts
    numerals: str = _DEFAULT["numerals"]
    fine_joins: str = _DEFAULT["fine_joins"]
    default_numerals: str = _DEFAULT["default_numerals"]
    one_joins: str = _DEFAULT["one_joins"]
    coarse_one_splits: str = _DEFAULT["coarse_one_splits"]
    demonstratives: str = _DEFAULT["demonstratives"]
    one_numeral: str = _DEFAULT["one_numeral"]
    classifiers: str = _DEFAULT["classifiers"]
    # split_function_words
    function_words: str = _DEFAULT["function_words"]
    particles: str = _DEFAULT["particles"]
    bound_ends: str = _DEFAULT["bound_ends"]
    function_pair_logp: float = _DEFAULT["function_pair_logp"]
    verb_particles: str = _DEFAULT["verb_particles"]
    verb_particle_logp: float = _DEFAULT["verb_particle_logp"]
    function_triple_logp: float = _DEFAULT["function_triple_logp"]
    function_ends: str = _DEFAULT["function_ends"]
    object_pronouns: str = _DEFAULT["object_pronouns"]
    coarse_leads: str = _DEFAULT["coarse_leads"]
    coarse_pairs: str = _DEFAULT["coarse_pairs"]
    keep_pairs: str = _DEFAULT["keep_pairs"]
    # split_coverbs
    coverbs: str = _DEFAULT["coverbs"]
    coverb_keeps: str = _DEFAULT["coverb_keeps"]
    # join_function_words
    joined_words: str = _DEFAULT["joined_words"]
    # split_compounds
    compound_share: float = _DEFAULT["compound_share"]

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(f.default, str) and not isinstance(value, str):  # the character lists
                raise TypeError(f"Conventions.{f.name} must be a str of characters, got {type(value).__name__}")
            if isinstance(f.default, float) and not is_finite_number(value):
                raise ValueError(f"Conventions.{f.name} must be a finite number, got {value!r}")

    @property
    def measure_chars(self) -> str:
        """The characters of a measure word (join_digit_measures): the classifiers and the measure units."""
        return self.classifiers + self.measure_units


def apply_conventions(text: str, runs: list[Run], ends: np.ndarray, conventions: Conventions,
                      rules: Rules | str | float, word_table=None, table: tuple[Rule, ...] = TABLE) -> np.ndarray:
    """Word ends of `text` (sorted, the last is len(text)) after the conventions of `table` that
    `rules` has on (levels.Rules, or a granularity that names them), in table order. word_table
    (words.table.WordTable): a suffix joins only where the three characters are a string of the raw
    text with autonomy >= 0, a name splits only where its raw-text counts say so; None: wherever
    the text allows. One text of apply_to_texts (a text alone is its own joined text)."""
    return apply_to_texts(Texts([text], [runs]), ends, conventions, rules, word_table, table)


def apply_to_texts(texts: Texts, ends: np.ndarray, conventions: Conventions, rules: Rules | str | float,
                   word_table=None, table: tuple[Rule, ...] = TABLE) -> np.ndarray:
    """apply_conventions to a batch at once: `ends` are the batch's word ends in texts.text (text.batch.Texts:
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
