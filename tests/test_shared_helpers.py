"""One piece of code for each idea: the word table's margin and share, the engines' head order and slices."""
from __future__ import annotations

import numpy as np

from segmenter.model.readout import SLICE_TOKENS, batch_slices, heads_by_layer, profile_order
from segmenter.train.unigram import fit_unigram
from segmenter.train.ngram_counting import build_word_table

RAW = ["社会主义好", "人民的社会主义", "社会主义国家", "社会发展", "人民好", "社会主义和人民", "人民的国家",
       "社会好"] * 5


def test_logp_margin_is_the_whole_against_its_pieces():
    table = build_word_table(RAW, max_n=4, min_count=2)
    table = table.with_unigram(fit_unigram(table, RAW, 4))
    text = "人民的社会主义国家"
    starts, pieces = [3, 3, 0, 7], [(2, 2), (1, 1, 1, 1), (2, 1), (1, 1)]
    margin = table.logp_margin_at(text, starts, pieces)
    for got, start, parts in zip(margin, starts, pieces):
        expected = table.logp_at(text, [start], [sum(parts)])[0]
        for offset, length in zip(np.cumsum((0,) + parts[:-1]), parts):
            expected -= table.logp_at(text, [start + offset], [length])[0]
        assert got == expected
    assert margin[0] > 0  # 社会主义 is likelier as one word than as 社会|主义
    assert len(table.logp_margin_at(text, [], [])) == 0


def test_shares_divide_the_whole_count_by_the_part_count():
    table = build_word_table(RAW, max_n=4, min_count=1)
    text = "社会主义好社会"
    count, share, most = table.shares_at(text, [0], 4, [(0, 2)], [(0, 2), (2, 2)])
    whole = table.counts_at(text, [0], [4])[0]
    assert count[0] == whole == 20
    assert share[0] == whole / table.counts_at(text, [0], [2])[0]  # 社会 occurs without 主义 too
    assert most[0] == share[0]  # 社会 is more frequent than 主义
    assert table.shares_at(text, [2], 2, [(0, 1)])[1][0] == 1.0  # 主 occurs only in 主义
    _, unknown = table.shares_at("国主", [0], 2, [(0, 1)])  # 国主 never occurs, 国 does
    assert unknown[0] == 0.0
    # a caller that has the whole counts already (the decoder's joins look them up first) passes them
    given = table.shares_at(text, [0, 2], 4, [(0, 2)], [(0, 2), (2, 2)], whole=table.counts_at(text, [0, 2], [4, 4]))
    for got, expected in zip(given, table.shares_at(text, [0, 2], 4, [(0, 2)], [(0, 2), (2, 2)])):
        np.testing.assert_array_equal(got, expected)


def test_heads_by_layer_and_back_to_profile_order():
    heads = [(2, 1), (0, 3), (2, 0), (1, 5)]
    assert heads_by_layer(heads) == {0: [3], 1: [5], 2: [0, 1]}
    computed = [(0, 3), (1, 5), (2, 0), (2, 1)]  # layer by layer
    assert [computed[k] for k in profile_order(heads)] == heads


def test_batch_slices_bound_the_tokens_and_split_for_threads():
    assert batch_slices(10, 128) == [slice(0, 10)]
    assert [s.stop - s.start for s in batch_slices(64, 128)] == [SLICE_TOKENS // 128] * 4
    assert len(batch_slices(10, 128, parts=4)) == 4
    assert batch_slices(3, 4 * SLICE_TOKENS) == [slice(0, 1), slice(1, 2), slice(2, 3)]  # one row at least
