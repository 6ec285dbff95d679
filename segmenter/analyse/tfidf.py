"""TF-IDF keywords with jieba.analyse's calls and arguments (jieba/analyse/tfidf.py).

The words come from the segmenter (the embedded model unless a tokenizer is given), the IDF
table from raw text segmented by that same model (idf.txt.gz, built by
segmenter.train.idf; benchmarks/build_idf.py has the command). What jieba does, this does:
a word counts when it has two characters or more (after strip) and its lower case is not a
stop word; its weight is its count / the number of counted words * its IDF, the median IDF
of the table for a word the table lacks; ties keep the order of first appearance.

What differs: no part-of-speech tagger here, so `allowPOS` must stay empty (a ValueError says
so) and `withFlag` is accepted and ignored, as jieba ignores it without allowPOS; a token with
no letter, digit or Han character (——, ……) never counts, nor does a numeral (1998, ２０００年,
80%, 第四十三号: jieba's TF-IDF returns such numbers, its TextRank drops them by their part of
speech); the default stop words are jieba's English ones plus a short hand-written list of
Chinese function words (stop_words.txt).
Nothing loads before the first call: the model when words are first cut, the table when a
weight is first needed (set_idf_path reads its file at once, to check it).
"""
from __future__ import annotations

import gzip
import os
from operator import itemgetter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_IDF = HERE / "idf.txt.gz"
DEFAULT_STOP_WORDS = HERE / "stop_words.txt"
GZIP_MAGIC = b"\x1f\x8b"


def check_allow_pos(allowPOS) -> None:  # noqa: N803 (jieba's name)
    if allowPOS:
        raise ValueError(
            f"allowPOS={allowPOS!r}: segmenter has no part-of-speech tagger, so only allowPOS=() is "
            "accepted (every word may be a keyword; textrank's default is () here, not jieba's "
            "('ns', 'n', 'vn', 'v')); to leave words out, add them to the stop words (set_stop_words)"
        )


def check_top_k(topK) -> None:  # noqa: N803
    if topK is not None and (isinstance(topK, bool) or not isinstance(topK, int) or topK < 0):
        raise ValueError(f"topK must be a whole number >= 0, or None (0 and None: every word), got {topK!r}")


def top(weights: dict, topK, withWeight):  # noqa: N803
    """jieba's ordering: by weight, largest first; ties keep their order of insertion."""
    if withWeight:
        tags = sorted(weights.items(), key=itemgetter(1), reverse=True)
    else:
        tags = sorted(weights, key=weights.__getitem__, reverse=True)
    return tags[:topK] if topK else tags


