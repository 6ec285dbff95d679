"""Word-level decoding (decoding.py, with the joins of word_joins.py): Viterbi over the word
table's evidence, the options, the Segmenter's decode="words", and each kind of join. The table
itself: test_wordstats.py."""
from __future__ import annotations

import itertools
import shutil

from dataclasses import replace

import numpy as np
import pytest

from segmenter.words.decoding import WordDecoding, best_words, cut_junctions
from segmenter.text.plan import TextPlan
from segmenter.train.ngram_counting import build_word_table
from segmenter.words.table import WordTable

from test_wordstats import COMPOUNDS, TOY


def _brute_force(gains: np.ndarray, values: np.ndarray) -> tuple[float, np.ndarray]:
    """Best total over all 2^(n-1) segmentations of one run (the reference for Viterbi)."""
    n = values.shape[0]
    best, best_cut = -np.inf, None
    for cut in itertools.product([False, True], repeat=n - 1):
        ends = [k + 1 for k, c in enumerate(cut) if c] + [n]
        total, start = 0.0, 0
        for end in ends:
            length = end - start
            total += values[start, length - 1] if length <= values.shape[1] else -np.inf
            total += gains[end - 1]
            start = end
        if total > best:
            best, best_cut = total, np.array(cut)
    return best, best_cut


@pytest.mark.parametrize("few", [0, 10**6], ids=["numpy", "python"])  # best_words' two paths
def test_viterbi_finds_the_best_segmentation_of_every_run(few, monkeypatch):
    monkeypatch.setattr("segmenter.words.decoding.FEW_RUNS", few)
    rng = np.random.default_rng(0)
    sizes = np.array([1, 2, 5, 7, 3])
    runs, n, max_len = len(sizes), sizes.max(), 4
    values = rng.normal(size=(runs, n, max_len))
    gains = rng.normal(size=(runs, n))
    for r, size in enumerate(sizes):  # what cut_junctions guarantees: no word past a run's end
        gains[r, size - 1 :] = 0.0
        for k in range(n):
            values[r, k, np.arange(1, max_len + 1) > size - k] = -np.inf
    ends = best_words(gains, values, sizes)
    for r, size in enumerate(sizes):
        _, expected = _brute_force(gains[r, :size], values[r, :size])
        np.testing.assert_array_equal(ends[r, : size - 1], expected)


def test_viterbi_paths_agree_on_ties_and_impossible_words(monkeypatch):
    """best_words in Python (a few runs) and in numpy choose alike: the first of equal
    candidates (the shorter word), a word of one character where no candidate is possible,
    a NaN value as argmax takes it."""
    rng = np.random.default_rng(3)
    for trial in range(200):
        sizes = rng.integers(1, 9, size=rng.integers(1, 5))
        runs, n, max_len = len(sizes), int(sizes.max()), 5
        values = rng.integers(-2, 3, size=(runs, n, max_len)).astype(np.float64)  # small integers: ties
        gains = rng.integers(-2, 3, size=(runs, n)).astype(np.float64)
        values[rng.random(values.shape) < 0.2] = -np.inf
        if trial % 10 == 0:
            values[rng.random(values.shape) < 0.05] = np.nan
        monkeypatch.setattr("segmenter.words.decoding.FEW_RUNS", 0)
        expected = best_words(gains, values, sizes)
        monkeypatch.setattr("segmenter.words.decoding.FEW_RUNS", 10**6)
        np.testing.assert_array_equal(best_words(gains, values, sizes), expected)


def test_without_word_evidence_it_is_the_threshold_decoder():
    text = "我们的共和国，他们在办公室工作。中华人民共和国"
    plan = TextPlan(text)
    rng = np.random.default_rng(1)
    scores = rng.normal(scale=3, size=len(plan.junctions))
    table = build_word_table(TOY, max_n=4, min_count=1)
    plain = WordDecoding(alpha=0.0, bonus=0.0, clip=100.0, join2=None, join3=None, join4=None, join_units=None)
    np.testing.assert_array_equal(cut_junctions(plan, scores, table, plain), scores > 0)


