"""User dictionary: words that must come out whole, in jieba's format and with jieba's calls.

An entry is a word (any characters: Han, Latin letters, digits, spaces: `Edu Trust认证`), a
frequency and an optional tag (kept, not used), plus the pieces it must be cut into: one piece
for a word kept whole (add_word), several for a forced split (suggest_freq(("中", "将"), True)).

How entries act on a text (`apply`): the model and the text rules propose word ends; then each
chosen occurrence of an entry removes the ends inside it and adds the ends at its edges and
between its pieces. Nothing else changes: the rest of the text keeps the model's cuts.

Where an entry can occur: both of its edges (and its piece boundaries) must fall where a word
may end: between two Han characters, or at the edge of a text run (a Latin word, a number, a
URL, a punctuation mark, a space; text/runs.py). So a user word may join runs (`Edu Trust认证`,
`easy_install`), but it never cuts a Latin word or a number in two ("GPT" does not match in
"GPT-4").

Overlapping occurrences (the rule docs/jieba.md documents, tested in tests/test_jieba_compat.py):
  1. an occurrence inside a longer one loses (add 中国科学院 and 科学: 中国科学院 stays whole);
  2. of two crossing occurrences, the higher frequency wins;
  3. at equal frequency the model decides: the word whose weaker edge the heads mark as the
     stronger boundary (北京大学 and 大学生 in 北京大学生前来应聘: the heads cut 京|大 and 生|前,
     not 学|生, so 北京 大学生 前来 应聘, as jieba gives); then the longer, then the leftmost.
The heads' strength of an edge is its margin, the combined score minus the level's threshold
(assembly.py passes it in, with word decoding too, whatever the decoder cut). A level shifts
every margin by the same amount, which keeps their order: the choice does not depend on the
granularity, and levels whose cuts nest still nest with a dictionary.
"""
from __future__ import annotations

import os
import threading
from itertools import accumulate
from types import MappingProxyType
from typing import IO, Iterable, Mapping, NamedTuple

import numpy as np

from ..arguments import check_text
from .dictionary_files import parse_lines, read_folder, source_lines, write_folder

DEFAULT_FREQ = 1  # add_word(word) and dictionary lines without a frequency


class Entry(NamedTuple):
    freq: int
    tag: str | None
    pieces: tuple[str, ...]  # "".join(pieces) is the word; one piece: kept whole


class Occurrence(NamedTuple):
    start: int
    end: int
    entry: Entry


def check_word(word, argument: str = "word") -> str:
    stripped = check_text(word, argument).strip()
    if not stripped:
        raise ValueError(f"{argument} must not be empty or blank, got {word!r}")
    if "\n" in stripped or "\r" in stripped:
        raise ValueError(f"{argument} must be on one line, got {word!r}")
    return stripped


def check_pieces(pieces) -> tuple[str, ...]:
    pieces = tuple(check_word(p, "each piece of segment") for p in pieces)
    if len(pieces) < 2:
        raise ValueError(f"a tuple segment needs at least two pieces (a str keeps a word whole), got {pieces!r}")
    return pieces


def check_freq(freq) -> int | None:
    if freq is None:
        return None
    if isinstance(freq, str) and freq.strip().isdigit():  # jieba accepts "3" as well as 3
        return int(freq)
    if not isinstance(freq, int) or isinstance(freq, bool) or freq < 0:
        raise ValueError(f"freq must be a non-negative int or None, got {freq!r}")
    return freq


