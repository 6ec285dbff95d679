"""User dictionary without a model: jieba's file format, all-or-nothing loading, where a word
can match, and the overlap rule (dictionary.py), on texts whose head scores the test sets."""
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.dictionary import UserDictionary
from segmenter.junctions import TextPlan, split_words, word_ends

# jieba's own sample (test/userdict.txt): Latin, digits, a space inside a word, tags.
JIEBA_SAMPLE = "云计算 5\n李小福 2 nr\n创新办 3 i\neasy_install 3 eng\n好用 300\n韩玉赏鉴 3 nz\n八一双鹿 3 nz\n台中\n凱特琳 nz\nEdu Trust认证 2000\n"


def words(text, dictionary, scores=None, threshold=0.0):
    """Words of `text` when the heads give `scores` (junction -> combined score, default: cut
    everywhere with score 1)."""
    plan = TextPlan(text)
    combined = np.ones(len(plan.junctions)) if scores is None else np.asarray(scores, dtype=float)
    assert len(combined) == len(plan.junctions)
    out = split_words(text, word_ends(plan, combined, threshold, dictionary))
    assert "".join(out) == text
    return out


def test_jieba_sample_file_loads():
    dictionary = UserDictionary()
    assert dictionary.load(io.StringIO(JIEBA_SAMPLE)) == 10
    assert dictionary.entries["Edu Trust认证"].freq == 2000
    assert dictionary.entries["创新办"][:2] == (3, "i")
    assert dictionary.entries["凱特琳"][:2] == (1, "nz")
    assert dictionary.entries["easy_install"].tag == "eng"


