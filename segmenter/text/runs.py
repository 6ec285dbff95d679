"""Text handling: split any string into runs, and what a Han character is.

Only Han characters need a model to find word boundaries. Everything else has a rule: a Latin
word, a number (`3.14`, `１２％`; with : ∶ / - inside, `10:30` `３∶１` `1/8` `2-1` `2016-10-01`), a
URL or an e-mail address is one word; so is a run of letters of any other script (Hangul, kana,
Cyrillic, Greek, Arabic…: written with spaces or punctuation between words, or, for kana, read
by no model here); a punctuation mark is its own word (a run of the same dash or dot, `——` `……`,
stays one); whitespace is its own token. `split_runs` covers every character of the input
exactly once, in order, which is what makes segmentation lossless.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

import numpy as np

# What a Han character is, the one definition (the regexes and han_mask below derive from it):
# Han ideographs (CJK unified + extension A + compatibility + the supplementary planes), and
# the two zeros Chinese text writes numbers with: 〇 (U+3007) and ○ (U+25CB, as in PKU's "二○○一年").
HAN_RANGES = (
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F), (0x3007, 0x3007), (0x25CB, 0x25CB),
)
HAN_CLASS = "".join(chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in HAN_RANGES)  # inside [...]
_DIGIT = "0-9\uff10-\uff19"
# The characters that end a line, as str.splitlines has them (a window holds one line: plan.py).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Latin letters, accented ones included (precomposed "café" is one word, as "cafe\u0301" is), and
# the combining accents a decomposed letter carries inside a word ("e\u0301te\u0301", NFD text).
_LETTER = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a"
_MARK = "\u0300-\u036f"
# A letter of any script but Han (and Latin, matched first): \w less digits and "_".
_ALPHA = rf"(?:(?![{HAN_CLASS}])[^\W\d_])"
_ALPHA_WORD = rf"{_ALPHA}(?:{_ALPHA}|\d)*(?:['\u2019\-]{_ALPHA}(?:{_ALPHA}|\d)*)*"
# A character a URL may hold: no space, quote or bracket, no Han, no CJK, curly or full-width punctuation.
_URL_CHAR = rf"[^\s<>\"'()\[\]{HAN_CLASS}\u2018-\u201f\u3000-\u303f\uff00-\uffef]"
_RUN_PATTERNS = [
    # A URL ends where Chinese text goes on without a space (www.x.cn设定密码: most URLs of the
    # shared raw text run straight into Han), at CJK, full-width or curly punctuation,
    # and before a trailing . , ; : ! ? or an unmatched ) (见(www.x.cn).), as chat apps link them;
    # brackets it opens and closes stay in it (wiki/Python_(language)).
    ("url", rf"(?:https?://|ftp://|www\.)(?:{_URL_CHAR}|\({_URL_CHAR}*\))+(?<![.,;:!?])"),
    ("email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    # Letters with digits inside or around (MP3, B2B, 1B) count as one Latin word, and so does a
    # name's ++ (C++ g++ Notepad++) with a version after it (C++11 C++0x VC++6.0). Not a # (C#):
    # in the shared raw text a word's # is mostly a Weibo hashtag's closing mark (#少女时代Girls#).
    ("latin", rf"[{_DIGIT}]*[{_LETTER}][{_LETTER}{_DIGIT}{_MARK}]*"
              rf"(?:['\u2019\-][{_LETTER}{_DIGIT}][{_LETTER}{_DIGIT}{_MARK}]*)*"
              rf"(?:\+\+(?:[0-9]+(?:\.[0-9]+)*[A-Za-z]?)?(?![+{_LETTER}{_DIGIT}]))?"),
    # A score, a time, a ratio, a fraction or a date is one number, as the dev files write them
    # (2-1, ３∶１, １／３, 10:30); a range with a dash or tilde is not (５ 级 — ６ 级, 25 ～ 50 mg).
    ("number", rf"[{_DIGIT}]+(?:[.\uff0e:\uff1a\u2236/\uff0f\-\uff0d][{_DIGIT}]+|,[{_DIGIT}]{{3}}(?![{_DIGIT}]))*[%\uff05\u2030]?"),
    ("han", rf"[{HAN_CLASS}]+"),
    # слово, 한국어, カタカナ, λόγος, كلمة (with its marks: see split_runs)
    ("alpha", _ALPHA_WORD),
    ("space", r"\s+"),
    # —— …… --- stay one word
    ("repeat", r"(?P<repeated>[\u2014\u2026\-.~\uff5e=*_\u00b7\u2500])(?P=repeated)+"),
    ("flag", r"[\U0001f1e6-\U0001f1ff]{2}"),  # two regional indicators make one flag: 🇨🇳
    ("char", r"."),
]
_RUN_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _RUN_PATTERNS), re.DOTALL)
# Marks that belong to the character before them: zero-width joiners (and the character a ZWJ
# joins), emoji skin tones, emoji tags, and every combining mark (Unicode category M: accents,
# variation selectors, the ideographic variation selectors U+E0100-E01EF of names), see attached_end.
_ATTACHED = re.compile(r"(?:[\u0300-\u036f\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]|\u200d\S?)+")
# (a ZWJ joins no space: one that ends a line took its line break into the word before it)
HAN_RE = re.compile(rf"[{HAN_CLASS}]")
HAN_SPAN_RE = re.compile(rf"[{HAN_CLASS}]+")  # a run of Han characters
_ALPHA_RE = re.compile(_ALPHA_WORD)


class Run(NamedTuple):
    """A stretch of text: `kind` is han, latin, alpha (letters of another script), number, url,
    email, space, punct, symbol or other."""

    kind: str
    start: int
    end: int


_new_run = tuple.__new__
_KIND_OF_CHAR = frozenset(("char", "repeat", "flag"))  # matches whose kind is their first character's


@functools.lru_cache(maxsize=4096)
def _char_kind(char: str) -> str:
    category = unicodedata.category(char[0])[0]
    return "punct" if category == "P" else "symbol" if category == "S" else "other"


# Characters none of which is a mark, a joiner or anything else attached_end or an alpha run
# would take past a match: Han, ASCII, Latin-1, CJK punctuation (less the tone marks U+302A-302F),
# general punctuation (less the zero-width and bidi controls), the symbols of U+2100-2BFF
# (letterlike ℃, number forms Ⅱ, arrows, mathematical ∶, enclosed ①, shapes ●, dingbats: no
# mark among them), full-width forms (less the half-width sound marks U+FF9E-FF9F). A text of
# these alone is split by the run regex alone.
_PLAIN_CLASS = (rf"{HAN_CLASS}\x00-\xff\u2010-\u2027\u2030-\u205e\u2100-\u2bff\u3000-\u3029\u3030-\u303f"
                rf"\uff01-\uff9d")
_PLAIN_RE = re.compile(rf"[{_PLAIN_CLASS}]*")


def is_plain(text: str) -> bool:
    """Whether `text` is of _PLAIN_RE's characters alone: no run of it goes on past its match."""
    return _PLAIN_RE.fullmatch(text) is not None


