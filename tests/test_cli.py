"""The `segmenter` command through a subprocess: output, options and every failure path."""
import os
import subprocess
import sys

import pytest

from conftest import run_cli

pytestmark = pytest.mark.slow  # every test starts the command in a subprocess


def test_stdin_to_stdout(tiny_model_dir):
    result = run_cli("-m", tiny_model_dir, "-q", stdin="我爱北京，你好！\n第二行 abc\n".encode())
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.decode("utf-8").splitlines()
    assert len(lines) == 2
    assert lines[0].replace(" ", "") == "我爱北京，你好！"
    assert "abc" in lines[1].split(" ")


def test_files_delimiter_and_output(tiny_model_dir, tmp_path):
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_text("我们都是中国人民\n", encoding="utf-8")
    second.write_text("好朋友。\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    result = run_cli("-m", tiny_model_dir, "-d", "/", "-o", out, first, second)
    assert result.returncode == 0, result.stderr.decode()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [line.replace("/", "") for line in lines] == ["我们都是中国人民", "好朋友。"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_missing_file(tiny_model_dir, tmp_path):
    result = run_cli("-m", tiny_model_dir, tmp_path / "nope.txt")
    assert result.returncode == 2
    assert b"no such file" in result.stderr and b"Traceback" not in result.stderr


def test_directory_input(tiny_model_dir, tmp_path):
    result = run_cli("-m", tiny_model_dir, tmp_path)
    assert result.returncode == 2 and b"directory" in result.stderr


def test_undecodable_bytes_report_line(tiny_model_dir, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("好的\n".encode() + b"\xff\xfe bad\n")
    result = run_cli("-m", tiny_model_dir, bad)
    assert result.returncode == 2
    assert b"line 2" in result.stderr and b"--encoding-errors replace" in result.stderr
    replaced = run_cli("-m", tiny_model_dir, "-q", "--encoding-errors", "replace", bad)
    assert replaced.returncode == 0 and "\ufffd" in replaced.stdout.decode("utf-8")


def test_bad_model_folder(tmp_path):
    result = run_cli("-m", tmp_path / "missing-model", stdin=b"x\n")
    assert result.returncode == 2 and b"Traceback" not in result.stderr


def test_bad_device(tiny_model_dir):
    result = run_cli("-m", tiny_model_dir, "--device", "tpu", stdin=b"x\n")
    assert result.returncode == 2 and b"device" in result.stderr


def test_unwritable_output_leaves_nothing(tiny_model_dir, tmp_path):
    result = run_cli("-m", tiny_model_dir, "-o", tmp_path / "no" / "such" / "dir" / "out.txt", stdin=b"x\n")
    assert result.returncode == 2 and b"cannot write" in result.stderr


def test_empty_input(tiny_model_dir):
    result = run_cli("-m", tiny_model_dir, stdin=b"")
    assert result.returncode == 0 and result.stdout == b""


def test_broken_pipe_is_quiet(tiny_model_dir, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("我们都是中国人民的好朋友。\n" * 3000, encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    producer = subprocess.Popen(
        [sys.executable, "-m", "segmenter", "-q", "-m", str(tiny_model_dir), str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    head = subprocess.run(["head", "-n", "2"], stdin=producer.stdout, capture_output=True)
    producer.stdout.close()
    _, err = producer.communicate(timeout=300)
    assert len(head.stdout.decode().splitlines()) == 2
    assert producer.returncode == 0 and b"Traceback" not in err


def test_help_lists_commands():
    result = run_cli("--help")
    assert result.returncode == 0 and b"pretrain" in result.stdout


def test_an_empty_model_name_is_named_in_the_error():
    from segmenter import Segmenter
    from segmenter.errors import ModelLoadError

    for empty in ("", "  "):
        with pytest.raises(ModelLoadError, match="model is empty"):
            Segmenter(empty)
    result = run_cli("-m", "", stdin=b"x\n")
    assert result.returncode == 2 and b"model is empty" in result.stderr and b"Traceback" not in result.stderr
