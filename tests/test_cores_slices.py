"""A large batch on one thread is cut in slices of about cores.SLICE_CHARS characters, one after
another (memory: issue 57), with the words of the whole batch; helper chunks are one a core."""
from __future__ import annotations

import random

import pytest

import segmenter.run.cores as cores
from segmenter.api import Segmenter
from segmenter.run.cores import SLICE_CHARS, text_slices

from conftest import TINY_CHARS, make_tiny_model


def test_text_slices_are_few_and_about_equal():
    assert text_slices([SLICE_CHARS]) == [[0]] and text_slices([]) == [[]]
    assert text_slices([10] * (SLICE_CHARS // 10)) == [list(range(SLICE_CHARS // 10))]  # one slice's worth: whole
    lengths = [50] * (2 * SLICE_CHARS // 50 + 4)  # a little over two slices: three of about equal size
    slices = text_slices(lengths)
    assert len(slices) == 3 and sorted(i for s in slices for i in s) == list(range(len(lengths)))
    sizes = [sum(lengths[i] for i in s) for s in slices]
    assert max(sizes) - min(sizes) <= 2 * 50 and max(sizes) <= SLICE_CHARS
    assert sorted(i for s in text_slices([100] * 2 + [10 * SLICE_CHARS]) for i in s) == [0, 1, 2]  # a huge text: a slice


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Segmenter(make_tiny_model(tmp_path_factory.mktemp("slices") / "m", layers=2), num_threads=1,
                     window=30, overlap=8)


@pytest.mark.slow
def test_one_thread_cuts_a_large_batch_in_slices_with_the_same_words(tiny, monkeypatch):
    rng = random.Random(3)
    texts = ["".join(rng.choice(TINY_CHARS + "，。 a1") for _ in range(rng.choice([0, 3, 20, 80, 200])))
             for _ in range(200)]
    whole = tiny.segment_batch(texts)
    tokens = tiny.tokenize_batch(texts)
    seen = []
    real = cores.text_slices
    monkeypatch.setattr(cores, "SLICE_CHARS", 1_000)
    monkeypatch.setattr(cores, "text_slices", lambda lengths: seen.append(real(lengths)) or seen[-1])
    assert tiny.segment_batch(texts) == whole
    assert tiny.tokenize_batch(texts) == tokens
    assert len(seen) == 2 and len(seen[0]) >= 3  # sliced, each call
    with pytest.raises(ValueError):  # a bad granularity fails as on the whole batch
        tiny.segment_batch(texts, granularity="nonsense")


@pytest.mark.slow
def test_the_shipped_table_is_mapped_and_builds_no_index():
    """The word table's columns are read-only maps of ngrams.npz (helper processes share its pages),
    and a large batch builds no KeyIndex (20 MB a process: table.WordTable._find)."""
    import mmap

    import numpy as np

    segmenter = Segmenter(num_threads=1)
    table = segmenter.word_table
    keys = table.tables[3][0]
    base = keys
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    base = base.obj if isinstance(base, memoryview) else base
    assert isinstance(base, mmap.mmap) and not keys.flags.writeable
    rng = random.Random(5)
    text = "".join(rng.choice("我们中国人民经济发展社会主义建设今天北京政府工作报告，。") for _ in range(3_000))
    segmenter.segment_batch([text] * 4)
    assert table._indexes == {}
