"""Which of a domain's new strings `segmenter adapt` adds to a model's word table (train/adapt.py).

A string the model's table lacks that recurs in the user's text is often no word: a phrase of a
known string and a common single-character word (药疹的), the piece of a longer string that one
character always accompanies (江苏苏宁易 of 江苏苏宁易购), a rarer compound of two strings the
model or the text knows as words (出栏肉猪; 极阴祖师, a name the text taught and a title), or two
parts that the text uses far more often apart than together (让|韩立, 玄骨|的). The
tests here find them by their occurrences in the text; train/adapt.py says how each was chosen
on dev, train/rare_strings.py uses the same tests on the shipped text's rare rows.
most_frequent_new lists what was added, for adapt's report and model card.

Shapes: `occurrences` (new_string_occurrences) is, per length n >= 2, the hashes of every
occurrence of a new string in the text and their start offsets, in order; each test returns, per
length, the sorted hashes it leaves out.
"""
from __future__ import annotations

import numpy as np

from ..text.runs import code_points, han_mask
from ..words.decoding import WordDecoding
from ..words.hashindex import hash_step
from ..words.table import WordTable

# A new string that the same Han character follows (or precedes) in this share of its occurrences
# is a fragment and is not added. Dev, six files adapted to their own text: 0.7 to 0.9 within
# 0.0002 of each other on the mean; 0.8 the best.
FRAGMENT_SHARE = 0.8
# A new string of 3+ characters that splits into two parts each seen more than 1 / LOOSE_SHARE times
# as often in the text as the string itself is a phrase of the two (loose_pair_keys): the parts
# occur more often without each other than together (让|韩立: 11 times together, 韩立 185 times).
# Dev, six files adapted to their own text (benchmarks/results/adapt_variants_dev.md): 0.5 gained
# novel_dev +0.0017 and moved the others by 0.0002 at most (mean +0.0043 -> +0.0046); 0.4 +0.0044;
# 0.6 +0.0048 (novel_dev +0.0017 more, weibo_dev -0.0003); 1.0 (each part seen once apart) +0.0037,
# weibo_dev -0.0016 and derm_dev -0.0033 against 0.5. "More often apart than together": 0.5.
LOOSE_SHARE = 0.5


def without_phrases_and_fragments(shipped: WordTable, candidates: WordTable, text: str,
                                  compounds_below: int | None = None, loose_share: float | None = None) -> WordTable:
    """`candidates` (strings counted on `text`, its lines joined by newlines) less the strings the
    shipped table lacks that read as a phrase (phrase_keys) or a fragment (fragment_keys) there,
    with `compounds_below`, the rarer compounds of two known strings (compound_keys), and with
    `loose_share`, the strings of two parts the text uses far more often apart (loose_pair_keys).
    `segmenter adapt` tests a user's new strings so; train/rare_strings.py the shipped text's rare
    ones (without the last two tests: the shipped text's rare rows are its own words)."""
    occurrences = list(new_string_occurrences(shipped, candidates, text))  # one pass over the text serves all
    kept = without_keys(candidates, [phrase_keys(shipped, text, occurrences), fragment_keys(text, occurrences)])
    found = []
    if compounds_below is not None:
        found.append(compound_keys(shipped, text, occurrences, compounds_below, domain=kept))
    if loose_share is not None:
        found.append(loose_pair_keys(candidates, text, occurrences, loose_share))
    return without_keys(kept, found) if found else kept


def without_keys(table: WordTable, found: list[dict[int, np.ndarray]]) -> WordTable:
    """`table` less the rows whose hashes a test found (per length, as the tests here return them)."""
    left_out = {n: np.concatenate([keys[n] for keys in found if n in keys]) for n in set().union(*found)}
    return WordTable({n: tuple(column[~np.isin(keys, left_out.get(n, ()))] for column in (keys, *rest))
                      for n, (keys, *rest) in table.tables.items()}, table.info)


