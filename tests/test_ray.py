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

pytest.importorskip("ray.data", reason='Ray Data is not installed: pip install "segmenter-heads[ray]"')

from segmenter import ModelLoadError, Segmenter  # noqa: E402
from segmenter.run.lines import join_words  # noqa: E402
from segmenter.scale.job_files import OrderedWriter, expand_inputs, output_paths, split_file_batch  # noqa: E402
from segmenter.scale.ray import KILL_ENV, SegmentBatch, check_model, plan_actors, run_job  # noqa: E402

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
    rows = split_file_batch({"bytes": [FIRST.encode(), b"ok\n\xff\n"], "path": ["a", "b"]}, "strict")
    assert list(rows["text"][:-1]) == lines_of(FIRST) and list(rows["line"][:-1]) == list(range(1, len(lines_of(FIRST)) + 1))
    assert rows["error"][0] == "" and "b, line 2" in rows["error"][-1]
    assert set(rows["lines"][:-1]) == {len(lines_of(FIRST))} and rows["lines"][-1] == 1  # the error row
    assert split_file_batch({"bytes": [b"\xff"], "path": ["b"]}, "replace")["text"][0] == "\ufffd"
    # a file's byte-order mark is dropped, as the command line drops it (`segmenter FILE`)
    rows = split_file_batch({"bytes": ["\ufeff我爱北京\n第二行\n".encode(), "\ufeff".encode(), b""],
                             "path": ["c", "d", "e"]}, "strict")
    assert list(rows["text"]) == ["我爱北京", "第二行", ""]  # an empty file has no line


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
    writer = OrderedWriter({"a": tmp_path / "w.txt"}, "text", " ")
    writer.write("a", 1, ["好"])
    with pytest.raises(RuntimeError, match="line 3"):
        writer.write("a", 3, ["好"])
    writer.abort()


def test_writer_is_idempotent_and_writes_each_file_whole(tmp_path):
    # A batch computed twice (its actor died after the rows left) reaches each file once.
    outputs = {"a": tmp_path / "a.txt", "b": tmp_path / "sub" / "b.txt"}
    writer = OrderedWriter(outputs, "text", "/")
    for path, line, total in [("a", 1, 2), ("a", 1, 2), ("a", 2, 2), ("a", 2, 2), ("b", 1, 1), ("a", 1, 2), ("b", 1, 1)]:
        writer.write(path, line, ["好", str(line)], total)
        if (path, line) == ("a", 2):
            assert (tmp_path / "a.txt").read_text() == "好/1\n好/2\n"  # renamed at its last line
    writer.finish()
    assert writer.duplicates == 4 and (tmp_path / "sub" / "b.txt").read_text() == "好/1\n"
    assert not list(tmp_path.rglob("*.part"))
    # A file cut short, a file that comes back with new lines, or an input whose lines never came
    # stops the writer (a gap: test_job_planning_and_refusals); a file cut short is not written.
    writer = OrderedWriter({"a": tmp_path / "c.txt", "b": tmp_path / "d.txt"}, "text", " ")
    writer.write("a", 1, ["x"], 3)
    writer.write("a", 2, ["x"], 3)
    with pytest.raises(RuntimeError, match="a: 2 of 3 lines arrived"):
        writer.write("b", 1, ["x"], 1)
    assert not (tmp_path / "c.txt").exists() and not list(tmp_path.rglob("*.part"))
    writer = OrderedWriter({"a": tmp_path / "c.txt", "b": tmp_path / "d.txt"}, "text", " ")
    for path, line in (("a", 1), ("b", 1)):
        writer.write(path, line, ["x"])
    with pytest.raises(RuntimeError, match="rows of a arrived out of order"):
        writer.write("a", 2, ["x"])
    writer.abort()
    (tmp_path / "lost.txt").write_text("一\n")
    writer = OrderedWriter({str(tmp_path / "lost.txt"): tmp_path / "out.txt"}, "text", " ")
    with pytest.raises(RuntimeError, match="no line of .*lost.txt arrived"):
        writer.finish()


