"""Every rule of a segmentation standard, as one ordered table (TABLE, at the end of this file).

Two kinds of rule, both decisions of a standard that no head can learn (conventions.py says why):
  - a **convention** moves word ends inside the words the decoder chose (１９９７|年 -> １９９７年);
    its function takes (texts, ends, conventions, setting, word_table) and returns the ends: texts
    (rule_texts.Texts) is one or many texts joined by rule_texts.SEPARATOR, ends the sorted word
    ends of the joined text, so that a rule runs once over a whole batch (one regex pass, one word-table lookup);
  - a **decoder join** sets an option of the word decoder (decoding.WordDecoding) before it runs;
    its function takes (decoding, setting) and returns the decoding.
The conventions live by what they read: number_rules.py (numbers, units, counts), word_rules.py
(the words themselves); the decoder joins, three setters, are below; this file says when each runs.
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

from collections.abc import Callable
from dataclasses import dataclass, replace

from .number_rules import (
    join_dates,
    join_digit_measures,
    join_han_numbers,
    join_list_numbers,
    join_ordinal_digits,
    number_units,
    split_counts,
)
from .word_rules import (
    join_coarse_suffixes,
    join_function_words,
    join_suffixes,
    split_compounds,
    split_coverbs,
    split_function_words,
    split_marks,
    split_surnames,
)

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


# --- decoder joins: (decoding, setting) -> decoding ------------------------------------------------

def pair_joins(decoding, on):
    """Off: the decoder joins no cohesive 2+1, 1+2 or 2+2 pair (word_joins.join_cohesive), 1+1 still."""
    return decoding if on else replace(decoding, join3=None, join4=None)


def join3_logp(decoding, logp):
    """A number: 2+1 pairs also join where the unigram model has the word e**logp times likelier
    than its two words, unless the decoder was given a join3_logp of its own."""
    return replace(decoding, join3_logp=logp) if logp is not None and decoding.join3_logp is None else decoding


def join_long(decoding, share):
    """A number: two decoded words of 2+ characters each, 5+ together, join where the string
    around their junction is that share of both sides' occurrences (word_joins.join_long_words),
    unless the decoder was given a join_long of its own."""
    return replace(decoding, join_long=share) if share is not None and decoding.join_long is None else decoding


def _at(general, pku, msr, ud) -> dict:
    return {"general": general, "pku": pku, "msr": msr, "ud": ud}


EVERY = _at(True, True, True, True)  # a rule every named standard applies (calibrate leaves it on: search=())
# 2+1 pairs the unigram model has e**7 times likelier as one word join (世界|杯 -> 世界杯, as MSR
# writes it; chosen on msr_dev).
JOIN3_LOGP = 7.0
# 华人民|共和国 is 7,791 of 7,799 and of 8,898 occurrences: 中华人民共和国 joins. Chosen on the six dev
# files (first 1,000 sentences): 0.5 to 0.9 all within +0.0002 of off on each file, at each standard.
JOIN_LONG = 0.7

# The rules, in the order they run. Each was kept where the dev files gained (the comments above
# its row say how; together they gain on each standard's own dev file:
# benchmarks/results/conventions_dev.md; standards_dev.md has the grid of the switches `general`
# weighs); the settings of `general` were chosen on the mean F1 of six dev files, none below jieba
# (benchmarks/standards_dev.py).
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
    # PKU's gold writes these whole too (pku_train_pd199801: 上海市 50 times, 浙江省 40, 中国队 55, never
    # apart); `pku` had the row off. On with it, `pku` on pku_dev: +0.0039 (first 1,300 sentences),
    # +0.0036 (1,301-4,000), the fifth refine round's head.
    Rule("coarse_suffixes", "... and one of these: 上海|市 -> 上海市, 中国|队 -> 中国队 (PKU, MSR; UD apart)",
         join_coarse_suffixes, _at(True, True, True, False), needs="join_suffixes", params=dict(
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
             fine_joins="些样",  # ... but these (UD's dev file: 这些 一些 这样 一样 那样 whole 25 times, never apart)
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
    # ud_gsdsimp_dev writes 也是 9 times, 都是 3, 不会 3, 不是 1, never apart: `ud` takes "coarse" too
    # (+0.0016 on the whole file, 500 sentences; each other setting of each row lowers it).
    # keep_pairs: two-character conjunctions, prepositions and adverbs that dictionaries list as
    # words, which the unigram model cannot tell from a phrase because both their characters are
    # frequent words (为了 除了 可是 不过 不论 只好 更为 不已 可爱 ...): they stay whole at every
    # standard. Six dev files, `general`, first sentences: +0.0004 (ud_gsdsimp_dev) to +0.0021
    # (msr_dev), mean +0.0012; sentences 1,301-4,000 of pku_dev, msr_dev, weibo_dev: +0.0015,
    # +0.0015, +0.0007; pku, msr, ud each on its own file: +0.0011, +0.0014, +0.0005.
    # object_pronouns: a two-character word ended by a personal pronoun is a verb and its object
    # (说你 给我 叫他: the heads join them, 说|你 at -4), split unless the unigram model has it
    # far likelier whole, as with the particles. Six dev files, `general`: +0.0000 (derm_dev) to
    # +0.0011, mean +0.0006; held-out +0.0006, +0.0005, +0.0015; pku, msr, ud on their own files
    # +0.0003, +0.0011, +0.0001; 它 (其它) -0.0001 on the mean, 您 +0.0000: left out. With 自我 and
    # 迷你, which it split, in keep_pairs: mean +0.0007, every file and standard +0.0000 or more.
    Rule("split_function_words", "a two-character word led by a function word or ended by a particle "
                                 "splits: 就|是 不|是 已|有 有|着 (but 已经 也许, by the unigram model; 为了 除了 可是, "
                                 "words of their own; MSR, UD: 不是 也是); so does a three-character one led or "
                                 "ended by one: 不|需要 生活|中 (but 不得不)",
         split_function_words, _at(True, True, "coarse", "coarse"), choices=(False, True, "coarse"), search=(),
         params=dict(
             function_words="都也就更已将曾他没仍只给仅不这那又让才最很再我你她它可应", particles="着过得了",
             bound_ends="里么儿", function_pair_logp=6.5, verb_particles="着", verb_particle_logp=8.0,
             function_triple_logp=10.0, function_ends="是中着内为出的",
             object_pronouns="你我他她",  # ... end a pair that splits too: a verb and its object, 说|你 给|我
             coarse_leads="不",  # "coarse" keeps these words whole ...
             coarse_pairs="也是都是",  # ... and these pairs (two characters each)
             # ... and at every setting these words stay whole (two characters each)
             keep_pairs="为了除了可是不过不仅不但不管不论不如只要只好更为不良不易不已不时不再不满不断不少"
                        "不同不久不足不必不安不幸不利不错不禁不免不然不料不止可爱可惜可怕可见自我迷你")),
    # ud_gsdsimp_dev writes a verb and its 为 or 于 apart (成 为 22 times, 位 于 16, 称 为 6, 生 于 5,
    # 属 于 5, 作 为 4; never whole) and these pairs whole: 由于 9, 因为 8, 认为 5, 行为 4, 对于 4,
    # 关于 2, 终于 1, 较为 1, 更为 1; PKU and MSR write 成为 位于 whole.
    Rule("split_coverbs", "a two-character word ended by 为 or 于 splits: 成|为 位|于 称|为 "
                          "(UD; but 因为 由于 认为 关于)",
         split_coverbs, _at(False, False, False, True), params=dict(
             coverbs="为于",
             coverb_keeps="由于因为认为行为对于关于终于较为更为以为至于等于身为无为")),
    # Function words and a greeting whose characters are each a frequent word of its own: the heads
    # cut inside them (你|好 at +5 to +7: the refine rounds learned it from the function-word rule,
    # which split 你好), and so do the unigram model's pieces. Six dev files, `general`, first
    # sentences: +0.0001 (ud_gsdsimp_dev) to +0.0013, mean +0.0009; sentences 1,301-4,000 of pku_dev,
    # msr_dev, weibo_dev: +0.0007, +0.0007, +0.0009; pku, msr, ud each on its own file: +0.0008,
    # +0.0011, +0.0002 (benchmarks/character_lists_dev.py has the row without the list).
    Rule("join_function_words", "function words the decoder left in pieces join: 你|好 为|什么 有|的 -> 你好 "
                                "为什么 有的 (but 所有|的)",
         join_function_words, EVERY, params=dict(
             joined_words="你好 为什么 有的 有时 有所 从中 从未 从来 大都 以至 等等 不得不 干什么 之上")),
    # The word decoder writes some phrases of two frequent words as one (高等法院, 国家元首,
    # 联合国大会): the unigram model fits whatever recurs. Every dev file writes them apart, and
    # the share 0.1 gains on each of the six at every standard (first 1,300 sentences, `general`:
    # +0.0004 to +0.0024, mean +0.0012; 0.2 loses on derm_dev, 0.05 gains less), and on sentences
    # 1,301-4,300 of pku_dev and msr_dev and 1,301-4,000 of weibo_dev (+0.0014, +0.0007, +0.0006).
    Rule("split_compounds", "a four- or five-character word splits in two where both parts occur mostly apart "
                            "from it in the raw text: 高等|法院 联合国|大会 (but 画蛇添足 迄今为止)",
         split_compounds, EVERY, params=dict(compound_share=0.1)),
    Rule("pair_joins", "the decoder joins cohesive 2+1, 1+2 and 2+2 pairs: 新华社 生产总值 (PKU, MSR; UD: 1+1 only)",
         pair_joins, _at(True, True, True, False), decoder=True),
    Rule("join3_logp", "the decoder joins 2+1 pairs the unigram model has e**value times likelier as one "
                       "word: 世界杯 (MSR)",
         join3_logp, _at(JOIN3_LOGP, None, JOIN3_LOGP, None), decoder=True, choices=None, search=(None, JOIN3_LOGP)),
    Rule("join_long", "the decoder joins two words of 2+ characters, 5+ together, whose junction the raw text "
                      "rarely breaks: 中华人民共和国 (PKU, MSR; UD: 中华 人民 共和国)",
         join_long, _at(JOIN_LONG, JOIN_LONG, JOIN_LONG, None), decoder=True, choices=None, search=(None, JOIN_LONG)),
)