def test_a_long_word_of_the_raw_text_stays_whole_against_weak_inner_cuts():
    from segmenter.train.unigram import fit_unigram

    table = build_word_table(TOY, max_n=4, min_count=2)
    assert table.autonomy("办公室")[0, 2] >= WordDecoding().bonus_from  # a unit in this raw text
    table = table.with_unigram(fit_unigram(table, TOY))  # and used as a word: the default decoder's evidence
    plan = TextPlan("我们的办公室")
    # heads: sure boundaries after 们 and 的, weak ones inside 办公室
    scores = np.array([-5.0, 5.0, 5.0, 0.5, 0.8])
    assert list(scores > 0) == [False, True, True, True, True]  # the threshold splits 办|公|室
    # (的办公室, 9 times in this toy text, would join as a four-character unit: not what is tested here)
    options = WordDecoding(units_min_count=10)
    cut = cut_junctions(plan, scores, table, options)
    assert list(cut) == [False, True, True, False, False]  # 我们|的|办公室
    # a sure head still wins: a strong inner boundary splits it
    cut = cut_junctions(plan, np.array([-5.0, 5.0, 5.0, 8.0, 8.0]), table, options)
    assert list(cut) == [False, True, True, True, True]


def test_options_are_checked():
    with pytest.raises(ValueError, match="max_len"):
        WordDecoding(max_len=0)
    with pytest.raises(ValueError, match="alpha"):
        WordDecoding(alpha=float("nan"))
    # not a number at all: a clear error, not numpy's (np.isfinite([1]) is truthy, of "x" a TypeError)
    for bad in ([1.0], "1", True):
        with pytest.raises(ValueError, match="join3_logp must be a finite number or None"):
            WordDecoding(join3_logp=bad)
        with pytest.raises(ValueError, match="gamma must be a finite number"):
            WordDecoding(gamma=bad)
    assert WordDecoding(join3_logp=np.float32(7.0), gamma=1).join3_logp == 7.0


def test_segmenter_decodes_words_with_the_folders_table(tiny_model_dir, tmp_path):
    from segmenter import Segmenter

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    with pytest.raises(ValueError, match="segmenter ngrams --raw"):
        Segmenter(folder, decode="words")
    with pytest.raises(ValueError, match="'threshold' or 'words'"):
        Segmenter(folder, decode="viterbi")
    build_word_table(TOY, max_n=4, min_count=1).save(folder)
    seg = Segmenter(folder, decode="words", window=30, overlap=8)
    texts = ["我们的办公室在北京，中华人民共和国成立了。", "abc 123 共和国！", "", "的"]
    for text, words in zip(texts, seg.segment_batch(texts)):
        assert "".join(words) == text
    seg.add_word("公室在北")  # the user dictionary still rules
    assert "公室在北" in seg.segment(texts[0])
    assert (Segmenter(folder).decode, seg.decode) == ("threshold", "words")


@pytest.mark.slow
@pytest.mark.parametrize("model, kept", [(None, ["社会主义", "翻山越岭", "自力更生"]), ("fast", ["翻山越岭", "自力更生", "社会主义"])])
def test_the_shipped_models_ship_a_table_that_keeps_long_words_whole(model, kept):
    from segmenter import Segmenter

    texts = ["我们的共和国在联合国有很多朋友。", "办公室里的负责人说实事求是。", "他们翻山越岭，自力更生。", "社会主义市场经济体制"]
    threshold = sum(Segmenter(model, decode="threshold", conventions=None).segment_batch(texts), [])
    words = Segmenter(model).segment_batch(texts)  # the profiles ask for decode="words"
    assert not set(kept) & set(threshold)  # the head alone cuts them
    assert set(kept) <= set(sum(words, [])) and ["".join(w) for w in words] == texts


def test_cohesive_pairs_join_and_frequent_pairs_do_not(tmp_path):
    table = build_word_table(COMPOUNDS, max_n=4, min_count=1)
    options = WordDecoding(alpha=0.0, bonus=0.0, join_min_count=5)
    for text, scores, expected in [
        ("生产总值", [-5.0, 8.0, -5.0], [False, False, False]),  # 2+2, 总值 only ever after 生产: one word
        ("经济发展", [-5.0, 8.0, -5.0], [False, True, False]),  # 经济 mostly elsewhere: two words
        ("新华社", [-5.0, 3.0], [False, False]),  # 2+1, 新华 only ever before 社
    ]:
        cut = cut_junctions(TextPlan(text), np.array(scores), table, options)
        assert list(cut) == expected, text
        off = WordDecoding(alpha=0.0, bonus=0.0, join2=None, join3=None, join4=None, join_units=None)
        assert list(cut_junctions(TextPlan(text), np.array(scores), table, off)) == list(np.array(scores) > 0)
    # a table saved without counts joins nothing; join thresholds must be positive or None
    bare = WordTable.load(table.save(tmp_path / "bare.npz", with_counts=False))
    assert list(cut_junctions(TextPlan("生产总值"), np.array([-5.0, 8.0, -5.0]), bare, options)) == [False, True, False]
    with pytest.raises(ValueError, match="join4"):
        WordDecoding(join4=0.0)


