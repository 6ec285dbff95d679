"""Very long lines: read and segmented in pieces, with flat memory, words joining back exactly."""
from __future__ import annotations

import io
import random
import subprocess
import sys

import pytest

from segmenter.run.lines import _BREAK, UndecodableLine, iter_lines, iter_pieces, line_pieces, write_pieces

from conftest import REPO, TINY_CHARS


def long_text(chars: int, seed: int = 0, han_share: float = 0.5) -> str:
    """Han runs between Latin words, spaces, punctuation and a few \\r: every kind of cut."""
    rng, parts, size = random.Random(seed), [], 0
    while size < chars:
        if rng.random() < han_share:
            part = "".join(rng.choice(TINY_CHARS[:600]) for _ in range(rng.randint(1, 30))) + rng.choice(["，", "。", "——", "", "\r"])
        else:
            part = rng.choice(["hello ", "3.14 ", "abc", " ", "x\r"])
        parts.append(part)
        size += len(part)
    return "".join(parts)


def gather(pieces):
    lines, current = [], []
    for text, ends in pieces:
        current.append(text)
        if ends:
            lines.append("".join(current))
            current = []
    assert not current
    return lines


@pytest.mark.parametrize("size", [7, 100, 3000])
def test_pieces_rebuild_the_lines_iter_lines_reads(size):
    lines = [long_text(50), long_text(20_000, 1), "", "x\r", long_text(9_000, 2) + "\r\r", "末行"]
    data = "\n".join(lines).encode()
    for raw in (data, data + b"\n", data + b"\r\n"):
        pieces = list(iter_pieces(io.BytesIO(raw), "f", size=size))
        assert all(len(text) <= size for text, _ in pieces)
        assert gather(pieces) == list(iter_lines(io.BytesIO(raw), "f"))


def test_pieces_end_after_punctuation_or_space_when_there_is_one():
    text = long_text(50_000, 3, han_share=0.9)
    pieces = [piece for piece, _ in line_pieces(text, 2000)]
    assert "".join(pieces) == text
    assert all(_BREAK.fullmatch(piece[-1]) and not _BREAK.match(after[0]) for piece, after in zip(pieces, pieces[1:]))
    assert [p for p, _ in line_pieces("一" * 5000, 2000)] == ["一" * 2000, "一" * 2000, "一" * 1000]  # no break: hard cuts


def test_undecodable_bytes_in_a_long_line_say_where():
    raw = ("好" * 30_000).encode() + b"\xff" + b"tail\n"
    with pytest.raises(UndecodableLine, match=r"f, line 1: bytes that are not UTF-8 at column 90001"):
        list(iter_pieces(io.BytesIO(b"\n".join([b"ok", raw])[3:]), "f", size=1000))
    assert "\ufffd" in "".join(t for t, _ in iter_pieces(io.BytesIO(raw), "f", errors="replace", size=1000))


def test_write_pieces_writes_a_line_as_join_words_would():
    out = io.StringIO()
    write_pieces(out, [(["a", " ", "b"], False), ([" "], False), (["c"], True), ([], True), (["d"], True)], "|")
    assert out.getvalue() == "a|b|c\n\nd\n"


def test_segment_lines_of_a_long_line_joins_back(tiny_segmenter):
    text = long_text(60_000, 4)
    words = next(tiny_segmenter.segment_lines([text], show_progress=False))
    assert "".join(words) == text


@pytest.mark.slow
def test_cli_streams_a_multi_megabyte_line_in_flat_memory(tiny_model_dir, tmp_path):
    """3 MB in one line, mostly Latin (the model work stays small): the line comes back whole,
    and the process peaks far below what holding it would take (~400 MB before pieces)."""
    text = ("hello world 2026 " * 6 + "共同创造，") * 25_000
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    code = (
        "import sys; from segmenter.cli import main; from segmenter.bench.measure import peak_rss_mb; "
        "rc = main(sys.argv[1:]); print(int(peak_rss_mb()), file=sys.stderr); sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "-q", "-m", str(tiny_model_dir), str(tmp_path / "in.txt"), "-o", str(tmp_path / "out.txt")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert out.count("\n") == 1 and out.replace(" ", "") == text.replace(" ", "") + "\n"
    assert int(result.stderr.split()[-1]) < 150  # MiB


@pytest.mark.slow
def test_cli_in_one_process_keeps_a_long_lines_pieces_apart_across_chunks(tiny_model_dir, tmp_path):
    """--workers 1 segments a chunk of pieces at a time: a line longer than a chunk ends one chunk
    and starts the next, and its words there stay apart (written as one line, delimiter between)."""
    from segmenter.cli import main

    text = ("hello2026" + "共同创造，") * 24_000  # 336 k characters: pieces of ~20 k, chunks of ~64 k
    (tmp_path / "in.txt").write_text(text + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["-q", "--workers", "1", "-m", str(tiny_model_dir), str(tmp_path / "in.txt"), "-o", str(out)]) == 0
    words = out.read_text(encoding="utf-8").rstrip("\n").split(" ")
    assert "".join(words) == text
    assert [w for w in words if "，" in w and w != "，"] == []  # a comma is a word of its own, never glued
