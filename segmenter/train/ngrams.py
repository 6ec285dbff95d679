"""Branching entropy of character n-grams: the corpus-statistics view of word boundaries.

Counted on raw text only. For an n-gram x, the right branching entropy H_r(x) is the entropy
of the character that follows x (end of a Han run counts as one more symbol), H_l(x) that of
the character before it. Inside a word the next character is predictable (low H_r); after a
complete word almost anything can follow (high H_r) — Harris's old observation, measured
here on up to 60 M characters. At a junction between text[p] and text[p+1] the evidence is
H_r of the n-grams ending at p and H_l of the n-grams starting at p+1, n = 1..max_n, each
z-scored over the n-gram types of its length.

This view is independent of the attention heads, which is what makes it useful: where both
agree with confidence, the pseudo-labels that self-training learns from are rarely wrong.
The tables are a training-time tool (a few hundred MB for 60 M characters); the shipped model
never needs them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from ..text.runs import code_points, han_mask
from .ngram_counting import grouped_entropy


class BranchingEntropy:
    """Tables per n: sorted n-gram codes, counts, H_r and H_l (float32), and their type means/stds."""

    FEATURES_PER_N = 6  # z(H_r), missing, z(H_l), missing, log count left, log count right

    def __init__(self, chars: np.ndarray, tables: dict[int, tuple[np.ndarray, ...]]):
        self.chars = chars  # sorted code points of the Han characters seen; id = index + 1
        self.base = len(chars) + 1  # id 0 = separator (anything that is not Han)
        self.tables = tables
        self.max_n = max(tables)
        if self.base ** self.max_n >= 2**63:
            raise ValueError(f"{self.base} characters cannot be coded in int64 for n = {self.max_n}")
        self.moments = {n: (t[2].mean(), t[2].std() + 1e-6, t[3].mean(), t[3].std() + 1e-6) for n, t in tables.items()}
        self._vbe = None  # variation moments, computed on first use of autonomy()

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_texts(cls, texts: Iterable[str], max_n: int = 4) -> "BranchingEntropy":
        """Count n-grams (n <= max_n) of Han characters; lines are separated, never joined."""
        codepoints = code_points("\n".join(texts))
        han = han_mask(codepoints)
        chars, ids = np.unique(np.where(han, codepoints, 0), return_inverse=True)
        if chars[0] != 0:  # no separator at all: make id 0 mean "separator" anyway
            chars, ids = np.concatenate([[0], chars]), ids + 1
        chars = chars[1:]
        ids = ids.astype(np.int64)
        base = len(chars) + 1
        tables = {}
        for n in range(1, max_n + 1):
            codes, valid = cls._ngram_codes(ids, n, base)
            after = np.concatenate([ids[n:], [0]])[: len(codes)]
            before = np.concatenate([[0], ids[:-1]])[: len(codes)]
            grams = codes[valid]
            keys, counts = np.unique(grams, return_counts=True)
            right = grouped_entropy(keys, counts, grams, after[valid])
            left = grouped_entropy(keys, counts, grams, before[valid])
            tables[n] = (keys, counts.astype(np.int64), right.astype(np.float32), left.astype(np.float32))
        return cls(chars, tables)

    @staticmethod
    def _ngram_codes(ids: np.ndarray, n: int, base: int) -> tuple[np.ndarray, np.ndarray]:
        """codes[p] = base-`base` number of ids[p:p+n]; valid[p] when none of them is a separator."""
        length = len(ids) - n + 1
        codes = np.zeros(max(length, 0), dtype=np.int64)
        valid = np.ones(max(length, 0), dtype=bool)
        for k in range(n):
            part = ids[k : k + length]
            codes = codes * base + part
            valid &= part > 0
        return codes, valid

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        arrays = {"chars": self.chars}
        for n, (keys, counts, right, left) in self.tables.items():
            arrays.update({f"keys{n}": keys, f"counts{n}": counts, f"right{n}": right, f"left{n}": left})
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> "BranchingEntropy":
        data = np.load(path)
        ns = sorted(int(k[4:]) for k in data.files if k.startswith("keys"))
        tables = {n: (data[f"keys{n}"], data[f"counts{n}"], data[f"right{n}"], data[f"left{n}"]) for n in ns}
        return cls(data["chars"], tables)

    # -- features ---------------------------------------------------------------------------
    def _ids(self, text: str) -> np.ndarray:
        codepoints = code_points(text)
        index = np.searchsorted(self.chars, codepoints)
        index = np.clip(index, 0, max(len(self.chars) - 1, 0))
        known = (self.chars[index] == codepoints) if len(self.chars) else np.zeros(len(codepoints), bool)
        return np.where(known & han_mask(codepoints), index + 1, 0)

    def _lookup(self, n: int, ids: np.ndarray, starts: np.ndarray, side: int):
        """Entropy (H_r for side 0, H_l for side 1) and count of the n-grams at `starts`."""
        keys, counts, right, left = self.tables[n]
        inside = (starts >= 0) & (starts + n <= len(ids))
        codes = np.zeros(len(starts), dtype=np.int64)
        valid = inside.copy()
        for k in range(n):
            part = ids[np.clip(starts + k, 0, len(ids) - 1)]
            valid &= part > 0
            codes = codes * self.base + part
        slot = np.clip(np.searchsorted(keys, codes), 0, len(keys) - 1)
        found = valid & (keys[slot] == codes)
        entropy = (right if side == 0 else left)[slot]
        return found, np.where(found, entropy, 0.0), np.where(found, counts[slot], 0)

    def junction_features(self, text: str, cut_after: np.ndarray) -> np.ndarray:
        """Features (J, 6 * max_n) of the junctions after text positions `cut_after`."""
        ids = self._ids(text)
        columns = []
        for n in range(1, self.max_n + 1):
            mean_r, std_r, mean_l, std_l = self.moments[n]
            found_r, h_r, c_r = self._lookup(n, ids, cut_after - n + 1, 0)
            found_l, h_l, c_l = self._lookup(n, ids, cut_after + 1, 1)
            columns += [
                np.where(found_r, (h_r - mean_r) / std_r, 0.0),
                ~found_r,
                np.where(found_l, (h_l - mean_l) / std_l, 0.0),
                ~found_l,
                np.log1p(c_r),
                np.log1p(c_l),
            ]
        return (np.stack(columns, axis=1).astype(np.float32) if len(cut_after)
                else np.zeros((0, 6 * self.max_n), np.float32))

    # -- word autonomy (nVBE) -------------------------------------------------------------------
    def _variation_moments(self) -> dict[int, tuple[float, float, float, float]]:
        """Mean and std over the n-gram types of each length of the variations of branching
        entropy: dH_r(x) = H_r(x) - H_r(x minus its last char), dH_l likewise on the left."""
        if self._vbe is None:
            keys1, counts1, _, _ = self.tables[1]
            p = counts1 / counts1.sum()
            self._h0 = float(-(p * np.log(p)).sum())  # the "empty string" entropy: any character
            self._vbe = {}
            for n, (keys, _, right, left) in self.tables.items():
                d_right, d_left = self._variations(n, right, left, keys // self.base, keys % self.base ** (n - 1))
                self._vbe[n] = (d_right.mean(), d_right.std() + 1e-6, d_left.mean(), d_left.std() + 1e-6)
        return self._vbe

    def _variations(self, n: int, right: np.ndarray, left: np.ndarray, prefix: np.ndarray, suffix: np.ndarray):
        """(dH_r, dH_l) of n-grams with entropies right/left, whose (n-1)-gram codes without the
        last / first character are prefix / suffix (unused for n = 1: the empty string's)."""
        if n == 1:
            return right - self._h0, left - self._h0
        return right - self._table_entropy(n - 1, prefix, 0), left - self._table_entropy(n - 1, suffix, 1)

    def _table_entropy(self, n: int, codes: np.ndarray, side: int) -> np.ndarray:
        keys, _, right, left = self.tables[n]
        slot = np.clip(np.searchsorted(keys, codes), 0, len(keys) - 1)
        return np.where(keys[slot] == codes, (right if side == 0 else left)[slot], np.nan)

    def autonomy(self, text: str) -> np.ndarray:
        """(len(text), max_n): the normalized VBE autonomy of the word text[i:i+L] at [i, L-1]
        (Magistry & Sagot 2012): z(dH_r) + z(dH_l); NaN where that n-gram was never seen."""
        moments = self._variation_moments()
        ids = self._ids(text)
        out = np.full((len(text), self.max_n), np.nan)
        for n in range(1, self.max_n + 1):
            if len(ids) < n:
                break
            codes, valid = self._ngram_codes(ids, n, self.base)
            right = self._table_entropy(n, codes, 0)
            left = self._table_entropy(n, codes, 1)
            prefix = suffix = None
            if n > 1:
                prefix, _ = self._ngram_codes(ids[:-1], n - 1, self.base)  # x minus its last char
                suffix, _ = self._ngram_codes(ids[1:], n - 1, self.base)  # x minus its first char
            d_right, d_left = self._variations(n, right, left, prefix, suffix)
            m_r, s_r, m_l, s_l = moments[n]
            value = (d_right - m_r) / s_r + (d_left - m_l) / s_l
            out[: len(codes), n - 1] = np.where(valid, value, np.nan)
        return out

    @classmethod
    def entropy_sum(cls, features: np.ndarray) -> np.ndarray:
        """The unsupervised junction score: the sum of the z-scored entropies (missing -> 0)."""
        step = cls.FEATURES_PER_N
        return features[:, 0::step].sum(axis=1) + features[:, 2::step].sum(axis=1)
