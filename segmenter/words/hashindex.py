"""How the word table finds a string: the string's 64-bit hash (hash_step), a binary search over
the sorted hashes (find_keys), and an open-addressing index over them (KeyIndex): where each
query sits, in one or two probes.

The word table (table.WordTable) keeps, per string length, sorted uint64 hashes. A
binary search (np.searchsorted) over half a million of them costs ~20 dependent reads a query,
most of them cache misses once the 4 MB array is out of the core's cache. KeyIndex maps a
query's mixed hash to a slot of a table twice the keys' size (int32 positions into the sorted
keys, -1 empty) and walks forward from there (linear probing): at half load, ~1.5 probes a hit
and ~2.5 a miss, all queries of a call at once in numpy. It answers what find_keys (below)
answers for every key that is there (its position in the sorted keys); a query that is not
there gets found=False and slot 0.

Built per length (WordTable.build_indexes, or look_up_few after a long run of short texts:
table.py's INDEX_AFTER_STRINGS; ~0.1 s and 8 MB for ~570 k keys, 0.3 s and 20 MB for the shipped
table), by the same probing: every key, in the order of its home slot, takes the first empty slot
from its home on (a running max: no loop over rounds). No key is ever removed, so a lookup that
meets an empty slot knows its query is absent. A few queries (one short text's) are probed in
Python (find_few): on varied dev pieces of 5-20 characters, lcut ~5% faster than by binary search.
"""
from __future__ import annotations

import numpy as np

# A string's hash: h <- h * MULTIPLIER + code point (mod 2**64), from h = 0 (table.py: collisions
# ~1e-8 for a million keys). MULTIPLIER is an odd 64-bit constant.
MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_WORD = (1 << 64) - 1  # a hash's bits, for the same hash in Python integers (text_hashes)
SORTED_QUERIES = 4096  # find_keys sorts a batch of at least this many queries first


def hash_step(hashes: np.ndarray, codepoints: np.ndarray) -> np.ndarray:
    """hashes of strings of n characters -> of n + 1, each extended by one code point (uint64, wrapping)."""
    with np.errstate(over="ignore"):  # wrapping is the point of the hash
        return hashes * MULTIPLIER + codepoints.astype(np.uint64)


def text_hashes(text: str, longest: int) -> list[list[int]]:
    """hash_step's hashes of text's strings of 1..longest characters as Python ints, [n - 1][start]:
    for one short text, where a numpy call costs more than the few multiplications it saves.
    ord() is code_points' code point (text/runs.py; a lone surrogate's own too)."""
    multiplier = int(MULTIPLIER)
    step = [ord(c) for c in text]  # 0 * MULTIPLIER + code point
    hashes = [step] if longest >= 1 and text else []
    for n in range(2, min(longest, len(text)) + 1):
        step = [(h * multiplier + c) & _WORD for h, c in zip(step, hashes[0][n - 1 :])]
        hashes.append(step)
    return hashes


def find_keys(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The slot of each query hash in the sorted `keys`, and whether it is there."""
    if not len(keys):
        return np.zeros(len(queries), dtype=np.int64), np.zeros(len(queries), dtype=bool)
    if len(queries) >= SORTED_QUERIES:
        # Sorted queries walk the table in order (searchsorted starts each search where the last
        # ended, and the cache holds that part of the table): the same slots, fewer misses.
        # A batch's strings repeat (a third to a half of the queries of 1,000 PKU sentences):
        # each distinct query is searched once, its slot given to its copies.
        order = np.argsort(queries)  # equal queries get equal slots: any order of ties serves
        ordered = queries[order]
        first = np.empty(len(ordered), dtype=bool)  # the first of each run of equal queries
        first[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        slot = np.empty(len(queries), dtype=np.int64)
        slot[order] = np.searchsorted(keys, ordered[first])[np.cumsum(first) - 1]
    else:
        slot = np.searchsorted(keys, queries)
    slot = np.minimum(slot, len(keys) - 1)
    return slot, keys[slot] == queries


def pick(values: np.ndarray, missing, slot: np.ndarray, found: np.ndarray) -> np.ndarray:
    """values[slot] where the query was found (find_keys, KeyIndex.find), `missing` elsewhere, and
    everywhere for a column without values (a table saved without counts)."""
    return np.where(found, values[slot], missing) if len(values) else np.full(len(slot), missing)


def missing_value(values: np.ndarray, missing) -> float:
    """What pick gives a query that is not found: `missing` in np.where's type of the column and
    it (a float16 column's missing value rounds to float16, as pick's does), as a float."""
    if not len(values):
        return float(missing)
    return float(np.where(np.zeros(1, dtype=bool), values[:1], missing)[0])


def pick_few(columns: list[tuple[np.ndarray, float]], keys: np.ndarray, queries: list[int],
             index: KeyIndex | None = None) -> list[list[float]]:
    """[pick(values, missing, *find_keys(keys, queries)) as a list of floats, for each (values,
    missing_value(values, missing)) column], for a few query hashes (Python ints: text_hashes):
    one search and one read a column whatever the number of queries, the rest in Python. With
    the keys' KeyIndex, each query is probed there instead (KeyIndex.find_few)."""
    if not len(keys) or not queries:
        return [[missing] * len(queries) for _, missing in columns]
    if index is not None:
        slots = index.find_few(queries)
        return [[float(values.item(at)) if at >= 0 else missing for at in slots] if len(values)
                else [missing] * len(queries) for values, missing in columns]
    slot = keys.searchsorted(np.array(queries, dtype=np.uint64))  # uint64 both: a list would convert the keys
    found = [key == query for key, query in zip(keys.take(slot, mode="clip").tolist(), queries)]  # clip: as find_keys
    out = []
    for values, missing in columns:
        if not len(values):
            out.append([missing] * len(queries))
            continue
        read = values.take(slot, mode="clip").tolist()
        out.append([float(value) if hit else missing for value, hit in zip(read, found)])
    return out


def lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray, missing=np.nan) -> np.ndarray:
    """values[slot] of each query found in the sorted `keys`, `missing` elsewhere."""
    return pick(values, missing, *find_keys(keys, queries))


