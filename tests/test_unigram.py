"""The unigram word model of the word table (train/unigram.py) and how the decoder reads it."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from segmenter.words.decoding import WordDecoding, cut_junctions
from segmenter.text.plan import TextPlan
from segmenter.train.unigram import fit_unigram, table_rows
from segmenter.train.ngram_counting import build_word_table
from segmenter.words.table import WordTable

# 主义 occurs only inside 社会主义 here; 人民 and 社会 also stand alone.
RAW = ["社会主义好", "人民的社会主义", "社会主义国家", "社会发展", "人民好", "社会主义和人民", "人民的国家", "社会好"] * 5


def fitted(rounds=6):
    table = build_word_table(RAW, max_n=4, min_count=2)
    return table, fit_unigram(table, RAW, rounds)


def logp(table, model, word):
    n = len(word)
    rows = table_rows(table, word, n)
    offset = sum(len(table.tables[m][0]) for m in range(1, n))
    return float(model["logp"][n][rows[0, n - 1] - offset]) if rows[0, n - 1] >= 0 else model["unseen"]


def test_em_never_lowers_the_likelihood_and_finds_the_words_used_as_words():
    table, model = fitted()
    history = model["log_likelihood"]
    assert len(history) == 6 and all(b >= a - 1e-9 for a, b in zip(history, history[1:]))
    assert history[-1] > history[0]
    # raw counts: 主义 is as frequent as 社会主义; as a word it is far rarer
    assert table.counts("主义")[0, 1] == table.counts("社会主义")[0, 3]
    assert logp(table, model, "社会主义") > logp(table, model, "主义") + 2
    assert logp(table, model, "主义") == pytest.approx(model["unseen"], abs=0.01)  # never a word: the floor
    assert model["unseen"] <= min(float(v.min()) for v in model["logp"].values()) + 0.01
    assert model["chars"] == sum(len(line) for line in RAW)
    expected_words = model["words"]
    assert 0 < expected_words < model["chars"]  # fewer words than characters: some strings are words


def test_a_prior_holds_the_model_near_it_and_weighs_as_its_pseudo_counts():
    table, model = fitted()
    rows = [np.exp(model["logp"][n].astype(np.float64)) for n in sorted(table.tables)]
    shipped = np.concatenate(rows) * model["words"]  # the fitted model as expected word counts
    # a text that uses 主义 as a word on its own, which RAW never does
    other = ["主义好", "人民的主义"] * 5
    plain = fit_unigram(table, other, 4)
    held = fit_unigram(table, other, 4, prior=shipped * 100)  # a prior worth 100 times RAW's words
    light = fit_unigram(table, other, 4, prior=shipped * 0.01)
    assert logp(table, plain, "主义") > logp(table, plain, "社会主义")  # the text alone: 主义 is the word
    assert logp(table, held, "社会主义") > logp(table, held, "主义")  # a heavy prior keeps RAW's model ...
    assert logp(table, held, "社会主义") == pytest.approx(logp(table, model, "社会主义"), abs=0.1)
    assert logp(table, light, "主义") > logp(table, light, "社会主义")  # ... a light one yields to the text
    assert held["words"] == pytest.approx(plain["words"], rel=0.2)  # words: the text's, not the prior's
    for bad in (shipped[:-1], -shipped, shipped * np.nan):
        with pytest.raises(ValueError, match="prior must hold"):
            fit_unigram(table, other, 1, prior=bad)


def test_table_rows_index_every_string_of_the_table():
    table, _ = fitted(1)
    rows = table_rows(table, "社会主义x", 4)
    assert rows.shape == (5, 4) and (rows[4] == -1).all()  # x is not Han: in no string
    offsets = np.cumsum([0] + [len(table.tables[n][0]) for n in sorted(table.tables)])
    for length in range(1, 5):
        row = rows[0, length - 1]
        assert offsets[length - 1] <= row < offsets[length]  # 社, 社会, 社会主, 社会主义 are all in it


def test_the_model_saves_loads_prunes_and_combines(tmp_path):
    table, model = fitted()
    with_model = table.with_unigram(model)
    loaded = WordTable.load(with_model.save(tmp_path / "t.npz"))
    for n in table.tables:
        np.testing.assert_array_equal(loaded.unigram["logp"][n], model["logp"][n])
    assert loaded.unigram["unseen"] == pytest.approx(model["unseen"])
    autonomy, values = loaded.autonomy_and_logp("社会主义")
    np.testing.assert_array_equal(autonomy, table.autonomy("社会主义"))
    assert values[0, 3] == pytest.approx(logp(table, model, "社会主义"), abs=1e-6)
    assert values[1, 3] == model["unseen"]  # past the end of the text: no string
    assert WordTable.load(table.save(tmp_path / "bare.npz")).unigram is None  # a table saved without one
    assert table.autonomy_and_logp("社会")[1] is None
    pruned = with_model.pruned(20)  # the model's values stay with their strings
    assert np.isclose(pruned.autonomy_and_logp("社会主义")[1][0, 3], values[0, 3])
    # adapt: a string the user's text brings gets the probability of its scaled count
    other = build_word_table(["云计算好"] * 10, max_n=4, min_count=1)
    combined = with_model.combined_with(other, min_count=5)
    brought = combined.autonomy_and_logp("云计算")[1][0, 2]
    scaled = 10 * model["chars"] / other.info["chars"]
    assert brought == pytest.approx(np.log(scaled / model["words"]), abs=0.01)
    assert combined.autonomy_and_logp("社会主义")[1][0, 3] == pytest.approx(values[0, 3])
    with pytest.raises(ValueError, match="unigram model covers"):
        WordTable(table.tables, table.info, {**model, "logp": {1: model["logp"][1]}})
    with pytest.raises(ValueError, match="iterations"):
        fit_unigram(table, RAW, 0)
    with pytest.raises(ValueError, match="no Han"):
        fit_unigram(table, ["abc", "123"])


def test_the_decoder_prefers_the_words_the_raw_text_uses():
    table, model = fitted()
    options = WordDecoding(alpha=0.0, join2=None, join2_logp=None, join3=None, join4=None, join_units=None,
                           units_logp=None)
    weak = np.array([0.5, 0.5, 0.5])  # the heads lean to cutting 社|会|主|义, weakly
    assert list(cut_junctions(TextPlan("社会主义"), weak, table, options)) == [True, True, True]  # no model: the heads
    with_model = table.with_unigram(model)
    assert list(cut_junctions(TextPlan("社会主义"), weak, with_model, options)) == [False, False, False]
    assert list(cut_junctions(TextPlan("社会主义"), weak, with_model, replace(options, gamma=0.0))) == [True, True, True]
    sure = np.array([0.5, 8.0, 0.5])  # a sure cut in the middle still wins
    assert list(cut_junctions(TextPlan("社会主义"), sure, with_model, options)) == [False, True, False]
    with pytest.raises(ValueError, match="gamma"):
        WordDecoding(gamma=float("inf"))


def test_the_ngrams_command_fits_the_model_unless_told_not_to(tmp_path, capsys):
    from segmenter.cli import main

    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join(RAW) + "\n", encoding="utf-8")
    out = tmp_path / "table.npz"
    assert main(["ngrams", "--raw", str(raw), "--out", str(out), "--min-count", "2", "--unigram-rounds", "3", "-q"]) == 0
    table = WordTable.load(out)
    assert table.unigram is not None and table.unigram["chars"] == sum(len(line) for line in RAW)
    assert table.autonomy_and_logp("社会主义")[1][0, 3] > table.autonomy_and_logp("主义")[1][0, 1]
    assert main(["ngrams", "--raw", str(raw), "--out", str(out), "--min-count", "2", "--unigram-rounds", "0", "-q"]) == 0
    assert WordTable.load(out).unigram is None
    assert main(["ngrams", "--raw", str(raw), "--out", str(out), "--unigram-rounds", "-1"]) != 0
    assert "--unigram-rounds" in capsys.readouterr().err


# 世界 stands alone far more often than it takes 杯, so the count share (join3) leaves 世界|杯
# apart; but 杯 is never a word of its own here, so the model has 世界杯 far likelier than 世界 + 杯.
CUP = ["世界杯比赛", "看世界杯", "世界杯很好", "世界和平", "世界很大", "全世界", "世界上", "世界的人", "比赛很好", "看比赛"] * 6


def test_coarse_levels_join_two_plus_one_by_the_model():
    table = build_word_table(CUP, max_n=4, min_count=1)
    table = table.with_unigram(fit_unigram(table, CUP, 6))
    options = WordDecoding(alpha=0.0, gamma=0.0, join_min_count=5, join2=None, join4=None, join_units=None)
    scores = np.array([-5.0, 3.0])  # the heads cut 世界|杯
    assert list(cut_junctions(TextPlan("世界杯"), scores, table, options)) == [False, True]  # the count share: apart
    assert list(cut_junctions(TextPlan("世界杯"), scores, table, replace(options, join3_logp=2.0))) == [False, False]
    assert list(cut_junctions(TextPlan("世界杯"), scores, table, replace(options, join3_logp=100.0))) == [False, True]
    # logp_at reads the same values as the decoder's full table
    text = "看世界杯比赛"
    starts, lengths = np.array([1, 1, 3, 0]), np.array([3, 2, 1, 4])
    full = table.autonomy_and_logp(text, 4)[1]
    np.testing.assert_array_equal(table.logp_at(text, starts, lengths), full[starts, lengths - 1])
    with pytest.raises(ValueError, match="no unigram model"):
        build_word_table(CUP, max_n=4, min_count=1).logp_at(text, starts, lengths)
    with pytest.raises(ValueError, match="join3_logp"):
        WordDecoding(join3_logp=float("nan"))


@pytest.mark.slow
def test_only_the_standards_that_ask_for_it_join_2_plus_1_by_the_model():
    from segmenter import Segmenter

    text = "他们看世界杯比赛"
    for standard in ("msr", "general"):
        assert "世界杯" in Segmenter(standard=standard).lcut(text), standard
    for standard in ("pku", "ud"):
        assert "世界杯" not in Segmenter(standard=standard).lcut(text), standard


@pytest.mark.slow
def test_four_characters_join_by_the_model_unless_a_very_common_word_is_among_them():
    from segmenter import Segmenter

    table = Segmenter().word_table  # the shipped table and its unigram model
    options = WordDecoding(alpha=0.0, gamma=0.0, join2=None, join3=None, join4=None, join_units=None)
    sure = np.full(3, 5.0)  # the heads cut every junction
    for idiom in ("迄今为止", "鲜为人知", "力不从心"):
        assert list(cut_junctions(TextPlan(idiom), sure, table, options)) == [False] * 3, idiom
        assert list(cut_junctions(TextPlan(idiom), sure, table, replace(options, units_logp=None))) == [True] * 3
    # 的 is among the commonest single-character words: 的基础上 is a phrase, it stays in pieces
    assert list(cut_junctions(TextPlan("的基础上"), sure, table, options)) == [True] * 3
    assert list(cut_junctions(TextPlan("的基础上"), sure, table, replace(options, units_common=0.0))) == [False] * 3
    # a table without a model joins nothing by it
    bare = WordTable(table.tables, table.info, None)
    assert list(cut_junctions(TextPlan("迄今为止"), sure, bare, options)) == [True] * 3
    with pytest.raises(ValueError, match="units_logp"):
        WordDecoding(units_logp=float("inf"))
