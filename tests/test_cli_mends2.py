"""Issue 58 parts 1 and 4: the command line streams, and the small defects met in production use.

a. piped input streams: a line's words come out while the input is still open; what arrived
together is one batch, and the output is the same as a file's, however it is read;
b. a line that does not decode ends the run (exit 2, naming it) after the lines before it;
c. --encoding, and the error names the encoding the bytes look like;
d. --mode search / full in batches, the words of lcut_for_search / lcut(cut_all=True);
e. a model that does not exist is an error on an empty input too;
f. the torch engine or a GPU without torch names the extra to install;
g. a directory given as a user dictionary or to segment_files says so;
h. `segmenter ray -q` drops Ray's own notices.
"""
import io
import logging
import os
import select
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_cli
from segmenter.cli import main

LINES = ["我们都是中国人民的好朋友。", "今天天气不错，abc 123。", "", "  他说：“你好！”  ", "中华人民共和国成立了"]


def cli_process(*args, env=None):
    """`python -m segmenter ARGS` with pipes for stdin, stdout and stderr."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {}),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "segmenter", *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def read_line(stream, seconds: float) -> bytes:
    """One line of a pipe within `seconds` (b"" if none came)."""
    line, deadline = b"", time.monotonic() + seconds
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        if select.select([stream], [], [], max(0.0, deadline - time.monotonic()))[0]:
            byte = os.read(stream.fileno(), 1)
            if not byte:
                break
            line += byte
    return line


@pytest.mark.slow
def test_a_piped_lines_come_out_while_the_input_stays_open(tiny_model_dir):
    process = cli_process("-m", tiny_model_dir, "-q")
    try:
        for line in ("我们都是中国人", "今天天气不错"):
            process.stdin.write((line + "\n").encode())
            process.stdin.flush()
            out = read_line(process.stdout, 60)  # the model loads before the first one
            assert out.decode().rstrip("\n").replace(" ", "") == line, out
        process.stdin.close()
        assert process.stdout.read() == b"" and process.wait(timeout=60) == 0
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_a_the_output_is_the_same_however_the_input_is_read(tiny_model_dir, tmp_path):
    lines = [f"{i}：{LINES[i % len(LINES)]}" * (1 + i % 7) for i in range(1500)] + ["长" * 30_000]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = source.read_bytes()
    by_file = run_cli("-m", tiny_model_dir, "-q", source)
    assert by_file.returncode == 0, by_file.stderr.decode()
    words = by_file.stdout.decode().split("\n")[:-1]
    assert [w.replace(" ", "") for w in words] == [line.replace(" ", "") for line in lines]
    piped = run_cli("-m", tiny_model_dir, "-q", stdin=data)  # a pipe that always has lines waiting
    assert piped.returncode == 0 and piped.stdout == by_file.stdout
    with open(source, "rb") as stream:  # `segmenter < file`: a regular file
        redirected = subprocess.run([sys.executable, "-m", "segmenter", "-m", str(tiny_model_dir), "-q"],
                                    stdin=stream, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert redirected.returncode == 0 and redirected.stdout == by_file.stdout
    workers = run_cli("-m", tiny_model_dir, "-q", "--workers", "2", source)
    assert workers.returncode == 0 and workers.stdout == by_file.stdout
    # every line its own batch (a slow pipe) or all in one: the same words
    process = cli_process("-m", tiny_model_dir, "-q")
    for k in range(40):
        process.stdin.write((lines[k] + "\n").encode())
        process.stdin.flush()
        assert read_line(process.stdout, 60) == (by_file.stdout.split(b"\n")[k] + b"\n")
    process.stdin.close()
    process.wait(timeout=60)


def test_a_available_chunks_cut_where_the_input_waits():
    from segmenter.cli.segment import available_chunks

    ready = iter([True, False, True, True, True, False])  # asked after each item but a chunk's last
    chunks = list(available_chunks([(str(i), True) for i in range(7)], lambda: next(ready), 3, 100))
    assert [[t for t, _ in c] for c in chunks] == [["0", "1"], ["2", "3", "4"], ["5", "6"]]
    assert [len(c) for c in available_chunks(["ab"] * 5, lambda: True, 10, 4)] == [2, 2, 1]


def test_a_arriving_reads_only_what_has_come(tmp_path):
    from segmenter.cli.inputs import Arriving, Transcoded
    from segmenter.run.lines import iter_pieces

    read_end, write_end = os.pipe()
    try:
        stream = Arriving(read_end)
        assert not stream.line_available()
        os.write(write_end, "第一行\n第二".encode())
        assert stream.line_available() and stream.readline(100) == "第一行\n".encode()
        assert not stream.line_available()  # half a line waits
        os.write(write_end, "行\r\n".encode())
        assert stream.line_available() and stream.readline(3) == "第".encode()
        os.write(write_end, "末".encode())
        os.close(write_end)
        write_end = None
        assert [p for p in iter_pieces(stream, "<pipe>")] == [("二行", True), ("末", True)]
    finally:
        os.close(read_end)
        if write_end is not None:
            os.close(write_end)
    text = "一\n二三\n" * 50_000 + "末"
    for encoding in ("gb18030", "utf-16", "big5"):
        pieces = list(iter_pieces(Transcoded(io.BytesIO(text.encode(encoding)), encoding, "f"), "f"))
        assert pieces == list(iter_pieces(io.BytesIO(text.encode()), "f"))


@pytest.mark.slow
def test_b_a_bad_line_ends_the_run_after_the_good_ones(tiny_model_dir):
    good = [LINES[i % len(LINES)] for i in range(500)]
    data = ("\n".join(good) + "\n").encode() + "坏行".encode("gb18030") + b"\n" + "后面\n".encode()
    result = run_cli("-m", tiny_model_dir, "-q", stdin=data)
    assert result.returncode == 2
    out = result.stdout.decode().split("\n")
    assert out[-1] == "" and [line.replace(" ", "") for line in out[:-1]] == [g.replace(" ", "") for g in good]
    err = result.stderr.decode()
    assert "<stdin>, line 501: bytes that are not UTF-8" in err and "Traceback" not in err
    # with a stream that stays open: the two lines' words before the error, exit 2
    process = cli_process("-m", tiny_model_dir, "-q")
    process.stdin.write("我们\n你好\n".encode())
    process.stdin.flush()
    assert read_line(process.stdout, 60).decode().replace(" ", "") == "我们\n"
    process.stdin.write(b"\xd6\xd0\xce\xc4\n")
    process.stdin.flush()
    out, err = process.communicate(timeout=60)  # ends by itself: the input is still open
    assert process.returncode == 2 and b"line 3" in err and len(out.split(b"\n")) in (2, 3)


@pytest.mark.slow
def test_b_workers_write_the_lines_before_a_bad_one(tiny_model_dir):
    data = "我们都是中国人\n".encode() * 300 + b"\xff\n"
    result = run_cli("-m", tiny_model_dir, "-q", "--workers", "2", stdin=data)
    assert result.returncode == 2 and b"line 301" in result.stderr
    assert result.stdout.count(b"\n") == 300


def test_c_the_error_names_what_the_bytes_look_like(tiny_model_dir, tmp_path, capsys):
    text = "我们都是中国人，今天天气很好。\n第二行：人民的好朋友\n"
    traditional = "我們都是中國人，今天天氣很好。\n這是第二行：人民的好朋友\n"
    for name, content, encoding in (("gbk.txt", text, "gb18030"), ("big5.txt", traditional, "big5"),
                                    ("utf16.txt", text, "utf-16")):
        source = tmp_path / name
        source.write_bytes(content.encode(encoding))
        out = tmp_path / (name + ".out")
        assert main(["-m", str(tiny_model_dir), "-q", str(source), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{source}, line 1: bytes that are not UTF-8" in err and f"pass --encoding {encoding}" in err, err
        assert main(["-m", str(tiny_model_dir), "-q", "--encoding", encoding, str(source), "-o", str(out)]) == 0
        assert out.read_text(encoding="utf-8").replace(" ", "") == content.replace(" ", "")
    # bytes that fit no guess keep the old advice
    odd = tmp_path / "odd.txt"
    odd.write_bytes("好的\n".encode() + b"\xff\xfe bad\n")
    assert main(["-m", str(tiny_model_dir), "-q", str(odd)]) == 2
    assert "--encoding-errors replace" in capsys.readouterr().err
    assert main(["-m", str(tiny_model_dir), "-q", "--encoding", "no-such-codec", str(odd)]) == 2
    assert "no such encoding" in capsys.readouterr().err
    bad16 = tmp_path / "bad16.txt"
    bad16.write_bytes("好的\n".encode("utf-16-le") + b"\x00\xd8" + "好\n".encode("utf-16-le"))
    assert main(["-m", str(tiny_model_dir), "-q", "--encoding", "utf-16-le", str(bad16)]) == 2
    assert "line 2: bytes that are not UTF-16-LE" in capsys.readouterr().err


def test_c_guess_encoding():
    from segmenter.cli.inputs import guess_encoding

    text = "中华人民共和国成立了，今天天气不错。我们都是好朋友\n" * 3
    assert guess_encoding(text.encode("gb18030")) == "gb18030"
    assert guess_encoding("我們都是中國人，今天天氣很好。這是第二行\n".encode("big5")) == "big5"
    assert guess_encoding(text.encode("utf-16"), at_start=True) == "utf-16"
    assert guess_encoding("abc 中文 def\n".encode("utf-16-le")) == "utf-16-le"
    assert guess_encoding(b"\xff\xfe bad\n") is None and guess_encoding("é à".encode("latin-1")) is None


@pytest.mark.slow
def test_c_encoding_on_a_pipe(tiny_model_dir):
    text = "我们都是中国人\n今天天气不错\n"
    plain = run_cli("-m", tiny_model_dir, "-q", stdin=text.encode())
    for encoding in ("gb18030", "utf-16"):
        result = run_cli("-m", tiny_model_dir, "-q", "--encoding", encoding, stdin=text.encode(encoding))
        assert result.returncode == 0 and result.stdout == plain.stdout, result.stderr


def test_d_search_and_full_modes_batched(tiny_model_dir, tmp_path, capsys):
    from segmenter import Segmenter
    from segmenter.cli.segment import mode_batch

    segmenter = Segmenter(tiny_model_dir)  # as the command builds it
    lines = [f"{LINES[i % len(LINES)]}{i}" * (1 + i % 4) for i in range(120)]
    want = {"search": [segmenter.lcut_for_search(line) for line in lines],
            "full": [segmenter.lcut(line, cut_all=True) for line in lines]}
    for mode in ("search", "full"):
        assert mode_batch(segmenter, lines, mode) == want[mode]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for mode in ("search", "full"):
        assert main(["-m", str(tiny_model_dir), "-q", "--mode", mode, "-d", "/", str(source)]) == 0
        out = capsys.readouterr().out.split("\n")[:-1]
        assert out == ["/".join(w for w in words if not w.isspace()) for words in want[mode]]


def test_d_search_mode_calls_the_model_once_a_batch(tiny_model_dir, tmp_path, monkeypatch, capsys):
    import segmenter.api

    calls = []
    score_texts = segmenter.api.Segmenter.score_texts
    monkeypatch.setattr(segmenter.api.Segmenter, "score_texts",
                        lambda self, texts, *a, **k: calls.append(len(texts)) or score_texts(self, texts, *a, **k))
    source = tmp_path / "in.txt"
    source.write_text("我们都是中国人\n" * 50, encoding="utf-8")
    assert main(["-m", str(tiny_model_dir), "-q", "--threads", "1", "--mode", "search", str(source)]) == 0
    assert calls == [50] and capsys.readouterr().out.count("\n") == 50


@pytest.mark.slow
def test_e_a_missing_model_on_an_empty_input(tmp_path):
    for model in (tmp_path / "no-such-model", "./no/such/model"):
        result = run_cli("-m", model, stdin=b"")
        assert result.returncode == 2 and b"does not exist" in result.stderr, result.stderr


def test_e_a_missing_model_on_an_empty_file(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["-m", str(tmp_path / "no-such-model"), str(empty)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_f_torch_engine_without_torch_names_the_extra(tiny_model_dir, monkeypatch):
    from segmenter import Segmenter

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails as if not installed
    for options in ({"engine": "torch"}, {"device": "cuda"}):
        with pytest.raises(ModuleNotFoundError, match=r'pip install "segmenter-heads\[train\]"') as err:
            Segmenter(tiny_model_dir, **options)
        assert err.value.name == "torch"  # what the command line's error line reads
    from segmenter.cli import error_message

    assert "segmenter-heads[train]" in error_message(err.value)


def test_g_a_directory_says_so(tiny_segmenter, tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory: give the dictionary file in it"):
        tiny_segmenter.load_userdict(tmp_path)
    with pytest.raises(IsADirectoryError, match=f"{tmp_path} is a directory, not a text file"):
        list(tiny_segmenter.segment_files([tmp_path], workers=1))


def test_h_ray_quiet_drops_rays_own_lines(capfd):
    from segmenter.cli.ray import QUIET_LOGGERS, quiet_ray

    notice = (b"[2026-12-07 00:52:51,144 E 20800 20800] core_worker.cc:2465: Actor with class name: "
              b"'MapWorker(MapBatches(SegmentBatch))' and ID: 'd4' has constructor arguments in the object store "
              b"and max_restarts > 0. If the arguments in the object store go out of scope or are lost, ...\n")
    with quiet_ray():
        os.write(2, b"before\n" + notice + b"after\n")
        logging.getLogger(QUIET_LOGGERS[0]).warning("Token authentication is enabled for this Ray cluster.")
    err = capfd.readouterr().err
    assert "before\nafter\n" in err and "core_worker" not in err and "Token" not in err
    os.write(2, b"later\n")
    assert capfd.readouterr().err == "later\n"


def test_c_transcoded_gives_the_lines_before_bad_bytes_never_part_of_the_bad_one():
    from segmenter.cli.inputs import Transcoded
    from segmenter.run.lines import UndecodableLine, iter_pieces

    class Trickle(io.BytesIO):  # a stream that gives 3 bytes a read
        def read1(self, size=-1):
            return self.read(3)

    data = "第一行\n第二行\n".encode("gb18030") + "坏".encode("gb18030") + b"\xff\xff" + "行\n后\n".encode("gb18030")
    got = []
    with pytest.raises(UndecodableLine, match=r"f, line 3: bytes that are not GB18030 at character 2"):
        for piece in iter_pieces(Transcoded(Trickle(data), "gb18030", "f"), "f"):
            got.append(piece)
    assert got == [("第一行", True), ("第二行", True)]
    replaced = list(iter_pieces(Transcoded(Trickle(data), "gb18030", "f", "replace"), "f"))
    assert [text for text, _ in replaced] == ["第一行", "第二行", "坏\ufffd\ufffd行", "后"]


@pytest.mark.slow
def test_h_ray_quiet_prints_nothing_when_all_goes_well(tiny_model_dir, tmp_path):
    pytest.importorskip("ray")
    source = tmp_path / "a.txt"
    source.write_text("\n".join(LINES * 20) + "\n", encoding="utf-8")
    result = run_cli("ray", source, tmp_path / "out", "-m", tiny_model_dir, "-q", "--local-cpus", "2",
                     "--cpus-per-actor", "0.5", "--actors", "1")
    assert result.returncode == 0 and result.stderr.decode() == "" and result.stdout == b""
    assert (tmp_path / "out" / "a.txt").read_bytes() == run_cli("-m", tiny_model_dir, "-q", source).stdout
