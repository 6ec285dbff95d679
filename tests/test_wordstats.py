"""Word statistics: the hash-coded n-gram table (wordstats.py, with ngram_counting.py and
hashindex.py), its counts and autonomy, its files, and the toy raw texts the decoding tests
share (test_decoding.py)."""
from __future__ import annotations

import numpy as np
import pytest

from segmenter.train.ngram_counting import build_word_table, sample_raw_lines
from segmenter.train.ngrams import BranchingEntropy
from segmenter.words.table import WordTable

# A toy raw text: 共和国 and 办公室 are units in many contexts; 我们 and 的 are everywhere.
TOY = [
    "中华人民共和国成立了", "我们的共和国很大", "共和国的办公室在北京", "他们在办公室工作", "我们的办公室很小",
    "共和国和人民", "人民的共和国", "办公室里有人", "我们去办公室", "北京的办公室", "他说共和国好", "她在办公室",
] * 3

# 总值 nearly always follows 生产 (a cohesive compound); 经济 and 发展 each occur far more
# often without the other (a frequent pair of words).
COMPOUNDS = ["国内生产总值增长", "生产总值很高", "他们的生产总值", "经济发展很快", "经济很好", "发展经济",
             "经济问题", "国家发展", "发展很快", "新华社电", "新华社记者"] * 12


def test_autonomy_matches_the_teachers_branching_entropy():
    # the hash-coded counts give the nVBE autonomy of train/ngrams.py (up to float16 rounding)
    table = build_word_table(TOY, max_n=3, min_count=1)
    reference = BranchingEntropy.from_texts(TOY, max_n=3)
    for text in ("我们的办公室", "中华人民共和国", "他在北京工作"):
        ours, theirs = table.autonomy(text, 3), reference.autonomy(text)
        assert np.array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], atol=2e-2)


def test_table_prunes_saves_and_loads(tmp_path):
    table = build_word_table(TOY, max_n=4, min_count=1)
    pruned = table.pruned(5)
    assert 0 < len(pruned) < len(table)
    assert np.isnan(pruned.autonomy("华人民")[0, 2]) and not np.isnan(table.autonomy("华人民")[0, 2])
    assert table.counts("办公室")[0, 2] == 7 * 3  # seven lines hold it, three times over
    path = pruned.save(tmp_path)  # a folder: ngrams.npz inside
    assert path.name == "ngrams.npz"
    again = WordTable.load(tmp_path)
    assert again.max_n == 4 and again.info["min_count"] == 5 and len(again) == len(pruned)
    np.testing.assert_array_equal(again.autonomy("我们的办公室"), pruned.autonomy("我们的办公室"))
    (tmp_path / "bad.npz").write_bytes(b"not a table")
    with pytest.raises(ValueError, match="segmenter ngrams"):
        WordTable.load(tmp_path / "bad.npz")


