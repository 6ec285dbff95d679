"""Local multi-process segmentation: same words as segment(), in input order, bounded, clear errors."""
import multiprocessing
import pickle
import time

import pytest

from segmenter import ModelLoadError, Segmenter
from segmenter.run.cores import threads_per_worker
from segmenter.run.lines import join_words, read_file_lines, split_lines
from segmenter.run.parallel import segment_lines
from segmenter.run.workers import WorkerSpec

from conftest import run_cli

# Lines with everything that changes the windows: long Han runs (several windows at window=30),
# empty lines, spaces only, Latin and digits, punctuation, a line longer than a chunk of text.
LINES = [
    "我们都是中国人民，我爱北京天安门。",
    "",
    "   ",
    "第二行 abc 123 好的",
    "社会主义现代化建设的重要组成部分" * 5,
    "一",
    "他说：“明天下午三点开会。”你去吗？",
    "ok",
] * 4


@pytest.fixture(scope="module")
def expected(tiny_segmenter):
    return [tiny_segmenter.segment(line) for line in LINES]


def test_split_lines_matches_file_reading(tmp_path):
    data = "一\r\n二\n\n三\u2028四\x1c五\r\n六".encode() + b"\n\xe4\xb8"
    path = tmp_path / "x.txt"
    path.write_bytes(data[:-3])
    # split at "\n" only: U+2028 and \x1c stay inside their line; an empty line is kept
    assert split_lines(data[:-3]) == ["一", "二", "", "三\u2028四\x1c五", "六"]
    assert split_lines(data[:-3]) == list(read_file_lines(path))
    assert split_lines(b"a\n") == ["a"] and split_lines(b"") == [] and split_lines(b"\n") == [""]
    with pytest.raises(ValueError, match="line 6"):
        split_lines(data, name="x.txt")
    assert split_lines(data, errors="replace")[-1] == "\ufffd"


def test_threads_and_join():
    assert threads_per_worker(2, cores=16) == 8 and threads_per_worker(4, cores=2) == 1
    assert join_words(["我们", " ", "好"], "/") == "我们/好"


def test_in_process_stream_matches_segment(tiny_segmenter, expected):
    assert list(tiny_segmenter.segment_lines(iter(LINES), chunk_lines=3, show_progress=False)) == expected


@pytest.mark.slow
def test_workers_match_segment_in_order(tiny_segmenter, expected, tmp_path, monkeypatch):
    import segmenter.run.parallel as parallel

    pools = []  # the worker pool really runs: not this process alone, with the same words
    real = parallel.map_chunks
    monkeypatch.setattr(parallel, "map_chunks", lambda spec, chunks, workers, *rest: (
        pools.append(workers), real(spec, chunks, workers, *rest))[1])
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("\n".join(LINES[:13]) + "\n", encoding="utf-8")
    second.write_text("\n".join(LINES[13:]), encoding="utf-8")  # no final newline
    results = list(tiny_segmenter.segment_files([first, second], workers=2, chunk_lines=3, show_progress=False))
    assert [words for _, words in results] == expected
    assert [path for path, _ in results] == [str(first)] * 13 + [str(second)] * (len(LINES) - 13)
    assert pools == [2]


@pytest.mark.slow
def test_workers_read_ahead_is_bounded_and_early_stop_is_clean(tiny_segmenter, expected):
    pulled = 0

    def lines():
        nonlocal pulled
        for line in LINES * 1000:
            pulled += 1
            yield line

    before = set(multiprocessing.active_children())  # other tests' processes may live on
    stream = tiny_segmenter.segment_lines(lines(), workers=2, chunk_lines=5, max_in_flight=2, show_progress=False)
    assert next(stream) == expected[0]
    assert pulled <= 3 * 5  # two chunks in flight and at most one being read, not the whole input
    workers = set(multiprocessing.active_children()) - before
    assert workers  # the words came from worker processes
    stream.close()  # stops the workers without segmenting the rest
    read = pulled
    deadline = time.monotonic() + 60
    while workers & set(multiprocessing.active_children()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not workers & set(multiprocessing.active_children()) and pulled == read  # none left, nothing more read


@pytest.mark.slow
def test_worker_load_error_reaches_the_caller(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    spec = WorkerSpec(str(tmp_path), segmenter_class=Segmenter)
    with pytest.raises(ModelLoadError, match="no weights|head profile"):
        list(segment_lines(["好的"], spec=spec, workers=2, show_progress=False))


def test_the_spec_carries_the_segmenters_class_by_reference(tiny_segmenter):
    """Workers build type(parent) from the spec: the class pickles as a name, not as code."""
    spec = WorkerSpec.of(tiny_segmenter)
    assert spec.segmenter_class is type(tiny_segmenter) is Segmenter
    assert b"segmenter.api" in pickle.dumps(spec) and pickle.loads(pickle.dumps(spec)).segmenter_class is Segmenter


def test_argument_checks(tiny_segmenter):
    with pytest.raises(ValueError, match="workers"):
        segment_lines([], segmenter=tiny_segmenter, workers=0)
    with pytest.raises(ValueError, match="chunk_lines"):
        segment_lines([], segmenter=tiny_segmenter, chunk_lines=0)
    # one text where many are expected would be cut a character a line, and a path read as its characters
    with pytest.raises(TypeError, match="not one str"):
        segment_lines("我爱北京", segmenter=tiny_segmenter, workers=1)
    with pytest.raises(TypeError, match=r"lines\[1\] must be a str, got int"):
        list(segment_lines(["我爱北京", 5], segmenter=tiny_segmenter, workers=1))
    with pytest.raises(TypeError, match="not one path"):
        tiny_segmenter.segment_files("in.txt")
    with pytest.raises(ValueError, match="'strict' or 'replace'"):  # "ignore" would drop bytes silently
        tiny_segmenter.segment_files(["in.txt"], errors="ignore")


@pytest.mark.slow
def test_cli_workers_output_equals_single_process(tiny_model_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    single, multi = tmp_path / "one.txt", tmp_path / "two.txt"
    assert run_cli("-m", tiny_model_dir, "-q", "-o", single, source).returncode == 0
    result = run_cli("-m", tiny_model_dir, "-q", "-d", " ", "-o", multi, "--workers", "2", source)
    assert result.returncode == 0, result.stderr.decode()
    assert multi.read_text(encoding="utf-8") == single.read_text(encoding="utf-8")
    assert len(multi.read_text(encoding="utf-8").splitlines()) == len(LINES)


@pytest.mark.slow
def test_cli_workers_errors(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("好的\n", encoding="utf-8")
    result = run_cli("-m", tmp_path / "missing", "--workers", "2", source)
    assert result.returncode == 2 and b"does not exist" in result.stderr and b"Traceback" not in result.stderr
    result = run_cli("-m", tmp_path / "missing", "--workers", "0", source)
    assert result.returncode == 2 and b"--workers" in result.stderr