# 其 is nearly always followed by 中 here; 他 and 说 each occur far more often apart.
FUNCTION_WORDS = ["其中有人", "其中很多", "他们其中", "他说好", "他们很好", "我说了", "你说", "他来了", "他走了", "说好了"] * 12


def test_cohesive_characters_join_unless_the_head_is_sure():
    table = build_word_table(FUNCTION_WORDS, max_n=4, min_count=1)
    options = WordDecoding(alpha=0.0, bonus=0.0, join_min_count=5, join2=0.5)  # 其中: 1.0 of 其, 他说: 0.2 of 他
    assert list(cut_junctions(TextPlan("其中"), np.array([2.0]), table, options)) == [False]  # 1+1: one word
    assert list(cut_junctions(TextPlan("他说"), np.array([2.0]), table, options)) == [True]  # a frequent pair
    sure = np.array([options.join2_below + 1.0])  # the head is sure of this cut: it stays
    assert list(cut_junctions(TextPlan("其中"), sure, table, options)) == [True]
    assert list(cut_junctions(TextPlan("其中"), np.array([2.0]), table, replace(options, join2=None))) == [True]


def test_a_word_a_join_made_joins_again(monkeypatch):
    """共|和 and 和|国 both qualify; a pass joins a word once (the left pair: 共和|国), and the
    second pass joins 共和|国 as a 2+1 pair (共和 is nearly always before 国)."""
    import segmenter.words.decoding as decoding

    table = build_word_table(["共和国很大", "共和国的人", "和国家", "国家和人"] * 6, max_n=4, min_count=1)
    options = WordDecoding(alpha=0.0, bonus=0.0, join_min_count=5, join2=0.1, join2_logp=None, join4=None,
                           join_units=None, units_logp=None)
    scores = np.array([2.0, 2.0])  # the heads cut 共|和|国, without much confidence
    assert list(cut_junctions(TextPlan("共和国"), scores, table, options)) == [False, False]
    monkeypatch.setattr(decoding, "COHESIVE_PASSES", 1)
    assert list(cut_junctions(TextPlan("共和国"), scores, table, options)) == [False, True]


def test_characters_the_unigram_model_has_as_a_word_join_unless_the_head_is_sure():
    from segmenter.train.unigram import fit_unigram

    table = build_word_table(FUNCTION_WORDS, max_n=4, min_count=1)
    table = table.with_unigram(fit_unigram(table, FUNCTION_WORDS))
    options = WordDecoding(alpha=0.0, bonus=0.0, join_min_count=5, join2=None, join2_logp=0.0, join2_logp_below=3.0)
    margin = table.logp_margin_at("其中", np.array([0]), [(1, 1)])[0]
    assert margin > 0.0  # 其中 is likelier as one word than as 其 and 中
    assert list(cut_junctions(TextPlan("其中"), np.array([2.0]), table, options)) == [False]
    assert list(cut_junctions(TextPlan("其中"), np.array([4.0]), table, options)) == [True]  # the head is sure
    for off in (replace(options, join2_logp=None), replace(options, join2_logp=margin + 1.0)):
        assert list(cut_junctions(TextPlan("其中"), np.array([2.0]), table, off)) == [True]
    with pytest.raises(ValueError, match="join2_logp"):
        WordDecoding(join2_logp=float("nan"))


# 翻山越岭 is a unit in many contexts; 我们 and 说好 are frequent apart far more than together.
IDIOMS = ["他们翻山越岭", "翻山越岭来了", "我们翻山越岭去", "要翻山越岭", "翻山越岭的人", "我们说了", "我们好",
          "说好了", "我们来了", "说好的", "我们说好", "山上", "越来越好", "岭南"] * 8


def test_four_character_units_join_from_single_characters():
    table = build_word_table(IDIOMS, max_n=4, min_count=1)
    options = WordDecoding(alpha=0.0, bonus=0.0, join_min_count=5, join_units=0.3, units_from=-10.0)
    sure = np.array([5.0, 5.0, 5.0])  # the head cuts every junction
    assert list(cut_junctions(TextPlan("翻山越岭"), sure, table, options)) == [False, False, False]
    assert list(cut_junctions(TextPlan("我们说好"), sure, table, options)) == [True, True, True]  # 我们 is mostly elsewhere
    assert list(cut_junctions(TextPlan("翻山越岭"), sure, table, replace(options, join_units=None))) == [True, True, True]
    # inside a longer run the unit joins and the rest keeps the heads' cuts
    assert list(cut_junctions(TextPlan("他们翻山越岭"), np.full(5, 5.0), table, options)) == [True, True, False, False, False]
    # units_from: the four characters must be autonomous enough
    assert list(cut_junctions(TextPlan("翻山越岭"), sure, table, replace(options, units_from=100.0))) == [True, True, True]