def split_runs(text: str, plain: bool | None = None) -> list[Run]:
    """Runs covering `text` exactly: `"".join(text[r.start:r.end] for r in runs) == text`.
    plain: is_plain(text), where the caller knows it already (TextPlan); None: found here."""
    if is_plain(text) if plain is None else plain:  # most text: one regex pass
        runs = []
        for match in _RUN_RE.finditer(text):
            kind, (start, end) = match.lastgroup, match.span()
            # tuple.__new__: Run(...) would be a Python-level call per run
            runs.append(_new_run(Run, (_char_kind(text[start]) if kind in _KIND_OF_CHAR else kind, start, end)))
        return runs
    runs: list[Run] = []
    position, length = 0, len(text)
    while position < length:
        match = _RUN_RE.match(text, position)
        kind, end = match.lastgroup, match.end()
        if kind in _KIND_OF_CHAR:
            kind = _char_kind(text[position])
        if kind != "space":
            end = attached_end(text, end)
        while kind == "alpha":  # a word goes on past its marks (Arabic harakat, Indic vowel signs)
            more = _ALPHA_RE.match(text, end + text.startswith("\u200c", end))  # ZWNJ inside Persian words
            if more is None:
                break
            end = attached_end(text, more.end())
        runs.append(Run(kind, position, end))
        position = end
    return runs


# Every character a run of several characters may hold, whatever its pattern above (url: its
# _URL_CHAR and brackets; email; latin: letters, digits, marks, ' ’ - +; number: digits and what
# joins them, % ％ ‰; alpha: \w; space; repeat): a plain character outside these and Han is a
# run of its own wherever it stands (。 ， 、 《 》 “ ” ！ （ ）: most punctuation of Chinese text).
_OF_SEVERAL = re.compile(rf"{_URL_CHAR}|[\w\s()@'\u2019+.,%\uff05\u2030:\uff0e\uff1a\u2236/\uff0f\-\uff0d"
                         rf"\u2014\u2026~\uff5e=*_\u00b7\u2500{_LETTER}{_DIGIT}{_MARK}]")
_SPACE_RE = re.compile(r"\s")
# The kinds of plain_runs' runs, by number: a character class of _plain_classes is its run's kind.
PLAIN_KINDS = ("han", "punct", "symbol", "other", "latin", "number", "url", "email", "alpha")
_HAN_KIND, _BY_REGEX = 0, 255  # _plain_classes: Han, a character the run regex reads in its stretch
_KIND_NUMBER = {kind: k for k, kind in enumerate(PLAIN_KINDS)}


def is_plain_spaceless(text: str) -> bool:
    """Whether plain_runs can split `text`: it is plain (is_plain) and holds no whitespace."""
    return _PLAIN_RE.fullmatch(text) is not None and _SPACE_RE.search(text) is None


