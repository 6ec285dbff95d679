"""Character vocabulary: one token per character, with the normalization the vocabulary expects.

A segmenter model reads `[CLS] c1 … cn [SEP]`, one id per character. Vocabularies come from
BERT-style `vocab.txt` files (one token a line, the line number is the id). Characters are
normalized before lookup so that full-width forms (`１２３`, `ＡＢＣ`) find the half-width
rows most vocabularies have; lower-casing follows the tokenizer's `do_lower_case`.
Normalization changes only the *ids* the model sees, never the text a user gets back.
"""
from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

from .runs import code_points

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
BMP = 0x10000  # code points below: the Basic Multilingual Plane
ENCODE_BY_DICT_CHARS = 64  # encode looks the characters of a text this short up one by one in Python


@lru_cache(maxsize=65536)
def normalize_char(char: str, lowercase: bool = False) -> str:
    """NFKC-fold one character (full-width -> half-width); keep it whole when NFKC expands it.

    NFKC turns `㈱` into `(株)` or `ﬁ` into `fi`: a one-character token must stay one
    character, so such expansions are ignored and the original character is looked up.
    """
    folded = unicodedata.normalize("NFKC", char)
    if len(folded) != 1:
        folded = char
    return folded.lower() if lowercase else folded


class CharVocab:
    """Maps characters to ids of a BERT-style vocabulary; unknown characters go to [UNK]."""

    def __init__(self, tokens: list[str], lowercase: bool = False):
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]") if t not in tokens]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}; a BERT vocab.txt needs them")
        self.tokens = list(tokens)
        self.lowercase = lowercase
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.unk_id = self.index["[UNK]"]
        self.cls_id = self.index["[CLS]"]
        self.sep_id = self.index["[SEP]"]
        self.pad_id = self.index["[PAD]"]
        self.mask_id = self.index.get("[MASK]", self.unk_id)
        # encode's caches: the id of each code point of the Basic Multilingual Plane seen so far
        # (-1: not yet; a table, 256 KiB, that a whole batch's text reads in one numpy gather),
        # and, by character, of those past it (emoji, CJK extension B+: rare) and of a short text's.
        self._bmp_ids = np.full(BMP, -1, dtype=np.int64)
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.tokens)

    def char_id(self, char: str) -> int:
        return self.index.get(normalize_char(char, self.lowercase), self.unk_id)

    def encode(self, chars: str) -> np.ndarray:
        """Ids of the characters of `chars` (no [CLS]/[SEP]); shape (len(chars),)."""
        if len(chars) <= ENCODE_BY_DICT_CHARS:  # a sentence: a dict look-up a character, no numpy calls but one
            ids = self._ids
            try:
                return np.array([ids[char] for char in chars], dtype=np.int64)
            except KeyError:
                for char in set(chars).difference(ids):
                    ids[char] = self.char_id(char)
                return np.array([ids[char] for char in chars], dtype=np.int64)
        codes = code_points(chars)
        in_bmp = codes < BMP
        everywhere = bool(in_bmp.all())
        where = codes if everywhere else np.where(in_bmp, codes, 0)
        ids = self._bmp_ids[where]
        unseen = ids < 0 if everywhere else (ids < 0) & in_bmp
        if unseen.any():  # characters this vocabulary has not encoded before: looked up once
            new = np.unique(codes[unseen]).tolist()
            self._bmp_ids[new] = [self.char_id(chr(code)) for code in new]
            ids = self._bmp_ids[where]
        if not everywhere:
            cache = self._ids
            for i in np.flatnonzero(~in_bmp).tolist():
                char = chars[i]
                if char not in cache:
                    cache[char] = self.char_id(char)
                ids[i] = cache[char]
        return ids

    @classmethod
    def from_folder(cls, folder: str | Path) -> "CharVocab":
        """Read `vocab.txt` and, when present, `tokenizer_config.json`'s `do_lower_case`."""
        folder = Path(folder)
        vocab_file = folder / "vocab.txt"
        if not vocab_file.is_file():
            raise FileNotFoundError(
                f"{folder} has no vocab.txt: a segmenter model folder needs a BERT-style vocabulary "
                "(one token a line, with [PAD] [UNK] [CLS] [SEP])"
            )
        try:
            tokens = vocab_file.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError as err:
            raise ValueError(f"{vocab_file} is not UTF-8 text (truncated or corrupt?): {err}") from None
        if tokens and tokens[-1] == "":
            tokens.pop()
        lowercase = False
        config_file = folder / "tokenizer_config.json"
        if config_file.is_file():
            try:
                config = json.loads(config_file.read_text(encoding="utf-8"))
                if not isinstance(config, dict):
                    raise TypeError("not a JSON object")
            except (TypeError, ValueError) as err:  # JSONDecodeError and UnicodeDecodeError too
                raise ValueError(f"{config_file} is not a valid tokenizer config (truncated or corrupt?): "
                                 f"{err}") from None
            lowercase = bool(config.get("do_lower_case", False))
        try:
            return cls(tokens, lowercase=lowercase)
        except ValueError as err:
            raise ValueError(f"{vocab_file}: {err}") from None

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        (folder / "vocab.txt").write_text("\n".join(self.tokens) + "\n", encoding="utf-8")
        config = {"tokenizer_class": "BertTokenizer", "do_lower_case": self.lowercase, "tokenize_chinese_chars": True}
        (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def build(cls, char_counts: dict[str, int], max_size: int, min_count: int = 1) -> "CharVocab":
        """Specials first, then characters by descending count (ties by code point)."""
        counted: dict[str, int] = {}
        for char, count in char_counts.items():
            norm = normalize_char(char)
            if not norm.isspace():
                counted[norm] = counted.get(norm, 0) + count
        ranked = sorted((c for c, n in counted.items() if n >= min_count), key=lambda c: (-counted[c], c))
        return cls(list(SPECIAL_TOKENS) + ranked[: max(0, max_size - len(SPECIAL_TOKENS))])