# 中华人民 is nearly always followed by 共和国 (one word longer than the decoder's max_len);
# 北京 and 大学生 each occur far more often without the other.
LONG_WORDS = ["中华人民共和国成立", "中华人民共和国的人", "在中华人民共和国", "共和国万岁", "北京大学生", "北京很好",
              "北京的人", "去北京", "大学生们", "好的大学生", "大学生说"] * 12


def test_long_words_join_where_the_raw_text_never_breaks_them():
    table = build_word_table(LONG_WORDS, max_n=6, min_count=1)
    options = WordDecoding(alpha=0.0, bonus=0.0, join2=None, join3=None, join4=None, join_units=None,
                           units_logp=None, join_min_count=5, join_long=0.7)
    # 中华人民|共和国: 华人民共和国 is all of 华人民's and 12/13 of 共和国's occurrences: one word
    cut = cut_junctions(TextPlan("中华人民共和国"), np.array([-5.0, -5.0, -5.0, 8.0, -5.0, -5.0]), table, options)
    assert not cut.any()
    # 北京|大学生: 北京大学 is a small share of 北京's occurrences: two words
    cut = cut_junctions(TextPlan("北京大学生"), np.array([-5.0, 8.0, -5.0, -5.0]), table, options)
    assert list(cut) == [False, True, False, False]
    off = replace(options, join_long=None)  # off: the heads' cut stays
    assert cut_junctions(TextPlan("中华人民共和国"), np.array([-5.0, -5.0, -5.0, 8.0, -5.0, -5.0]), table, off)[3]
    with pytest.raises(ValueError, match="join_long"):
        WordDecoding(join_long=0.0)


def test_han_runs_of_plain_texts_from_their_junctions():
    """decoding._han_runs finds the Han runs of 2+ characters of plain texts from their
    junctions, the others' from their runs: those of the runs, in text order."""
    from segmenter.text.batch import Texts
    from segmenter.text.plan import plan_texts
    from segmenter.words.decoding import _han_runs

    texts = ["我爱北京天安门", "中国 人民，天", "中\u0301国人民", "中国\u0301人", "a中国b中", "天安门", "𠀀𠀁中，中"]
    plans = [plan for plan in plan_texts(texts) if len(plan.junctions)]
    batch = Texts([plan.text for plan in plans], [plan.runs for plan in plans])
    at = np.concatenate([plan.positions[plan.junctions] + start for plan, start in zip(plans, batch.starts.tolist())])
    starts, ends = _han_runs(plans, batch.starts, at)
    expected = [(start + r.start, start + r.end) for plan, start in zip(plans, batch.starts.tolist())
                for r in plan.runs if r.kind == "han" and r.end - r.start > 1]
    assert list(zip(starts.tolist(), ends.tolist())) == expected


def test_word_values_are_the_written_formula_bit_for_bit():
    """WordDecoding.word_values computes alpha * known * lengths (+ bonus, + gamma * log p) in
    place: the bits of the formula as written, float64 and float32 autonomy alike."""
    options = WordDecoding(gamma=0.2, bonus=1.0)
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        autonomy = (rng.normal(size=(6, 9, 5)) * 3).astype(dtype)
        autonomy[rng.random(autonomy.shape) < 0.4] = np.nan
        logp = rng.normal(size=autonomy.shape).astype(dtype)
        room = rng.integers(0, 6, size=autonomy.shape[:-1])
        known = np.where(np.isnan(autonomy), options.unseen, autonomy)
        known[..., 0] = np.nan_to_num(autonomy[..., 0], nan=0.0)
        lengths = np.arange(1, 6, dtype=np.float64)
        expected = options.alpha * known * lengths
        expected += np.where((lengths >= 3) & (autonomy >= options.bonus_from), options.bonus, 0.0)
        expected += options.gamma * logp
        expected[lengths > room[..., None]] = -np.inf
        found = options.word_values(autonomy, room, logp)
        assert found.dtype == expected.dtype and found.tobytes() == expected.tobytes()
