"""The small-input path (issue 57: one short text per call) gives the batch path's words.

A short text is decoded in plain Python (words/decoding_few.py) and segment() skips the batch
machinery; these check, over random texts of every kind of character, that segment(text) is
segment_batch([text, others...])[0], that the words join back to the text, and that the Python
decoder decides every junction as the numpy one does (decoding.FEW_CHARS = 0 turns it off) and the
conventions' Python paths for a few words (FEW_WORDS = 0 in word_rules and number_rules turns
them off, and text.batch.FEW_ENDS = -1 those of with_ends and without_ends) and a short batch text
(text.batch.HAVING_IN_PYTHON = 0) change no word; nor does a short text's encoding in Python
(text.vocab.ENCODE_BY_DICT_CHARS = 0: the numpy look-up).
"""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import Segmenter
from segmenter.model.folders import SHIPPED_MODELS
from segmenter.standards import number_rules, word_rules
from segmenter.text import batch as batch_module
from segmenter.text import vocab as vocab_module
from segmenter.text.batch import Texts
from segmenter.train.corpus import read_gold
from segmenter.words import decoding
from segmenter.words.decoding_few import TextLookups, viterbi_run, word_ends

from conftest import GOLD

pytestmark = pytest.mark.slow  # the shipped models

HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"
LATIN = "abcxyzABCXYZ"
DIGITS = "0123456789０１２３４５６７８９"
PUNCT = "，。！？、；：“”（）《》—…-.,!?:%/"
SPACES = " \t\u3000\n"
NUMBER_HAN = "一二三四五六七八九十百千万亿零两第个年月日次"
ALPHABET = HAN + NUMBER_HAN + LATIN + DIGITS + PUNCT + SPACES
SENTENCES = ["我爱北京天安门", "今天天气不错", "他说的确实在理", "结婚的和尚未结婚的", "１９９７年２月５日，江泽民说",
             "第十五次全国代表大会", "翻山越岭，中华人民共和国成立了", "iPhone 15 售价5999元。", "你好！为什么？",
             "百分之四十二点八的人认为不是", "联合国大会在纽约召开", ""]

texts = st.one_of(
    st.text(alphabet=HAN, max_size=30),
    st.text(alphabet=ALPHABET, max_size=40),
    st.lists(st.sampled_from(SENTENCES + list(PUNCT) + [" ", "12", "abc"]), max_size=6).map("".join),
)


@pytest.fixture(scope="module", params=list(SHIPPED_MODELS))
def shipped(request):
    return Segmenter(request.param if request.param != "default" else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, others=st.lists(texts, max_size=3), granularity=st.sampled_from(["fine", "default", "coarse"]))
def test_segment_is_the_batch_path(shipped, text, others, granularity):
    words = shipped.segment(text, granularity)
    assert "".join(words) == text
    assert words == shipped.segment_batch([text, *others], granularity)[0]
    assert words == shipped.lcut(text, granularity=granularity)
    assert [t.word for t in shipped.tokenize(text, granularity=granularity)] == words


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, others=st.lists(texts, max_size=3), standard=st.sampled_from(["general", "pku", "msr", "ud"]),
       granularity=st.sampled_from(["fine", "default", "coarse"]))
def test_the_python_decoder_decides_as_the_numpy_one(shipped, text, others, standard, granularity, monkeypatch):
    plans = shipped.score_texts([text, *others])  # a few texts: one batch text of a few characters
    for batch in ([plans[0]], plans):
        few = shipped.assemble(batch, granularity, standard=standard)
        with monkeypatch.context() as patch:
            patch.setattr(decoding, "FEW_CHARS", 0)
            numpy_rules(patch)
            assert few == shipped.assemble(batch, granularity, standard=standard)


def numpy_rules(patch) -> None:
    """The conventions' numpy paths for every batch, however few its words (the Python paths off)."""
    patch.setattr(word_rules, "FEW_WORDS", 0)
    patch.setattr(number_rules, "FEW_WORDS", 0)
    patch.setattr(batch_module, "HAVING_IN_PYTHON", 0)
    patch.setattr(batch_module, "FEW_ENDS", -1)