def read_lines(path: str | os.PathLike, what: str) -> list[str]:
    """Lines of a UTF-8 file, gzip-compressed or not (told by its first bytes)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} file does not exist: {path}")
    data = path.read_bytes()
    if data[:2] == GZIP_MAGIC:
        data = gzip.decompress(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: {what} file is not UTF-8 ({error})") from None
    return text.lstrip("\ufeff").splitlines()


def read_idf(path: str | os.PathLike) -> dict[str, float]:
    """jieba's IDF format: `word idf` a line (the last space separates them; blank lines are
    skipped); a .gz file is read too. A bad line raises ValueError naming it; nothing is kept."""
    table = {}
    for number, line in enumerate(read_lines(path, "IDF"), 1):
        line = line.strip()
        if not line:
            continue
        word, _, value = line.rpartition(" ")
        try:
            table[word.strip()] = float(value)
        except ValueError:
            raise ValueError(f"{path}:{number}: expected `word idf`, got {line!r}") from None
        if not word.strip():
            raise ValueError(f"{path}:{number}: expected `word idf`, got {line!r}")
    if not table:
        raise ValueError(f"{path}: the IDF file has no entries")
    return table


def read_stop_words(path: str | os.PathLike) -> list[str]:
    """Words of a stop-word file, one a line; surrounding blanks are dropped, blank lines skipped."""
    return [line.strip() for line in read_lines(path, "stop-word") if line.strip()]


def median(values) -> float:
    """jieba's median: the middle value of the sorted list (the upper one of an even count)."""
    values = sorted(values)
    return values[len(values) // 2]


# A numeral: digits of any script or Han numerals (and ○, PKU's zero) with number marks,
# optionally after 第 and before one unit: 1998, ２０００年, 二○○一年, 80%, 12:30,
# 第四十三号, ５０亿元.
NUMBER_MARKS = frozenset(".．,，%％:：/／-－~～+＋○两")
NUMBER_UNITS = frozenset("年月日号时分秒点岁元亿万个名人次家位届期天周度")


def is_numeral(word: str) -> bool:
    core = word[1:] if word[:1] == "第" else word
    core = core[:-1] if core[-1:] in NUMBER_UNITS else core
    return any(c.isnumeric() for c in core) and all(c.isnumeric() or c in NUMBER_MARKS for c in core)


def is_keyword(word: str, stop_words) -> bool:
    """jieba's test (two characters or more after strip, lower case not a stop word), a letter,
    digit or Han character somewhere in it, and no numeral (the part of speech jieba's TextRank
    leaves out; here TF-IDF too)."""
    return (len(word.strip()) >= 2 and word.lower() not in stop_words and any(c.isalnum() for c in word)
            and not is_numeral(word.strip()))


class KeywordExtractor:
    """What TFIDF and TextRank share: the tokenizer and the stop words."""

    STOP_WORDS = frozenset((  # jieba's default stop words
        "the", "of", "is", "and", "to", "in", "that", "we", "for", "an", "are",
        "by", "be", "as", "on", "with", "can", "if", "from", "which", "you", "it",
        "this", "then", "at", "have", "all", "not", "one", "has", "or", "that",
    ))

    def __init__(self, tokenizer=None):
        # jieba's tokenizer attribute: anything with .cut(sentence) giving words (a Segmenter,
        # jieba.dt) or a function of the sentence; None: the embedded model, loaded on first use.
        self.tokenizer = tokenizer
        self.stop_words = set(self.STOP_WORDS) | set(read_stop_words(DEFAULT_STOP_WORDS))

    def set_stop_words(self, stop_words_path):
        """Add the words of a file, one a line (UTF-8), to the stop words, as jieba does."""
        self.stop_words.update(read_stop_words(stop_words_path))

    def cut(self, sentence) -> list[str]:
        tokenizer = self.tokenizer
        if tokenizer is None:
            from .. import default_segmenter

            tokenizer = default_segmenter()
        cut = getattr(tokenizer, "cut", None)
        return list(cut(sentence) if cut is not None else tokenizer(sentence))

    def extract_tags(self, *args, **kwargs):
        raise NotImplementedError


class TFIDF(KeywordExtractor):
    """jieba.analyse.TFIDF: TFIDF(idf_path=None), and a tokenizer (see KeywordExtractor)."""

    def __init__(self, idf_path=None, tokenizer=None):
        super().__init__(tokenizer)
        self.idf_path = Path(idf_path) if idf_path else DEFAULT_IDF
        self._idf = None  # (table, median), read on first use

    def set_idf_path(self, idf_path):
        """Use another IDF file (jieba's format, `word idf` a line; .gz too); read and checked now."""
        table = read_idf(idf_path)
        self.idf_path, self._idf = Path(idf_path), (table, median(table.values()))

    def _table(self) -> tuple[dict[str, float], float]:
        if self._idf is None:
            table = read_idf(self.idf_path)
            self._idf = (table, median(table.values()))
        return self._idf

    @property
    def idf_freq(self) -> dict[str, float]:
        return self._table()[0]

    @property
    def median_idf(self) -> float:
        return self._table()[1]

    def extract_tags(self, sentence, topK=20, withWeight=False, allowPOS=(), withFlag=False):  # noqa: N803
        """Keywords of `sentence` by TF-IDF, best first: words, or (word, weight) pairs with
        withWeight=True; topK of them (None or 0: all). allowPOS must be empty (no POS tagger
        here); withFlag is ignored, as jieba ignores it without allowPOS."""
        check_allow_pos(allowPOS)
        check_top_k(topK)
        freq: dict[str, float] = {}
        for word in self.cut(sentence):
            if is_keyword(word, self.stop_words):
                freq[word] = freq.get(word, 0.0) + 1.0
        if freq:
            idf, median_idf = self._table()
            total = sum(freq.values())
            for word in freq:
                freq[word] *= idf.get(word, median_idf) / total
        return top(freq, topK, withWeight)
