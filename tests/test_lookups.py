"""The word table's searches (words/hashindex.py, words/table.py): a large batch's queries searched
once per distinct string, and Python's hashes the same as numpy's."""
from __future__ import annotations

import numpy as np

from segmenter.text.runs import code_points
from segmenter.words.hashindex import SORTED_QUERIES, find_keys, hash_step, text_hashes


def test_a_large_batch_of_repeated_queries_gets_searchsorteds_slots():
    rng = np.random.default_rng(5)
    for _ in range(50):
        keys = np.unique(rng.integers(0, 1000, rng.integers(1, 300)).astype(np.uint64))
        # many copies of few strings, below the first key and past the last too
        queries = rng.integers(0, 1100, rng.integers(SORTED_QUERIES, 3 * SORTED_QUERIES)).astype(np.uint64)
        slot, found = find_keys(keys, queries)
        plain = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
        assert np.array_equal(slot, plain) and np.array_equal(found, keys[plain] == queries)


def test_python_hashes_are_numpys():
    text = "中华人民共和国\U00020000a\udcff 。"  # an astral character and a lone surrogate too
    hashes = text_hashes(text, 6)
    step = np.zeros(len(text), dtype=np.uint64)
    codepoints = code_points(text)
    for n in range(1, 7):
        step = hash_step(step[: len(text) - n + 1], codepoints[n - 1 :])
        assert hashes[n - 1] == step.tolist()
    assert len(text_hashes("ab", 6)) == 2
