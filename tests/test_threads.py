"""One Segmenter shared by threads: user-dictionary changes are atomic for the segmenting threads
(a batch is cut with the dictionary before a change or after it, never half), and threads cut
what one thread cuts."""
from __future__ import annotations

import io
import itertools
import sys
import threading

import pytest

from segmenter import Segmenter
from segmenter.text.runs import HAN_SPAN_RE

TEXTS = [
    "我爱北京天安门，天安门上太阳升。",
    "北京大学生前来应聘",
    "他来到了网易杭研大厦",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "天安门广场在北京市中心",
]
READERS, ROUNDS = 8, 12


@pytest.fixture(autouse=True)
def _switch_often():
    """Threads take turns every 10 us instead of 5 ms: a change then often lands inside a batch."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def joined_pair(segmenter: Segmenter, texts: list[str]) -> str:
    """Two adjacent Han words of the output, joined: a user word that changes it."""
    for words in segmenter.segment_batch(texts):
        for a, b in itertools.pairwise(words):
            if HAN_SPAN_RE.fullmatch(a + b):
                return a + b
    raise AssertionError("no two adjacent Han words to join")


def run_threads(target, count: int) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded():
        try:
            target()
        except BaseException as err:  # noqa: BLE001 (reported by the test)
            errors.append(err)

    threads = [threading.Thread(target=guarded) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    return errors


def check_changes_are_atomic(segmenter: Segmenter) -> None:
    word = joined_pair(segmenter, TEXTS)
    assert word not in segmenter.user_dictionary
    texts = TEXTS * 4  # the word changes several texts of a batch: a batch cut half before, half after shows
    without = segmenter.segment_batch(texts)
    segmenter.add_word(word)
    with_word = segmenter.segment_batch(texts)
    segmenter.del_word(word)
    assert with_word != without
    assert segmenter.segment_batch(texts) == without

    done, seen, bad = threading.Event(), [], []
    writes = [0]

    def reader():
        for _ in range(ROUNDS):
            batch = segmenter.segment_batch(texts)
            if batch not in (without, with_word):
                bad.append(batch)
            seen.append(batch == with_word)
            single = segmenter.segment(TEXTS[0])
            if single not in (without[0], with_word[0]):
                bad.append([single])

    def writer():
        while not done.is_set():
            segmenter.add_word(word)
            segmenter.del_word(word)
            segmenter.suggest_freq(word, tune=True)
            segmenter.add_word(word, 0)  # jieba's removal
            # all or nothing: the word and one no text holds come in together
            segmenter.load_userdict(io.StringIO(f"{word} 3\n不相干词 2\n"))
            segmenter.del_word(word)
            segmenter.del_word("不相干词")
            writes[0] += 1

    writing = threading.Thread(target=writer)
    writing.start()
    try:
        errors = run_threads(reader, READERS)
    finally:
        done.set()
        writing.join(timeout=60)
    assert not errors, errors
    assert not bad, f"{len(bad)} batches mixed the dictionary before and after a change"
    assert writes[0] > 0 and len(seen) == READERS * ROUNDS
    assert word not in segmenter.user_dictionary
    assert segmenter.segment_batch(texts) == without


def check_threads_cut_as_one(segmenter: Segmenter) -> None:
    serial = segmenter.segment_batch(TEXTS)
    singles = [segmenter.segment(text) for text in TEXTS]
    assert singles == serial
    bad = []

    def reader():
        for round_ in range(ROUNDS):
            if segmenter.segment_batch(TEXTS) != serial:
                bad.append(round_)
            text = round_ % len(TEXTS)
            if segmenter.segment(TEXTS[text]) != serial[text]:
                bad.append(round_)

    errors = run_threads(reader, READERS)
    assert not errors, errors
    assert not bad


@pytest.fixture(scope="module")
def tiny_threaded(tiny_model_dir):
    # numpy engine on 2 threads: the engine's own thread pool shared by the segmenting threads
    return Segmenter(tiny_model_dir, window=30, overlap=8, engine="numpy", num_threads=2)


def test_dictionary_changes_are_atomic_for_threads_tiny(tiny_threaded):
    check_changes_are_atomic(tiny_threaded)


def test_threads_cut_as_one_thread_tiny(tiny_threaded):
    check_threads_cut_as_one(tiny_threaded)


@pytest.fixture(scope="module")
def shipped():
    return Segmenter()  # the embedded default: onnx engine where onnxruntime is installed


@pytest.mark.slow
def test_dictionary_changes_are_atomic_for_threads_shipped(shipped):
    check_changes_are_atomic(shipped)


@pytest.mark.slow
def test_threads_cut_as_one_thread_shipped(shipped):
    check_threads_cut_as_one(shipped)


@pytest.mark.slow
def test_threads_cut_as_one_thread_numpy_engine():
    check_threads_cut_as_one(Segmenter(engine="numpy", num_threads=2))


def test_a_snapshot_never_changes():
    from segmenter.words.dictionary import UserDictionary

    dictionary = UserDictionary(["北京"])
    before = dictionary.snapshot()
    dictionary.add("天安门")
    dictionary.load(io.StringIO("大学 2\n"))
    dictionary.remove("北京")
    assert set(before.entries) == {"北京"} and len(before) == 1
    assert set(dictionary.snapshot().entries) == {"天安门", "大学"}
    unseen = dictionary.snapshot()
    with pytest.raises(ValueError):
        dictionary.load(io.StringIO("好 1\n坏 1.5\n"))
    assert dictionary.snapshot() is unseen  # a bad file changes nothing