@functools.lru_cache(maxsize=1)
def _plain_classes() -> np.ndarray:
    """(0x10000,) uint8, per BMP code point: _HAN_KIND for Han, the kind number (PLAIN_KINDS) of
    a plain character that is a run of its own wherever it stands (not of _OF_SEVERAL), and
    _BY_REGEX for every other. Read only."""
    classes = np.full(0x10000, _BY_REGEX, dtype=np.uint8)
    classes[han_mask(np.arange(0x10000))] = _HAN_KIND
    bmp = "".join(map(chr, range(0x10000)))
    for char in re.findall(rf"(?![{HAN_CLASS}])[{_PLAIN_CLASS}]", bmp):  # a few hundred
        if not _OF_SEVERAL.match(char) and _RUN_RE.match(char).lastgroup == "char":
            classes[ord(char)] = _KIND_NUMBER[_char_kind(char)]
    classes.setflags(write=False)
    return classes


def plain_runs(text: str, text_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of texts joined end to end into `text`, each text starting at its offset of
    `text_starts` (ascending), every text is_plain_spaceless: (starts, ends, kinds) of all runs in
    `text`'s offsets, in order, kinds numbers of PLAIN_KINDS. The same runs as split_runs of each
    text, without a regex match for each: a Han run is a stretch of Han characters (no other
    pattern takes one), a character of a run of its own (_plain_classes) is one, and only the
    stretches of other characters between them are read by the run regex, each up to its end
    (no pattern takes a Han character or one of a run of its own, and no lookahead of the
    patterns tells those from the end of the text)."""
    codes = code_points(text)
    classes = _plain_classes()[np.minimum(codes, 0xFFFF)]
    if len(codes) and codes.max() > 0xFFFF:  # a plain text's astral characters are Han (_PLAIN_CLASS)
        classes[codes > 0xFFFF] = _HAN_KIND
    # A run starts at a text's start and wherever the class changes, except inside a stretch of
    # Han characters or of those the regex reads; a character of a run of its own starts one.
    first = np.zeros(len(codes) + 1, dtype=bool)
    first[text_starts[text_starts < len(codes)]] = True
    first[0] = first[-1] = True
    first[1:-1] |= classes[1:] != classes[:-1]
    first[:-1] |= (classes != _HAN_KIND) & (classes != _BY_REGEX)
    bounds = np.flatnonzero(first)
    starts, ends, kinds = bounds[:-1], bounds[1:], classes[bounds[:-1]].astype(np.int64)
    read = np.flatnonzero(kinds == _BY_REGEX)
    if not len(read):
        return starts, ends, kinds
    # The stretches the regex reads: their runs replace them.
    found_starts, found_ends, found_kinds = [], [], []
    for a, b in zip(starts[read].tolist(), ends[read].tolist()):
        for match in _RUN_RE.finditer(text, a, b):
            kind, (start, end) = match.lastgroup, match.span()
            found_starts.append(start)
            found_ends.append(end)
            found_kinds.append(_KIND_NUMBER[_char_kind(text[start]) if kind in _KIND_OF_CHAR else kind])
    keep = np.ones(len(starts), dtype=bool)
    keep[read] = False
    order = np.argsort(np.concatenate([starts[keep], found_starts]), kind="stable")
    return (np.concatenate([starts[keep], found_starts])[order], np.concatenate([ends[keep], found_ends])[order],
            np.concatenate([kinds[keep], found_kinds])[order])


def attached_end(text: str, end: int) -> int:
    """Past the marks that belong to text[end - 1], so that no word starts with one."""
    while end < len(text):
        attached = _ATTACHED.match(text, end)
        if attached:
            end = attached.end()
        elif unicodedata.category(text[end])[0] == "M":
            end += 1
        else:
            break
    return end


def code_points(text: str, dtype=np.int64) -> np.ndarray:
    """Unicode code points of `text` (one per character, astral ones included; a lone surrogate,
    as surrogateescape decoding leaves for undecodable bytes, is its own code point). The one
    conversion of the package. dtype=np.uint32: a read-only view of the encoded text, no copy."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(dtype, copy=False)


# The edges of HAN_RANGES in order (each range's first code point and the one past its last): a
# code point is Han when an odd number of edges are at or below it. For a few code points (a
# sentence's) one search costs less than a comparison per range; for many, the comparisons stream
# faster than the searches: below SEARCH_BELOW code points, search.
_HAN_EDGES = np.array(sorted(edge for lo, hi in HAN_RANGES for edge in (lo, hi + 1)), dtype=np.int64)
assert (np.diff(_HAN_EDGES) > 0).all(), "HAN_RANGES must not overlap or touch"
SEARCH_BELOW = 128


def han_mask(codepoints: np.ndarray) -> np.ndarray:
    """Which of an array of code points are Han characters (HAN_RANGES): the n-gram counters' view."""
    if len(codepoints) < SEARCH_BELOW:
        return (np.searchsorted(_HAN_EDGES, codepoints, side="right") & 1).astype(bool)
    mask = np.zeros(len(codepoints), dtype=bool)
    for lo, hi in HAN_RANGES:
        mask |= (codepoints >= lo) & (codepoints <= hi)
    return mask
