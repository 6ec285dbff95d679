"""Lines in, lines out: the one way segmenter reads text files and writes segmented lines.

A line ends at b"\n" only (its trailing "\r" dropped); str.splitlines would also split at
U+2028, \x1c and friends, which occur in web text, and every later line number would shift.
No empty line is dropped. Undecodable bytes stop with the file, line and column, unless
errors="replace" writes U+FFFD and goes on.
"""
from __future__ import annotations

import codecs
import os
import re
from typing import BinaryIO, Iterable, Iterator, TextIO

# A line longer than this (characters) is segmented in pieces of about this size, so that
# memory stays flat whatever the line (a 100 MB file without a newline): see line_pieces.
PIECE_CHARS = 20_000
# Where a piece may end: after a run of whitespace or CJK / full-width punctuation, which
# always ends a word (text.py); taking the whole run keeps `——` and `……` whole.
_BREAK = re.compile(r"[\s\u2014\u2026\u201c\u201d\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+")


class UndecodableLine(ValueError):
    """Bytes that are not UTF-8: says where (file, line, column). `sample`: bytes from the start
    of that line (or near it), to guess what they are (cli/inputs.guess_encoding); `offset`: the
    line's byte offset in its stream, where known."""

    def __init__(self, message: str, sample: bytes = b"", offset: int | None = None):
        super().__init__(message)
        self.sample, self.offset = sample, offset


def decode_line(raw: bytes, number: int, name: str, errors: str = "strict") -> str:
    try:
        return raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as err:
        raise UndecodableLine(f"{name}, line {number}: bytes that are not UTF-8 at column {err.start + 1}",
                              raw, 0 if number == 1 else None) from None


