"""The IDF table of segmenter.analyse, from raw text alone (no gold, no dictionary).

Each sampled line of the raw files is one document; the default segmenter (or the one given)
cuts it; a word's document frequency df is the number of documents it appears in, and its
IDF log(N / df), N the number of documents, as in jieba's idf.txt. Only what could ever be a
keyword is kept (segmenter.analyse's rule: two characters or more, a letter, digit or Han
character in it; no whitespace inside, so that `word idf` splits back), and only words seen in
min_df documents or more: rarer ones are mostly one-off names and numbers, and a word the
table lacks gets its median IDF, close to theirs anyway.

benchmarks/build_idf.py runs it and records the command that built the shipped table.
"""
from __future__ import annotations

import gzip
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from ..analyse.tfidf import is_keyword
from ..run.files import atomic_path
from .corpus import iter_raw_lines


def sample_lines(path: str | os.PathLike, every: int = 1, offsets: tuple[int, ...] = (0,), limit: int | None = None,
                 min_chars: int = 1) -> Iterator[str]:
    """The stripped non-empty lines of a raw file whose number (counting non-empty lines from 0)
    leaves one of `offsets` when divided by `every`; at most `limit` of them."""
    offsets = frozenset(offsets)
    if every < 1 or not offsets or not all(0 <= k < every for k in offsets):
        raise ValueError(f"need every >= 1 and offsets in 0..every-1, got every={every}, offsets={sorted(offsets)}")
    lines = (line for i, line in enumerate(iter_raw_lines([path], min_chars=min_chars)) if i % every in offsets)
    return islice(lines, limit) if limit is not None else lines


def idf_candidate(word: str) -> bool:
    return is_keyword(word, ()) and not any(c.isspace() for c in word)


def document_frequencies(documents: Iterable[list[str]]) -> tuple[Counter, int]:
    """(df of each candidate word, number of documents)."""
    df: Counter = Counter()
    n = 0
    for words in documents:
        df.update(word for word in set(words) if idf_candidate(word))
        n += 1
    return df, n


def idf_table(df: Counter, n_documents: int, min_df: int = 2) -> dict[str, float]:
    """{word: log(N / df)} of the words seen in min_df documents or more."""
    if n_documents < 1 or min_df < 1:
        raise ValueError(f"need documents and min_df >= 1, got {n_documents} documents, min_df={min_df}")
    return {word: math.log(n_documents / count) for word, count in df.items() if count >= min_df}


def write_idf(path: str | os.PathLike, table: dict[str, float], digits: int = 4) -> Path:
    """jieba's format, `word idf` a line, by increasing IDF then word; gzip-compressed when the
    name ends in .gz (a fixed timestamp: the same table gives the same bytes)."""
    path = Path(path)
    text = "".join(f"{word} {value:.{digits}f}\n" for word, value in sorted(table.items(), key=lambda x: (x[1], x[0])))
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)
    return path


def build_idf(lines: Iterable[str], segmenter=None, min_df: int = 2, workers: int = 1,
              **options) -> tuple[dict[str, float], int, int]:
    """Segment `lines` (one document each) and return (IDF table, documents, characters)."""
    if segmenter is None:
        from .. import default_segmenter

        segmenter = default_segmenter()
    lines = list(lines)
    documents = segmenter.segment_lines(lines, workers=workers, **options)
    df, n = document_frequencies(documents)
    return idf_table(df, n, min_df), n, sum(map(len, lines))