def new_string_occurrences(shipped: WordTable, domain: WordTable, text: str):
    """Per length n >= 2: (n, hashes, starts) of every occurrence in `text` (the domain's lines
    joined) of the domain strings the shipped table lacks, hashed the way ngram_counting.build_word_table
    hashed them; starts are offsets in `text`, in order."""
    codepoints = code_points(text)
    han = han_mask(codepoints)
    hashes = np.zeros(len(codepoints), dtype=np.uint64)
    valid = np.ones(len(codepoints), dtype=bool)
    for n in range(1, domain.max_n + 1):
        hashes = hash_step(hashes[: len(codepoints) - n + 1], codepoints[n - 1 :])
        valid = valid[: len(hashes)] & han[n - 1 :]
        if not len(hashes):
            break
        if n < 2 or n not in domain.tables:
            continue
        keys = domain.tables[n][0]
        new = keys[~np.isin(keys, shipped.tables[n][0])] if n in shipped.tables else keys
        at = np.flatnonzero(valid & np.isin(hashes, new))
        yield n, hashes[at], at


def most_frequent_new(shipped: WordTable, table: WordTable, text: str, most: int = 10) -> list[list]:
    """The `most` most frequent strings of `table` that `shipped` lacks (what adapt added), as
    [string, occurrences in `text`], the most frequent first (then the longest): what a user reads
    to see what the text taught the model (苔藓样变 24, 致敏药物 13)."""
    found = {}
    for n, hashes, at in new_string_occurrences(shipped, table, text):
        keys, first, seen = np.unique(hashes, return_index=True, return_counts=True)
        found.update((text[start : start + n], int(count)) for start, count in zip(at[first].tolist(), seen.tolist()))
    return [[word, count] for word, count in sorted(found.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[:most]]


def phrase_keys(shipped: WordTable, text: str, occurrences: list,
                common: float = WordDecoding.units_common) -> dict[int, np.ndarray]:
    """The hashes, by length, of domain strings the shipped table lacks (their `occurrences` in
    `text`: new_string_occurrences) that read as a phrase: a common single-character word (unigram
    log p >= `common`) at one end, and the rest a string the shipped table holds (or one
    character): 药疹+的, 了+茶话会. Judged at one occurrence each. Empty without a unigram model
    (the commonness is its log p)."""
    if shipped.unigram is None:
        return {}
    found = {}
    for n, hashes, at in occurrences:
        keys, first = np.unique(hashes, return_index=True)
        start = at[first]  # one occurrence of each new string
        phrase = np.zeros(len(start), dtype=bool)
        for edge, rest in ((start + n - 1, start), (start, start + 1)):  # common word last, then first
            ones = np.ones(len(start), dtype=np.int64)
            known = shipped.autonomy_at(text, rest, ones * (n - 1))
            phrase |= (shipped.logp_at(text, edge, ones) >= common) & ((n == 2) | ~np.isnan(known))
        found[n] = keys[phrase]
    return found


def compound_keys(shipped: WordTable, text: str, occurrences: list, below: int,
                  domain: WordTable | None = None) -> dict[int, np.ndarray]:
    """The hashes, by length, of domain strings of 4+ characters the shipped table lacks (their
    `occurrences` in `text`: new_string_occurrences) that are two strings of 2+ characters each
    that it holds (出栏+肉猪, 婴幼儿+乳粉) or that `domain` holds (the domain's own new strings
    that passed the phrase and fragment tests: 极阴+祖师, 乾蓝+冰焰, a novel's name or thing and a
    word), and occur fewer than `below` times. Judged at one occurrence each."""
    found = {}
    for n, hashes, at in occurrences:
        if n < 4:
            continue
        keys, first, seen = np.unique(hashes, return_index=True, return_counts=True)
        keys, first = keys[seen < below], first[seen < below]  # the frequent ones stay whatever they are
        start, ones = at[first], np.ones(len(first), dtype=np.int64)
        compound = np.zeros(len(start), dtype=bool)

        def word(begin: np.ndarray, size: int) -> np.ndarray:
            """Whether each string of `size` characters at `begin` is the shipped table's or the domain's."""
            known = ~np.isnan(shipped.autonomy_at(text, begin, ones * size))
            return known | (domain.counts_at(text, begin, ones * size) > 0) if domain is not None else known

        for left in range(2, n - 1):  # the split after `left` characters: both sides 2+
            compound |= word(start, left) & word(start + left, n - left)
        found[n] = keys[compound]
    return found


def loose_pair_keys(domain: WordTable, text: str, occurrences: list,
                    share: float = LOOSE_SHARE) -> dict[int, np.ndarray]:
    """The hashes, by length, of domain strings of 3+ characters the shipped table lacks (their
    `occurrences` in `text`: new_string_occurrences) that split into two parts, at some junction,
    each of which `domain` (the counts of `text`'s strings) has more than 1 / `share` times as
    often as the whole: the text uses the two apart far more often than together, as join_cohesive
    keeps 经济|发展 apart (让|韩立: 11 times, 让 and 韩立 hundreds; 玄骨|的). A part of a string the
    text holds min_count times is held as often at least, so `domain` may be the pruned candidates.
    Judged at one occurrence each."""
    found = {}
    for n, hashes, at in occurrences:
        if n < 3:
            continue
        keys, first = np.unique(hashes, return_index=True)
        start, ones = at[first], np.ones(len(first), dtype=np.int64)
        whole = domain.counts_at(text, start, ones * n)
        loose = np.zeros(len(start), dtype=bool)
        for left in range(1, n):  # the junction after `left` characters
            loose |= ((whole < share * domain.counts_at(text, start, ones * left))
                      & (whole < share * domain.counts_at(text, start + left, ones * (n - left))))
        found[n] = keys[loose]
    return found


def fragment_keys(text: str, occurrences: list, share: float = FRAGMENT_SHARE) -> dict[int, np.ndarray]:
    """The hashes, by length, of domain strings the shipped table lacks (their `occurrences` in
    `text`: new_string_occurrences) that are the piece of a longer string: the same Han character
    follows them, or precedes them, in `share` or more of their occurrences (江苏苏宁易, always
    before 购). A mark, a digit or the text's end beside a string is no longer string."""
    codepoints = code_points(text)
    han = np.concatenate([han_mask(codepoints), [False]])  # han[-1] and han[len]: past either end
    found = {}
    for n, hashes, at in occurrences:
        shares = []
        for beside in (at + n, at - 1):  # the character after each occurrence, then before it
            inside = (beside >= 0) & (beside < len(codepoints))
            neighbour = np.where(inside & han[beside], codepoints[np.clip(beside, 0, len(codepoints) - 1)], 0)
            keys, top = _top_neighbour_share(hashes, neighbour)
            shares.append(top)
        found[n] = keys[np.maximum(*shares) >= share]
    return found


def _top_neighbour_share(hashes: np.ndarray, neighbour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(m,) hash of each occurrence and (m,) the code point beside it (0: none that counts) ->
    the sorted distinct hashes and, for each, the share of its occurrences that its most frequent
    neighbour (other than 0) accounts for."""
    if not len(hashes):
        return hashes, np.zeros(0)
    order = np.lexsort((neighbour, hashes))
    hashes, neighbour = hashes[order], neighbour[order]
    pair_starts = np.flatnonzero(np.r_[True, (hashes[1:] != hashes[:-1]) | (neighbour[1:] != neighbour[:-1])])
    pair_counts = np.diff(np.r_[pair_starts, len(hashes)])
    key_starts = np.flatnonzero(np.r_[True, hashes[pair_starts[1:]] != hashes[pair_starts[:-1]]])
    totals = np.add.reduceat(pair_counts, key_starts)
    top = np.maximum.reduceat(np.where(neighbour[pair_starts] > 0, pair_counts, 0), key_starts)
    return hashes[pair_starts[key_starts]], top / totals