class Snapshot:
    """The entries of a UserDictionary at one moment, never changed once handed out: what one
    assembly call applies, so that a text (and a whole batch) sees the dictionary as it was
    before a change or after it, never half (UserDictionary.snapshot)."""

    __slots__ = ("_prefixes", "entries")

    def __init__(self, entries: dict[str, Entry]):
        self.entries = entries
        self._prefixes: frozenset[str] | None = None  # every prefix of every word, built on use

    def __len__(self) -> int:
        return len(self.entries)

    def apply(self, text: str, ends: np.ndarray, boundary: np.ndarray) -> np.ndarray:
        """Word ends of `text` with the dictionary's words whole.

        ends: sorted word end offsets proposed by rules and heads. boundary: (len(text) + 1,)
        strength of a cut at each offset (assembly.boundary_scores): +inf where one is certain
        (run edges), the heads' margin between two Han characters, NaN where no cut may be
        (inside a run).
        """
        chosen = self._choose(self._occurrences(text, boundary), boundary)
        if not chosen:
            return ends
        inside, edges = [], []
        for start, end, entry in chosen:
            edges.extend(accumulate((len(p) for p in entry.pieces), initial=start))
            inside.extend(range(start + 1, end))
        # Offset 0 is where the text starts, not where a word ends.
        return np.union1d(np.setdiff1d(ends, inside), [e for e in edges if e > 0])

    def _occurrences(self, text: str, boundary: np.ndarray) -> list[Occurrence]:
        prefixes = self._prefixes
        if prefixes is None:  # two threads may both build it: the same set, either one kept
            prefixes = self._prefixes = frozenset(w[:k] for w in self.entries for k in range(1, len(w) + 1))
        allowed = ~np.isnan(boundary)
        found = []
        for start in np.flatnonzero(allowed[:-1]).tolist():
            end = start + 1
            while end <= len(text) and text[start:end] in prefixes:
                entry = self.entries.get(text[start:end]) if allowed[end] else None
                if entry is not None and _pieces_allowed(entry, start, allowed):
                    found.append(Occurrence(start, end, entry))
                end += 1
        return found

    @staticmethod
    def _choose(found: list[Occurrence], boundary: np.ndarray) -> list[Occurrence]:
        """The overlap rule of the module docstring: drop nested occurrences, then settle
        crossing ones by frequency, the heads' edge strength, length, position."""
        outer, reach = [], -1
        for occurrence in sorted(found, key=lambda o: (o.start, -o.end)):
            if occurrence.end > reach:  # not inside an earlier (hence longer or equal-start) one
                outer.append(occurrence)
                reach = occurrence.end
        if len(outer) < 2:
            return outer

        def rank(o: Occurrence):
            strength = min(boundary[o.start], boundary[o.end])
            return (-o.entry.freq, -strength, o.start - o.end, o.start)

        taken = np.zeros(int(boundary.shape[0]), dtype=bool)
        chosen = []
        for occurrence in sorted(outer, key=rank):
            if not taken[occurrence.start : occurrence.end].any():
                taken[occurrence.start : occurrence.end] = True
                chosen.append(occurrence)
        return sorted(chosen)


