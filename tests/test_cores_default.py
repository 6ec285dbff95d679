"""The default Segmenter on N cores (cores.py, onnx_engine.OnnxReader): a large batch is cut into
chunks that N threads score and assemble at once; the words are those of one thread, in order,
with one snapshot of the user dictionary; num_threads=1 starts no thread at all."""
from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from segmenter.api import Segmenter
from segmenter.run.cores import THREAD_CHUNKS, WorkerThreads, available_cores, in_worker_thread, text_chunks
from segmenter.model.profile import HeadProfile
from segmenter.text.runs import HAN_SPAN_RE

from conftest import GOLD, REPO, TINY_CHARS, make_tiny_model

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

SIZES = {"window": 30, "overlap": 8}


@pytest.fixture(scope="module")
def onnx_folder(tmp_path_factory):
    """A tiny model with its model.onnx, exported in this process (a second or two)."""
    from segmenter.train.onnx_export import export_onnx

    profile = HeadProfile(heads=[(1, 0), (1, 1)], weights=[0.5, 0.5], source="test")
    folder = make_tiny_model(tmp_path_factory.mktemp("cores") / "m", layers=2, profile=profile)
    export_onnx(Segmenter(folder, engine="torch"), folder / "model.onnx")
    return folder


@pytest.fixture(scope="module")
def serial(onnx_folder):
    return Segmenter(onnx_folder, num_threads=1, **SIZES)


@pytest.fixture(scope="module")
def shared(onnx_folder):
    """Threads only: test_processes.py has the helper processes."""
    return Segmenter(onnx_folder, num_threads=2, processes=False, **SIZES)


def varied_texts(count: int = 300, seed: int = 0) -> list[str]:
    """Han text with punctuation, Latin, digits and spaces; empty and blank strings; a few long texts."""
    rng = random.Random(seed)
    pieces = list(TINY_CHARS) * 3 + [" ", "abc", "GPT-4", "３.５", "2024年", "\u3000", "😀", "e\u0301"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.choice([1, 5, 20, 60, 150]))) for _ in range(count)]
    texts[3], texts[50], texts[51], texts[120] = "", " ", "Hello, world! 123", "\n"
    texts[7] = "".join(rng.choice(TINY_CHARS) for _ in range(3_000))  # many windows, one text
    texts[200] = "。".join(texts[:40])
    return texts


