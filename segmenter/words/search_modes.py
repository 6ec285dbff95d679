"""jieba's search mode and full mode, from the words of several granularity levels.

Both read one text's tokens at more than one level (Segmenter._level_tokens: the heads read
once, assembled at each threshold) and return (word, start, end) tokens (assembly.Token):

  search_tokens     each word of the level asked for, preceded by its sub-words of two characters
                    or more: the finer levels' words inside it and the 2- and 3-grams the word
                    table knows as units (known_parts); shortest first, then left to right
  full_mode_tokens  every candidate word of all levels once, overlapping, by start then end; a
                    single character only where no longer candidate covers it (jieba's full mode)
  nest              (coarse token, the fine tokens inside it): segment_levels' pairs
"""
from __future__ import annotations

import numpy as np

from ..text.runs import HAN_SPAN_RE
from .assembly import Token

# A sub-word the unigram model takes as a word at least this often (expected occurrences in its
# training text): log p > log(8 / words), -14.7 for the embedded table.
MIN_WORDS = 8.0


def nest(coarse: list[Token], fine: list[Token]):
    """(coarse token, the fine tokens inside it) for each coarse token; both sorted by start."""
    k = 0
    for token in coarse:
        while k < len(fine) and fine[k][1] < token[1]:
            k += 1
        parts = []
        while k < len(fine) and fine[k][2] <= token[2]:
            parts.append(fine[k])
            k += 1
        yield token, parts


def search_tokens(text: str, words: list[Token], finer_levels: list[list[Token]], word_table) -> list[Token]:
    """jieba's search mode: each of `words` (the level asked for) after its sub-words of two
    characters or more, from `finer_levels` (the same text's tokens at finer levels) and the
    word table (known_parts), shortest first, then left to right; no token twice."""
    parts = {token for tokens in finer_levels for token in tokens if token[2] - token[1] >= 2}
    parts |= known_parts(text, words, word_table)
    tokens = []
    for word, sub_words in nest(words, sorted(parts, key=lambda t: (t[1], -t[2]))):
        tokens.extend(sorted((t for t in sub_words if t != word), key=lambda t: (t[2] - t[1], t[1])))
        tokens.append(word)
    return tokens


def known_parts(text: str, words: list[Token], word_table) -> set[Token]:
    """As jieba's search mode adds the dictionary's 2- and 3-grams of a longer word: the
    2-grams of Han words of 3+ characters and the 3-grams of words of 4+ that the word table
    knows as units (autonomy >= 0; 科学院 -> 科学) and, where the table has a unigram model,
    that the model uses as a word: at least MIN_WORDS expected occurrences as a word in its
    training text (国务院 -> 国务, not 务院: a string EM never takes as a word has the floor,
    table.UNIGRAM_FLOOR; 头孢曲松 -> 头孢, not 孢曲 or 头孢曲). None without a table."""
    grams = [(at, n) for _, start, end in words if end - start > 2 and HAN_SPAN_RE.fullmatch(text, start, end)
             for n in (2, 3) if end - start > n for at in range(start, end - n + 1)]
    if word_table is None or not grams:
        return set()
    starts, sizes = np.array(grams).T
    keep = word_table.autonomy_at(text, starts, sizes) >= 0
    unigram = word_table.unigram
    if unigram is not None:
        keep &= word_table.logp_at(text, starts, sizes) > np.log(MIN_WORDS / unigram["words"])
    return {Token(text[a : a + n], a, a + n) for (a, n), kept in zip(grams, keep.tolist()) if kept}


def full_mode_tokens(levels: list[list[Token]]) -> list[Token]:
    """Every candidate word of `levels` (one text's tokens at several levels) once, by start
    then end; a single character is left out where a longer candidate covers it, as in jieba's
    full mode. The candidates overlap and cover every character."""
    candidates = sorted({t for tokens in levels for t in tokens}, key=lambda t: (t[1], t[2]))
    length = max((t[2] for t in candidates), default=0)
    covered = np.zeros(length + 1, dtype=np.int64)
    for _, start, end in candidates:
        if end - start > 1:
            covered[start] += 1
            covered[end] -= 1
    inside = np.cumsum(covered) > 0
    return [t for t in candidates if t[2] - t[1] > 1 or not inside[t[1]]]