# Words the conventions' few-words paths act on (FEW_WORDS): function words led or ended
# (就是 已有 有着 说你 不需要 生活中 尤其是, and the ones kept: 已经 这里 为了 不得不), MSR's coarse leads
# and pairs (不是 也是), compounds of four and five characters (高等法院 联合国大会 画蛇添足), and
# words of four that are numbers or transliterations, no compounds (巴西利亚 安东尼奥 二十五年), and
# two-character words before a suffix (经营|者 出版|社 浙江|省 中国|队), and numerals before
# classifiers and digits before units (两个 三条 1997年; 这个 这一 第一次 第十五次 一个 一些: split_counts' tests), which the
# rules find by Texts.having.
RULE_SENTENCES = ["就是这样，他已有三本书，已经说你好了", "不需要担心，生活中尤其是看着他们的时候", "这里为了他们不得不说",
                  "也是不是都是，不要紧", "高等法院在联合国大会上说画蛇添足", "中华人民共和国成立了", "翻山越岭的人有着梦想",
                  "巴西利亚的安东尼奥在二十五年前说三心二意", "第九十五届世界杯足球赛",
                  "经营者在出版社说浙江省上海市的中国队", "两个人三条路，１９９７年２月有30万元",
                  "这个问题很复杂，这一天第一次，第十五次有一个人和一些书"]


@pytest.mark.parametrize("text", RULE_SENTENCES)
@pytest.mark.parametrize("standard", ["general", "pku", "msr", "ud"])
def test_the_rules_few_words_paths_split_as_the_numpy_ones(shipped, text, standard, monkeypatch):
    plans = shipped.score_texts([text])
    for granularity in ("fine", "default", "coarse"):
        few = shipped.assemble(plans, granularity, standard=standard)
        with monkeypatch.context() as patch:
            numpy_rules(patch)
            assert few == shipped.assemble(plans, granularity, standard=standard)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(texts, min_size=1, max_size=4), characters=st.text(alphabet=NUMBER_HAN + DIGITS + PUNCT, max_size=6),
       then=st.one_of(st.none(), st.text(alphabet=NUMBER_HAN + DIGITS + HAN[:40], max_size=6)))
def test_texts_having_in_python_is_the_numpy_answer(texts, characters, then):
    """Texts.having of a short batch (HAVING_IN_PYTHON) asks a regex's matches in Python: the texts
    the code points' look-up in numpy finds."""
    joined = Texts(texts, [[] for _ in texts])
    found = joined.having(characters, then)
    original = batch_module.HAVING_IN_PYTHON
    try:
        batch_module.HAVING_IN_PYTHON = 0
        assert found == joined.having(characters, then)
    finally:
        batch_module.HAVING_IN_PYTHON = original


@pytest.mark.parametrize("text", SENTENCES)
def test_each_sentence_alone_and_in_a_batch(shipped, text):
    alone = shipped.segment(text)
    assert alone == shipped.segment_batch(SENTENCES)[SENTENCES.index(text)]
    assert "".join(alone) == text


def _same(a, b) -> bool:
    """Equal lists of floats, NaN equal to NaN, and of the same value bit for bit (float16's rounding)."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_the_few_strings_lookup_gives_the_tables_values(shipped, text):
    """One short text's lookup (hashindex.text_hashes, WordTable.look_up_few) gives every string
    what the table's own lookups give: autonomy (NaN where missing), counts, and log p, whose
    missing value is the unigram's `unseen` rounded as pick rounds it inside the text (float16),
    and as is past the text's end."""
    check_few_strings(shipped.word_table, text)


def test_a_long_texts_strings_are_read_straight_as_the_table_reads_them(shipped):
    """A text with more strings of a length than look_up_few keeps (table.RECENT_MOST) gets the same values."""
    from segmenter.words.table import RECENT_MOST

    text = "".join(SENTENCES + RULE_SENTENCES)[: 3 * RECENT_MOST]
    check_few_strings(shipped.word_table, text)
    check_few_strings(shipped.word_table, text[:RECENT_MOST])  # both ways on the same strings: the kept ones too
    check_few_strings(shipped.word_table, text)