_MIX = np.uint64(0xD6E8FEB86659FD93)  # odd: multiplying mixes every bit of a key into the top ones


class KeyIndex:
    """Slots of the sorted uint64 `keys` (a word table's hashes of one length)."""

    def __init__(self, keys: np.ndarray):
        self.keys = keys
        self.bits = max(4, int(np.ceil(np.log2(max(2 * len(keys), 2)))))  # at most half full
        self.mask = (1 << self.bits) - 1
        table = np.full(1 << self.bits, -1, dtype=np.int32)
        # The keys in the order of their home slots: each takes the first free slot from its home
        # on, which is its home or the slot after the previous key's, whichever is later: a running
        # max of home - rank, plus rank (a cluster of keys fills its slots without a gap).
        home = self._home(keys)
        order = np.argsort(home, kind="stable")
        slot = home[order]
        del home
        rank = np.arange(len(keys), dtype=np.int64)
        slot -= rank
        np.maximum.accumulate(slot, out=slot)
        slot += rank
        del rank
        late = slot >= len(table)
        if not late.any():
            table[slot] = order
        else:  # keys pushed past the last slot wrap round: the first free slots from slot 0, in order
            table[slot[~late]] = order[~late]  # (a lookup walks on from the end to slot 0 through taken slots)
            table[np.flatnonzero(table < 0)[: int(late.sum())]] = order[late]
        self.table = table

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's home slot, int64: shifted in place (one array made, not three)."""
        with np.errstate(over="ignore"):  # wrapping is the point of the multiplication
            home = hashes * _MIX
        home >>= np.uint64(64 - self.bits)
        return home.view(np.int64)  # under 2**bits: the same numbers

    def find_few(self, queries: list[int]) -> list[int]:
        """find's slot of each of a few query hashes (Python ints), -1 where it is not there: probed
        in Python, one or two reads of the table and the keys a query (for a handful of queries,
        numpy's fixed costs would exceed them; a binary search makes ~20 reads a query, most of them
        cache misses over a length's ~4 MB of keys)."""
        table, keys, mask, shift = self.table, self.keys, self.mask, 64 - self.bits
        mix, word = int(_MIX), (1 << 64) - 1
        slots = []
        for query in queries:
            probe = ((query * mix) & word) >> shift  # _home, in Python integers
            while True:
                at = table.item(probe)
                if at < 0 or keys.item(at) == query:
                    break
                probe = (probe + 1) & mask
            slots.append(at)
        return slots

    def find(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(slot, found) as find_keys: the position of each query in the sorted keys
        where it is there (slot 0 where it is not)."""
        probe = self._home(queries)
        # The first probe, for every query at once (most end there): no index lists yet.
        at = self.table[probe]
        filled = at >= 0
        found = filled & (self.keys[at] == queries)  # at = -1 reads the last key: `filled` masks it
        slot = np.where(found, at, 0).astype(np.int64)
        active = np.flatnonzero(filled & ~found)  # a filled slot holding another key: probe on
        probe = (probe[active] + 1) & self.mask
        while len(active):
            at = self.table[probe]
            filled = at >= 0
            hit = filled & (self.keys[at] == queries[active])
            slot[active[hit]] = at[hit]
            found[active[hit]] = True
            going = filled & ~hit
            active, probe = active[going], (probe[going] + 1) & self.mask
        return slot, found