def test_kill_hook_is_off_unless_set_and_kills_once(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.delenv(KILL_ENV, raising=False)
    batch = {"text": np.array(["我爱北京"], dtype=object), "path": np.array(["a"], dtype=object), "line": np.array([1])}
    plain = SegmentBatch(tiny_model_dir)
    assert plain.kill is None and list(plain(dict(batch))["words"][0])
    # MARKER exists: an actor has died already, so this one only logs its start and batches.
    marker = tmp_path / "marker"
    marker.touch()
    monkeypatch.setenv(KILL_ENV, f"1:{marker}")
    survivor = SegmentBatch(tiny_model_dir)
    survivor(dict(batch))
    survivor(dict(batch))
    log = (tmp_path / "marker.log").read_text().split("\n")
    assert [entry.split(" ", 1)[1] for entry in log[:-1]] == ["start", "batch a:1", "batch a:1"]
    with pytest.raises(ValueError, match="N:MARKER"):
        SegmentBatch(tiny_model_dir, kill=str(marker))


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
def test_pipeline_survives_a_killed_actor(local_ray, tiny_model_dir, segmenter, tmp_path, monkeypatch):
    # 20 files; the first actor to reach its 3rd batch dies (os._exit). Ray restarts it and runs
    # its batches again; every output is still the serial one, each line once, each file whole.
    folder = tmp_path / "corpus"
    folder.mkdir()
    texts = {}
    for number in range(20):
        lines = [FIRST.split("\n")[0].rstrip("\r"), "", SECOND.split("\n")[0], f"第{number}行", "好" * number]
        texts[f"f{number:02d}.txt"] = "\n".join(lines[number % 3:]) + "\n"
        (folder / f"f{number:02d}.txt").write_text(texts[f"f{number:02d}.txt"], encoding="utf-8")
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV, f"3:{marker}")
    report = run_job([str(folder / "*.txt")], tmp_path / "out", model=tiny_model_dir, actors=2, cpus_per_actor=0.5,
                     lines_per_batch=4, quiet=True)
    for name, text in texts.items():
        expected = "".join(join_words(words, " ") + "\n" for words in segmenter.segment_lines(lines_of(text)))
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == expected, name
    assert report.files == 20 and report.lines == sum(len(lines_of(text)) for text in texts.values())
    log = (tmp_path / "killed.log").read_text().split("\n")[:-1]
    assert marker.exists() and sum(" killed " in entry for entry in log) == 1
    assert sum(entry.endswith(" start") for entry in log) >= 3  # two actors and the restarted one
    assert not list((tmp_path / "out").rglob("*.part"))
    # max_restarts reaches the actors: with 0, the death ends the job, and no file is left half-written.
    monkeypatch.setenv(KILL_ENV, f"3:{tmp_path / 'killed-again'}")
    with pytest.raises(local_ray.exceptions.ActorDiedError):
        run_job([str(folder / "*.txt")], tmp_path / "out0", model=tiny_model_dir, actors=2, cpus_per_actor=0.5,
                lines_per_batch=4, quiet=True, max_restarts=0)
    assert not list((tmp_path / "out0").rglob("*.part"))


@pytest.mark.slow
def test_segment_batch_in_read_text_pipeline(local_ray, tiny_model_dir, segmenter, corpus):
    # The documented use: Ray's own reader, our callable class, whatever Ray's batching.
    dataset = local_ray.data.read_text(str(corpus / "a.txt")).map_batches(
        SegmentBatch, fn_constructor_kwargs={"model": str(tiny_model_dir)}, concurrency=1, num_cpus=0.5, batch_size=2
    )
    rows = dataset.take_all()
    assert rows and all(list(row["words"]) == segmenter.segment(row["text"]) for row in rows)


@pytest.mark.slow
def test_ray_command_matches_segment_command(tiny_model_dir, corpus, tmp_path, capsys):
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
    # Mistakes are reported before Ray starts, in one line (through cli.main, in this process).
    from segmenter.cli import main

    capsys.readouterr()
    assert main(["ray", str(corpus / "a.txt"), str(tmp_path / "out3"), "-m", str(tmp_path / "no-model")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err and err.strip().count("\n") == 0
    assert main(["ray", str(corpus / "*.md"), str(tmp_path / "out3"), "-m", str(tiny_model_dir)]) == 2
    assert "matches no file" in capsys.readouterr().err and not (tmp_path / "out3").exists()