def test_file_path_binary_file_and_bom(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_bytes(("\ufeff" + JIEBA_SAMPLE).encode("utf-8"))
    dictionary = UserDictionary()
    assert dictionary.load(path) == 10 and "云计算" in dictionary
    with open(path, "rb") as stream:
        assert UserDictionary().load(stream) == 10


@pytest.mark.parametrize(
    "content, line",
    [
        ("云计算 5\n李小福 2 nr\n创新办 3.5 i\n好用 300\n", 3),
        ("云计算 5\n\n好用 -3\n", 3),
        ("云计算 5\n".encode() + b"\xff\xfe 2\n", 2),
    ],
)
def test_a_bad_file_loads_nothing(tmp_path, content, line):
    path = tmp_path / "bad.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    dictionary = UserDictionary(["机器学习"])
    before = dict(dictionary.entries)
    with pytest.raises(ValueError, match=rf"{path.name}, line {line}"):
        dictionary.load(path)
    assert dictionary.entries == before


def test_bad_arguments(tmp_path):
    dictionary = UserDictionary()
    with pytest.raises(FileNotFoundError, match="none.txt"):
        dictionary.load(tmp_path / "none.txt")
    with pytest.raises(TypeError, match="word must be a str"):
        dictionary.add(3)
    with pytest.raises(ValueError, match="word must not be empty"):
        dictionary.add("  ")
    with pytest.raises(ValueError, match="freq must be a non-negative int"):
        dictionary.add("好", freq=-1)
    with pytest.raises(ValueError, match="at least two pieces"):
        dictionary.split(("中将",))
    dictionary.add("云计算", freq=0)  # jieba: freq 0 deletes
    assert "云计算" not in dictionary


def test_words_stay_whole_and_the_rest_keeps_the_heads():
    dictionary = UserDictionary(["云计算"])
    # Heads: cut everywhere but between 方|面 (score -1).
    text = "也是云计算方面"
    scores = [1, 1, 1, 1, 1, -1]
    assert words(text, dictionary, scores) == ["也", "是", "云计算", "方面"]


def test_nested_word_loses_to_the_longer():
    dictionary = UserDictionary(["科学", "中国科学院"])
    dictionary.add("科学", freq=100)  # even with a higher frequency
    assert words("在中国科学院工作", dictionary) == ["在", "中国科学院", "工", "作"]


# 北京大学生前来应聘 with the shipped model's combined scores at its 8 junctions.
BEIJING = "北京大学生前来应聘"
BEIJING_SCORES = [-4.77, 4.72, 0.72, -2.26, 4.5, 1.3, 4.81, -4.11]


def test_crossing_words_equal_frequency_the_heads_decide():
    dictionary = UserDictionary(["北京大学", "大学生"])
    # The heads put strong boundaries at 京|大 and 生|前, a weak one at 学|生: 大学生 wins.
    assert words(BEIJING, dictionary, BEIJING_SCORES)[:2] == ["北京", "大学生"]
    # The same rule at every threshold: the levels still nest.
    cuts = [set(np.cumsum([len(w) for w in words(BEIJING, dictionary, BEIJING_SCORES, t)])) for t in (-2, 0, 2)]
    assert cuts[0] >= cuts[1] >= cuts[2]


def test_crossing_words_higher_frequency_wins():
    dictionary = UserDictionary(["大学生"])
    dictionary.add("北京大学", freq=5)
    assert words(BEIJING, dictionary, BEIJING_SCORES)[0] == "北京大学"


def test_crossing_words_equal_everything_longer_then_leftmost():
    assert words("甲乙丙丁", UserDictionary(["甲乙", "乙丙丁"]), [1, 1, 1])[-1] == "乙丙丁"
    assert words("甲乙丙", UserDictionary(["甲乙", "乙丙"]), [1, 1]) == ["甲乙", "丙"]


def test_words_across_runs_and_never_inside_one():
    dictionary = UserDictionary()
    dictionary.load(io.StringIO(JIEBA_SAMPLE))
    assert "Edu Trust认证" in words("我有Edu Trust认证了", dictionary)
    assert words("easy_install is great", dictionary)[0] == "easy_install"
    dictionary.add("GPT-4模型")
    assert "GPT-4模型" in words("新的GPT-4模型发布", dictionary)
    dictionary.add("GPT")
    dictionary.add("3.5")
    assert words("GPT-4增长3.5%", dictionary) == ["GPT-4", "增", "长", "3.5%"]  # a run is never cut


def test_forced_split():
    dictionary = UserDictionary()
    dictionary.split(("中", "将"))
    assert words("放到post中将出错", dictionary, [-1, -1, 1, -1]) == ["放到", "post", "中", "将", "出错"]
    dictionary.add("中将")  # a str replaces the split
    assert "中将" in words("放到post中将出错", dictionary, [-1, -1, 1, -1])


def test_suggest_freq_beats_crossing_words():
    dictionary = UserDictionary(["北京大学"])
    dictionary.add("北京大学", freq=7)
    freq = dictionary.suggest("大学生")
    assert freq == 8
    dictionary.add("大学生", freq)
    assert words(BEIJING, dictionary, BEIJING_SCORES)[:2] == ["北京", "大学生"]
    assert dictionary.suggest(("中", "将")) == 0


ALPHABET = "甲乙丙丁戊 aB1-。"


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(ALPHABET, max_size=30),
    entries=st.lists(st.tuples(st.text(ALPHABET, min_size=1, max_size=5), st.integers(0, 3)), max_size=6),
    seed=st.integers(0, 2**16),
)
def test_any_dictionary_keeps_text_and_levels_nest(text, entries, seed):
    dictionary = UserDictionary()
    for word, freq in entries:
        if word.strip():
            dictionary.add(word, freq)
    plan = TextPlan(text)
    scores = np.random.default_rng(seed).normal(size=len(plan.junctions))
    previous = None
    for threshold in (1.0, 0.0, -1.0):  # coarse to fine: each level's ends contain the last's
        ends = set(word_ends(plan, scores, threshold, dictionary).tolist())
        assert "".join(split_words(text, np.array(sorted(ends)))) == text
        assert previous is None or ends >= previous
        previous = ends
