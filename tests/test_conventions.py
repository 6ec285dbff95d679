"""Conventions of numbers, dates and counts (the convention rows of rules.TABLE, run by conventions.apply_conventions), and the calibrated choice."""
import numpy as np
import pytest

from segmenter import Conventions, Segmenter
from segmenter.conventions import apply_conventions
from segmenter.assembly import split_words
from segmenter.text import split_runs
from segmenter.wordstats import WordTable

from test_heads import GOLD


def words_after(text: str, words: list[str], granularity: float = 0.5, conventions=Conventions()) -> list[str]:
    """Apply the rules to a given segmentation (no model involved)."""
    ends = np.cumsum([len(w) for w in words])
    assert "".join(words) == text
    return split_words(text, apply_conventions(text, split_runs(text), ends, conventions, granularity))


def test_full_width_number_takes_its_unit_and_only_it():
    text = "１９９７年底３０万人"
    assert words_after(text, ["１９９７", "年底", "３０", "万人"]) == ["１９９７年", "底", "３０万", "人"]


def test_a_unit_keeps_its_marks():
    # a variation selector after the unit belongs to it: no word may start with a mark
    assert words_after("３．５亿\ufe0f元", ["３．５", "亿\ufe0f元"]) == ["３．５亿\ufe0f", "元"]


def test_ascii_digits_stay_apart_unless_asked():
    assert words_after("1997年", ["1997", "年"]) == ["1997", "年"]
    assert words_after("1997年", ["1997", "年"], conventions=Conventions(ascii_digits=True)) == ["1997年"]


def test_dates_join_only_coarser_than_default():
    text = "１９９７年１２月３１日"
    words = ["１９９７", "年", "１２", "月", "３１", "日"]
    assert words_after(text, words) == ["１９９７年", "１２月", "３１日"]
    assert words_after(text, words, granularity=1.0) == [text]
    assert words_after("１９９７年 １２月", ["１９９７", "年", " ", "１２", "月"], granularity=1.0) == ["１９９７年", " ", "１２月"]


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


def test_an_ordinal_splits_from_its_classifier_except_coarser():
    text = "第十五次和第一个第三十二届"
    words = ["第十", "五次", "和", "第一个", "第三十", "二届"]
    for granularity in (0.0, 0.5):  # PKU, UD: 第十五 次, 第一 个
        assert words_after(text, words, granularity) == ["第十五", "次", "和", "第一", "个", "第三十二", "届"]
    assert words_after(text, words, granularity=1.0) == ["第十五次", "和", "第一个", "第三十二届"]  # MSR: 第一次
    assert words_after("第一线", ["第一线"]) == ["第一线"]  # 线 is no classifier
    assert words_after("一九九八年", ["一九", "九八年"]) == ["一九九八年"]  # a year in Han digits stays whole


def test_a_name_splits_after_its_surname_at_the_default_and_finer():
    text = "江泽民和莫斯科的金融业"
    words = ["江泽民", "和", "莫斯科", "的", "金融业"]
    # a transliteration (斯, 科) and a suffix word (业) are not names
    assert words_after(text, words) == ["江", "泽民", "和", "莫斯科", "的", "金融业"]
    assert words_after(text, words, granularity=0.0)[:2] == ["江", "泽民"]
    assert words_after(text, words, granularity=1.0) == words  # MSR-like: names stay whole
    assert words_after(text, words, conventions=Conventions(surnames="")) == words
    # with a word table, the first two characters must occur mostly inside the word: 高速 is a
    # word of its own in this raw text (高速度 stays whole), 江泽 occurs only in 江泽民
    table = WordTable.from_texts(["高速公路", "高速发展", "高速列车", "高速度", "江泽民说"] * 3, max_n=4, min_count=1)
    text = "江泽民高速度"
    ends = apply_conventions(text, split_runs(text), np.array([3, 6]), Conventions(), 0.5, table)
    assert split_words(text, ends) == ["江", "泽民", "高速度"]


@pytest.mark.slow
def test_function_words_and_particles_split_unless_the_model_has_the_pair_as_a_word():
    # the shipped table's unigram model has 已经 他们 觉得 as words, 已有 就是 有着 as two
    table = Segmenter().word_table
    text = "已经已有他们就是有着觉得"
    ends = np.arange(2, len(text) + 1, 2)
    for granularity in (0.0, 0.5, 1.0):  # every level
        assert split_words(text, apply_conventions(text, split_runs(text), ends, Conventions(), granularity, table)) == [
            "已经", "已", "有", "他们", "就", "是", "有", "着", "觉得"]
    # the threshold decides: a high one splits the words too; the rule off keeps the heads' words
    strict = split_words(text, apply_conventions(text, split_runs(text), ends, Conventions(function_pair_logp=100.0), 0.5, table))
    assert strict == list(text)  # each word is led by a function word (已 他 就) or ends in a particle (着 得)
    off = Conventions(function_words="", particles="")
    assert split_words(text, apply_conventions(text, split_runs(text), ends, off, 0.5, table)) == [text[k:k + 2] for k in range(0, len(text), 2)]
    # without a unigram model nothing tells 已经 from 已有: the rule does not run
    bare = WordTable.from_texts(["已经已有他们就是有着觉得"] * 3, max_n=3, min_count=1)
    assert split_words(text, apply_conventions(text, split_runs(text), ends, Conventions(), 0.5, bare)) == [text[k:k + 2] for k in range(0, len(text), 2)]
    with pytest.raises(ValueError, match="function_pair_logp"):
        Conventions(function_pair_logp=float("nan"))


@pytest.mark.slow
def test_the_shipped_default_splits_function_words():
    seg = Segmenter()
    words = seg.segment("他已经来了，这就是我们已有的。")
    assert "已经" in words and "就是" not in words and "已有" not in words
    assert "就是" in Segmenter(conventions=None).segment("他已经来了，这就是我们已有的。")


def test_dash_and_dot_runs_split_only_coarser_than_default():
    text = "好——是……"
    words = ["好", "——", "是", "……"]
    assert words_after(text, words) == words  # PKU-like
    assert words_after(text, words, granularity=1.0) == ["好", "—", "—", "是", "…", "…"]  # MSR-like


def test_rules_off_and_bad_argument():
    assert words_after("１９９７年", ["１９９７", "年"], conventions=Conventions(units="")) == ["１９９７", "年"]
    with pytest.raises(TypeError, match="conventions"):
        Segmenter(conventions="pku")


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

    from segmenter.parallel import WorkerSpec

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
