"""Conventions of numbers, dates and counts (conventions.py), and the calibrated choice."""
import numpy as np
import pytest

from segmenter import Conventions, Segmenter
from segmenter.conventions import apply_conventions
from segmenter.junctions import split_words
from segmenter.text import split_runs

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


def test_counts_split_only_finer_than_default():
    text = "一个人和两条这三年"
    words = ["一个", "人", "和", "两条", "这三年"]
    assert words_after(text, words) == words
    assert words_after(text, words, granularity=0.0) == ["一", "个", "人", "和", "两", "条", "这三", "年"]
    assert words_after("一个人", ["一个人"], granularity=0.0) == ["一个人"]  # not a numeral + classifier word


def test_rules_off_and_bad_argument():
    assert words_after("１９９７年", ["１９９７", "年"], conventions=Conventions(units="")) == ["１９９７", "年"]
    with pytest.raises(TypeError, match="conventions"):
        Segmenter(conventions="pku")


def test_shipped_default_follows_the_levels():
    seg = Segmenter()
    text = "１９９７年１２月３１日，一个新世纪。"
    assert seg.segment(text)[:3] == ["１９９７年", "１２月", "３１日"]
    assert seg.segment(text, granularity="coarse")[0] == "１９９７年１２月３１日"
    assert "个" in seg.segment(text, granularity="fine")
    assert Segmenter(conventions=None).segment(text)[:2] == ["１９９７", "年"]
    for granularity in ("fine", "default", "coarse", 0.3):
        assert "".join(seg.segment(text, granularity=granularity)) == text


def test_user_dictionary_wins_over_the_rules():
    seg = Segmenter()
    seg.add_word("一个新")
    assert "一个新" in seg.segment("一个新世纪", granularity="fine")


def test_calibrated_choice_is_never_below_the_default(tiny_model_dir):
    from segmenter.bench.evaluation import score
    from segmenter.train.head_discovery import calibrated_choice

    texts = ["".join(words) for words in GOLD]
    profile, granularity, results = calibrated_choice(tiny_model_dir, GOLD, "test gold", max_heads=4, window=30, overlap=8)
    assert set(results) == {"default", "fine", "coarse", "fitted heads"}
    assert max(results.values()) == results[profile.source.split(": ")[1]] >= results["default"]
    chosen = Segmenter(tiny_model_dir, profile=profile, granularity=granularity, window=30, overlap=8)
    assert score(GOLD, chosen.segment_batch(texts)).F1 == pytest.approx(max(results.values()))


def test_workers_build_the_parents_conventions_and_decoder():
    from dataclasses import replace

    from segmenter.scale.workers import WorkerSpec

    parent = Segmenter(conventions=None)
    parent.word_decoding = replace(parent.word_decoding, join3=None)
    child = WorkerSpec.of(parent).build()
    assert child.conventions is None and child.word_decoding == parent.word_decoding
    assert WorkerSpec.of(Segmenter()).build().conventions == Conventions()
    lines = ["１９９７年１２月３１日，一个新世纪。"] * 3
    assert list(parent.segment_lines(lines, workers=2, show_progress=False)) == [parent.segment(lines[0])] * 3


def test_cli_conventions_flag():
    from conftest import run_cli

    text = "1997年１９９７年\n".encode("utf-8")
    outputs = {flag: run_cli("-q", "--conventions", flag, stdin=text).stdout.decode("utf-8").split() for flag in ("default", "ascii", "off")}
    assert outputs["default"] == ["1997", "年", "１９９７年"]
    assert outputs["ascii"] == ["1997年", "１９９７年"]
    assert outputs["off"] == ["1997", "年", "１９９７", "年"]
    assert run_cli("-q", "--conventions", "pku", stdin=text).returncode == 2