def test_a_long_run_of_short_texts_builds_the_indexes_and_reads_the_same_values(shipped, monkeypatch):
    """look_up_few builds each length's KeyIndex on its first lookup after INDEX_AFTER_STRINGS
    strings searched (here 50) and then probes it (hashindex.KeyIndex.find_few): every string gets
    what the table's binary search gives (pick_few with and without the index alike)."""
    import copy

    import numpy as np

    from segmenter.words import table as table_module
    from segmenter.words.hashindex import missing_value, pick_few

    table = copy.copy(shipped.word_table)  # its own indexes and counts (__getstate__), the same arrays
    monkeypatch.setattr(table_module, "INDEX_AFTER_STRINGS", 50)
    text = "".join(SENTENCES + RULE_SENTENCES)
    check_few_strings(table, text[:8])
    assert not table._indexes  # 8 + 7 + ... + 3 strings searched: none built yet
    for start in range(0, len(text) - 40, 40):  # each length's index built on its first lookup past 50 strings
        check_few_strings(table, text[start : start + 40])
    assert sorted(table._indexes) == sorted(table.tables)
    rng = np.random.default_rng(3)
    for n in (1, 3, 5):
        keys = table.tables[n][0]
        queries = rng.choice(keys, 30).tolist() + rng.integers(0, 2**63, 30).tolist()
        columns = [(values, missing_value(values, missing)) for values, missing
                   in (table._column(n, name) for name in ("autonomy", "counts", "logp"))]
        assert _same_rows(pick_few(columns, keys, queries, table._indexes[n]), pick_few(columns, keys, queries))


def _same_rows(a, b) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def check_few_strings(table, text: str) -> None:
    few = TextLookups(table, text)
    strings = few.strings
    columns = ("autonomy", "counts", "logp")
    values = dict(zip(columns, table._values(text, table.max_n, columns)))
    for n in range(1, strings.longest + 1):
        for name in columns:
            assert _same(strings.row(name, n), values[name][: len(text) - n + 1, n - 1].tolist())
    starts = [s for s in range(-1, len(text) + 1) for _ in range(table.max_n + 2)]
    lengths = [n for _ in range(-1, len(text) + 1) for n in range(table.max_n + 2)]
    for name in ("counts_at", "autonomy_at", "logp_at"):
        assert _same(getattr(few, name)(text, starts, lengths).tolist(),
                     getattr(table, name)(text, starts, lengths).tolist()), name


def test_a_string_the_table_lacks_gets_the_float16_unseen_log_p(shipped):
    table = shipped.word_table
    text = "鿰鿱鿲"  # Han characters the raw text never had
    few = TextLookups(table, text).logp_at(text, [0], [1])[0]
    assert table.logp_at(text, [0], [1])[0] == few != table.unigram["unseen"]


def _viterbi_by_the_definition(gain, value, size, n):
    """viterbi_run term by term: every candidate length at every end, a word starting before the
    run scoring -inf plus its value (NaN where that value is NaN or +inf), the first NaN or the
    first best kept."""
    max_len = len(value[0]) if value else 0
    best, back = [0.0], [0]
    for end in range(1, n + 1):
        top, chosen = -math.inf, 1
        for length in range(1, max_len + 1):
            start = end - length
            candidate = (best[start] if start >= 0 else -math.inf) + value[max(start, 0)][length - 1]
            if candidate != candidate:
                top, chosen = candidate, length
                break
            if candidate > top:
                top, chosen = candidate, length
        best.append(top + gain[end - 1])
        back.append(chosen)
    return word_ends(back, size)  # the walk back is shared: the recursion above is what this checks


def test_the_python_viterbi_keeps_ties_nan_and_impossible_words():
    rng = random.Random(7)
    choices = [-2.0, -1.0, 0.0, 1.0, 2.0, -math.inf, math.inf, math.nan]
    for _ in range(3000):
        size = rng.randint(1, 8)
        n = size + rng.choice([0, 0, 2])
        max_len = rng.randint(1, 6)
        weights = [8, 8, 8, 8, 8, 6, 1, 1]
        value = [rng.choices(choices, weights, k=max_len) for _ in range(n)]
        gain = rng.choices(choices[:5], k=n)
        assert viterbi_run(gain, value, size, n) == _viterbi_by_the_definition(gain, value, size, n)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, seed=st.integers(0, 2**16))
