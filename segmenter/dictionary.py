"""User dictionary: words that must come out whole, never split and never merged.

Like jieba's `add_word` / `load_userdict`, but applied as constraints on the boundaries the
heads propose: wherever a user word occurs in a Han run (longest match first, left to right),
the junctions inside it are never cut and the junctions at its two ends always are.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Iterable

import numpy as np

from .text import is_han


class UserDictionary:
    def __init__(self, words: Iterable[str] = ()):
        self.words: set[str] = set()
        self.max_length = 0
        for word in words:
            self.add(word)

    def add(self, word: str) -> None:
        if not isinstance(word, str):
            raise TypeError(f"word must be a str, got {type(word).__name__}")
        word = word.strip()
        if len(word) < 1 or not all(is_han(ch) for ch in word):
            raise ValueError(f"user words must be Han characters only (other runs are kept whole anyway), got {word!r}")
        self.words.add(word)
        self.max_length = max(self.max_length, len(word))

    def remove(self, word: str) -> None:
        self.words.discard(word)
        self.max_length = max(map(len, self.words), default=0)

    def load(self, source: str | os.PathLike | IO[str]) -> int:
        """jieba's format: one word a line, optionally followed by frequency and tag (ignored)."""
        if hasattr(source, "read"):
            lines = source.read().splitlines()
        else:
            path = Path(source)
            if not path.is_file():
                raise FileNotFoundError(f"user dictionary {path} does not exist")
            lines = path.read_text(encoding="utf-8").splitlines()
        added = 0
        for number, line in enumerate(lines, start=1):
            fields = line.split()
            if not fields:
                continue
            try:
                self.add(fields[0])
            except ValueError as err:
                raise ValueError(f"user dictionary line {number}: {err}") from None
            added += 1
        return added

    def __len__(self) -> int:
        return len(self.words)

    def constraints(self, text: str, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """For the Han run text[start:end]: (keep, cut) text offsets p meaning "never cut after
        p" and "always cut after p"."""
        keep, cut = [], []
        position = start
        while position < end:
            longest = min(self.max_length, end - position)
            for length in range(longest, 1, -1) if longest > 1 else ():
                if text[position : position + length] in self.words:
                    keep.extend(range(position, position + length - 1))
                    if position > start:
                        cut.append(position - 1)
                    cut.append(position + length - 1)
                    position += length
                    break
            else:
                if text[position] in self.words:
                    if position > start:
                        cut.append(position - 1)
                    cut.append(position)
                position += 1
        return np.asarray(keep, dtype=np.int64), np.asarray(cut, dtype=np.int64)
