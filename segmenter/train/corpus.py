"""Reading corpora: gold segmentations (words split by spaces) and raw text (one line a text)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from ..run.lines import decode_line


def read_gold(path: str | Path, limit: int | None = None) -> list[list[str]]:
    """Gold file -> list of sentences, each a list of words split by any whitespace (SIGHAN's
    two spaces, U+3000 too; blank lines skipped). A byte-order mark is not a word's character.
    Bytes that are not UTF-8 raise ValueError naming the file and line."""
    sentences = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            line = decode_line(raw, number, str(path))  # UndecodableLine, a ValueError, as the CLI's reader says it
            words = (line.removeprefix("\ufeff") if number == 1 else line).split()
            if words:
                sentences.append(words)
                if limit is not None and len(sentences) >= limit:
                    break
    return sentences


def boundary_labels(words: list[str]) -> tuple[str, np.ndarray]:
    """Words -> (text, cut) where cut[i] is True when a word ends after text[i]."""
    text = "".join(words)
    cut = np.zeros(len(text), dtype=bool)
    cut[np.cumsum([len(w) for w in words]) - 1] = True
    return text, cut


def iter_raw_lines(paths: list[str | Path], min_chars: int = 1) -> Iterator[str]:
    """Stripped, non-empty lines of raw UTF-8 files (undecodable bytes replaced; a leading
    byte-order mark dropped)."""
    for path in paths:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            for line in handle:
                line = line.strip()
                if len(line) >= min_chars:
                    yield line
