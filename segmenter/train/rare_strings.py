"""The word table's rare strings: words its raw text holds fewer than `min_count` times.

`segmenter ngrams --min-count 10` keeps the n-grams seen ten times or more, so an idiom, a name
or a term that 51.5 M characters hold five to nine times had no row: 画蛇添足 (8 times), 塞翁失马
(6), 京都大学 (6), a novel's 韩立 (5). The decoder then had no autonomy and no probability for it
as a word, and took the heads' cuts inside it (画蛇|添|足). A row gives it a word to weigh against
the heads, not a verdict: the heads still win at 京|都|大学 (塞翁失马 joins as a four-character
unit: decoding.py's units_min_count).

This step adds them, with the evidence a rare string needs: seen `rare_count` times or more, an
autonomy (the z-scored branching-entropy variation of ngram_counting.build_word_table, over all
types of its length) of `min_autonomy` or more, at most the decoder's longest word, and not a
phrase or a fragment, by the same tests `segmenter adapt` applies to a user's new strings
(train/adapt.py: 药疹+的, 江苏苏宁易 of 江苏苏宁易购). Characters seen `rare_count` times come in
as they are. The unigram model keeps its fit; an added string gets the probability of its count
(WordTable.combined_with). The cohesive pairs of the decoder still join only strings seen
`join_min_count` (10) times, so a rare string is a word or not by its own autonomy and probability;
only the four-character units join from `units_min_count` (5) times.

Chosen on the dev files (benchmarks/rare_strings_dev.py: the shipped table's frequent rows plus
the rare strings, the general standard, first 1,300 sentences of six dev files; held out:
sentences 1,301-4,000 of pku_dev, msr_dev and weibo_dev): counts 5-9 at autonomy 2 gained on five
files and cost ud_gsdsimp_dev 0.0005 (UD writes 嘉义 县, 维吉尼亚 州: a name and its suffix apart),
mean +0.0013, held out +0.0005 to +0.0016; 166 k strings, 2.5 MiB. Counts from 3, or autonomy 1,
gained about as much (+0.0014 to +0.0016) with 2.0 to 4.6 times the strings and cost UD up to
0.0019; autonomy 3 gained +0.0005. Strings of 6 characters changed nothing (the decoder reads 5
at most).
"""
from __future__ import annotations

import numpy as np

from ..words.decoding import WordDecoding
from ..words.table import WordTable
from .new_strings import without_phrases_and_fragments

RARE_COUNT = 5
RARE_AUTONOMY = 2.0


def with_rare_strings(table: WordTable, counted: WordTable, text: str, rare_count: int = RARE_COUNT,
                      min_autonomy: float = RARE_AUTONOMY, max_len: int = WordDecoding.max_len) -> WordTable:
    """`table` (n-grams seen min_count times, with its unigram model) plus the rare words of the
    same text: `counted` is that text's table counted down to `rare_count` (so its autonomies are
    the table's), `text` its lines joined by newlines."""
    if not isinstance(rare_count, int) or rare_count < 1:
        raise ValueError(f"rare_count must be an int >= 1, got {rare_count!r}")
    candidates = {}
    for n, (keys, autonomy, counts) in counted.tables.items():
        if n > max_len:
            continue
        new = (counts >= rare_count) & ~np.isin(keys, table.tables[n][0] if n in table.tables else ())
        if n > 1:
            new &= autonomy.astype(np.float32) >= min_autonomy
        candidates[n] = (keys[new], autonomy[new], counts[new])
    if not any(len(keys) for keys, _, _ in candidates.values()):
        return table
    kept = without_phrases_and_fragments(table, WordTable(candidates, counted.info), text)
    combined = table.combined_with(kept, rare_count)
    return WordTable(combined.tables, table.info, combined.unigram)  # the same text: its size, not twice