class UserDictionary:
    """The user words, safe to change while other threads segment with them.

    The entries live in a Snapshot. A reader (assembly, `entries`, `words`) takes the current
    one and marks it handed out; a writer (under a lock) changes the current snapshot in place
    while nobody holds it, else builds a new one from a copy and swaps it in with a single
    assignment. So a loop of add calls copies nothing, and a reader never sees half a change.
    """

    def __init__(self, words: Iterable[str] = ()):
        self._lock = threading.Lock()
        self._current = Snapshot({})
        self._handed_out = False  # has a reader got self._current? then writers copy it first
        for word in words:
            self.add(word)

    def __getstate__(self):  # the lock does not pickle (workers.WorkerSpec sends the dictionary to workers)
        return {"entries": dict(self.snapshot().entries)}

    def __setstate__(self, state) -> None:
        self.__init__()
        self._current = Snapshot(dict(state["entries"]))

    @classmethod
    def of_snapshot(cls, snapshot: Snapshot) -> "UserDictionary":
        """A dictionary holding a snapshot's entries (a copy: later changes to either stay apart)."""
        dictionary = cls()
        dictionary._current = Snapshot(dict(snapshot.entries))
        return dictionary

    def snapshot(self) -> Snapshot:
        """The entries as they are now; later changes never alter the returned Snapshot."""
        with self._lock:
            self._handed_out = True
            return self._current

    def _writable(self) -> dict[str, Entry]:
        """The entries dict to change, the lock held: the current one if no reader has it, else
        a copy in a new current Snapshot (assigned at once: readers see the old or the new)."""
        if self._handed_out:
            self._current, self._handed_out = Snapshot(dict(self._current.entries)), False
        self._current._prefixes = None
        return self._current.entries

    # -- editing ------------------------------------------------------------------------------
    def add(self, word: str, freq: int | None = None, tag: str | None = None) -> None:
        """Keep `word` whole. freq=0 removes it, as in jieba (del_word is add_word(word, 0) there)."""
        entry = _entry(word, freq, tag)
        with self._lock:
            self._set(entry.pieces[0], entry)

    def split(self, pieces) -> None:
        """Always cut "".join(pieces) into these pieces (suggest_freq with a tuple)."""
        pieces = check_pieces(pieces)
        with self._lock:
            self._split(pieces)

    def _split(self, pieces: tuple[str, ...]) -> None:
        word = "".join(pieces)
        old = self._current.entries.get(word)
        self._set(word, Entry(DEFAULT_FREQ if old is None else max(old.freq, DEFAULT_FREQ), None, pieces))

    def remove(self, word: str) -> None:
        word = check_word(word)
        with self._lock:
            self._remove(word)

    def _remove(self, word: str) -> None:
        if word in self._current.entries:
            del self._writable()[word]

    def _set(self, word: str, entry: Entry) -> None:  # the lock held
        if entry.freq == 0:
            self._remove(word)
        else:
            self._writable()[word] = entry

    def frequency(self, word: str) -> int | None:
        entry = self._current.entries.get(word)  # one dict lookup: atomic under the GIL
        return None if entry is None else entry.freq

    def suggest(self, segment, tune: bool = False) -> int:
        """jieba's suggest_freq: a str -> the frequency that keeps it whole against every user
        word it could cross (1 + theirs); a tuple -> 0, the frequency of the joined word, which
        is then always cut into the pieces. tune=True applies it, in the same step (add for a
        str, split for a tuple)."""
        if isinstance(segment, (tuple, list)):
            pieces = check_pieces(segment)
            if tune:
                with self._lock:
                    self._split(pieces)
            return 0
        word = check_word(segment, "segment")
        with self._lock:
            entries = self._current.entries
            rivals = [e.freq for w, e in entries.items() if w != word and not set(w).isdisjoint(word)]
            own = entries[word].freq if word in entries else 0
            freq = max(own, DEFAULT_FREQ, 1 + max(rivals, default=0))
            if tune:
                self._set(word, Entry(freq, None, (word,)))
        return freq

    # -- files ----------------------------------------------------------------------------------
    def load(self, source: str | os.PathLike | IO) -> int:
        """A jieba dictionary (path, or file open in text or binary mode): `word [freq] [tag]` a
        line. The whole file is read and checked first: a bad line leaves the dictionary as it
        was, and the error names the file and the line. The new entries are built aside and
        swapped in at once: a text segmented meanwhile sees all of the file or none of it.
        Returns the number of entries read."""
        parsed = parse_lines(*source_lines(source))
        changes = [_entry(word, freq, tag) for word, freq, tag in parsed]
        with self._lock:
            entries = dict(self._current.entries)
            for entry in changes:
                if entry.freq == 0:
                    entries.pop(entry.pieces[0], None)
                else:
                    entries[entry.pieces[0]] = entry
            self._current, self._handed_out = Snapshot(entries), False
        return len(parsed)

    # -- records and model folders ----------------------------------------------------------------
    def records(self) -> list[list]:
        """[word, freq, tag, pieces] of every entry (JSON-ready), what restore() reads back."""
        return [[word, entry.freq, entry.tag, list(entry.pieces)] for word, entry in self.snapshot().entries.items()]

    def restore(self, records: Iterable) -> None:
        """Add the entries of records(): the word, then its forced split where it has pieces
        (split keeps the frequency, at least 1, and drops the tag, as suggest_freq(tuple, True))."""
        for word, freq, tag, pieces in records:
            self.add(word, freq, tag)
            if len(pieces) > 1:
                self.split(tuple(pieces))

    def save_folder(self, folder: str | os.PathLike) -> None:
        """The entries into a model folder (dictionary_files.write_folder: whole words in jieba's
        format, forced splits beside them); without entries, no file (an old one is removed)."""
        write_folder(folder, self.records())

    def load_folder(self, folder: str | os.PathLike) -> None:
        """What save_folder wrote into a model folder, if anything."""
        words, splits = read_folder(folder)
        if words is not None:
            self.load(words)
        self.restore(splits)

    def __len__(self) -> int:
        return len(self._current.entries)

    def __contains__(self, word) -> bool:
        return word in self._current.entries

    @property
    def entries(self) -> Mapping[str, Entry]:
        """word -> Entry, read-only, as it is now (later changes do not show in it)."""
        return MappingProxyType(self.snapshot().entries)

    @property
    def words(self) -> set[str]:
        return set(self.snapshot().entries)

    # -- applying -------------------------------------------------------------------------------
    def apply(self, text: str, ends: np.ndarray, boundary: np.ndarray) -> np.ndarray:
        """Snapshot.apply with the entries as they are now (assembly takes one snapshot per call)."""
        return self.snapshot().apply(text, ends, boundary)

    def _occurrences(self, text: str, boundary: np.ndarray) -> list[Occurrence]:
        return self.snapshot()._occurrences(text, boundary)

    _choose = staticmethod(Snapshot._choose)


def _entry(word, freq, tag) -> Entry:
    """The checked entry of add_word(word, freq, tag); its one piece is the checked word."""
    word, freq = check_word(word), check_freq(freq)
    if tag is not None and not isinstance(tag, str):
        raise TypeError(f"tag must be a str or None, got {type(tag).__name__}")
    return Entry(DEFAULT_FREQ if freq is None else freq, tag, (word,))


def _pieces_allowed(entry: Entry, start: int, allowed: np.ndarray) -> bool:
    if len(entry.pieces) == 1:
        return True
    return all(allowed[cut] for cut in accumulate((len(p) for p in entry.pieces[:-1]), initial=start))
