"""Counting a raw text's n-grams of Han characters into the columns of a word table (words/table.py):
per length n, the sorted hashes of the strings (hashindex.hash_step), their autonomy (the
normalized variation of branching entropy, words/table.py's docstring) and their counts.

All n-grams of a length are hashed at once from those one shorter (one numpy pass per n); the
entropies of the character after and before each string come from sorting its occurrences with
their neighbours (grouped_entropy), which train/ngrams.py's training-time tables share.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from ..text.runs import code_points, han_mask
from ..words.hashindex import hash_step, lookup
from ..words.table import WordTable
from .corpus import iter_raw_lines


def build_word_table(texts: Iterable[str], max_n: int = 6, min_count: int = 5) -> WordTable:
    """A word table of raw lines: the n-grams (n <= max_n) of Han characters seen `min_count`
    times or more (count_ngrams). Autonomy z-scores are taken over all types, before pruning."""
    tables, chars = count_ngrams(texts, max_n, min_count)
    return WordTable(tables, {"chars": chars, "min_count": min_count, "max_n": max_n})


def count_ngrams(texts: Iterable[str], max_n: int, min_count: int) -> tuple[dict, int]:
    """({n: (sorted uint64 keys, float16 autonomy, uint32 counts)} of the n-grams (n <= max_n)
    seen `min_count` times or more in the lines, the Han characters counted). Autonomy z-scores
    are taken over all types of a length, before pruning."""
    if not isinstance(max_n, int) or max_n < 1:
        raise ValueError(f"max_n must be an int >= 1, got {max_n!r}")
    if not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
    codepoints = code_points("\n".join(texts))
    symbols = np.where(han_mask(codepoints), codepoints, 0)  # 0: any non-Han character
    total = len(symbols)
    tables, previous = {}, None  # previous: (keys, H_r, H_l, per-position hashes) of n - 1
    hashes = np.zeros(total, dtype=np.uint64)
    valid = np.ones(total, dtype=bool)
    chars = int((symbols > 0).sum())
    for n in range(1, max_n + 1):
        length = total - n + 1
        if length <= 0:
            break
        # hashes[p] = hash of symbols[p:p+n]; valid[p] when all of them are Han
        prefix_hashes = hashes[:length]
        hashes = hash_step(prefix_hashes, symbols[n - 1 :])
        valid = valid[:length] & (symbols[n - 1 :] > 0)
        positions = np.flatnonzero(valid)
        if not len(positions):
            break
        after = np.where(positions + n < total, symbols[np.minimum(positions + n, total - 1)], 0)
        before = np.where(positions > 0, symbols[np.maximum(positions - 1, 0)], 0)
        grams = hashes[positions]
        keys, first, counts = np.unique(grams, return_index=True, return_counts=True)
        right = grouped_entropy(keys, counts, grams, after)
        left_sorted = grouped_entropy(keys, counts, grams, before)
        where = positions[first]  # one occurrence of each type
        if n == 1:  # the variation from the empty string: the entropy of any character
            p = counts / counts.sum()
            d_right = right + (p * np.log(p)).sum()
            d_left = left_sorted + (p * np.log(p)).sum()
        else:
            pkeys, pright, pleft, phashes = previous
            d_right = right - lookup(pkeys, pright, phashes[where])  # x minus its last char
            d_left = left_sorted - lookup(pkeys, pleft, phashes[where + 1])  # x minus its first
        autonomy = ((d_right - d_right.mean()) / (d_right.std() + 1e-6)
                    + (d_left - d_left.mean()) / (d_left.std() + 1e-6))
        keep = counts >= min_count
        tables[n] = (keys[keep], autonomy[keep].astype(np.float16),
                     np.minimum(counts[keep], 2**32 - 1).astype(np.uint32))
        previous = (keys, right, left_sorted, hashes)
    return tables, chars


def grouped_entropy(keys: np.ndarray, counts: np.ndarray, grams: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Entropy of the neighbour distribution of each n-gram: H = log T - sum(c log c) / T.

    keys/counts: the sorted distinct grams and their counts; grams/neighbours: one entry per
    occurrence. The (gram, neighbour) pairs are sorted, not coded as gram * base + neighbour:
    that code overflows int64 for 4-grams once the text has more than 6,131 characters.
    Shared with the training-time tables (train/ngrams.py)."""
    order = np.lexsort((neighbours, grams))
    g, nb = grams[order], neighbours[order]
    starts = np.flatnonzero(np.concatenate([[True], (g[1:] != g[:-1]) | (nb[1:] != nb[:-1])]))
    pair_counts = np.diff(np.append(starts, len(g)))
    c_log_c = np.zeros(len(keys))
    np.add.at(c_log_c, np.searchsorted(keys, g[starts]), pair_counts * np.log(pair_counts))
    return np.log(counts) - c_log_c / counts


def sample_raw_lines(paths: list[str | Path], chars: list[int | None]) -> list[str]:
    """The first lines of each raw file up to its character budget (None: the whole file)."""
    if len(chars) != len(paths):
        raise ValueError(f"give one character budget per raw file: {len(paths)} files, {len(chars)} budgets")
    lines = []
    for path, budget in zip(paths, chars):
        used = 0
        for line in iter_raw_lines([path]):
            lines.append(line)
            used += len(line)
            if budget is not None and used >= budget:
                break
    return lines
