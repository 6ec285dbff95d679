"""segmenter: unsupervised Chinese word segmentation from the attention heads of a character BERT.

    >>> import segmenter
    >>> segmenter.segment("我爱北京天安门")      # the embedded model, created on first use
    >>> seg = segmenter.Segmenter("path/to/model")  # any BERT-style folder with a head profile
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from .errors import ModelLoadError
from .profile import HeadProfile

if TYPE_CHECKING:
    from .api import Segmenter

__version__ = "0.1.0"
__all__ = [
    "Segmenter", "HeadProfile", "ModelLoadError", "default_segmenter",
    "segment", "cut", "lcut", "tokenize", "segment_levels", "add_word", "del_word", "load_userdict",
]


def __getattr__(name: str):
    """`Segmenter` is imported on first use: importing segmenter (or running `segmenter --help`)
    does not pay for torch and transformers."""
    if name == "Segmenter":
        from .api import Segmenter

        globals()["Segmenter"] = Segmenter
        return Segmenter
    raise AttributeError(f"module 'segmenter' has no attribute {name!r}")


@lru_cache(maxsize=1)
def default_segmenter() -> "Segmenter":
    """The embedded model, loaded once on first use (like jieba's default Tokenizer)."""
    from .api import Segmenter

    return Segmenter()


def segment(text: str, granularity=None) -> list[str]:
    return default_segmenter().segment(text, granularity)


def lcut(text: str, granularity=None) -> list[str]:
    return default_segmenter().lcut(text, granularity)


def cut(text: str, granularity=None) -> Iterator[str]:
    return default_segmenter().cut(text, granularity)


def tokenize(text: str, granularity=None) -> list[tuple[str, int, int]]:
    return default_segmenter().tokenize(text, granularity)


def segment_levels(text: str) -> list[tuple[str, list[str]]]:
    return default_segmenter().segment_levels(text)


def add_word(word: str) -> None:
    default_segmenter().add_word(word)


def del_word(word: str) -> None:
    default_segmenter().del_word(word)


def load_userdict(source) -> int:
    return default_segmenter().load_userdict(source)
