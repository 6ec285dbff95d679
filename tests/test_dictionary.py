"""User dictionary without a model: jieba's file format, all-or-nothing loading, where a word
can match, and the overlap rule (dictionary.py), on texts whose head scores the test sets."""
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.words.dictionary import UserDictionary
from segmenter.words.assembly import words_from_cuts
from segmenter.text.plan import TextPlan

# jieba's own sample (test/userdict.txt): Latin, digits, a space inside a word, tags.
JIEBA_SAMPLE = "云计算 5\n李小福 2 nr\n创新办 3 i\neasy_install 3 eng\n好用 300\n韩玉赏鉴 3 nz\n八一双鹿 3 nz\n台中\n凱特琳 nz\nEdu Trust认证 2000\n"


def assembled(plan, cuts, margins, dictionary):
    """The word ends that word assembly (assembly.py) gives after the cut decisions, the user
    dictionary settling overlaps by the heads' margins, as Segmenter.assemble does."""
    tokens = words_from_cuts([plan], [np.asarray(cuts, dtype=bool)], dictionary=dictionary, margins=[margins])[0]
    return [token.end for token in tokens]


def words(text, dictionary, scores=None, threshold=0.0):
    """Words of `text` when the heads give `scores` (junction -> combined score, default: cut
    everywhere with score 1), cut where a score passes the threshold."""
    plan = TextPlan(text)
    margins = (np.ones(len(plan.junctions)) if scores is None else np.asarray(scores, dtype=float)) - threshold
    assert len(margins) == len(plan.junctions)
    ends = assembled(plan, margins > 0, margins, dictionary)
    out = [text[start:end] for start, end in zip([0, *ends[:-1]], ends)]
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


def test_crossing_words_are_settled_by_the_margins_not_the_cuts():
    """With word decoding the cuts need not follow the margins' signs; the dictionary still
    reads the heads' margins: cutting every junction, 北京大学 and 大学生 cross at equal
    frequency and the margins (strong 京|大 and 生|前) choose 大学生."""
    plan, dictionary = TextPlan(BEIJING), UserDictionary(["北京大学", "大学生"])
    assert assembled(plan, np.ones(8, dtype=bool), np.array(BEIJING_SCORES), dictionary)[:3] == [1, 2, 5]  # 北 京 大学生
    flipped = -np.array(BEIJING_SCORES)  # margins the other way round: the other word wins
    assert assembled(plan, np.ones(8, dtype=bool), flipped, dictionary)[:2] == [4, 5]  # 北京大学 生


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
TEXTS, SEEDS = st.text(ALPHABET, max_size=30), st.integers(0, 2**16)


def entries_with(freqs):
    return st.lists(st.tuples(st.text(ALPHABET, min_size=1, max_size=5), freqs), max_size=6)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, entries=entries_with(st.integers(0, 3)), seed=SEEDS)
def test_any_dictionary_keeps_text_and_levels_nest(text, entries, seed):
    """Levels whose cuts nest (the threshold decoder at three thresholds) still nest with a
    dictionary: it settles overlaps by the margins, whose order does not depend on the level."""
    dictionary = dictionary_of(entries)
    plan = TextPlan(text)
    scores = np.random.default_rng(seed).normal(size=len(plan.junctions))
    previous = None
    for threshold in (1.0, 0.0, -1.0):  # coarse to fine: each level's ends contain the last's
        ends = set(assembled(plan, scores > threshold, scores - threshold, dictionary))
        assert previous is None or ends >= previous
        previous = ends


def test_levels_nest_with_the_user_words_whole_at_each():
    """The property above, on one example where the dictionary has work to do at every level: the
    heads cut inside 乙丙 at each, and 丙丁戊 crosses it with a lower frequency."""
    dictionary = dictionary_of([("乙丙", 2), ("丙丁戊", 1)])
    plan = TextPlan("甲乙丙丁戊己")
    scores = np.array([0.5, 1.5, -0.5, 2.0, -0.5])  # junctions after 甲 乙 丙 丁 戊
    levels = [assembled(plan, scores > t, scores - t, dictionary) for t in (1.0, 0.0, -1.0)]
    # 乙丙 whole at each level (its freq 2 beats the crossing 丙丁戊), the heads' other cuts kept
    assert levels == [[1, 3, 4, 6], [1, 3, 4, 6], [1, 3, 4, 5, 6]]
    assert set(levels[0]) <= set(levels[1]) <= set(levels[2])


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, entries=entries_with(st.integers(1, 3)), seed=SEEDS)
def test_any_cuts_keep_text_and_a_lone_user_word_whole(text, entries, seed):
    """Whatever the decoder cut (cuts need not agree with the margins' signs, as with word
    decoding): the words tile the text, and a user word that no other occurrence crosses or
    contains comes out whole wherever it may match."""
    dictionary = dictionary_of(entries)
    plan = TextPlan(text)
    rng = np.random.default_rng(seed)
    cuts, margins = rng.random(len(plan.junctions)) < 0.5, rng.normal(size=len(plan.junctions))
    tokens = words_from_cuts([plan], [cuts], dictionary=dictionary, margins=[margins])[0]
    assert "".join(t.word for t in tokens) == text
    assert [t.start for t in tokens[1:]] == [t.end for t in tokens[:-1]]
    found = dictionary._occurrences(text, np.where(np.isnan(boundary(plan)), np.nan, 0.0))
    for occurrence in found:
        alone = all(o is occurrence or o.end <= occurrence.start or o.start >= occurrence.end for o in found)
        if alone:
            assert (text[occurrence.start : occurrence.end], occurrence.start, occurrence.end) in tokens


def dictionary_of(entries) -> UserDictionary:
    dictionary = UserDictionary()
    for word, freq in entries:
        if word.strip():
            dictionary.add(word, freq)
    return dictionary


def boundary(plan):
    from segmenter.words.assembly import boundary_scores

    return boundary_scores(plan, np.zeros(len(plan.junctions)))