def check_utf8(stream: BinaryIO, name: str, chunk: int = 1 << 20) -> None:
    """Raise UndecodableLine (file, line, column: as decode_line says them) at the first bytes of
    a binary stream that are not UTF-8; a streaming pass (an incremental decoder over chunks,
    far quicker than segmenting), so that a bad last line stops a run before the model loads, not after it."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    lines, line_start, offset = 1, 0, 0  # line number and byte offset of the line at `offset`
    while True:
        data = stream.read(chunk)
        try:
            buffered = len(decoder.getstate()[0])
            decoder.decode(data, final=not data)
        except UnicodeDecodeError as err:
            at = offset - buffered + err.start  # the bad byte's offset in the stream
            head = data[: max(at - offset, 0)]  # this chunk's bytes before it
            newlines = head.count(b"\n")
            if newlines:
                lines, line_start = lines + newlines, offset + head.rindex(b"\n") + 1
            column = at - line_start + 1
            sample = data[line_start - offset:] if line_start >= offset else data[max(at - offset, 0):]
            raise UndecodableLine(f"{name}, line {lines}: bytes that are not UTF-8 at column {column}",
                                  sample, line_start) from None
        if not data:
            return
        newlines = data.count(b"\n")
        if newlines:
            lines, line_start = lines + newlines, offset + data.rindex(b"\n") + 1
        offset += len(data)


def iter_lines(stream: BinaryIO, name: str, errors: str = "strict") -> Iterator[str]:
    """Decoded lines of a binary stream, without their line endings, streamed."""
    for number, raw in enumerate(stream, start=1):
        line = decode_line(raw, number, name, errors)
        yield line.rstrip("\r\n") if line.endswith("\n") else line


def read_file_lines(path: str | os.PathLike, errors: str = "strict") -> Iterator[str]:
    if os.path.isdir(path):  # open() would say only "[Errno 21] Is a directory"
        raise IsADirectoryError(f"{os.fspath(path)} is a directory, not a text file: give the files in it, "
                                f"e.g. sorted(Path({os.fspath(path)!r}).glob('*.txt'))")
    with open(path, "rb") as stream:
        yield from iter_lines(stream, os.fspath(path), errors)


def piece_end(text: str, size: int) -> int:
    """Where to end a piece of at most `size` characters cut from the front of `text`: after the
    last break run (_BREAK) in its last quarter that does not touch the cut, else at `size`."""
    if len(text) <= size:
        return len(text)
    end = size
    for match in _BREAK.finditer(text, size - size // 4, size):
        if match.end() < size:
            end = match.end()
    return end


def line_pieces(line: str, size: int = PIECE_CHARS) -> Iterator[tuple[str, bool]]:
    """(piece, is_last) covering `line` in order: the line itself when it is short."""
    start = 0
    while len(line) - start > size:
        end = start + piece_end(line[start : start + size + 1], size)
        yield line[start:end], False
        start = end
    yield line[start:], True


def iter_pieces(stream: BinaryIO, name: str, errors: str = "strict",
                size: int = PIECE_CHARS) -> Iterator[tuple[str, bool]]:
    """(text, ends_line) for every line of a binary stream, as iter_lines reads it, a line of
    more than `size` characters in pieces (line_pieces): never more than ~6 `size` characters of
    a line are held, however long it is (up to 2 `size` kept after a cut, then a read of up to 4
    `size` bytes)."""
    limit = 4 * size  # bytes: a line of at most `size` characters always fits (UTF-8: <= 4 bytes each)
    for number in range(1, 2**63):
        raw = stream.readline(limit)
        if not raw:
            return
        if raw.endswith(b"\n") or len(raw) < limit:  # the whole line: the common case
            line = decode_line(raw, number, name, errors)
            yield from line_pieces(line.rstrip("\r\n") if line.endswith("\n") else line, size)
            continue
        decoder = codecs.getincrementaldecoder("utf-8")(errors)
        pending, offset = "", 0  # decoded, not yet given out; bytes of the line decoded before `raw`
        while True:
            ends = not raw or raw.endswith(b"\n")
            try:
                buffered = len(decoder.getstate()[0])
                pending += decoder.decode(raw, final=ends)
            except UnicodeDecodeError as err:
                column = offset - buffered + err.start + 1
                raise UndecodableLine(f"{name}, line {number}: bytes that are not UTF-8 at column {column}",
                                      raw) from None
            offset += len(raw)
            if ends:
                yield from line_pieces(pending.rstrip("\r\n") if raw else pending, size)
                break
            while len(pending) > 2 * size:  # keep a piece's worth after the cut: the \r\n strip, a break run
                end = piece_end(pending[: size + 1], size)
                yield pending[:end], False
                pending = pending[end:]
            raw = stream.readline(limit)


def write_pieces(out: TextIO, pieces: Iterable[tuple[list[str], bool]], delimiter: str = " ") -> None:
    """Write (words, ends_line) pieces as `segmenter` writes lines: a line's pieces on one output
    line, joined by the delimiter, as join_words would join the words of the whole line."""
    started = False  # something of the current line is written already
    for words, ends in pieces:
        text = join_words(words, delimiter)
        if text:
            out.write(delimiter + text if started else text)
            started = True
        if ends:
            out.write("\n")
            started = False


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


def chunked(lines: Iterable, size: int, max_chars: int | None = None, length=len) -> Iterator[list]:
    """Lists of `size` lines, or fewer when they reach `max_chars` characters together
    (`length(item)` counts an item's characters: for (text, flag) pieces, the text's)."""
    chunk: list = []
    chars = 0
    for line in lines:
        chunk.append(line)
        chars += length(line)
        if len(chunk) == size or (max_chars is not None and chars >= max_chars):
            yield chunk
            chunk, chars = [], 0
    if chunk:
        yield chunk


def join_words(words: list[str], delimiter: str = " ") -> str:
    """One output line as the `segmenter` command writes it: with a delimiter, whitespace words
    dropped (the delimiter stands for them: `a b` -> `a/b`); with the empty one, every word, so
    that the line comes back exactly as it was read."""
    if not delimiter:
        return "".join(words)
    return delimiter.join(w for w in words if not w.isspace())
