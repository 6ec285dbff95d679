"""Any input, nothing lost: property tests of the API, hard inputs, threads sharing a segmenter.

The properties hold for *any* str: words join back to the input, offsets tile it, no word is
empty or starts with a mark cut off its character, and the result of a text does not depend
on the call, the batch size, the other texts of its batch or the other threads. Inputs are
drawn from all of Unicode (lone surrogates included) and from pieces chosen to hit the rules
of text.py: Han of the vocabulary and outside it, long Han runs (several model windows), emoji
and ZWJ sequences, flags, combining marks and variation selectors, controls, full-width forms,
URLs, numbers, kana, Hangul, Arabic. Bad arguments, broken models and CLI failures:
test_robustness_failures.py.
"""
import random
import threading
import unicodedata

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import Segmenter
from segmenter.text.plan import TextPlan

from conftest import TINY_CHARS

# Hypothesis budget: the whole module runs in well under 2 minutes on 2 shared cores.
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    # The tiny model's matrices are small: on 2 cores shared with other jobs, torch's thread
    # pool spends far more time waiting for a core than computing (50x slower than 1 thread
    # when the cores are busy). The scores are the same with 1 or 2 threads.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- inputs -----------------------------------------------------------------------------------
PIECES = [
    "", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2028", "\x0b", "\x0c", "\x1c", "\x85",  # whitespace
    "\x00", "\x07", "\x1b[31m", "\x7f", "\ufeff", "\u200b", "\u200e", "\u202e",  # controls, format chars
    "\udcff", "\udc80", "\ud800", "\udfff",  # lone surrogates (surrogateescape)
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "❤\ufe0f", "1\ufe0f\u20e3", "🇨🇳", "🇺", "🏴\U000e0067\U000e0062\U000e007f",  # emoji
    "e\u0301", "\u0301", "中\u0301", "葛\U000e0100", "\u200d", "\u200d中", "\ufe0f",  # marks, joiners
    "ＡＢＣ", "１２３", "％", "！", "（", "ｱｲｳ", "㈱", "ﬁ",  # full-width, compatibility forms
    "abc", "Don't", "café", "MP3", "3.14", "1,000", "12%", "https://example.com/a?b=1", "a.b@example.org",
    "——", "……", "---", "。", "，", "“", "”", "《", "》",
    "ひらがな", "カタカナー", "한국어", "مرحبا", "שלום", "Привет", "ไทย", "αβγ",  # other scripts
    "〇", "○", "龘", "𠀀", "𪚥", "㐀", "豈",  # Han outside the tiny vocabulary, all planes
    "１９９７年", "１２月３１日", "年", "３０万人", "一个", "两条", "经营者", "社", "３．５亿",  # what the conventions act on
]
HAN = st.text(alphabet=TINY_CHARS[:600], min_size=1, max_size=70)  # up to ~3 windows of 30
PIECE = st.one_of(st.sampled_from(PIECES), HAN)
MIXED = st.lists(PIECE, max_size=25).map("".join)
ANY_TEXT = st.one_of(MIXED, st.text(st.characters(exclude_categories=()), max_size=80))


def check_words(text, words):
    assert "".join(words) == text
    assert all(words), "empty word"
    position = 0
    for word in words:
        if position and unicodedata.category(word[0])[0] == "M":
            assert text[position - 1].isspace(), f"{word!r} starts with a mark cut off {text[position - 1]!r}"
        position += len(word)


# -- properties -------------------------------------------------------------------------------
@PROPERTY
@given(text=ANY_TEXT, granularity=st.sampled_from(["fine", "default", "coarse"]))
def test_any_text_is_segmented_losslessly(tiny_segmenter, text, granularity):
    words = tiny_segmenter.segment(text, granularity)
    check_words(text, words)
    assert tiny_segmenter.segment(text, granularity) == words  # deterministic across calls


@pytest.fixture(scope="module")
def embedded_segmenter():
    return Segmenter()  # word decoding, cohesive pairs and the conventions, with the shipped table


SHIPPED_HAN = st.text(alphabet="中华人民共和国经营者一个两条年月日本报社会主义生产总值新华社的了是在", min_size=1, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.lists(st.one_of(st.sampled_from(PIECES), SHIPPED_HAN), max_size=12).map("".join), min_size=1, max_size=4),
       granularity=st.sampled_from(["fine", "default", "coarse", 0.3, 0.8]))
def test_the_embedded_default_is_lossless_at_every_level(embedded_segmenter, texts, granularity):
    batch = embedded_segmenter.segment_batch(texts, granularity)
    for text, words in zip(texts, batch):
        check_words(text, words)
    assert batch == [embedded_segmenter.segment(text, granularity) for text in texts]  # alone or batched


@PROPERTY
@given(text=ANY_TEXT)
def test_tokenize_offsets_tile_any_text(tiny_segmenter, text):
    position = 0
    for word, start, end in tiny_segmenter.tokenize(text):
        assert start == position < end and text[start:end] == word
        position = end
    assert position == len(text)


@PROPERTY
@given(texts=st.lists(MIXED, max_size=6), batch_size=st.integers(1, 9), granularity=st.sampled_from(["fine", "default", 0.8]))
def test_a_text_segments_the_same_alone_or_in_any_batch(tiny_segmenter, texts, batch_size, granularity):
    alone = [tiny_segmenter.segment(text, granularity) for text in texts]
    assert tiny_segmenter.segment_batch(texts, granularity, batch_size=batch_size) == alone
    assert tiny_segmenter.segment_batch(texts[::-1], granularity, batch_size=batch_size) == alone[::-1]


