"""The batch layout: texts joined into one (`Texts`), what the word decoder (words/decoding.py)
and the rules of standards/ run over, and the helpers they draw on.

A rule (a convention: standards/number_rules.py, word_rules.py) takes (texts, ends, conventions, setting,
word_table) and returns the ends. `ends` is a sorted int64 array of word ends in the joined text, so
one regex pass and one word-table lookup serve a whole batch. The helpers: which code points are
among a character list (is_among: one look-up in the list's character_table) or a sorted array
(among_sorted: one binary search, not np.isin's sorts, which a one-sentence `lcut` would pay a
dozen times), adding and dropping sorted ends (with_ends, without_ends), where words start
(word_starts, starts_word), a rule's first test of a text before numpy (any_of), and the
positions inside groups of consecutive items (ranks_in_groups, run_characters: the decoder's
runs, the model's windows).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate, pairwise

import numpy as np

from .runs import Run, code_points

# Between two texts of a batch: no character list of a rule may hold it (conventions.py checks), so
# no regex, run or word of a rule reaches across it. Two characters: the one mark that takes the
# character after it (a ZWJ ending a text, runs.attached_end) takes the first, never the next text;
# word ends inside a separator or at its end are not any text's (Texts.split drops them).
SEPARATOR = "\n\n"


class Texts:
    """Texts joined by SEPARATOR, with their runs (runs.py, each in its own text's offsets): what
    the conventions run over. A batch's word ends are the sorted ends in the joined `text`: each
    text's own, shifted by its start, and the end of each separator."""

    __slots__ = ("_codes", "lengths", "runs", "starts", "text")

    def __init__(self, texts: list[str], runs: list[list[Run]]):
        self.text = SEPARATOR.join(texts)
        self.runs = runs
        # (n,) each text's length and where it starts in `text`, after those before it and a
        # separator each: summed in Python (a sentence's one or two numbers cost less than numpy's calls)
        self.lengths = np.array([len(text) for text in texts], dtype=np.int64)
        self.starts = np.array([0, *accumulate(len(text) + len(SEPARATOR) for text in texts[:-1])] if texts else [],
                               dtype=np.int64)
        self._codes = None

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def codes(self) -> np.ndarray:
        """Code points of `text` (runs.code_points), computed once."""
        if self._codes is None:
            self._codes = code_points(self.text)
        return self._codes

    def text_at(self, positions) -> np.ndarray:
        """Index of the text that holds each character offset (of a text, not of a separator)."""
        return np.searchsorted(self.starts, positions, side="right") - 1

    def having(self, characters: str, then: str | None = None) -> list[int]:
        """The texts that hold one of `characters` (followed at once by one of `then`), in order."""
        if not characters or not any_of(characters).search(self.text):  # most texts hold no digit: no numpy
            return []
        if len(self.text) < HAVING_IN_PYTHON:  # a sentence: its few hits in Python, not code points in numpy
            text = self.text
            hits = [m.start() for m in any_of(characters).finditer(text)]
            if then is not None:
                hits = [i for i in hits if i + 1 < len(text) and text[i + 1] in then]
            starts = self.starts.tolist()
            return sorted({bisect_right(starts, i) - 1 for i in hits})
        hit = is_among(self.codes, characters)
        if then is not None:
            hit = hit[:-1] & is_among(self.codes[1:], then)
        return np.unique(self.text_at(np.flatnonzero(hit))).tolist()

    def join(self, ends: list[np.ndarray]) -> np.ndarray:
        """Each text's sorted word ends -> the batch's."""
        sizes = np.fromiter(map(len, ends), dtype=np.int64, count=len(ends))
        joined = np.concatenate([np.zeros(0, np.int64), *ends]).astype(np.int64) + np.repeat(self.starts, sizes)
        return np.sort(np.concatenate([joined, self.starts[1:]]))

    def owners(self, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the ends of texts, the text of each): ends inside or at the end of a separator are dropped."""
        owner = np.searchsorted(self.starts, ends, side="left") - 1
        keep = ends - self.starts[owner] <= self.lengths[owner]
        return ends[keep], owner[keep]

    def pieces(self, ends: np.ndarray) -> list[str]:
        """`text` cut at the sorted unique `ends` (0 < end <= len(text)): text[:ends[0]],
        text[ends[0]:ends[1]], ..., text[ends[-1]:], len(ends) + 1 strings. The code points with
        a mark inserted at each end, split at the marks by str.split, not a slice per word: a batch's
        words are tens of thousands. Slices where the text holds every mark."""
        mark = next((m for m in _PIECE_MARKS if m not in self.text), None)
        if mark is None:
            bounds = [0, *ends.tolist(), len(self.text)]
            return [self.text[a:b] for a, b in pairwise(bounds)]
        # (len(text) + len(ends),): the k-th end's mark lands at ends[k] + k, the k marks before it moving it on
        marked = np.full(len(self.text) + len(ends), ord(mark), dtype=np.uint32)
        kept = np.ones(len(marked), dtype=bool)
        kept[ends + np.arange(len(ends))] = False
        marked[kept] = self.codes
        return marked.tobytes().decode("utf-32-le", "surrogatepass").split(mark)

    def split(self, ends: np.ndarray) -> list[np.ndarray]:
        """The batch's word ends -> each text's, in its own offsets (Texts.join undone)."""
        ends, owner = self.owners(ends)
        return np.split(ends - self.starts[owner], np.cumsum(np.bincount(owner, minlength=len(self)))[:-1])


# Texts.having asks a joined text of fewer characters in Python (a regex's matches): a sentence's
# few hits cost less than the code points' look-ups in numpy.
HAVING_IN_PYTHON = 256

# Texts.pieces' marks, tried in order: the first the batch does not hold. No text is likely to hold all three.
_PIECE_MARKS = ("\x00", "\x01", "\uffff")


def is_among(codes: np.ndarray, characters: str) -> np.ndarray:
    """Which code points are among `characters`: one look-up in their table (character_table), not
    among_sorted's binary search per code point (a batch's are tens of thousands)."""
    table = character_table(characters)
    if table is None:  # a character beyond the BMP: no table of a million entries
        return among_sorted(codes, codes_of(characters))
    return table[np.minimum(codes, len(table) - 1)]


def among_sorted(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """np.isin(values, members) for sorted unique `members`: one search, no sort. A rule asks this
    of a sentence's few hundred code points a dozen times a call, where np.isin's sorting of both
    arrays would cost more than the rest of the rule."""
    if not len(members):
        return np.zeros(np.shape(values), dtype=bool)
    return members[np.minimum(np.searchsorted(members, values), len(members) - 1)] == values


# A batch of at most this many words (a short sentence's) goes through a rule in Python
# (split_function_words, split_counts, split_compounds, the candidates of the suffix rows): a few
# Python operations a word, where the numpy path costs up to ~40 numpy calls on a handful of words.
FEW_WORDS = 48

# with_ends and without_ends change at most this many ends (a sentence's) in Python: np.unique and
# np.insert cost several times a set's work on a handful of numbers.
FEW_ENDS = 64


def with_ends(ends: np.ndarray, add) -> np.ndarray:
    """np.union1d(ends, add) for sorted unique `ends`: a search for each of `add`, no sort of all ends."""
    if len(ends) <= FEW_ENDS and len(add) <= FEW_ENDS:  # as below: each new end inserted where the search finds it
        ends = ends.tolist()
        merged = ends[:]
        for end in sorted(set(map(int, add)).difference(ends), reverse=True):
            merged.insert(bisect_left(ends, end), end)
        return np.array(merged, dtype=np.int64)
    add = np.unique(np.asarray(add, dtype=np.int64))
    slot = np.searchsorted(ends, add)
    new = slot == len(ends)
    new[~new] = ends[slot[~new]] != add[~new]
    return np.insert(ends, slot[new], add[new])


def without_ends(ends: np.ndarray, drop) -> np.ndarray:
    """np.setdiff1d(ends, drop) for sorted unique `ends`."""
    if len(ends) <= FEW_ENDS and len(drop) <= FEW_ENDS:  # as below: the first of each end dropped goes
        dropped, kept = set(map(int, drop)), []
        for end in ends.tolist():
            if end in dropped:
                dropped.discard(end)
            else:
                kept.append(end)
        return np.array(kept, dtype=np.int64)
    drop = np.asarray(drop, dtype=np.int64)
    slot = np.searchsorted(ends, drop)
    found = slot < len(ends)
    found[found] = ends[slot[found]] == drop[found]
    return np.delete(ends, slot[found])


def word_starts(ends: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, np.int64), ends[:-1]])


def starts_word(at: np.ndarray, ends: np.ndarray, texts: Texts) -> np.ndarray:
    """Whether each offset of `at` (in texts.text) starts a word: a word ends right before it, or
    a text starts there."""
    return among_sorted(at, ends) | among_sorted(at, texts.starts)  # both sorted and unique


@lru_cache(maxsize=16)
def any_of(characters: str) -> re.Pattern:
    """A pattern that finds any of `characters`: a rule's first test of a text, before numpy."""
    return re.compile(f"[{re.escape(characters)}]")


@lru_cache(maxsize=32)
def codes_of(characters: str) -> np.ndarray:
    """The code points of `characters`, sorted and unique (among_sorted's members)."""
    return np.unique(code_points(characters))


@lru_cache(maxsize=32)
def character_table(characters: str) -> np.ndarray | None:
    """(top + 2,) bool, True at the code points of `characters` (top: the largest), False at
    top + 1, where every larger code point looks (is_among clips them to it); None where a character
    is beyond the BMP. Read only: cached, one per character list a rule reads."""
    members = codes_of(characters)
    top = int(members[-1]) if len(members) else -1
    if top > 0xFFFF:
        return None
    table = np.zeros(top + 2, dtype=bool)
    table[members] = True
    table.setflags(write=False)
    return table


def ranks_in_groups(sizes: np.ndarray) -> np.ndarray:
    """0, 1, ..., sizes[0] - 1, 0, 1, ..., sizes[1] - 1, ...: each item's rank within its group
    of consecutive items (groups of `sizes` items, in order)."""
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def run_characters(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every character of runs of `sizes` characters, in order: its run and its index inside it."""
    run_of = np.repeat(np.arange(len(sizes)), sizes)
    return run_of, ranks_in_groups(sizes)
