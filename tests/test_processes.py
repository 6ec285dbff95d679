"""A Segmenter's helper processes (processes.py): a large batch on several cores is shared with
spawned processes that build the same segmenter; the words are those of one thread, the helpers
follow the segmenter's changes, and a helper that cannot start leaves the parent working alone."""
from __future__ import annotations

import multiprocessing
import time

import pytest

from segmenter.api import Segmenter
from segmenter.run.processes import PROCESS_CHARS, SegmenterProcesses
from segmenter.train.ngram_counting import build_word_table

from test_cores_default import SIZES, onnx_folder, serial, varied_texts  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow  # every test here spawns processes


def helped(segmenter: Segmenter, timeout: float = 60.0) -> bool:
    """Whether the segmenter's helpers have started (waits for them)."""
    ready = segmenter._helpers._ready
    return ready is not None and ready.result(timeout) is True


def big_batch(seed: int) -> list[str]:
    texts = varied_texts(seed=seed) * 3
    assert sum(map(len, texts)) >= 2 * PROCESS_CHARS
    return texts


def test_helpers_cut_the_words_and_tokens_of_one_thread(onnx_folder, serial):  # noqa: F811
    two = Segmenter(onnx_folder, num_threads=2, **SIZES)
    texts = big_batch(seed=8)
    assert two.segment_batch(texts) == serial.segment_batch(texts)
    assert helped(two)
    for _ in range(2):  # helpers up: they take chunks from the start
        assert two.segment_batch(texts) == serial.segment_batch(texts)
        assert two.tokenize_batch(texts[::-1]) == serial.tokenize_batch(texts[::-1])
        assert two.segment_batch(texts, granularity="coarse") == serial.segment_batch(texts, granularity="coarse")
    assert two.segment_batch(texts[:3]) == serial.segment_batch(texts[:3])  # small: this process alone
    pool = two._helpers._pool
    two.segment_batch(texts)
    assert two._helpers._pool is pool  # kept between calls


def test_helpers_follow_the_user_dictionary_and_the_settings(onnx_folder, serial):  # noqa: F811
    two = Segmenter(onnx_folder, num_threads=2, **SIZES)
    texts = big_batch(seed=9)
    before = two.segment_batch(texts)
    assert helped(two)
    pool = two._helpers._pool
    word = next(a + b for words in before for a, b in zip(words, words[1:]) if len(a + b) >= 3 and (a + b).isalpha())
    two.add_word(word)
    one = Segmenter(onnx_folder, num_threads=1, **SIZES)
    one.add_word(word)
    assert two.segment_batch(texts) == one.segment_batch(texts) != before
    assert two._helpers._pool is not pool  # the helpers held the old dictionary: new ones
    two.conventions, one.conventions = None, None
    assert two.segment_batch(texts) == one.segment_batch(texts)
    assert two.segment_batch(texts) == one.segment_batch(texts)  # with helpers started on the new settings


class FailsInHelpers(Segmenter):
    """A segmenter that cannot be built in a helper process."""

    def __init__(self, *args, **kwargs):
        if multiprocessing.parent_process() is not None:
            raise OSError("no model in a helper")
        super().__init__(*args, **kwargs)


def test_a_helper_that_cannot_start_leaves_the_parent_working(onnx_folder, serial, caplog):  # noqa: F811
    two = FailsInHelpers(onnx_folder, num_threads=2, **SIZES)
    texts = big_batch(seed=10)
    assert two.segment_batch(texts) == serial.segment_batch(texts)
    with pytest.raises(OSError, match="no model in a helper"):
        two._helpers._ready.result(60)
    time.sleep(0.1)  # the warning is logged from the executor's thread
    assert "did not start" in caplog.text
    assert two.segment_batch(texts) == serial.segment_batch(texts)


def test_no_helpers_where_they_cannot_or_should_not_start(onnx_folder, monkeypatch):  # noqa: F811
    helpers = SegmenterProcesses()
    assert helpers.helpers_for(2, PROCESS_CHARS) == 1 and helpers.helpers_for(4, 10**6) == 3
    assert helpers.helpers_for(1, 10**6) == 0 and helpers.helpers_for(2, PROCESS_CHARS - 1) == 0
    import segmenter.run.workers as workers

    monkeypatch.setattr(workers, "main_is_guarded", lambda: False)
    assert SegmenterProcesses().helpers_for(2, 10**6) == 0  # a script without a __main__ guard
    texts = big_batch(seed=11)
    for segmenter in (Segmenter(onnx_folder, num_threads=2, processes=False, **SIZES),
                      Segmenter(onnx_folder, num_threads=1, **SIZES)):
        segmenter.segment_batch(texts)
        assert segmenter._helpers._pool is None
    replaced = Segmenter(onnx_folder, num_threads=2, **SIZES)
    assert replaced.word_table is None  # the tiny model decodes by threshold, without a table
    replaced.word_table = build_word_table(texts, max_n=2, min_count=1)  # the helpers would load the folder's
    replaced.segment_batch(texts)
    assert replaced._helpers._pool is None
    with pytest.raises(TypeError, match="processes must be True"):
        Segmenter(onnx_folder, processes="yes")


