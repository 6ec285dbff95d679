"""Word statistics from raw text: how much each string of Han characters behaves like a word.

The heads score one junction at a time, so a long word is only kept whole when every one of
its inner junctions scores low; the shipped model cuts most words of three and more
characters. Raw text knows better which strings are units: after 共和国 almost anything can
follow and before it almost anything can precede, while after 共和 the next character is
nearly always 国. That is the normalized variation of branching entropy (nVBE, Magistry &
Sagot 2012), the same autonomy that the self-training teacher uses (train/ngrams.py):

    A(x) = z_n(H_r(x) - H_r(x[:-1])) + z_n(H_l(x) - H_l(x[1:]))      n = len(x)

H_r / H_l: entropy of the character after / before x (anything not Han counts as one symbol);
z_n: z-score over the n-gram types of length n. train/ngrams.py codes n-grams as base-V
integers, which overflows int64 past four characters (V ~ 7,000); this table (built at
training time: train/ngram_counting.build_word_table) keys every n-gram by a 64-bit polynomial hash of its code points
(hashindex.hash_step; collisions: ~1e-8 for a million keys), so n is not capped.

`WordTable` is what ships beside a model (`ngrams.npz`, 26 MiB for the default's; the file and
where a folder keeps it: table_files.py): for each length n, the
sorted hashes of the n-grams seen at least `min_count` times and their autonomy (float16);
and their counts (uint32: the decoder's cohesive pairs read them, joins.join_cohesive);
optionally a unigram word model over the same strings (float16 log p(w), fitted by EM on the
raw text: train/unigram.py), which the decoder adds per word. Strings that were pruned or never
seen get no autonomy (NaN): the decoder treats them as unknown (decoding.py), and the unigram
model gives them its `unseen` log-probability.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..text.runs import code_points
from .hashindex import KeyIndex, find_keys, hash_step, missing_value, pick, pick_few
from .table_files import read_table, write_table

UNIGRAM_FLOOR = 0.01  # expected word count of a string EM never uses as a word (train/unigram.py)
INDEXED_QUERIES = 16  # a lookup of this many queries goes through the KeyIndex, once build_indexes has built it
KEPT_CHARS = 1 << 20  # the hashes of the last text looked up are kept when it is this long or shorter
SEARCHED_CHARS = 1 << 16  # where the last text's strings are is kept when it is this long or shorter (1.5 MB)
NOT_SEARCHED, NOT_FOUND = -2, -1  # _look_up_at's kept slots of strings not searched yet, and not in the table
RECENT_STRINGS = 2048  # look_up_few keeps the values of this many strings per length and columns (~1.5 MB in all)
# look_up_few keeps the strings of a lookup of at most this many (a short sentence's); a longer one's
# are read straight from the table: they are mostly new to the kept ones, would turn all of them
# over every few texts, and merging them cost more than their search (issue 57, lcut of 200 dev
# sentences of 60-100 characters, 3 alternating runs: 1.39-1.44 ms a call against 1.47-1.49).
RECENT_MOST = 64
# look_up_few builds the KeyIndexes (one a length, _few_index) once it has searched this many
# strings: a string's binary search costs ~1.5 us more than its probes (~20 cache-missing reads of
# a length's keys against one or two), so from about 200 k strings the 0.3 s of building has paid
# for itself; this many (~2,500 calls on varied short texts) leaves a short-lived caller without
# the 20 MB.
INDEX_AFTER_STRINGS = 100_000


class WordTable:
    """Per length n (1..max_n): sorted uint64 hashes, their autonomy (float16) and counts (uint32);
    `unigram`, when fitted: {"logp": {n: float16 log p of those strings}, "unseen": log p of a
    string not in the table, "words" and "chars": expected words and Han characters of the text
    it was fitted on} (train/unigram.py)."""

    def __init__(self, tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], info: dict | None = None,
                 unigram: dict | None = None):
        if not tables:
            raise ValueError("a word table needs at least the 1-grams")
        if unigram is not None and set(unigram["logp"]) != set(tables):
            raise ValueError(f"the unigram model covers lengths {sorted(unigram['logp'])}, the table {sorted(tables)}")
        self.tables = tables
        self.max_n = max(tables)
        self.info = info or {}
        self.unigram = unigram
        self._indexes: dict[int, KeyIndex] = {}  # per length, built by build_indexes only (_find, _few_index)
        self._hashed: tuple = (None, [])  # the last text looked up and its strings' hashes (_string_hashes)
        self._recent: dict = {}  # (n, columns) -> look_up_few's columns and the strings it keeps
        self._few_searched = 0  # strings look_up_few has searched (_few_index)
        self._searched: tuple = (None, {})  # the last text looked up and where its strings are (_look_up_at)

    def __getstate__(self):  # a copy builds its own indexes
        return {**self.__dict__, "_indexes": {}, "_hashed": (None, []), "_recent": {}, "_searched": (None, {}),
                "_few_searched": 0}

    def with_unigram(self, unigram: dict) -> "WordTable":
        """This table with a unigram word model (train/unigram.fit_unigram's result) beside it."""
        return WordTable(self.tables, self.info, {k: unigram[k] for k in ("logp", "unseen", "words", "chars")})

    # -- persistence ------------------------------------------------------------------------
    def pruned(self, min_count: int) -> "WordTable":
        """The n-grams seen at least `min_count` times (autonomies and unigram values unchanged)."""
        keep = {n: counts >= min_count for n, (_, _, counts) in self.tables.items()}
        tables = {n: tuple(a[keep[n]] for a in arrays) for n, arrays in self.tables.items()}
        unigram = None if self.unigram is None else {
            **self.unigram, "logp": {n: logp[keep[n]] for n, logp in self.unigram["logp"].items()}}
        return WordTable(tables, {**self.info, "min_count": max(min_count, self.info.get("min_count", 1))}, unigram)

    def save(self, folder_or_file: str | Path, with_counts: bool = True) -> Path:
        """Write `ngrams.npz` (into a folder) or the file named; with_counts=False leaves the counts out
        (a table without them decodes the same, but joins no cohesive pairs). table_files.py."""
        return write_table(folder_or_file, self.tables, self.info, self.unigram, with_counts)

    @classmethod
    def load(cls, folder_or_file: str | Path) -> "WordTable":
        """The table a save wrote (checked against its folder's checksums.json, when it has one)."""
        return cls(*read_table(folder_or_file))

    def __len__(self) -> int:
        return sum(len(t[0]) for t in self.tables.values())

    # -- lookup -----------------------------------------------------------------------------
    def autonomy(self, run: str, max_len: int | None = None) -> np.ndarray:
        """(len(run), max_len) float64: A(run[i:i+L]) at [i, L-1]; NaN where the string is not
        in the table (never seen, pruned, longer than max_n, or past the end of the run)."""
        return self._values(run, max_len, ("autonomy",))[0]  # float16 -> float64 on the hits only

    def counts(self, run: str, max_len: int | None = None) -> np.ndarray:
        """(len(run), max_len) counts of run[i:i+L] in the raw text (0 where not in the table)."""
        return self._values(run, max_len, ("counts",))[0]

    def autonomy_and_logp(self, run: str, max_len: int | None = None,
                          room: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """autonomy(run) and, when the table has a unigram model, (len(run), max_len) log p of
        run[i:i+L] (`unseen` where the table lacks the string); None without one. One hash pass
        serves both: this is what the decoder reads. room: (len(run),) the longest string wanted
        from each character (the decoder's: what is left of its Han run, 0 outside one); the
        others are not looked up and read as missing (a third of a batch's strings cross a run's end)."""
        columns = ("autonomy",) if self.unigram is None else ("autonomy", "logp")
        values = self._values(run, max_len, columns, room)
        return values[0], (values[1] if self.unigram is not None else None)

    def _find(self, n: int, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """find_keys over the n-character strings' keys; through their KeyIndex (hashindex.py:
        one or two probes a query) only once build_indexes has built it (a long run of short
        texts: _few_index): not on first use, since the indexes cost 20 MB a process (up to 21 MB
        more while one is built) and ~0.3 s, and a large lookup searches its queries sorted (find_keys), at
        about the index's speed in a whole batch (issue 57: on 1,000 PKU sentences the batch ran
        no slower without, and peaked 20 MB lower)."""
        keys = self.tables[n][0]
        index = self._indexes.get(n)
        if not len(keys) or index is None or index.keys is not keys or len(queries) < INDEXED_QUERIES:
            return find_keys(keys, queries)
        return index.find(queries)

    def build_indexes(self) -> None:
        """Build every length's KeyIndex (~0.3 s and 20 MB for the shipped table): lookups of
        INDEXED_QUERIES or more use it from then on (_find), and look_up_few's (_few_index). Threads
        may build at once: either serves."""
        for n, (keys, _, _) in self.tables.items():
            if len(keys) and (n not in self._indexes or self._indexes[n].keys is not keys):
                self._indexes[n] = KeyIndex(keys)

    def _column(self, n: int, name: str) -> tuple[np.ndarray, float]:
        """The values of one column for the n-grams, and what a missing string gets."""
        if name == "logp":
            return self.unigram["logp"][n], self.unigram["unseen"]
        return self.tables[n][1 if name == "autonomy" else 2], (np.nan if name == "autonomy" else 0.0)

    def _string_hashes(self, text: str, longest: int) -> list[np.ndarray]:
        """[n - 1]: the hashes of text's strings of n characters (n <= longest, max_n), by first
        character (hashindex.hash_step, each length from the one before). Every lookup hashes
        through here. The last text's are kept (up to KEPT_CHARS characters): the decoder, its
        joins and the conventions look up strings of one batch text many times, a few a call."""
        last, hashes = self._hashed
        if last is not text:
            hashes = []
        longest = min(longest, self.max_n, len(text))
        if len(hashes) < longest:
            codepoints = code_points(text)
            hashes = list(hashes)
            step = hashes[-1] if hashes else np.zeros(len(text), dtype=np.uint64)
            for n in range(len(hashes) + 1, longest + 1):
                step = hash_step(step[: len(text) - n + 1], codepoints[n - 1 :])
                hashes.append(step)
            if len(text) <= KEPT_CHARS:
                self._hashed = (text, hashes)
        return hashes

    def _look_up_at(self, text: str, hashes: np.ndarray, starts: np.ndarray, n: int,
                    columns: tuple[str, ...]) -> list[np.ndarray]:
        """_look_up of the n-character strings of `text` at `starts` (int array; hashes: of all its
        strings of n characters, _string_hashes). Where each string of the last text is in the
        table is kept (int32 a string and length, up to SEARCHED_CHARS characters: a one-thread
        batch's slice, run/cores.SLICE_CHARS, is shorter): in a batch the decoder searches every
        string of its runs, and the joins and conventions after it look up only strings it
        searched (most of the queries of the calls after it), which then cost a gather, no search."""
        last, kept = self._searched
        if last is not text:
            if len(text) > SEARCHED_CHARS:
                return self._look_up(n, hashes[starts], columns)
            kept = {}
            self._searched = (text, kept)
        slots = kept.get(n)
        if slots is None:
            slots = kept.setdefault(n, np.full(len(hashes), NOT_SEARCHED, dtype=np.int32))
        slot = slots[starts]
        unsearched = slot == NOT_SEARCHED
        if unsearched.any():
            at = starts[unsearched]
            where, found = self._find(n, hashes[at])
            slot[unsearched] = np.where(found, where, NOT_FOUND)
            slots[at] = slot[unsearched]  # another thread on this text writes the same slots
        found = slot >= 0
        return [pick(*self._column(n, name), slot, found) for name in columns]

    def _look_up(self, n: int, hashes: np.ndarray, columns: tuple[str, ...]) -> list[np.ndarray]:
        """Columns ("autonomy", "counts", "logp") of the n-character strings with these hashes
        (each column's missing value where the table lacks one): one search serves every column."""
        slot, found = self._find(n, hashes)
        return [pick(*self._column(n, name), slot, found) for name in columns]

    def look_up_few(self, n: int, hashes: list[int], columns: tuple[str, ...]) -> list[tuple[float, ...]]:
        """_look_up for a few strings of n characters, by their hashes as Python ints
        (hashindex.text_hashes): [column][string], floats. One short text's (decoding_few.py).
        The values of the last RECENT_STRINGS strings looked up so are kept per length: a
        sentence's characters and common words come back call after call, and a length whose
        strings are all kept costs no search (a lookup of more than RECENT_MOST strings: none kept)."""
        key = (n, columns)
        recent = self._recent.get(key)
        if recent is None:  # the columns, what pick gives a string not found, and the kept strings
            picked = [(values, missing_value(values, missing)) for values, missing
                      in (self._column(n, name) for name in columns)]
            recent = self._recent.setdefault(key, (picked, {}))
        picked, kept = recent
        if len(hashes) > RECENT_MOST:
            return pick_few(picked, self.tables[n][0], hashes, self._few_index(n, len(hashes)))
        found = [kept.get(h) for h in hashes]  # a string's values, as a tuple of its columns
        if None in found:
            missed = [h for h, values in zip(hashes, found) if values is None]
            fresh = list(zip(*pick_few(picked, self.tables[n][0], missed, self._few_index(n, len(missed)))))
            if len(kept) + len(fresh) > RECENT_STRINGS:
                kept.clear()  # another thread's strings may go too: only what is kept changes
            kept.update(zip(missed, fresh))
            fresh = iter(fresh)
            found = [values if values is not None else next(fresh) for values in found]
        return list(zip(*found))

    def _few_index(self, n: int, searched: int) -> KeyIndex | None:
        """The KeyIndex look_up_few probes for `searched` strings of n characters, once look_up_few
        has searched INDEX_AFTER_STRINGS strings in all (a long-running caller of short texts: a
        service, a query log), whose binary searches then cost more than the index: each length's
        is built on its next lookup after that (~0.1 s and 3-8 MB a length, 20 MB in all for the
        shipped table). None before: a script that segments a few hundred sentences builds none."""
        self._few_searched += searched
        keys = self.tables[n][0]
        index = self._indexes.get(n)
        if index is not None and index.keys is keys:
            return index
        if self._few_searched < INDEX_AFTER_STRINGS or not len(keys):
            return None
        index = self._indexes[n] = KeyIndex(keys)  # threads may build one at once: either serves
        return index

    def _values(self, run: str, max_len: int | None, columns: tuple[str, ...], room=None) -> list[np.ndarray]:
        """Columns of every string run[i:i+L], L <= max_len (and, with `room`, L <= room[i]:
        autonomy_and_logp), as (len(run), max_len) arrays."""
        max_len = self.max_n if max_len is None else max_len
        outs = [np.full((len(run), max_len), self._column(1, name)[1]) for name in columns]
        hashes = self._string_hashes(run, max_len)
        for n in range(1, min(max_len, len(hashes)) + 1):
            strings = len(hashes[n - 1])  # of n characters: one a character but the last n - 1
            at = np.arange(strings) if room is None else np.flatnonzero(room[:strings] >= n)
            for out, values in zip(outs, self._look_up_at(run, hashes[n - 1], at, n, columns)):
                out[at, n - 1] = values
        return outs

    def counts_at(self, text: str, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Counts of the strings text[starts[i] : starts[i] + lengths[i]] (0 where not in the
        table): only those are looked up, not every string of the text (joins.join_cohesive)."""
        return self._values_at(text, starts, lengths, "counts")

    def autonomy_at(self, text: str, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Autonomy of the strings text[starts[i] : starts[i] + lengths[i]] (NaN where unknown)."""
        return self._values_at(text, starts, lengths, "autonomy")

    def logp_at(self, text: str, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Unigram log p of the strings text[starts[i] : starts[i] + lengths[i]] (the model's
        `unseen` where the table lacks them); the table must have a unigram model."""
        if self.unigram is None:
            raise ValueError("this word table has no unigram model "
                             "(build it with `segmenter ngrams --unigram-rounds N`)")
        return self._values_at(text, starts, lengths, "logp")

    def logp_margin_at(self, text: str, starts: np.ndarray, pieces, sizes=None) -> np.ndarray:
        """log p(w) - the sum of log p(piece) under the unigram model, for each string
        w = text[starts[i] : ...] cut into pieces[i] (the lengths of its pieces, in order): w is
        e**margin times likelier as one word than as those pieces. Needs a unigram model.
        With `sizes` (pieces per string), pieces is every string's piece lengths, flat, in order."""
        starts = np.asarray(starts, dtype=np.int64)
        if sizes is None:
            sizes = np.array([len(p) for p in pieces], dtype=np.int64)
            lengths = np.array([length for p in pieces for length in p], dtype=np.int64)
        else:
            sizes, lengths = np.asarray(sizes, dtype=np.int64), np.asarray(pieces, dtype=np.int64)
        owner = np.repeat(np.arange(len(starts)), sizes)  # the string of each piece
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)  # the index of its string's first piece
        before = np.cumsum(lengths) - lengths  # characters before each piece, all strings counted
        whole = np.bincount(owner, weights=lengths, minlength=len(starts)).astype(np.int64)
        logp = self.logp_at(text, np.concatenate([starts, starts[owner] + before - before[first]]),
                            np.concatenate([whole, lengths]))
        margin, parts = logp[: len(starts)], logp[len(starts) :]
        rank = np.arange(len(lengths)) - first  # piece 0, 1, ... of its string
        for r in range(int(sizes.max(initial=0))):
            margin[owner[rank == r]] -= parts[rank == r]  # one piece per string at a time: left to right
        return margin

    def logp_margins_few(self, text: str, starts: list[int], pieces: tuple[int, ...]) -> list[float]:
        """logp_margin_at of a few strings, each cut into the same `pieces`, from and to Python
        lists (the conventions' paths for a few words; decoding_few.TextLookups answers it
        without numpy for its one text)."""
        return self.logp_margin_at(text, np.array(starts, dtype=np.int64), [pieces] * len(starts)).tolist()

    def shares_at(self, text: str, starts: np.ndarray, lengths, *parts, whole=None) -> list[np.ndarray]:
        """[count(w), then count(w) / count(part) per part] for the strings w = text[starts[i] :
        starts[i] + lengths[i]]: the share of the part's raw-text occurrences that are inside w (1: the
        part never occurs without the rest). A part is a list of (offset in w, length), ints or one
        per string; of several, the most frequent is the part. x / 0 gives inf, 0 / 0 NaN: callers
        compare. lengths: an int or one per string. One lookup serves all. whole: count(w), when
        the caller has looked it up already (counts_at)."""
        starts = np.asarray(starts, dtype=np.int64)
        spans = ([] if whole is not None else [(0, lengths)]) + [span for part in parts for span in part]
        where = [np.broadcast_to(starts + offset, starts.shape) for offset, _ in spans]
        sizes = [np.broadcast_to(np.asarray(size, dtype=np.int64), starts.shape) for _, size in spans]
        counts = self.counts_at(text, np.concatenate(where), np.concatenate(sizes)).reshape(len(spans), len(starts))
        if whole is not None:
            counts = np.concatenate([np.asarray(whole, dtype=counts.dtype)[None], counts])
        whole, out, used = counts[0], [counts[0]], 1
        for part in parts:
            with np.errstate(divide="ignore", invalid="ignore"):
                out.append(whole / counts[used : used + len(part)].max(axis=0))
            used += len(part)
        return out

    def _values_at(self, text: str, starts, lengths, name: str) -> np.ndarray:
        """Column `name` of the strings text[starts[i] : starts[i] + lengths[i]]."""
        starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        out = np.full(len(starts), self._column(1, name)[1])
        wanted = (lengths >= 1) & (lengths <= self.max_n) & (starts >= 0) & (starts + lengths <= len(text))
        if not wanted.any():
            return out
        asked = np.flatnonzero(np.bincount(lengths[wanted])).tolist()  # the lengths asked, ascending
        hashes = self._string_hashes(text, asked[-1])
        for n in asked:
            at = np.flatnonzero(wanted & (lengths == n))
            out[at] = self._look_up_at(text, hashes[n - 1], starts[at], n, (name,))[0]
        return out

    # -- adaptation -------------------------------------------------------------------------
    def combined_with(self, other: "WordTable", min_count: int = 1) -> "WordTable":
        """This table, plus the strings of `other` that it lacks and `other` saw `min_count`
        times or more (segmenter adapt: this = the model's table, other = the user's text).

        Where both have a string, this table's autonomy stays: it was estimated on far more
        text, and on dev overriding it with the domain's was worse than keeping it
        (benchmarks/results/adapt_dev.md). Counts: other's
        for the strings it brought, this table's (0 when saved without counts) for the rest.
        The unigram model (this table's, if it has one) gives a string that other brought the
        probability of its count scaled to the text the model was fitted on: no EM over the
        user's text, so a brought string that is mostly part of a longer one is over-rated."""
        tables, logps = {}, {}
        for n in sorted(set(self.tables) | set(other.tables)):
            empty = (np.zeros(0, np.uint64), np.zeros(0, np.float16), np.zeros(0, np.uint32))
            keys, autonomy, counts = self.tables.get(n, empty)
            okeys, oautonomy, ocounts = other.tables.get(n, empty)
            new = (ocounts >= min_count) & ~np.isin(okeys, keys)
            merged = np.concatenate([keys, okeys[new]])
            order = np.argsort(merged, kind="stable")
            tables[n] = (merged[order], np.concatenate([autonomy, oautonomy[new]])[order],
                         np.concatenate([counts, ocounts[new]]).astype(np.uint32)[order])
            if self.unigram is not None:
                model = self.unigram
                scaled = ocounts[new] * model["chars"] / max(other.info.get("chars", 1), 1)
                brought = np.log(np.maximum(scaled, UNIGRAM_FLOOR) / model["words"])
                logps[n] = np.concatenate([model["logp"].get(n, np.zeros(0, np.float16)),
                                           brought.astype(np.float16)])[order]
        info = {"chars": self.info.get("chars", 0) + other.info.get("chars", 0),
                "min_count": self.info.get("min_count", 0)}
        return WordTable(tables, info, None if self.unigram is None else {**self.unigram, "logp": logps})
