"""Conventions of numbers, dates and counts (the rows of rules.TABLE in number_rules.py, run by
conventions.apply_conventions), the conventions in use (switches, standards, workers, the CLI flag),
the calibrated choice, and the batch path. The rules of words (word_rules.py) are in
test_conventions_words.py."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter import Conventions, Segmenter
from segmenter.words.assembly import cut_ends, split_words, tokens, words_from_cuts
from segmenter.standards.conventions import apply_conventions, apply_to_texts
from segmenter.words.dictionary import UserDictionary
from segmenter.text.plan import TextPlan
from segmenter.standards.levels import STANDARDS
from segmenter.text.batch import Texts
from segmenter.text.runs import split_runs

from test_heads import GOLD


# test_conventions_words.py imports it too.
def words_after(text: str, words: list[str], granularity=0.5, conventions=Conventions(), word_table=None) -> list[str]:
    """Apply the rules (of a granularity, or levels.Rules) to a given segmentation; word_table: the
    raw-text counts and unigram model the rules that need one read (None: no model involved)."""
    ends = np.cumsum([len(w) for w in words])
    assert "".join(words) == text
    return split_words(text, apply_conventions(text, split_runs(text), ends, conventions, granularity, word_table))


def test_full_width_number_takes_its_unit_and_only_it():
    text = "１９９７年底３０万人"
    assert words_after(text, ["１９９７", "年底", "３０", "万人"]) == ["１９９７年", "底", "３０万", "人"]
    # a range or a ratio is one number run (text.py) and takes its unit as any number does
    assert words_after("１－２年", ["１－２", "年"]) == ["１－２年"]
    for name in STANDARDS:
        assert words_after("3-5万元", ["3-5", "万元"], STANDARDS[name].rules) == ["3-5万", "元"]


def test_a_unit_keeps_its_marks():
    # a variation selector after the unit belongs to it: no word may start with a mark
    assert words_after("３．５亿\ufe0f元", ["３．５", "亿\ufe0f元"]) == ["３．５亿\ufe0f", "元"]


def test_ascii_digits_take_their_unit_where_the_standard_says():
    from segmenter.standards.levels import STANDARDS

    apart = ["1997", "年"]
    assert words_after("1997年", apart, STANDARDS["general"].rules) == apart  # UD's files write 1997 年
    assert words_after("1997年", apart, STANDARDS["ud"].rules) == apart
    for name in ("pku", "msr"):  # they write 1997年 as they write １９９７年
        assert words_after("1997年", apart, STANDARDS[name].rules) == ["1997年"]
    assert words_after("1997年", apart, STANDARDS["general"].rules, Conventions(ascii_digits=True)) == ["1997年"]
    # a magnitude joins whatever the digits, at every standard: UD writes 1996 年 but 30万
    for name in STANDARDS:
        assert words_after("30万人", ["30", "万人"], STANDARDS[name].rules) == ["30万", "人"]
    assert words_after("30万人", ["30", "万人"], STANDARDS["ud"].rules, Conventions(ascii_units="")) == ["30", "万人"]


def test_dates_join_only_coarser_than_default():
    text = "１９９７年１２月３１日"
    words = ["１９９７", "年", "１２", "月", "３１", "日"]
    assert words_after(text, words) == ["１９９７年", "１２月", "３１日"]
    assert words_after(text, words, granularity=1.0) == [text]
    assert words_after("１９９７年 １２月", ["１９９７", "年", " ", "１２", "月"], granularity=1.0) == ["１９９７年", " ", "１２月"]


def test_a_lines_list_number_takes_its_period_where_the_standard_says():
    def listed(text, rules):  # from the words of the text's runs: 1 | . | 急性期
        return words_after(text, [text[run.start : run.end] for run in split_runs(text)], rules)

    full, ascii_ = "１．急性期", "1.急性期"
    assert listed(full, STANDARDS["pku"].rules) == ["１．", "急性期"]  # PKU's People's Daily
    assert listed(ascii_, STANDARDS["pku"].rules) == ["1", ".", "急性期"]  # True: the full-width period only
    assert listed(ascii_, STANDARDS["general"].rules) == ["1.", "急性期"]  # "any"
    for name in ("msr", "ud"):
        assert listed(full, STANDARDS[name].rules) == ["１", "．", "急性期"]
    general = STANDARDS["general"].rules
    assert words_after("说：\n２．手", ["说", "：", "\n", "２", "．", "手"], general) == ["说", "：", "\n", "２．", "手"]
    # not a list number: not at a line's start, three digits, a decimal
    assert words_after("共３．", ["共", "３", "．"], general) == ["共", "３", "．"]
    assert words_after("１２３．急", ["１２３", "．", "急"], general) == ["１２３", "．", "急"]
    assert words_after("１．５米", ["１．５", "米"], general) == ["１．５", "米"]
    assert words_after("１．急", ["１", "．", "急"], general, Conventions(list_marks="")) == ["１", "．", "急"]


def test_an_ordinal_mark_takes_the_digits_after_it():
    words = ["第", "6", "届", "和", "第", "１２", "届", "，", "勃艮第", "6"]
    for granularity in (0.0, 0.5, 1.0):  # every level
        assert words_after("".join(words), words, granularity) == ["第6", "届", "和", "第１２", "届", "，", "勃艮第", "6"]
    assert words_after("第3号", ["第", "3号"]) == ["第3号"]  # a unit the number took stays with it
    assert words_after("第3号", ["第", "3", "号"], granularity=0.0) == ["第3", "号"]  # UD: 3 号
    assert words_after("第十", ["第", "十"], conventions=Conventions(han_digits="", han_powers="")) == ["第", "十"]  # digits only
    assert words_after("第6", ["第", "6"], conventions=Conventions(ordinal_marks="")) == ["第", "6"]


def test_a_number_in_digits_takes_its_measure_word_at_msr():
    words = ["共", "２０６", "个", "，", "６５０万", "元", "，", "１０", "分钟", "，", "２０", "天内", "，", "５", "人", "，", "5", "个"]
    text = "".join(words)
    msr, pku = STANDARDS["msr"].rules, STANDARDS["pku"].rules
    # every character of the word after the number a measure character: 天内 and 人 stay apart
    assert words_after(text, words, msr) == ["共", "２０６个", "，", "６５０万元", "，", "１０分钟", "，", "２０", "天内",
                                             "，", "５", "人", "，", "5", "个"]
    assert words_after(text, words, replace(msr, join_digit_measures="any"))[-1] == "5个"  # ASCII digits too
    assert words_after(text, words, pku)[1:3] == ["２０６", "个"]  # PKU, UD: apart
    # a measure word is made of classifiers and measure units (Conventions.measure_chars: both lists)
    assert words_after(text, words, msr, conventions=Conventions(measure_units=""))[1:6] == [
        "２０６个", "，", "６５０万", "元", "，"]
    assert words_after(text, words, msr, conventions=Conventions(classifiers="", measure_units=""))[1:3] == [
        "２０６", "个"]
    assert words_after("第１２届", ["第", "１２", "届"], msr) == ["第１２", "届"]  # not after 第: the ordinal keeps its digits


def test_han_numbers_are_one_word_at_every_level():
    text = "第三十二条和一九九八年统一一致"
    words = ["第三", "十二", "条", "和", "一九", "九八", "年", "统一", "一致"]
    for granularity in (0.0, 0.5, 1.0):
        assert words_after(text, words, granularity) == ["第三十二", "条", "和", "一九九八", "年", "统一", "一致"]
    assert words_after("万一", ["万", "一"]) == ["万", "一"]  # no power, two digits: not a number
    assert words_after(text, words, conventions=Conventions(han_digits="", han_powers="")) == words
    # a percentage with its decimals (PKU, MSR: 百分之四十二点八); 百分之 alone stays as it is
    percent = ["占", "百分之", "四十", "二", "点", "八", "，", "百分之", "百", "和", "百分之"]
    assert words_after("".join(percent), percent) == ["占", "百分之四十二点八", "，", "百分之百", "和", "百分之"]
    assert words_after("".join(percent), percent, conventions=Conventions(percent=""))[1:5] == ["百分之", "四十二", "点", "八"]


def test_counts_split_by_level():
    text = "一个人和两条这三年"
    words = ["一个", "人", "和", "两条", "这三年"]
    assert words_after(text, words, granularity=1.0) == words  # MSR-like: 两条 is one word
    assert words_after(text, words) == ["一个", "人", "和", "两", "条", "这三年"]  # PKU-like: 一个 each way, 两 条 apart
    assert words_after(text, words, granularity=0.0) == ["一", "个", "人", "和", "两", "条", "这三", "年"]
    assert words_after("一个人", ["一个人"], granularity=0.0) == ["一个人"]  # not a numeral + classifier word
    # fine splits every count but a numeral with 些 or 样 (UD: 这些 一些 这样 一样); fine_joins empty: those too
    assert words_after("这些一样", ["这些", "一样"], granularity=0.0) == ["这些", "一样"]
    assert words_after("这些一样", ["这些", "一样"], granularity=0.0, conventions=Conventions(fine_joins="")) == [
        "这", "些", "一", "样"]
    for granularity in (0.0, 0.5, 1.0):  # a demonstrative and 一 split at every level; 一声 is a count too
        assert words_after("另一声", ["另一", "声"], granularity=granularity) == ["另", "一", "声"]
    assert words_after("一声", ["一声"]) == ["一", "声"] and words_after("一声", ["一声"], granularity=1.0) == ["一声"]


def test_an_ordinal_splits_from_its_classifier_except_coarser():
    text = "第十五次和第一个第三十二届"
    words = ["第十", "五次", "和", "第一个", "第三十", "二届"]
    for granularity in (0.0, 0.5):  # PKU, UD: 第十五 次, 第一 个
        assert words_after(text, words, granularity) == ["第十五", "次", "和", "第一", "个", "第三十二", "届"]
    assert words_after(text, words, granularity=1.0) == ["第十五次", "和", "第一个", "第三十二届"]  # MSR: 第一次
    assert words_after("第一线", ["第一线"]) == ["第一线"]  # 线 is no classifier
    assert words_after("一九九八年", ["一九", "九八年"]) == ["一九九八年"]  # a year in Han digits stays whole


def test_rules_off_and_bad_argument():
    assert words_after("１９９７年", ["１９９７", "年"], conventions=Conventions(units="")) == ["１９９７", "年"]
    with pytest.raises(TypeError, match="conventions"):
        Segmenter(conventions="pku")
    # a threshold is a finite number (arguments.is_finite_number, as the decoder's options): not a bool
    for bad in (True, [6.5], "6.5", float("inf")):
        with pytest.raises(ValueError, match="Conventions.function_pair_logp must be a finite number"):
            Conventions(function_pair_logp=bad)
    assert Conventions(function_pair_logp=np.float32(6.5)).function_pair_logp == 6.5


@pytest.mark.slow
def test_shipped_model_follows_the_standards():
    seg = Segmenter()  # the general standard
    text = "１９９７年１２月３１日，一个新世纪。"
    assert seg.segment(text)[:3] == Segmenter(standard="pku").segment(text)[:3] == ["１９９７年", "１２月", "３１日"]
    assert Segmenter(standard="msr").segment(text)[0] == "１９９７年１２月３１日"
    assert "个" in Segmenter(standard="ud").segment(text)
    assert Segmenter(conventions=None).segment(text)[:2] == ["１９９７", "年"]
    for granularity in ("fine", "default", "coarse", 0.3):
        assert "".join(seg.segment(text, granularity=granularity)) == text


@pytest.mark.slow
def test_user_dictionary_wins_over_the_rules():
    seg = Segmenter()
    seg.add_word("一个新")
    assert "一个新" in seg.segment("一个新世纪", granularity="fine")


def test_calibrated_choice_is_never_below_the_default(tiny_model_dir):
    from segmenter.bench.evaluation import score
    from segmenter.train.head_discovery import calibrated_choice

    texts = ["".join(words) for words in GOLD]
    profile, granularity, results = calibrated_choice(tiny_model_dir, GOLD, "test gold", max_heads=4, window=30, overlap=8)
    assert set(results) == {"general", "pku", "msr", "ud", "fitted heads"}
    assert max(results.values()) == results[profile.source.split(": ")[1]] >= results["general"]
    chosen = Segmenter(tiny_model_dir, profile=profile, granularity=granularity, window=30, overlap=8)
    assert score(GOLD, chosen.segment_batch(texts)).F1 == pytest.approx(max(results.values()))


@pytest.mark.slow
def test_workers_build_the_parents_conventions_and_decoder():
    from dataclasses import replace

    from segmenter.run.parallel import WorkerSpec

    parent = Segmenter(conventions=None)
    parent.word_decoding = replace(parent.word_decoding, join3=None)
    child = WorkerSpec.of(parent).build()
    assert child.conventions is None and child.word_decoding == parent.word_decoding
    assert WorkerSpec.of(Segmenter()).build().conventions == Conventions()
    lines = ["１９９７年１２月３１日，一个新世纪。"] * 3
    assert list(parent.segment_lines(lines, workers=2, show_progress=False)) == [parent.segment(lines[0])] * 3


@pytest.mark.slow
def test_cli_conventions_flag():
    from conftest import run_cli

    text = "1997年１９９７年\n".encode("utf-8")
    outputs = {flag: run_cli("-q", "--conventions", flag, stdin=text).stdout.decode("utf-8").split() for flag in ("default", "ascii", "off")}
    assert outputs["default"] == ["1997", "年", "１９９７年"]
    assert outputs["ascii"] == ["1997年", "１９９７年"]
    assert outputs["off"] == ["1997", "年", "１９９７", "年"]
    assert run_cli("-q", "--conventions", "pku", stdin=text).returncode == 2


# -- the batch path: the rules run once over texts joined by rule_texts.SEPARATOR --------------------

# what the rules read (numerals, powers, classifiers, units, surnames, suffixes, function words, marks),
# digits of both widths, and what may sit at a text's edge (newlines, a ZWJ, marks, an emoji, a surrogate)
ALPHABET = list("一二两三十百千万第个次位年月日号这那江王泽民上海市经营者就已是经有着人的，。——……") + list(
    "0123456789０１２３４５６７８９．ab \n") + ["\u200d", "\u0301", "\ufe0f", "😀", "\ud800"]
TEXTS = st.lists(st.text(alphabet=st.sampled_from(ALPHABET), max_size=14), min_size=1, max_size=6)


@pytest.fixture(scope="module")
def shipped_table():
    return Segmenter().word_table


def random_ends(text: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.flatnonzero(rng.random(len(text) + 1) < 0.5)[1:].tolist() + [len(text)] if text else []


EVERY_RULES = [standard.rules for standard in STANDARDS.values()] + [0.0, 1.0]  # a granularity names rules too


@settings(max_examples=40, deadline=None)
@given(texts=TEXTS, seed=st.integers(0, 2**16))
def test_a_batch_gets_each_texts_own_ends(shipped_table, texts, seed):
    ends = [np.array(random_ends(text, seed + i), dtype=np.int64) for i, text in enumerate(texts)]
    runs = [split_runs(text) for text in texts]
    batch = Texts(texts, runs)
    assert [e.tolist() for e in batch.split(batch.join(ends))] == [e.tolist() for e in ends]
    for rules in EVERY_RULES:
        for table in (shipped_table, None):
            for conventions in (Conventions(), Conventions(units="年\n", ascii_digits=True)):  # "\n": one by one
                joined = apply_to_texts(batch, batch.join(ends), conventions, rules, table)
                alone = [apply_conventions(t, r, e, conventions, rules, table) for t, r, e in zip(texts, runs, ends)]
                assert [e.tolist() for e in batch.split(joined)] == [e.tolist() for e in alone]


@settings(max_examples=30, deadline=None)
@given(texts=TEXTS, seed=st.integers(0, 2**16))
def test_words_of_a_batch_are_each_texts_own(shipped_table, texts, seed):
    """words_from_cuts (cut_ends, the conventions, tokens: once over the batch) against each text alone;
    with a user dictionary (per text) too."""
    rng = np.random.default_rng(seed)
    plans = [TextPlan(text) for text in texts]
    cuts = [rng.random(len(plan.junctions)) < 0.5 for plan in plans]
    dictionary = UserDictionary()
    for word in ("两个人", "经营者", "江泽民"):
        dictionary.add(word)
    for rules in EVERY_RULES:
        for words in (None, dictionary):
            batch = words_from_cuts(plans, cuts, rules, conventions=Conventions(), word_table=shipped_table,
                                    dictionary=words)
            for plan, cut, got in zip(plans, cuts, batch):
                alone = words_from_cuts([plan], [cut], rules, conventions=Conventions(), word_table=shipped_table,
                                        dictionary=words)[0]
                assert got == alone and "".join(token.word for token in got) == plan.text
                if words is None:
                    ends = apply_conventions(plan.text, plan.runs, cut_ends(plan, cut), Conventions(), rules, shipped_table)
                    assert got == tokens(plan.text, ends)
    assert words_from_cuts(plans, cuts) == [tokens(p.text, cut_ends(p, c)) for p, c in zip(plans, cuts)]


def test_no_rule_reaches_across_texts():
    # each pair would be one word, or split otherwise, were the texts one: 30|万, 三|十二, 经营|者, 两|个, ——|——
    texts = ["３０", "万人", "三", "十二", "经营", "者", "两", "个", "——", "——", "", "第百个", "两个", "３０万\u200d",
             "\u0301\u0301年"]
    ends = [np.array([len(text)] if text else [], dtype=np.int64) for text in texts]
    # counts split only in a text with a numeral before a classifier: 第百个 (百 is none) alone, not for 两个's sake
    ends[-2], ends[-1] = np.array([2, 4]), np.array([3])  # a unit, then a ZWJ: the next text's marks are not its
    batch = Texts(texts, [split_runs(text) for text in texts])
    for rules in EVERY_RULES:
        joined = batch.split(apply_to_texts(batch, batch.join(ends), Conventions(), rules))
        alone = [apply_conventions(t, split_runs(t), e, Conventions(), rules) for t, e in zip(texts, ends)]
        assert [e.tolist() for e in joined] == [e.tolist() for e in alone]
        assert joined[0].tolist() == [2] and joined[-2].tolist() == [4] and joined[-1].tolist() == [3]
        assert joined[-4].tolist() == [3]
    assert words_after("３０万人", ["３０", "万人"]) == ["３０万", "人"]  # were they one text