def test_kept_slots_give_what_a_fresh_search_gives(shipped, text, seed):
    """WordTable keeps where the last text's strings are (_look_up_at): lookups of a text in any
    order, some strings searched before and some not, read what a search of each gives."""
    table = shipped.word_table
    text = text * 3  # the same strings at several places
    rng = random.Random(seed)
    starts = [rng.randint(-1, len(text)) for _ in range(40)]
    lengths = [rng.randint(0, table.max_n + 1) for _ in range(40)]

    def fresh(name):
        out = []
        for s, n in zip(starts, lengths):
            missing = table._column(1, name)[1]
            if 1 <= n <= table.max_n and 0 <= s and s + n <= len(text):
                hashes = table._string_hashes(text, n)[n - 1]
                out.append(float(table._look_up(n, hashes[[s]], (name,))[0][0]))
            else:
                out.append(float(missing))
        return out

    half = len(starts) // 2
    assert _same(table.counts_at(text, starts[:half], lengths[:half]).tolist(), fresh("counts")[:half])
    table._values(text, None, ("autonomy",), room=None)
    for name in ("counts_at", "autonomy_at", "logp_at"):
        assert _same(getattr(table, name)(text, starts, lengths).tolist(), fresh(name[: -len("_at")]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_a_short_texts_ids_are_the_numpy_look_ups(shipped, text, monkeypatch):
    """CharVocab.encode of a text of ENCODE_BY_DICT_CHARS characters or fewer, by character in
    Python, gives the ids of the numpy look-up (any character: past the BMP, a lone surrogate,
    full-width)."""
    vocab = shipped.reader.vocab
    ids = vocab.encode(text)
    with monkeypatch.context() as patch:
        patch.setattr(vocab_module, "ENCODE_BY_DICT_CHARS", -1)
        expected = vocab.encode(text)
    assert ids.dtype == expected.dtype and ids.tolist() == expected.tolist()


def long_texts() -> list[str]:
    """Texts of 129-256 characters (decoding.FEW_CHARS): the sentences above joined, and dev lines of
    that length where ../shared has them (pku_dev, weibo_dev, novel_dev)."""
    rng = random.Random(7)
    pool = SENTENCES + RULE_SENTENCES
    out = []
    while len(out) < 12:
        text = "".join(rng.sample(pool, rng.randint(4, 12)))
        if decoding.FEW_CHARS // 2 < len(text) <= decoding.FEW_CHARS:
            out.append(text)
    for name in ("pku_dev", "weibo_dev", "novel_dev"):
        if (GOLD / f"{name}.txt").is_file():
            lines = ("".join(words) for words in read_gold(GOLD / f"{name}.txt"))
            out += [line for line in lines if decoding.FEW_CHARS // 2 < len(line) <= decoding.FEW_CHARS][:10]
    return out


@pytest.mark.parametrize("standard", ["general", "pku", "msr", "ud"])
def test_a_text_of_up_to_few_chars_is_decoded_as_numpy_decodes_it(shipped, standard, monkeypatch):
    """The Python decoder up to its longest texts (decoding.FEW_CHARS), one text and a batch of them."""
    texts = long_texts()
    plans = shipped.score_texts(texts)
    for granularity in ("fine", "default", "coarse"):
        few = [shipped.assemble([plan], granularity, standard=standard)[0] for plan in plans]
        with monkeypatch.context() as patch:
            patch.setattr(decoding, "FEW_CHARS", 0)
            assert few == [shipped.assemble([plan], granularity, standard=standard)[0] for plan in plans]
            assert few == shipped.assemble(plans, granularity, standard=standard)  # a batch: numpy both ways


def test_a_short_shapes_own_session_reads_the_general_sessions_scores_to_the_bit():
    """onnx_engine.read_one: after FIXED_AFTER calls of a padded length up to FIXED_TOKENS, windows of
    that length run on a session built for the shape (1, T), of the graph without its score tail;
    the scores read from its logits are the general session's bit for bit (on dev sentences'
    pieces of 1 to 14 characters), and so are those of windows left to the general session (rows
    near the floor); one call builds none, a longer window never gets one, and a reader that has
    them still pickles."""
    import pickle

    import numpy as np

    from segmenter.model import onnx_engine
    from segmenter.text.windows import padded_length

    seg = Segmenter(num_threads=1)
    reader = seg.reader
    seg.lcut("我爱北京天安门")
    assert reader._fixed == {}  # one sentence, as the CLI segments it: no session built
    lines = read_gold(GOLD / "ud_gsdsimp_dev.txt")[:300] + read_gold(GOLD / "weibo_dev.txt")[:300]
    pieces = [text[start : start + size] for text in map("".join, lines) for start, size in ((0, 14), (3, 5), (9, 1))]
    pieces = [piece for piece in pieces if piece]
    general = [reader.session.run(None, _feeds(reader, piece))[0] for piece in pieces]
    for _ in range(onnx_engine.FIXED_AFTER + 1):
        for piece in ("一二三四五", "一二三四五六七八九十一二三四", "一二三四五六七八九十一二三四五"):
            reader.read_one(reader.vocab.encode(piece))
    assert sorted(reader._fixed) == [8, 16] == sorted({int(padded_length(len(p))) for p in pieces})
    assert all(reader._fixed[int(padded_length(len(piece)))] is not reader.session for piece in pieces)
    for piece, scores in zip(pieces, general):
        np.testing.assert_array_equal(reader.read_one(reader.vocab.encode(piece)), scores[0, :, : len(piece) - 1])
    with pytest.MonkeyPatch.context() as patch:  # every window left to the general session's tail
        patch.setattr(onnx_engine, "NEAR_MARGIN", 1e9)
        for piece, scores in zip(pieces[:60], general):
            np.testing.assert_array_equal(reader.read_one(reader.vocab.encode(piece)), scores[0, :, : len(piece) - 1])
    copy = pickle.loads(pickle.dumps(reader))
    assert copy._fixed == {} and copy.read_one(reader.vocab.encode(pieces[0])).shape == general[0][0, :, :13].shape


def test_threads_read_short_windows_at_once_each_on_its_own_buffers():
    """onnx_engine.BoundWindow: each thread fills and reads its own bound arrays, so threads that
    read short windows at once (segmenter serve's) get each window's own scores, those of the
    general session, and a window's scores are not overwritten by the next call's."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from segmenter.model import onnx_engine

    reader = Segmenter(num_threads=1).reader
    lines = read_gold(GOLD / "pku_dev.txt")[:200]
    pieces = [text[:size] for text, size in zip(map("".join, lines), range(3, 10_000)) if len(text) >= 2]
    pieces = [piece[: 2 + i % 13] for i, piece in enumerate(pieces)]
    general = [reader.session.run(None, _feeds(reader, piece))[0][0, :, : len(piece) - 1] for piece in pieces]
    for _ in range(onnx_engine.FIXED_AFTER + 1):
        for piece in ("一二三四五", "一二三四五六七八九十一二三四"):
            reader.read_one(reader.vocab.encode(piece))
    first = reader.read_one(reader.vocab.encode(pieces[0]))
    kept = first.copy()
    reader.read_one(reader.vocab.encode(pieces[1]))
    np.testing.assert_array_equal(first, kept)

    def read_all(offset: int) -> list:
        order = list(range(len(pieces)))
        order = order[offset:] + order[:offset]
        return [(i, reader.read_one(reader.vocab.encode(pieces[i]))) for i in order for _ in range(2)]

    with ThreadPoolExecutor(4) as pool:
        for found in pool.map(read_all, (0, 50, 100, 150)):
            for i, scores in found:
                np.testing.assert_array_equal(scores, general[i])


def test_a_binding_that_fails_leaves_its_length_to_the_general_session(monkeypatch):
    """A short length whose BoundWindow cannot be made (onnxruntime refuses the binding) is read
    by the general session, with its scores, and is never tried again."""
    import numpy as np

    from segmenter.model import onnx_engine

    reader = Segmenter(num_threads=1).reader
    tried = []

    def refuse(*args):
        tried.append(args[1])
        raise RuntimeError("no binding")

    monkeypatch.setattr(onnx_engine, "BoundWindow", refuse)
    piece = "我爱北京天安门"
    general = reader.session.run(None, _feeds(reader, piece))[0][0, :, : len(piece) - 1]
    for _ in range(onnx_engine.FIXED_AFTER + 3):
        np.testing.assert_array_equal(reader.read_one(reader.vocab.encode(piece)), general)
    assert tried == [16] and reader._fixed_calls[16] == -1 and 16 not in reader._fixed


def _feeds(reader, text):
    """The general session's (1, T) feeds of one window, as windows.collate makes them."""
    from segmenter.model.reader import batch_ids
    from segmenter.text.windows import padded_length

    ids, mask, _ = batch_ids([reader.vocab.encode(text)], int(padded_length(len(text))), reader.vocab)
    return {"input_ids": ids, "attention_mask": mask.astype("int64")}