def test_a_loaded_table_maps_the_file_and_holds_what_np_load_reads(tmp_path):
    # mapped_npz: the worker processes of one run share the table's pages instead of a copy each
    from segmenter.run.files import mapped_npz

    path = build_word_table(TOY, max_n=4, min_count=1).save(tmp_path)
    mapped, loaded = mapped_npz(path), np.load(path)
    assert sorted(mapped) == sorted(loaded.files)
    for name in loaded.files:
        assert mapped[name].dtype == loaded[name].dtype and np.array_equal(mapped[name], loaded[name])
        assert not mapped[name].flags.writeable  # a read-only map of the file: nothing may write into it
    table = WordTable.load(path)
    assert not table.tables[3][0].flags.writeable  # WordTable.load maps it too
    np.savez_compressed(tmp_path / "packed.npz", **{name: loaded[name] for name in loaded.files})
    again = WordTable.load(tmp_path / "packed.npz")  # a compressed member is read, not mapped
    np.testing.assert_array_equal(again.autonomy("我们的办公室"), table.autonomy("我们的办公室"))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1  # one bit: only the zip's CRC-32 of the member can tell
    (tmp_path / "flipped.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="flipped.npz is unreadable, truncated or corrupt .*CRC-32"):
        WordTable.load(tmp_path / "flipped.npz")


def test_sample_raw_lines_stops_at_each_budget(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("一二三\n四五六\n七八九\n", encoding="utf-8")
    b.write_text("甲乙\n丙丁\n", encoding="utf-8")
    assert sample_raw_lines([a, b], [4, None]) == ["一二三", "四五六", "甲乙", "丙丁"]
    with pytest.raises(ValueError, match="one character budget per raw file"):
        sample_raw_lines([a, b], [4])


def test_four_gram_entropies_survive_a_large_alphabet():
    # 7,000 distinct characters: base**5 > 2**63, where coding (gram, neighbour) pairs as
    # gram * base + neighbour wrapped around and gave 4-grams wrong branching entropies
    chars = [chr(0x4E00 + i) for i in range(7000)]
    word = "".join(chars[6990:6994])
    texts = ["".join(chars)] + [word + chars[k] for k in (10, 20, 30, 40)] * 2
    entropy = BranchingEntropy.from_texts(texts, max_n=4)
    assert entropy.base ** 5 > 2**63
    code, _ = entropy._ngram_codes(entropy._ids(word), 4, entropy.base)
    # followed once by chars[6994] and twice by each of four others: 9 occurrences
    expected = np.log(9) - 4 * 2 * np.log(2) / 9
    assert entropy._table_entropy(4, code, 0)[0] == pytest.approx(expected, abs=1e-5)
    table = build_word_table(texts, max_n=4, min_count=1)  # the hash table agrees
    assert table.counts(word)[0, 3] == 9


def test_values_at_chosen_strings_match_the_full_tables():
    table = build_word_table(TOY + COMPOUNDS, max_n=4, min_count=1)
    text = "我们的共和国在国内生产总值办公室，新华社"
    full_counts, full_autonomy = table.counts(text, 4), table.autonomy(text, 4)
    starts = np.array([0, 3, 8, 9, 13, len(text) - 2, len(text) - 1])
    lengths = np.array([2, 3, 4, 1, 3, 2, 4])  # the last runs past the end: missing
    counts, autonomy = table.counts_at(text, starts, lengths), table.autonomy_at(text, starts, lengths)
    for i, (s, n) in enumerate(zip(starts, lengths)):
        if s + n <= len(text):
            assert counts[i] == full_counts[s, n - 1]
            assert (np.isnan(autonomy[i]) and np.isnan(full_autonomy[s, n - 1])) or autonomy[i] == full_autonomy[s, n - 1]
    assert counts[-1] == 0 and np.isnan(autonomy[-1]) and counts[2] > 0


def test_strings_read_alone_as_together_and_across_texts():
    """One string at a time reads as all at once; the hashes kept for the last text serve it
    only: another text, even one of the same length, is hashed anew."""
    table = build_word_table(TOY + COMPOUNDS, max_n=4, min_count=1)
    text = "我们的共和国在国内生产总值办公室，新华社\U00020000的"  # an astral character too
    starts, lengths = (np.array(a) for a in zip(*[(s, n) for s in range(-1, len(text) + 1) for n in range(0, 6)]))
    for name in ("counts_at", "autonomy_at"):
        many = getattr(table, name)(text, starts, lengths)
        few = np.array([getattr(table, name)(text, [s], [n])[0] for s, n in zip(starts, lengths)])
        np.testing.assert_array_equal(few, many)  # NaN where the other has NaN
    assert (table.counts_at(text, starts, lengths) > 0).sum() > 20
    other = "国内生产总值办公室，新华社\U00020000的我们的共和国在"
    fresh = build_word_table(TOY + COMPOUNDS, max_n=4, min_count=1)
    np.testing.assert_array_equal(table.counts_at(other, starts, lengths), fresh.counts_at(other, starts, lengths))
    np.testing.assert_array_equal(table.autonomy(text), fresh.autonomy(text))


def test_room_looks_up_only_the_strings_inside_a_run():
    """autonomy_and_logp(..., room): the decoder's lookup, only strings of at most room[i]
    characters from character i; the others read as missing, the rest as without room."""
    table = build_word_table(TOY + COMPOUNDS, max_n=4, min_count=1)
    text = "我们的共和国，国内生产总值"
    room = np.array([1, 1, 1, 2, 1, 1, 0, 2, 1, 4, 3, 2, 1])  # as if runs were cut shorter
    full, limited = table.autonomy(text, 4), table.autonomy_and_logp(text, 4, room)[0]
    inside = np.arange(1, 5)[None, :] <= room[:, None]
    assert np.array_equal(limited[inside], full[inside], equal_nan=True) and np.isnan(limited[~inside]).all()
    assert not np.isnan(full[~inside]).all()  # strings past a room are in the table: left out


def test_key_index_finds_what_the_binary_search_finds():
    """hashindex.KeyIndex: the sorted position of every key that is there, found=False for the
    others; keys that share a home slot (a tiny table forces many) all stay findable; find_few,
    for a few queries in Python, finds the same."""
    from segmenter.words.hashindex import KeyIndex, find_keys

    rng = np.random.default_rng(1)
    for size in (1, 7, 5000):
        edges = np.array([0, 2**64 - 1], dtype=np.uint64)
        keys = np.unique(np.concatenate([rng.integers(0, 2**63, size).astype(np.uint64), edges]))
        queries = np.concatenate([keys, rng.integers(0, 2**63, 300).astype(np.uint64), keys[::3]])
        slot, found = KeyIndex(keys).find(queries)
        expected_slot, expected = find_keys(keys, queries)
        assert np.array_equal(found, expected) and np.array_equal(slot[found], expected_slot[found])
        assert found[: len(keys)].all() and not slot[~found].any()
        # find_few, the same probes in Python for a few queries: the slot, or -1 where absent
        assert KeyIndex(keys).find_few(queries.tolist()) == np.where(found, slot, -1).tolist()


def test_key_index_keys_whose_cluster_runs_past_the_last_slot_wrap_round():
    """KeyIndex places keys by a running max over their home slots: keys pushed past the table's
    last slot go to the first free slots from slot 0, and every lookup still finds them (keys made
    so that all five have the last slot of a 16-slot table as home)."""
    from segmenter.words.hashindex import _MIX, KeyIndex, find_keys

    inverse = pow(int(_MIX), -1, 2**64)
    last = 15 << 60  # home 15 of 16 slots: the top four bits of key * _MIX
    keys = np.array(sorted((last + t) * inverse % 2**64 for t in (1, 2, 3, 5, 8)), dtype=np.uint64)
    index = KeyIndex(keys)
    assert index.bits == 4 and (index._home(keys) == 15).all()
    assert sorted(index.table[[15, 0, 1, 2, 3]].tolist()) == list(range(5)) and (index.table[4:15] < 0).all()
    queries = np.concatenate([keys, keys + np.uint64(1)])
    slot, found = index.find(queries)
    expected_slot, expected = find_keys(keys, queries)
    assert np.array_equal(found, expected) and np.array_equal(slot[found], expected_slot[found])
    assert index.find_few(queries.tolist()) == np.where(found, slot, -1).tolist()


def test_find_keys_gives_the_same_slots_for_a_large_batch_of_queries():
    from segmenter.words.hashindex import SORTED_QUERIES, find_keys

    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(0, 2**63, 5000).astype(np.uint64))
    queries = np.concatenate([rng.choice(keys, SORTED_QUERIES), rng.integers(0, 2**63, 100).astype(np.uint64)])
    slot, found = find_keys(keys, queries)  # sorted first: at least SORTED_QUERIES
    plain = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    assert np.array_equal(slot, plain) and np.array_equal(found, keys[plain] == queries)
    assert found[:SORTED_QUERIES].all()
