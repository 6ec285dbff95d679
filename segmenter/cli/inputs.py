"""What the `segmenter` command reads: its input files and standard input, as binary streams with
`readline(limit)` for lines.iter_pieces, and `available()`: can more be read without waiting?

Standard input that is a pipe, a terminal or a socket is read as it comes (`Arriving`): a line is
handed on as soon as it is complete, and the command segments what has arrived in one batch
(segment.available_chunks), so `tail -f app.log | segmenter` writes each line's words as it
comes, while `cat big.txt | segmenter` still segments batches of hundreds of lines. A regular file
(an input file, or `segmenter < file`) never makes a reader wait: it is read buffered, as before.

`--encoding NAME` (gb18030, big5, utf-16, ...) decodes through `Transcoded`, which hands the
same lines on as UTF-8 bytes: lines.iter_pieces then reads every input alike. Bytes that are not
UTF-8 get a guess of what they are (guess_encoding), named in the error.
"""
from __future__ import annotations

import codecs
import contextlib
import os
import select
import stat
import sys
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

from ..run.lines import PIECE_CHARS, UndecodableLine

READ_BYTES = 1 << 20  # one read at most: a pipe's buffer, made this large where Linux allows (Arriving)
PIPE_BYTES = 1 << 20
# A read that found this much was a writer faster than we are (cat big.txt | segmenter): it is
# waited for this long before a batch is cut short, so that a pipe's batches stay large.
BULK_BYTES, BULK_WAIT = 1 << 16, 0.005
LINE_LIMIT = 4 * PIECE_CHARS  # iter_pieces' readline limit: a line longer than this comes in parts


def _take_line(buffer: bytes, start: int, limit: int, final: bool) -> int | None:
    """Where the line at `start` of `buffer` ends (an index past its b"\\n", or `limit` bytes on,
    or the buffer's end when `final`), or None when more bytes are needed."""
    end = buffer.find(b"\n", start, start + limit if limit > 0 else len(buffer))
    if end >= 0:
        return end + 1
    if limit > 0 and len(buffer) - start >= limit:
        return start + limit
    return len(buffer) if final else None


class Arriving:
    """A pipe, terminal or socket read as its bytes arrive (POSIX: select on the descriptor).

    readline waits only for the bytes its line needs; available() waits for nothing."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer, self.start = b"", 0  # bytes read, not yet handed out: buffer[start:]
        self.eof = False
        self.bulk = False  # the last read was a large one
        with contextlib.suppress(AttributeError, OSError):  # Linux: a writer may get further ahead
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)

    def _read(self) -> bool:
        """One read (it waits when nothing is there); False at the end of the input."""
        data = os.read(self.fd, READ_BYTES)
        self.bulk = len(data) >= BULK_BYTES
        if not data:
            self.eof = True
            return False
        self.buffer = self.buffer[self.start:] + data
        self.start = 0
        return True

    def _ready(self, wait: float = 0) -> bool:
        return bool(select.select([self.fd], [], [], wait)[0])

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = _take_line(self.buffer, self.start, limit, self.eof)
            if end is not None:
                line, self.start = self.buffer[self.start:end], end
                return line
            self._read()

    def read1(self, size: int = READ_BYTES) -> bytes:
        """What has arrived (up to `size` bytes), waiting only when nothing has: b"" at the end."""
        if self.start == len(self.buffer) and not self.eof:
            self._read()
        data = self.buffer[self.start:self.start + size]
        self.start += len(data)
        return data

    def available(self) -> bool:
        """Whether a read would return at once (bytes have arrived, or the input has ended)."""
        return self.eof or self.start < len(self.buffer) or self._ready()

    def line_available(self) -> bool:
        """Whether readline(LINE_LIMIT) would return at once: reads what has arrived to find out."""
        while True:
            if _take_line(self.buffer, self.start, LINE_LIMIT, self.eof) is not None:
                return True
            if not self._ready(BULK_WAIT if self.bulk else 0):
                return False
            self._read()


# An error handler for Transcoded: a lone surrogate, which no decoder gives for valid bytes, marks
# where the first bad bytes were (the text before it is good, its newlines give the line).
_MARK = "\ud800"
codecs.register_error("segmenter-mark", lambda err: (_MARK, err.end))


class Transcoded:
    """A binary stream in another encoding, read as UTF-8 bytes (a line at a time, as a file).

    With errors="strict", undecodable bytes raise UndecodableLine (line and character) once
    every complete line before them has been read; errors="replace" writes U+FFFD for them."""

    def __init__(self, stream, encoding: str, name: str, errors: str = "strict"):
        self.stream, self.name = stream, name
        self.label = codecs.lookup(encoding).name.upper()
        self.decoder = codecs.getincrementaldecoder(encoding)("segmenter-mark" if errors == "strict" else errors)
        self.buffer, self.start = b"", 0
        self.eof = False
        self.newlines = 0  # in the text decoded so far
        self.error: UndecodableLine | None = None

    def _read(self) -> None:
        data = self.stream.read1(READ_BYTES) if hasattr(self.stream, "read1") else self.stream.read(READ_BYTES)
        text = self.decoder.decode(data, final=not data)
        if _MARK in text:  # keep the lines before the bad bytes; raise once they are read
            good = text[: text.index(_MARK)]
            line_start = good.rfind("\n") + 1
            self.error = UndecodableLine(
                f"{self.name}, line {self.newlines + good.count(chr(10)) + 1}: bytes that are not "
                f"{self.label} at character {len(good) - line_start + 1}")
            text = good[:line_start]
        self.newlines += text.count("\n")
        self.buffer = self.buffer[self.start:] + text.encode("utf-8", "surrogatepass")
        if self.error is not None:  # not the start of the bad line either (read before, without its end)
            self.buffer = self.buffer[: self.buffer.rfind(b"\n") + 1]
        self.start = 0
        self.eof = not data or self.error is not None

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = _take_line(self.buffer, self.start, limit, self.eof)
            if end is not None and (end > self.start or self.error is None):
                line, self.start = self.buffer[self.start:end], end
                return line
            if self.error is not None:
                raise self.error
            self._read()

    def available(self) -> bool:
        return self.eof or self.start < len(self.buffer) or _available(self.stream)

    def close(self) -> None:
        self.stream.close()

    def line_available(self) -> bool:
        while True:
            if self.error is not None or _take_line(self.buffer, self.start, LINE_LIMIT, self.eof) is not None:
                return True
            if not _available(self.stream):
                return False
            self._read()


def _available(stream) -> bool:
    available = getattr(stream, "available", None)
    return True if available is None else available()


def line_available(stream) -> bool:
    """Whether the stream's next line can be read without waiting (a file's always can)."""
    check = getattr(stream, "line_available", None)
    return True if check is None else check()


def standard_input() -> BinaryIO | Arriving:
    """Standard input: a regular file buffered (it never waits), else read as it arrives
    (POSIX; elsewhere buffered: lines then come in batches, not each as it arrives)."""
    try:
        fd = sys.stdin.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):  # replaced (tests), or closed
        return sys.stdin.buffer
    if regular or os.name != "posix":
        return sys.stdin.buffer
    return Arriving(fd)


def open_input(path: str, encoding: str, errors: str):
    """(stream, name) of an input: a file, or standard input for '-'; in `encoding`, as UTF-8."""
    name = "<stdin>" if path == "-" else path
    stream = standard_input() if path == "-" else open(path, "rb")
    if not is_utf8(encoding):
        stream = Transcoded(stream, encoding, name, errors)
    return stream, name


def is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def check_encoding_name(name: str) -> str:
    """A text encoding Python knows (--encoding), as given; ValueError otherwise."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise ValueError(f"--encoding {name}: no such encoding (e.g. utf-8, gb18030, big5, utf-16)") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"--encoding {name} is not a text encoding (e.g. utf-8, gb18030, big5, utf-16)")
    return name


