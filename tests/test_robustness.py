"""Any input, nothing lost: property tests of the API, bad arguments, threads, CLI failures.

The properties hold for *any* str: words join back to the input, offsets tile it, no word is
empty or starts with a mark cut off its character, and the result of a text does not depend
on the call, the batch size or the other texts of its batch. Inputs are drawn from all of
Unicode (lone surrogates included) and from pieces chosen to hit the rules of text.py: Han of
the vocabulary and outside it, long Han runs (several model windows), emoji and ZWJ
sequences, flags, combining marks and variation selectors, controls, full-width forms, URLs,
numbers, kana, Hangul, Arabic.
"""
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
import unicodedata

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import HeadProfile, ModelLoadError, Segmenter
from segmenter.junctions import TextPlan

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


# -- bad arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [b"bytes", 3, 2.5, None, ("tuple",)])
def test_batch_items_must_be_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match=rf"texts\[1\] must be a str, got {type(bad).__name__}"):
        tiny_segmenter.segment_batch(["好", bad])


@pytest.mark.parametrize("bad", [None, b"bytes", 3])
def test_tokenize_wants_a_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match="text must be a str"):
        tiny_segmenter.tokenize(bad)


@pytest.mark.parametrize("bad", [5, None, b"bytes"])
def test_batch_must_be_an_iterable_of_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match="texts must be"):
        tiny_segmenter.segment_batch(bad)


@pytest.mark.parametrize("bad", [0, -1, "8", 2.5, True])
def test_bad_batch_size_per_call(tiny_segmenter, bad):
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        tiny_segmenter.segment_batch(["中国人民"], batch_size=bad)


@pytest.mark.parametrize("granularity", [True, [0.5], b"fine"])
def test_granularity_of_a_wrong_type(tiny_segmenter, granularity):
    with pytest.raises(TypeError, match="granularity must be a str or a number"):
        tiny_segmenter.segment("你好", granularity=granularity)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"batch_size": 0}, ValueError, "batch_size must be a positive int"),
        ({"batch_size": "64"}, ValueError, "batch_size must be a positive int"),
        ({"num_threads": 0}, ValueError, "num_threads must be a positive int or None"),
        ({"window": 2, "overlap": 2}, ValueError, "window must be an int >= 3"),
        ({"window": True}, ValueError, "window must be an int"),
        ({"window": 30}, ValueError, r"overlap must be an int in \[2, window\) = \[2, 30\), got 64 \(the default"),
        ({"window": 30, "overlap": 1}, ValueError, "overlap must be an int in"),
        ({"window": 30, "overlap": 8.0}, ValueError, "overlap must be an int in"),
        ({"granularity": "medium"}, ValueError, r"granularity must be one of \['coarse', 'default', 'fine'\]"),
        ({"device": "gpu"}, ValueError, "device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got 'gpu'"),
        ({"device": 3.5}, ValueError, "device must be 'cpu', 'cuda', 'cuda:N' or 'mps'"),
        ({"profile": "segmenter_heads.json"}, TypeError, "profile must be a HeadProfile or None, got str"),
    ],
)
def test_bad_constructor_arguments(tiny_model_dir, kwargs, error, message):
    with pytest.raises(error, match=message):
        Segmenter(tiny_model_dir, **kwargs)


@pytest.mark.parametrize("model", [3, b"/tmp/model", ["folder"]])
def test_model_of_a_wrong_type(model):
    with pytest.raises(TypeError, match="model must be a folder path or a hub name"):
        Segmenter(model)


# -- models: each broken folder fails at load time, with one clear error --------------------
def broken_copy(tiny_model_dir, tmp_path, name, content):
    import shutil

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(content(data) if callable(content) else content)
    return folder


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("model.safetensors", lambda data: data[: len(data) // 2], "corrupt|cannot load the weights"),  # cut short
        ("config.json", b"{not json", "not a valid model config"),
        ("vocab.txt", "的\n一\n".encode(), "lacks the special tokens"),
    ],
)
def test_broken_model_folder_fails_at_load(tiny_model_dir, tmp_path, name, content, message):
    folder = broken_copy(tiny_model_dir, tmp_path, name, content)
    with pytest.raises(ModelLoadError, match=message):
        Segmenter(folder, window=30, overlap=8)