def test_chunks_of_a_helper_that_died_are_cut_here(onnx_folder, serial, caplog):  # noqa: F811
    two = Segmenter(onnx_folder, num_threads=2, **SIZES)
    texts = big_batch(seed=12)
    expected = serial.segment_batch(texts)
    assert two.segment_batch(texts) == expected and helped(two)
    pool = two._helpers._pool
    for process in list(pool._processes.values()):
        process.kill()
    assert two.segment_batch(texts) == expected  # the dead helper's chunks: this thread's
    assert two._helpers._pool is not pool and "stopped answering" in caplog.text  # let go, with a word
    assert two.segment_batch(texts) == expected and helped(two)  # a new helper for the next large batch


def test_a_batch_too_small_for_two_helper_chunks_runs_in_one_thread(onnx_folder, serial, monkeypatch):  # noqa: F811
    import segmenter.run.cores as cores
    from segmenter.run.processes import PROCESS_CHUNKS

    shares = []  # the chunks the batch was cut into for the threads (the onnx reader's own threads
    real = cores.text_chunks  # run whether or not the batch is shared: their names prove nothing)
    monkeypatch.setattr(cores, "text_chunks", lambda *args: shares.append(real(*args)) or shares[-1])

    two = Segmenter(onnx_folder, num_threads=2, **SIZES)
    texts, chars = [], 0
    for text in varied_texts(seed=13) * 3:
        if chars + len(text) > PROCESS_CHUNKS.smallest + PROCESS_CHUNKS.smallest // 3:
            break
        texts.append(text)
        chars += len(text)
    assert chars >= PROCESS_CHARS
    assert two.segment_batch(texts) == serial.segment_batch(texts)
    # one chunk of a helper's size: no helper, and too few characters for two threads' chunks
    # (cores.THREAD_CHUNKS): the calling thread cuts it, the reader's threads share its encoder runs
    assert two._helpers._pool is None
    assert shares and len(shares[-1]) == 1


def test_a_large_batch_goes_to_helpers_in_larger_chunks():
    """processes.chunk_chars: one chunk a core (of about equal size) where that makes them larger
    than the smallest, never larger than the largest (every chunk pays the decoder's fixed work);
    a larger batch in chunks of about equal size, up to the largest."""
    from segmenter.run.cores import THREAD_CHUNKS, text_chunks
    from segmenter.run.processes import PROCESS_CHUNKS, chunk_chars

    smallest, largest, per_core = PROCESS_CHUNKS.smallest, PROCESS_CHUNKS.largest, PROCESS_CHUNKS.per_worker
    # helpers share no GIL: they take a batch from fewer characters than threads, in chunks as large or larger
    assert smallest < THREAD_CHUNKS.smallest and THREAD_CHUNKS.largest <= largest
    assert chunk_chars(8_000, 2) == chunk_chars(16_384, 2) == smallest
    assert smallest < chunk_chars(64_000, 2) == 64_000 // (2 * per_core) <= largest
    assert chunk_chars(79_111, 2) == 39_556  # the 1,000 PKU sentences of issue 57: one chunk a core
    assert chunk_chars(10_000_000, 2) <= largest and chunk_chars(10_000_000, 2) > 0.99 * largest
    assert chunk_chars(5 * largest // 2, 2) == -(-5 * largest // 6)  # 3 equal chunks, not 2 full ones and a half
    lengths = [50] * 1_600  # 80 k characters on 2 cores
    chunks = text_chunks(lengths, 2, chunk_chars(sum(lengths), 2))
    assert len(chunks) == 2 * per_core and abs(len(chunks[0]) - len(chunks[1])) <= 1
    assert sorted(i for chunk in chunks for i in chunk) == list(range(1_600))
    lengths = [50] * 330  # 16.5 k characters: a helper's chunk and the parent's (cores.text_chunks' own rule
    assert len(text_chunks(lengths, 2, chunk_chars(sum(lengths), 2))) == 2  # would keep them whole for threads)
    assert len(text_chunks(lengths, 2)) == 1
