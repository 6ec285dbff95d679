"""The word table's rare strings (train/rare_strings.py): words seen fewer than min_count times."""
from __future__ import annotations

import numpy as np
import pytest

from segmenter.train.rare_strings import with_rare_strings
from segmenter.train.unigram import fit_unigram
from segmenter.train.ngram_counting import build_word_table
from segmenter.words.table import WordTable

CONTEXTS = ["他说", "我们", "今天", "人民", "老师", "大家"]
# Frequent words (12+ times), then strings seen 6 times each: an idiom in six contexts, a name
# that is always a piece of 江苏苏宁易购 (a fragment), and a known word + a common character (a phrase).
RAW = (["人民的社会主义好", "社会主义国家", "人民好", "社会发展", "国家的人民", "我们的老师", "大家都好", "今天很好"] * 12
       + [f"{c}画蛇添足{d}" for c, d in zip(CONTEXTS, CONTEXTS[::-1])]
       + [f"{c}江苏苏宁易购{d}" for c, d in zip(CONTEXTS, CONTEXTS[1:] + CONTEXTS[:1])]
       + [f"{c}老师的" for c in CONTEXTS])


@pytest.fixture(scope="module")
def tables():
    counted = build_word_table(RAW, max_n=6, min_count=5)
    table = counted.pruned(10)
    return counted, table.with_unigram(fit_unigram(table, RAW, 4))


def has(table, word):
    n = len(word)
    return not np.isnan(table.autonomy(word, n)[0, n - 1])


def test_a_rare_word_is_added_and_the_frequent_rows_stay_as_they_were(tables):
    counted, table = tables
    full = with_rare_strings(table, counted, "\n".join(RAW), rare_count=5, min_autonomy=2.0)
    assert not has(table, "画蛇添足") and has(full, "画蛇添足")
    autonomy, logp = full.autonomy_and_logp("画蛇添足", 4)
    assert autonomy[0, 3] == counted.autonomy("画蛇添足", 4)[0, 3] >= 2.0  # the autonomy of the same count
    assert logp[0, 3] > full.unigram["unseen"]  # a probability from its count
    for n, (keys, autonomy, _) in table.tables.items():  # every frequent row, unchanged
        at = np.searchsorted(full.tables[n][0], keys)
        assert (full.tables[n][0][at] == keys).all() and (full.tables[n][1][at] == autonomy).all()
        assert (full.unigram["logp"][n][at] == table.unigram["logp"][n]).all()
    assert full.info == table.info  # the same text, counted once


def test_fragments_phrases_long_strings_and_weak_ones_stay_out(tables):
    counted, table = tables
    text = "\n".join(RAW)
    full = with_rare_strings(table, counted, text, rare_count=5, min_autonomy=-100.0)
    assert counted.counts("江苏苏宁易", 5)[0, 4] == 6 and not has(full, "江苏苏宁易")  # always before 购
    assert not has(full, "画蛇") and not has(full, "苏宁易购")  # pieces of a longer string
    assert counted.counts("老师的", 3)[0, 2] == 6 and not has(full, "老师的")  # a known word + 的
    assert not has(full, "江苏苏宁易购")  # six characters: longer than the decoder's words
    strong = counted.autonomy("画蛇添足", 4)[0, 3]
    assert not has(with_rare_strings(table, counted, text, rare_count=5, min_autonomy=float(strong) + 0.01), "画蛇添足")
    assert not has(with_rare_strings(table, counted, text, rare_count=7, min_autonomy=-100.0), "画蛇添足")
    with pytest.raises(ValueError, match="rare_count"):
        with_rare_strings(table, counted, text, rare_count=0)


def test_a_rare_four_character_unit_joins_where_its_pairs_occur_nowhere_else(tables):
    from dataclasses import replace

    from segmenter.words.decoding import WordDecoding, cut_junctions
    from segmenter.text.plan import TextPlan

    counted, table = tables
    full = with_rare_strings(table, counted, "\n".join(RAW), rare_count=5, min_autonomy=2.0)
    assert not any(has(full, pair) for pair in ("画蛇", "蛇添", "添足"))  # seen 6 times, only inside 画蛇添足
    options = WordDecoding(alpha=0.0, gamma=0.0, join2=None, join2_logp=None, join3=None, join4=None,
                           units_logp=None, join_units=0.3, units_from=2.0)
    sure = np.full(3, 5.0)  # the heads cut every junction
    # a lacked pair counts as seen min_count - 1 = 9 times: 画蛇添足 (6) is 6/9 of each pair's occurrences
    assert list(cut_junctions(TextPlan("画蛇添足"), sure, full, options)) == [False, False, False]
    # seen 6 times: below a units_min_count of 7 it is not judged
    assert list(cut_junctions(TextPlan("画蛇添足"), sure, full, replace(options, units_min_count=7))) == [True] * 3
    assert list(cut_junctions(TextPlan("画蛇添足"), sure, full, replace(options, join_units=0.7))) == [True] * 3


def test_the_ngrams_command_adds_rare_words_unless_told_not_to(tmp_path, capsys):
    from segmenter.cli import main

    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join(RAW) + "\n", encoding="utf-8")
    plain, rare = tmp_path / "plain.npz", tmp_path / "rare.npz"
    assert main(["ngrams", "--raw", str(raw), "--out", str(plain), "--rare-count", "0", "--unigram-rounds", "2"]) == 0
    assert main(["ngrams", "--raw", str(raw), "--out", str(rare), "--rare-autonomy", "1", "--unigram-rounds", "2"]) == 0
    assert "rare words seen >= 5" in capsys.readouterr().out
    assert not has(WordTable.load(plain), "画蛇添足") and has(WordTable.load(rare), "画蛇添足")
    assert main(["ngrams", "--raw", str(raw), "--out", str(plain), "--rare-count", "-1"]) != 0
    assert "--rare-count" in capsys.readouterr().err


def test_the_shipped_table_holds_the_raw_texts_rare_words():
    from segmenter import Segmenter

    seg = Segmenter(num_threads=1)
    table = seg.word_table
    assert table.info["min_count"] == 10 and table.counts("画蛇添足", 4)[0, 3] == 8  # seen 8 times: a rare word
    assert seg.lcut("画蛇添足是一个成语")[0] == "画蛇添足"  # 画蛇|添|足 without it
    # seen 6 times, its pairs nowhere else: the heads cut it, the four-character unit join undoes that
    assert table.counts("塞翁失马", 4)[0, 3] == 6 and seg.lcut("塞翁失马，焉知非福")[0] == "塞翁失马"