def test_model_path_that_is_a_file(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="is a file; expected a model folder"):
        Segmenter(tmp_path / "model.bin")


def test_profile_given_in_code_naming_a_missing_head(tiny_model_dir):
    with pytest.raises(ValueError, match=r"names heads \[\(1, 7\)\]"):
        Segmenter(tiny_model_dir, profile=HeadProfile(heads=[(1, 7)], weights=[1.0]))


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


# -- command line -----------------------------------------------------------------------------
def cli_command(model, *args):
    return [sys.executable, "-m", "segmenter", "-q", "--threads", "1", "-m", str(model), *map(str, args)]


def cli(model, *args, stdin=b"", env=None, stdout=subprocess.PIPE):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run(cli_command(model, *args), input=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env, timeout=300)


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


@pytest.mark.slow
def test_ctrl_c_leaves_the_old_output_untouched(tiny_model_dir, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("我们都是中国人民的好朋友。\n" * 100_000, encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_text("old\n", encoding="utf-8")
    # SIGINT as a terminal sends it, even when this run's shell ignores it (a job started with &)
    process = subprocess.Popen(cli_command(tiny_model_dir, "-o", out, big), stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not leftovers(tmp_path) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the temporary output appears once the model is loaded
    time.sleep(0.5)  # well into writing
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err.decode()
    assert b"interrupted" in err and b"Traceback" not in err
    assert out.read_text(encoding="utf-8") == "old\n"
    assert not leftovers(tmp_path)


@pytest.mark.slow
def test_failure_after_many_lines_leaves_no_half_written_output(tiny_model_dir, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("好朋友。\n".encode() * 2000 + b"\xff\n")  # several chunks are written first
    out = tmp_path / "out.txt"
    result = cli(tiny_model_dir, "-o", out, bad)
    assert result.returncode == 2 and b"line 2001" in result.stderr and b"Traceback" not in result.stderr
    assert not out.exists() and not leftovers(tmp_path)


@pytest.mark.slow
def test_output_file_modes_and_links(tiny_model_dir, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("中国\n", encoding="utf-8")
    new, old, link, linked = (tmp_path / name for name in ("new.txt", "old.txt", "link.txt", "linked.txt"))
    for path in (old, linked):
        path.write_text("old\n")
        path.chmod(0o640)
    link.symlink_to(linked)
    for out in (new, old, link):
        assert cli(tiny_model_dir, "-o", out, text).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    assert stat.S_IMODE(old.stat().st_mode) == stat.S_IMODE(linked.stat().st_mode) == 0o640
    assert link.is_symlink()  # the file behind the link is replaced, not the link
    assert old.read_text(encoding="utf-8").replace(" ", "") == linked.read_text(encoding="utf-8").replace(" ", "") == "中国\n"


@pytest.mark.slow
def test_output_to_a_fifo_is_written_in_place(tiny_model_dir, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = cli(tiny_model_dir, "-o", fifo, stdin="我们\n".encode())
    reader.join(timeout=30)
    assert result.returncode == 0, result.stderr.decode()
    assert received and received[0].decode().replace(" ", "") == "我们\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a regular file


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.slow
def test_full_disk_on_stdout(tiny_model_dir):
    with open("/dev/full", "wb") as full:
        result = cli(tiny_model_dir, stdin="我们\n".encode() * 10, stdout=full)
    assert result.returncode == 2
    assert b"cannot write standard output" in result.stderr and b"Traceback" not in result.stderr
    assert b"Exception ignored" not in result.stderr


@pytest.mark.slow
def test_output_is_utf8_whatever_the_locale(tiny_model_dir):
    result = cli(tiny_model_dir, stdin="中国，café\n".encode(), env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8").replace(" ", "") == "中国，café\n"


@pytest.mark.slow
def test_encoding_errors_replace_never_yields_a_surrogate(tiny_model_dir, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xed\xa0\x80\xff" + "中国\n".encode() + b"\xc3\n")  # an encoded surrogate, junk, a cut sequence
    result = cli(tiny_model_dir, "--encoding-errors", "replace", bad)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8").replace(" ", "").splitlines() == ["\ufffd" * 4 + "中国", "\ufffd"]
