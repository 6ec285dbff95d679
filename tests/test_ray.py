"""Ray Data adapter: the pipeline on a local Ray gives every line exactly the words of segment().

The pipeline tests start a local Ray (num_cpus=2, as on CI) once for the module. Actors take
half a CPU each so that the read tasks always find a CPU (whole-CPU actors can starve them on
2 cores and the pipeline waits forever).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray.data", reason='Ray Data is not installed: pip install "segmenter[ray]"')

from segmenter import ModelLoadError, Segmenter  # noqa: E402
from segmenter.lines import join_words  # noqa: E402
from segmenter.scale.ray import (  # noqa: E402
    SegmentBatch, _OrderedWriter, _split_file_batch, check_model, expand_inputs, output_paths, plan_actors, run_job,
)

# Empty lines, CRLF, U+2028 and \x1c inside a line (str.splitlines would split there), Latin.
FIRST = "我们都是中国人民，我爱北京天安门。\r\n\n第二行 abc 123\u2028好的\x1c社会\n" + "社会主义现代化建设的重要组成部分" * 6 + "\n"
SECOND = "他说：“明天下午三点开会。”你去吗？\n   \n一"


def lines_of(text):
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return lines[:-1] if lines[-1] == "" else lines


@pytest.fixture(scope="module")
def segmenter(tiny_model_dir):
    return Segmenter(tiny_model_dir)


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_bytes(FIRST.encode())
    (folder / "sub" / "b.txt").write_bytes(SECOND.encode())
    (folder / "empty.txt").write_bytes(b"")
    return folder


def test_segment_batch_without_ray(tiny_model_dir, segmenter):
    texts = ["我爱北京天安门", "", "abc 好的"]
    batch = SegmentBatch(tiny_model_dir)({"text": np.array(texts, dtype=object)})
    assert [list(words) for words in batch["words"]] == [segmenter.segment(t) for t in texts]
    joined = SegmentBatch(tiny_model_dir, delimiter="/", words_column="out")({"text": np.array(texts, dtype=object)})
    assert list(joined["out"]) == [join_words(segmenter.segment(t), "/") for t in texts]


def test_split_rows_keep_every_line_and_report_bad_bytes():
    rows = _split_file_batch({"bytes": [FIRST.encode(), b"ok\n\xff\n"], "path": ["a", "b"]}, "strict")
    assert list(rows["text"][:-1]) == lines_of(FIRST) and list(rows["line"][:-1]) == list(range(1, len(lines_of(FIRST)) + 1))
    assert rows["error"][0] == "" and "b, line 2" in rows["error"][-1]
    assert _split_file_batch({"bytes": [b"\xff"], "path": ["b"]}, "replace")["text"][0] == "\ufffd"


def test_job_planning_and_refusals(corpus, tmp_path):
    files = expand_inputs([str(corpus / "**" / "*.txt")])
    assert [os.path.basename(f) for f in files] == ["a.txt", "empty.txt", "b.txt"]
    outputs = output_paths(files, tmp_path / "out", "jsonl")
    assert outputs[files[2]] == tmp_path / "out" / "sub" / "b.txt.jsonl"
    with pytest.raises(ValueError, match="overwrite an input"):
        output_paths(files, corpus, "text")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        expand_inputs([str(corpus / "*.md")])
    with pytest.raises(ModelLoadError):
        check_model(tmp_path / "no-model")
    assert plan_actors({"CPU": 2.0}, 1.0, 0) == 1 and plan_actors({"CPU": 2.0}, 0.5, 0) == 2
    assert plan_actors({"CPU": 64.0, "GPU": 4.0}, 1.0, 1.0) == 4
    writer = _OrderedWriter({"a": tmp_path / "w.txt"}, "text", " ")
    writer.write("a", 1, ["好"])
    with pytest.raises(RuntimeError, match="line 3"):
        writer.write("a", 3, ["好"])
    writer.abort()


@pytest.mark.slow
def test_pipeline_output_equals_segment(local_ray, tiny_model_dir, segmenter, corpus, tmp_path):
    out = tmp_path / "out"
    report = run_job(
        [str(corpus / "**" / "*.txt")], out, model=tiny_model_dir, fmt="jsonl",
        actors=2, cpus_per_actor=0.5, lines_per_batch=3, quiet=True,
    )
    for source, text in (("a.txt", FIRST), ("sub/b.txt", SECOND), ("empty.txt", "")):
        rows = [json.loads(line) for line in (out / f"{source}.jsonl").read_text(encoding="utf-8").split("\n")[:-1]]
        expected = lines_of(text)
        assert [row["line"] for row in rows] == list(range(1, len(expected) + 1))
        assert [row["words"] for row in rows] == [segmenter.segment(line) for line in expected]
    assert report.lines == len(lines_of(FIRST)) + len(lines_of(SECOND))
    assert not list(out.rglob("*.part"))
    # A file that is not UTF-8: the job stops with the file and line, and leaves no output for it.
    (corpus / "bad.txt").write_bytes(b"ok\n\xff\n")
    with pytest.raises(ValueError, match="bad.txt, line 2.*--encoding-errors replace"):
        run_job([str(corpus / "bad.txt")], tmp_path / "out2", model=tiny_model_dir, actors=1, cpus_per_actor=0.5, quiet=True)
    assert not (tmp_path / "out2" / "bad.txt").exists() and not list((tmp_path / "out2").rglob("*.part"))


@pytest.mark.slow
def test_segment_batch_in_read_text_pipeline(local_ray, tiny_model_dir, segmenter, corpus):
    # The documented use: Ray's own reader, our callable class, whatever Ray's batching.
    dataset = local_ray.data.read_text(str(corpus / "a.txt")).map_batches(
        SegmentBatch, fn_constructor_kwargs={"model": str(tiny_model_dir)}, concurrency=1, num_cpus=0.5, batch_size=2
    )
    rows = dataset.take_all()
    assert rows and all(list(row["words"]) == segmenter.segment(row["text"]) for row in rows)


@pytest.mark.slow
def test_ray_command_matches_segment_command(tiny_model_dir, corpus, tmp_path):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")

    def cli(*args):
        command = [sys.executable, "-m", "segmenter", *map(str, args)]
        return subprocess.run(command, capture_output=True, env=env, timeout=600)

    out = tmp_path / "out"
    result = cli("ray", corpus / "a.txt", corpus / "sub" / "b.txt", out, "-m", tiny_model_dir, "-d", "/", "-q",
                 "--local-cpus", "2", "--cpus-per-actor", "0.5")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    for source, name in ((corpus / "a.txt", "a.txt"), (corpus / "sub" / "b.txt", "sub/b.txt")):
        single = cli("-m", tiny_model_dir, "-d", "/", "-q", source)
        assert (out / name).read_bytes() == single.stdout
    # Mistakes are reported before Ray starts, in one line.
    result = cli("ray", corpus / "a.txt", tmp_path / "out3", "-m", tmp_path / "no-model")
    assert result.returncode == 2 and b"does not exist" in result.stderr and b"Traceback" not in result.stderr
    result = cli("ray", corpus / "*.md", tmp_path / "out3", "-m", tiny_model_dir)
    assert result.returncode == 2 and b"matches no file" in result.stderr