def test_window_scores_do_not_depend_on_the_batch(tiny_segmenter):
    """Bit-identical scores for a window alone and in shuffled batches of any size.

    Words could hide a difference in the 7th digit (a cut flips only when the combined score
    is that close to the threshold), so this compares the raw per-head scores.
    """
    rng = random.Random(0)
    reader, vocab = tiny_segmenter.reader, tiny_segmenter.vocab
    # Windows of every length 1..30: every padded shape (8, 16, 24, 32), many of each.
    windows = [vocab.encode("".join(rng.choice(TINY_CHARS) for _ in range(n))) for n in list(range(1, 31)) * 8]
    alone = [reader.read([w], 64)[0] for w in windows]
    for batch_size in (1, 2, 5, 64, 1000):
        order = list(range(len(windows)))
        rng.shuffle(order)
        batched = reader.read([windows[i] for i in order], batch_size)
        for row, i in enumerate(order):
            assert np.array_equal(batched[row], alone[i]), f"window {i} (length {len(windows[i])}), batch_size {batch_size}"


def test_junction_scores_do_not_depend_on_the_batch(tiny_segmenter):
    rng = random.Random(1)
    texts = ["".join(rng.choice(TINY_CHARS + " ab1") for _ in range(rng.randint(0, 120))) for _ in range(150)]
    alone = [tiny_segmenter.score_texts([t], show_progress=False)[0].scores for t in texts]
    for batch_size in (3, 64):
        order = list(range(len(texts)))
        rng.shuffle(order)
        plans = tiny_segmenter.score_texts([texts[i] for i in order], batch_size, show_progress=False)
        assert all(np.array_equal(plan.scores, alone[i]) for plan, i in zip(plans, order))


def test_a_text_of_several_lines_reads_each_line_alone(tiny_segmenter):
    """A window never holds two lines (the model sequence leaves the line break out): the
    scores, and so the words, of a text of lines are those of each line alone, whatever the
    line breaks (\n, \r\n, blank lines, U+2028) and however long a line is (several windows)."""
    rng = random.Random(2)
    lines = ["".join(rng.choice(TINY_CHARS + "，。 ab1") for _ in range(rng.randint(0, 70))) for _ in range(40)]
    # a line's list number takes its period after any break (１．); a joiner ending a line joins no break
    lines[5:5] = ["１．" + lines[1], "3." + lines[2], TINY_CHARS[:5] + "\u200d"]
    alone = [tiny_segmenter.score_texts([line], show_progress=False)[0].scores for line in lines]
    words = [w for line in lines for w in tiny_segmenter.segment(line) if w.strip()]
    for breaks in ("\n", "\r\n", "\n\n", " \u2028 ", "\x0c", "\x85"):
        plan = tiny_segmenter.score_texts([breaks.join(lines)], show_progress=False)[0]
        np.testing.assert_array_equal(plan.scores, np.concatenate(alone, axis=1))
        # the words but spaces (a line's last space and the break are one run)
        assert [w for w in tiny_segmenter.segment(breaks.join(lines)) if w.strip()] == words, repr(breaks)


# -- explicit hard inputs ---------------------------------------------------------------------
def test_surrogate_escapes_round_trip_to_the_original_bytes(tiny_segmenter):
    raw = "中国人民".encode() + b"\xff\xfe" + "好朋友。".encode()[:-1] + b"\x80abc\xed\xa0\x80" + "的".encode()
    text = raw.decode("utf-8", "surrogateescape")
    assert "\udcff" in text
    words = tiny_segmenter.segment(text)
    check_words(text, words)
    assert "".join(words).encode("utf-8", "surrogateescape") == raw
    plan = TextPlan(text)  # the model sees them (as [UNK]), nothing chokes on them
    assert len(tiny_segmenter.vocab.encode("".join(text[i] for i in plan.positions))) == len(plan.positions)


@pytest.mark.parametrize(
    "text, kept",
    [
        ("中\u0301国", "中\u0301"),  # a combining mark stays with its Han character
        ("葛\U000e0100城", "葛\U000e0100"),  # an ideographic variation selector too
        ("café和naïve", "café"),  # precomposed Latin letters are Latin letters
        ("看🇨🇳国旗", "🇨🇳"),  # a flag is one word
        ("我👨\u200d👩\u200d👧家", "👨\u200d👩\u200d👧"),  # a ZWJ family is one word
    ],
)
def test_marks_and_sequences_stay_whole(tiny_segmenter, text, kept):
    words = tiny_segmenter.segment(text)
    check_words(text, words)
    assert kept in words


@pytest.mark.slow
def test_one_megabyte_single_line(tiny_segmenter):
    rng = random.Random(2)
    pieces = [p for p in PIECES if "\n" not in p] + list(TINY_CHARS) * 4
    text = "".join(rng.choice(pieces) for _ in range(330_000))
    assert len(text.encode("utf-8", "surrogatepass")) >= 1_000_000
    words = tiny_segmenter.segment(text)  # its speed is the benchmark's (benchmarks/big_input.py)
    assert "".join(words) == text and all(words)


# -- threads ----------------------------------------------------------------------------------
def test_threads_sharing_one_segmenter_get_sequential_results(tiny_segmenter):
    """Threads that run the model at the same time, on windows of different shapes, must each
    get the attention weights of their own batch (nothing may be shared between calls)."""
    rng = random.Random(3)
    jobs = [
        ["".join(rng.choice(TINY_CHARS) for _ in range(rng.choice([3, 9, 20, 45, 100]))) for _ in range(rng.randint(1, 12))]
        for _ in range(24)
    ]
    expected = [tiny_segmenter.segment_batch(texts, batch_size=4) for texts in jobs]
    results, errors = [None] * len(jobs), []
    start = threading.Barrier(6)

    def work(worker):
        try:
            start.wait()
            for j in range(worker, len(jobs), 6):
                results[j] = tiny_segmenter.segment_batch(jobs[j], batch_size=4)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert results == expected