def test_text_chunks_cover_every_text_once_longest_first():
    rng = random.Random(1)
    lengths = [rng.randrange(0, 200) for _ in range(500)] + [0, 5_000]
    chunks = text_chunks(lengths, 2)
    assert len(chunks) > 2 and sorted(i for chunk in chunks for i in chunk) == list(range(len(lengths)))
    assert len(lengths) - 1 in chunks[0]  # the longest text starts first
    assert all(sum(lengths[i] for i in chunk) >= THREAD_CHUNKS.smallest // 2 for chunk in chunks)
    # one thread, a small batch, one text: all in the calling thread
    assert text_chunks(lengths, 1) == [list(range(len(lengths)))]
    assert text_chunks([10] * 20, 2) == [list(range(20))]
    assert text_chunks([100_000], 2) == [[0]] and text_chunks([], 2) == [[]]


def test_one_thread_pool_and_chunk_sizes_named_apart():
    """The engines and run/ share one thread pool, cores.WorkerThreads (no other ThreadPoolExecutor
    there), and each chunk size has its own name: CHUNK_CHARS is only parallel.py's."""
    import pickle

    from segmenter.model.numpy_engine import NumpyReader

    files = sorted((REPO / "segmenter" / "model").glob("*.py")) + sorted((REPO / "segmenter" / "run").glob("*.py"))
    pools = [p.name for p in files if "ThreadPoolExecutor(" in p.read_text(encoding="utf-8")]
    assert pools == ["cores.py"]
    runtime = [p for stage in ("text", "model", "words", "standards", "run") for p in (REPO / "segmenter" / stage).glob("*.py")]
    assert [p.name for p in runtime if "CHUNK_CHARS =" in p.read_text(encoding="utf-8")] == ["parallel.py"]
    workers = WorkerThreads(2, "test-pickle")
    assert list(workers.map(abs, [-1, 2])) == [1, 2]
    copy = pickle.loads(pickle.dumps(workers))  # a copy starts threads of its own
    assert (copy.count, copy.name, copy._pool) == (2, "test-pickle", None)
    workers.close()
    assert "WorkerThreads" in NumpyReader.set_threads.__code__.co_names


def test_worker_threads_keep_order_mark_their_tasks_and_raise():
    workers = WorkerThreads(2, "test-workers")
    try:
        assert list(workers.map(lambda x: (x * x, in_worker_thread()), range(20))) == [(x * x, True) for x in range(20)]
        assert not in_worker_thread()

        def boom(x):
            if x == 3:
                raise KeyError("chunk 3")
            return x

        with pytest.raises(KeyError, match="chunk 3"):
            list(workers.map(boom, range(10)))
    finally:
        workers.close()


def test_the_default_uses_every_core_one_thread_uses_one(onnx_folder, serial):
    default = Segmenter(onnx_folder, **SIZES)
    assert default.engine == "onnx" and default.reader.threads == available_cores()
    assert (default.reader.workers is None) == (available_cores() == 1)
    # onnxruntime's own threads do not scale on small matrices: one intra-op thread, the cores share batches
    assert default.reader.session.get_session_options().intra_op_num_threads == 1
    assert serial.reader.workers is None and serial.reader.session.get_session_options().intra_op_num_threads == 1


def test_shared_batches_cut_the_words_of_one_thread(serial, shared):
    texts = varied_texts() + varied_texts(seed=1)
    assert len(text_chunks([len(t) for t in texts], 2)) >= 2  # the batch is really shared
    many = texts * 6  # more chunks than threads: the chunks come back in input order
    assert len(text_chunks([len(t) for t in many], 2)) > 2
    assert shared.segment_batch(many) == serial.segment_batch(many)
    expected = serial.tokenize_batch(texts)
    assert shared.tokenize_batch(texts) == expected
    assert any(t.name.startswith("segmenter-onnx") for t in threading.enumerate())
    assert shared.segment_batch(texts) == [[w for w, _, _ in tokens] for tokens in expected]
    assert [serial.segment(t) for t in texts[:60]] == shared.segment_batch(texts)[:60]
    for text, tokens in zip(texts, expected):
        assert "".join(w for w, _, _ in tokens) == text
    assert shared.segment_batch(texts[::-1], granularity="coarse") == serial.segment_batch(texts[::-1], "coarse")
    assert shared.segment_batch(texts, show_progress=True) == shared.segment_batch(texts)
    assert shared.segment_batch([]) == [] and shared.segment_batch([""] * 3_000) == [[]] * 3_000


def test_a_long_text_read_outside_the_workers_gives_the_same_scores(serial, shared):
    """score_texts of one long text: its batches' slices run on the threads, the scores do not move."""
    text = varied_texts()[7] * 3
    one, two = serial.score_texts([text])[0], shared.score_texts([text])[0]
    assert np.array_equal(one.junctions, two.junctions) and np.array_equal(one.scores, two.scores)


def test_one_snapshot_of_the_user_dictionary_per_batch(onnx_folder, monkeypatch):
    one, two = (Segmenter(onnx_folder, num_threads=n, processes=False, **SIZES) for n in (1, 2))
    texts = varied_texts(seed=2)
    without = one.segment_batch(texts)
    pair = next(a + b for words in without for a, b in zip(words, words[1:])
                if HAN_SPAN_RE.fullmatch(a + b) and len(a + b) >= 3)
    split = next(w for words in without for w in words if len(w) >= 2 and HAN_SPAN_RE.fullmatch(w) and w not in pair)
    for segmenter in (one, two):
        segmenter.add_word(pair)
        segmenter.suggest_freq((split[0], split[1:]), tune=True)
    with_words = one.segment_batch(texts)
    assert with_words != without and two.segment_batch(texts) == with_words
    calls = []
    snapshot = two.user_dictionary.snapshot
    monkeypatch.setattr(two.user_dictionary, "snapshot", lambda: calls.append(1) or snapshot())
    assert two.segment_batch(texts) == with_words
    assert len(calls) == 1  # every chunk of the batch is cut with the same words


def test_errors_are_the_ones_of_one_thread(serial, shared, monkeypatch):
    texts = varied_texts(seed=3)
    for segmenter in (serial, shared):
        with pytest.raises(ValueError, match="granularity"):
            segmenter.segment_batch(texts, granularity="finest")
        with pytest.raises(TypeError, match=r"texts\[5\] must be a str"):
            segmenter.segment_batch(texts[:5] + [b"bytes"] + texts)
        with pytest.raises(ValueError, match="batch_size"):
            segmenter.segment_batch(texts, batch_size=0)
    original = Segmenter._assemble  # the assembly step of every batch call (assemble, tokenize_batch, segment_batch)

    def failing(self, plans, granularity=None, dictionary=None, words_only=False):
        if any(len(p.text) > 1_000 for p in plans):
            raise MemoryError("the chunk with the long text")
        return original(self, plans, granularity, dictionary, words_only)

    monkeypatch.setattr(Segmenter, "_assemble", failing)
    with pytest.raises(MemoryError, match="the chunk with the long text"):
        shared.segment_batch(texts)
    monkeypatch.undo()
    assert shared.segment_batch(texts) == serial.segment_batch(texts)  # the threads still work


def test_one_thread_starts_no_thread(onnx_folder):
    before = {t.ident for t in threading.enumerate()}
    segmenter = Segmenter(onnx_folder, num_threads=1, **SIZES)
    texts = varied_texts(seed=4)
    segmenter.segment_batch(texts)
    segmenter.score_texts(texts[7:8] * 3)
    assert {t.ident for t in threading.enumerate()} <= before


def test_set_threads_switches_between_one_and_shared(onnx_folder, serial):
    """The benchmark's all-cores pass: reader.set_threads(cores), then back to 1."""
    texts = varied_texts(seed=5)
    segmenter = Segmenter(onnx_folder, num_threads=1, processes=False, **SIZES)
    segmenter.reader.set_threads(2)
    assert segmenter.reader.workers is not None and segmenter.segment_batch(texts) == serial.segment_batch(texts)
    segmenter.reader.set_threads(1)
    assert segmenter.reader.workers is None and segmenter.segment_batch(texts) == serial.segment_batch(texts)


@pytest.mark.slow
def test_shipped_default_cuts_the_words_of_one_thread():
    gold = GOLD / "pku_test.txt"
    texts = varied_texts(seed=6)
    if gold.is_file():
        texts += [line.rstrip("\n").replace(" ", "") for line in gold.open(encoding="utf-8")][:300]
    one = Segmenter(num_threads=1)
    two = Segmenter(num_threads=2)
    assert one.engine == two.engine == "onnx"
    assert two.segment_batch(texts) == one.segment_batch(texts)


# -- workers="auto": processes for a large input (parallel.py) ---------------------------------------
def test_auto_reads_ahead_and_keeps_every_piece():
    from segmenter.run.parallel import choose_workers

    pieces = [(f"第{i}行", True) for i in range(100)]
    workers, kept = choose_workers(iter(pieces), 2, limit=10_000)
    assert workers == 1 and list(kept) == pieces
    workers, kept = choose_workers(iter(pieces), 2, limit=50)
    assert workers == 2 and list(kept) == pieces
    workers, kept = choose_workers(iter(pieces), 1, limit=50)
    assert workers == 1 and list(kept) == pieces


def test_auto_stays_in_this_process_for_one_thread_and_unguarded_scripts(onnx_folder, serial, tmp_path, monkeypatch):
    import sys
    import types

    from segmenter.run.parallel import auto_workers, main_is_guarded

    assert auto_workers(serial) == 1  # num_threads=1: strictly one thread, no process either
    assert auto_workers(Segmenter(onnx_folder, num_threads=2, **SIZES)) == min(2, available_cores())
    script = tmp_path / "script.py"
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    script.write_text("from segmenter import Segmenter\nprint(Segmenter().segment_lines(open('big.txt')))\n")
    assert not main_is_guarded()  # spawned workers would run the script again
    script.write_text("def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n")
    assert main_is_guarded()


@pytest.mark.slow
def test_auto_workers_cut_the_lines_of_one_process(onnx_folder, serial, monkeypatch):
    import segmenter.run.parallel as parallel

    monkeypatch.setattr(parallel, "AUTO_CHARS", 2_000)
    lines = varied_texts(seed=7)
    lines = [line.replace("\n", " ") for line in lines]
    two = Segmenter(onnx_folder, num_threads=2, **SIZES)
    assert list(two.segment_lines(lines, workers="auto", chunk_lines=40)) == serial.segment_batch(lines)
    assert list(two.segment_lines(lines[:3])) == serial.segment_batch(lines[:3])  # small: in this process


def test_a_read_of_few_characters_runs_its_batches_in_the_calling_thread(serial, shared, monkeypatch):
    """cores.SHARED_READ_CHARS: the reader's threads share a read's encoder runs only from that many
    characters; below, every batch runs in the calling thread (small batches cost more shared)."""
    from segmenter.run.cores import SHARED_READ_CHARS

    shared_runs = []
    real_map = shared.reader.workers.map
    monkeypatch.setattr(shared.reader.workers, "map", lambda f, items: shared_runs.append(1) or real_map(f, items))
    few = [t for t in varied_texts(seed=3) if len(t) < 200][:40]  # many batches (window 30), few characters
    assert sum(map(len, few)) < SHARED_READ_CHARS
    assert shared.segment_batch(few) == serial.segment_batch(few) and not shared_runs
    assert not in_worker_thread()  # the calling thread is itself again
    long_text = "".join(few) * (SHARED_READ_CHARS // max(1, sum(map(len, few))) + 1)  # one text, many windows
    assert shared.segment(long_text) == serial.segment(long_text) and shared_runs
