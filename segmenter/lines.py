"""Lines in, lines out: the one way segmenter reads text files and writes segmented lines.

A line ends at b"\n" only (its trailing "\r" dropped); str.splitlines would also split at
U+2028, \x1c and friends, which occur in web text, and every later line number would shift.
No empty line is dropped. Undecodable bytes stop with the file, line and column, unless
errors="replace" writes U+FFFD and goes on.
"""
from __future__ import annotations

import os
from typing import BinaryIO, Iterable, Iterator


class UndecodableLine(ValueError):
    """Bytes that are not UTF-8: says where (file, line, column)."""


def decode_line(raw: bytes, number: int, name: str, errors: str = "strict") -> str:
    try:
        return raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as err:
        raise UndecodableLine(f"{name}, line {number}: bytes that are not UTF-8 at column {err.start + 1}") from None


def iter_lines(stream: BinaryIO, name: str, errors: str = "strict") -> Iterator[str]:
    """Decoded lines of a binary stream, without their line endings, streamed."""
    for number, raw in enumerate(stream, start=1):
        line = decode_line(raw, number, name, errors)
        yield line.rstrip("\r\n") if line.endswith("\n") else line


def read_file_lines(path: str | os.PathLike, errors: str = "strict") -> Iterator[str]:
    with open(path, "rb") as stream:
        yield from iter_lines(stream, os.fspath(path), errors)


def split_lines(data: bytes, errors: str = "strict", name: str = "<bytes>") -> list[str]:
    """The lines of a whole file's bytes, exactly as iter_lines reads them from a stream."""
    pieces = data.split(b"\n")
    terminated = len(pieces) - 1
    if pieces[-1] == b"":
        pieces.pop()
    lines = []
    for number, raw in enumerate(pieces, start=1):
        line = decode_line(raw, number, name, errors)
        lines.append(line.rstrip("\r") if number <= terminated else line)
    return lines


def chunked(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def join_words(words: list[str], delimiter: str = " ") -> str:
    """One output line as the `segmenter` command writes it: whitespace words dropped."""
    return delimiter.join(w for w in words if not w.isspace())
