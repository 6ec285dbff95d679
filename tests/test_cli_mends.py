"""Issue 26 item 6: what a new user met trying the CLI and the API, one test per mend.

a. a decode error in a file stops before the model loads; b. a BOM at the start of an input
is dropped by the CLI, kept by the API; c. `-d ''` gives each line back exactly; d. Ctrl-C with
--workers stops at once; e. save_pretrained keeps the user dictionary; f. search mode's
sub-words are words the unigram model knows; g. -o onto one of the input files is refused.
"""
import glob
import io
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_cli
from segmenter.cli import main
from segmenter.run.lines import UndecodableLine, check_utf8, split_lines


def test_a_decode_error_stops_before_the_model(tiny_model_dir, tmp_path, monkeypatch, capsys):
    data = "第一行\n第二行 abc\n".encode() * 1000 + "末行".encode() + b" \xff\xfe\n"
    source = tmp_path / "bad.txt"
    source.write_bytes(data)
    import segmenter.api

    def no_model(*args, **kwargs):
        raise AssertionError("the model loaded before the input was checked")

    monkeypatch.setattr(segmenter.api.Segmenter, "__init__", no_model)
    assert main(["-m", str(tiny_model_dir), "-q", str(source), "-o", str(tmp_path / "out.txt")]) == 2
    err = capsys.readouterr().err
    assert f"{source}, line 2001: bytes that are not UTF-8 at column 8" in err  # "末行 " is 7 bytes
    assert "--encoding-errors replace" in err and not (tmp_path / "out.txt").exists()
    # the streaming pass says what the line-by-line reading says, wherever the chunks end
    for sample in (data, b"ab\n\xe4\xb8", "中".encode() * 9 + b"\xe4\xb8\n", b"x\n" * 3 + b"\xc3\x28"):
        with pytest.raises(UndecodableLine) as want:
            split_lines(sample, name="f")
        for chunk in (1, 2, 3, 5, 1 << 20):
            with pytest.raises(UndecodableLine) as got:
                check_utf8(io.BytesIO(sample), "f", chunk)
            assert str(got.value) == str(want.value)
    check_utf8(io.BytesIO("好".encode() * 10), "f", 2)  # valid: no error


def test_b_bom_dropped_by_the_cli_kept_by_the_api(tiny_model_dir, tiny_segmenter, tmp_path):
    source = tmp_path / "bom.txt"
    source.write_bytes("\ufeff我们都是中国人\n\ufeff第二行\n".encode())
    out = tmp_path / "out.txt"
    assert main(["-m", str(tiny_model_dir), "-q", "-d", "", str(source), "-o", str(out)]) == 0
    # only the BOM at the start of the file is a mark; one inside the text is text
    assert out.read_text(encoding="utf-8") == "我们都是中国人\n\ufeff第二行\n"
    # The API is lossless: "".join(words) == text for every text, a BOM included (a str the caller
    # gives is text, not a file's encoding mark).
    assert "".join(tiny_segmenter.segment("\ufeff我们都是中国人")) == "\ufeff我们都是中国人"