def check_encoded(stream, name: str, encoding: str, errors: str = "strict") -> None:
    """Read a whole stream in `encoding` (not UTF-8: lines.check_utf8 does that one faster),
    raising UndecodableLine at its first bad bytes."""
    reader = Transcoded(stream, encoding, name, errors)
    while not reader.eof:
        reader._read()
        reader.buffer, reader.start = b"", 0
    if reader.error is not None:
        raise reader.error


# -- what bytes that are not UTF-8 look like ----------------------------------------------------
SAMPLE_BYTES = 1 << 16


def guess_encoding(sample: bytes, at_start: bool = False) -> str | None:
    """The encoding the bytes of `sample` (from the start of the line where UTF-8 failed) most
    likely are: "utf-16" (a byte-order mark at the start of the input, or ASCII's zero bytes
    every other byte), "gb18030" or "big5" (the one whose decoding reads most as common
    characters: GB2312's for GB18030, Big5's frequent block for Big5); None if none fits."""
    sample = sample[:SAMPLE_BYTES]
    if not at_start and sample[:1] == b"\x00":  # after UTF-16-LE's b"\n\x00", cut at its b"\n"
        sample = sample[1:]
    if (at_start and sample[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _zero_every_other(sample):
        return "utf-16" if sample[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else (
            "utf-16-le" if sample[1::2].count(0) > sample[0::2].count(0) else "utf-16-be")
    scores = {}
    for encoding, common in (("gb18030", _common_gb), ("big5", _common_big5)):
        text = _decoded(sample, encoding)
        wide = [c for c in text or "" if ord(c) > 0x7F]
        if len(wide) >= 2:
            scores[encoding] = sum(map(common, wide)) / len(wide)
    best = max(scores, key=scores.get, default=None)
    return best if best is not None and scores[best] >= 0.8 else None


def _zero_every_other(sample: bytes) -> bool:
    even, odd = sample[0::2], sample[1::2]
    return len(sample) >= 8 and max(even.count(0), odd.count(0)) >= 0.3 * len(odd) and min(
        even.count(0), odd.count(0)) <= 0.05 * len(odd)


def _decoded(sample: bytes, encoding: str) -> str | None:
    """The sample decoded, a character cut at its end forgiven; None if it is not that encoding."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        return decoder.decode(sample)  # not final: a cut character at the end is left pending
    except UnicodeDecodeError:
        return None


def _common_gb(char: str) -> bool:
    try:
        char.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _common_big5(char: str) -> bool:
    try:
        lead = char.encode("big5")[0]
    except UnicodeEncodeError:
        return False
    return 0xA1 <= lead <= 0xC6  # symbols and the 5,401 frequent characters


def encoding_hint(err: UndecodableLine, encoding: str) -> str:
    """The advice after a decoding error: the encoding the bytes look like, when one fits."""
    if not is_utf8(encoding):
        return "check --encoding, or pass --encoding-errors replace"
    guess = guess_encoding(getattr(err, "sample", b""), getattr(err, "offset", None) == 0)
    if guess is not None:
        label = {"gb18030": "GB18030 (GBK)", "big5": "Big5"}.get(guess, guess.upper())
        return f"they look like {label}: pass --encoding {guess}"
    return "convert the file to UTF-8 or pass --encoding-errors replace"