def test_c_empty_delimiter_gives_the_line_back(tiny_model_dir, tmp_path):
    lines = ["这 https://example.com/a?b=1 #杭州# @小明  好 \t 的", "  两个空格开头", "", "end \u3000全角空格"]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["-m", str(tiny_model_dir), "-q", "-d", "", str(source), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
    # another delimiter stands for the whitespace between words, as " " does (--help says so)
    assert main(["-m", str(tiny_model_dir), "-q", "-d", "|", str(source), "-o", str(out)]) == 0
    got = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert [line.replace("|", "") for line in got] == ["".join(line.split()) for line in lines]
    assert not any(word.isspace() or not word for line in got if line for word in line.split("|"))


@pytest.mark.slow
def test_d_ctrl_c_with_workers_stops_at_once(tmp_path):
    source = tmp_path / "big.txt"
    source.write_text("中华人民共和国成立了，我们都是中国人民。经济建设取得新的成就。\n" * 40_000, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-m", "segmenter", "--workers", "2", str(source),
                                "-o", str(tmp_path / "out.txt")], stderr=subprocess.PIPE, env=env,
                               # SIGINT as a terminal sends it, even where this run ignores it (a job started with &)
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:  # until words are written
            parts = glob.glob(str(tmp_path / ".out.txt.*.part"))
            if parts and os.path.getsize(parts[0]) > 0:
                break
            time.sleep(0.05)
        assert process.poll() is None, "finished (or failed) before it could be interrupted"
        process.send_signal(signal.SIGINT)
        # A bound against a hang, not a speed: the 40,000 lines would take minutes to finish.
        code = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    err = process.stderr.read().decode()
    assert code != 0 and "interrupted" in err and "Traceback" not in err, err
    assert not (tmp_path / "out.txt").exists() and not glob.glob(str(tmp_path / ".out.txt.*.part"))


def test_e_save_pretrained_keeps_the_user_dictionary(tiny_model_dir, tmp_path):
    from segmenter import Segmenter

    seg = Segmenter(tiny_model_dir, window=30, overlap=8)
    seg.add_word("云计算", freq=5)
    seg.add_word("Edu Trust认证", 2000)
    seg.add_word("Windows 3.1")
    user_dict = tmp_path / "dict.txt"
    user_dict.write_text("创新办 3 i\n台中\n", encoding="utf-8")
    seg.load_userdict(user_dict)
    seg.suggest_freq(("中", "将"), tune=True)
    folder = seg.save_pretrained(tmp_path / "saved")
    assert (folder / "user_dict.txt").is_file() and (folder / "user_splits.json").is_file()
    loaded = Segmenter(folder, window=30, overlap=8)
    assert dict(loaded.user_dictionary.entries) == dict(seg.user_dictionary.entries)
    assert loaded.segment("我们中将云计算") == seg.segment("我们中将云计算")
    assert "中" in loaded.segment("中将")
    # the words file is jieba's format: load_userdict reads it into a fresh dictionary
    fresh = Segmenter(tiny_model_dir, window=30, overlap=8)
    assert fresh.load_userdict(folder / "user_dict.txt") == 5
    assert fresh.user_dictionary.entries["创新办"] == seg.user_dictionary.entries["创新办"]
    # saved again without user words: no stale files left to load
    for word in list(loaded.user_dictionary.entries):
        loaded.del_word(word)
    loaded.save_pretrained(folder)
    assert not (folder / "user_dict.txt").exists() and not (folder / "user_splits.json").exists()
    assert len(Segmenter(folder, window=30, overlap=8).user_dictionary) == 0


def test_e_cli_user_dictionary_adds_to_the_saved_words(tiny_model_dir, tmp_path):
    """`segmenter -m SAVED -u FILE` cuts with the folder's saved words and the file's, not the file's alone."""
    from segmenter import Segmenter

    seg = Segmenter(tiny_model_dir, window=30, overlap=8)
    seg.add_word("我们中", freq=5)
    folder = seg.save_pretrained(tmp_path / "saved")
    (tmp_path / "u.txt").write_text("国家 3\n", encoding="utf-8")
    (tmp_path / "in.txt").write_text("我们中国家\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["-m", str(folder), "-u", str(tmp_path / "u.txt"), str(tmp_path / "in.txt"), "-o", str(out), "-q"]) == 0
    assert out.read_text(encoding="utf-8").split() == ["我们中", "国家"]


@pytest.mark.slow  # the shipped model and its word table
def test_f_search_mode_sub_words_are_words():
    from segmenter import Segmenter

    seg = Segmenter()
    assert seg.word_table is not None and seg.word_table.unigram is not None
    assert seg.lcut_for_search("国务院") == ["国务", "国务院"]  # not 务院
    words = seg.lcut_for_search("头孢曲松")
    assert "头孢" in words and not {"孢曲", "头孢曲", "孢曲松"} & set(words)
    assert {"科学", "学院"} <= set(seg.lcut_for_search("中国科学院"))


def test_g_output_onto_an_input_file_is_refused(tiny_model_dir, tmp_path, capsys):
    """-o replaces its file when the run ends: onto one of the inputs, the text would be gone."""
    source = tmp_path / "in.txt"
    source.write_text("我爱北京\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(source)
    for output in (source, link):
        assert main(["-m", str(tiny_model_dir), "-q", str(source), "-o", str(output)]) == 2
        assert "is also an input file" in capsys.readouterr().err
    assert source.read_text(encoding="utf-8") == "我爱北京\n"
    assert main(["-m", str(tiny_model_dir), "-q", str(source), "-o", str(tmp_path / "out.txt")]) == 0


@pytest.mark.slow  # it runs the command line in processes
def test_the_trainers_numbers_are_checked_where_they_are_parsed(tmp_path):
    """A thread count, a size or a step that must be positive is refused by argparse, naming the
    option, not by torch or a range() deep inside training; --report and --curve need --gold."""
    import argparse

    from segmenter.cli.options import non_negative_int, positive

    for kind, good, bad in ((int, "3", ("0", "-1", "x", "2.5")), (float, "0.5", ("0", "-1", "nan", "inf", "x"))):
        assert positive(kind)(good) == kind(good)
        for text in bad:
            with pytest.raises(argparse.ArgumentTypeError, match=f"must be a positive {kind.__name__}"):
                positive(kind)(text)
    assert non_negative_int("0") == 0
    with pytest.raises(argparse.ArgumentTypeError, match="must be an int >= 0"):
        non_negative_int("-1")
    raw = tmp_path / "raw.txt"
    raw.write_text("我们都是中国人民的好朋友。\n", encoding="utf-8")
    for args, message in ((("selftrain", "-m", "fast", "--raw", raw, "--out", tmp_path / "s", "--threads", "-1"),
                           b"argument --threads: must be a positive int"),
                          (("distill", "-m", "fast", "--raw", raw, "--out", tmp_path / "d", "--hidden", "0"),
                           b"argument --hidden: must be a positive int"),
                          (("heads", "-m", "fast", "--raw", raw, "--report"), b"--report reads the heads against --gold"),
                          (("selftrain", "-m", "fast", "--raw", raw, "--out", tmp_path / "b", "--boundary-head", "99"),
                           b"--boundary-head must be below the model's 2 heads"),
                          (("ngrams", "--raw", raw, "--out", tmp_path / "none" / "t.npz"), b"its folder"),
                          (("adapt", "--raw", raw, "--out", tmp_path / "a", "--min-count", "0"),
                           b"argument --min-count: must be a positive int"),
                          (("refine", "--raw", raw, "--out", tmp_path / "r", "--lr", "nan"),
                           b"argument --lr: must be a positive float")):
        result = run_cli(*args)
        assert result.returncode == 2 and message in result.stderr and b"Traceback" not in result.stderr
