"""segmenter: unsupervised Chinese word segmentation from the attention heads of a character BERT.

    >>> import segmenter
    >>> segmenter.segment("我爱北京天安门")      # the embedded model, created on first use
    >>> seg = segmenter.Segmenter("path/to/model")  # any BERT-style folder with a head profile

jieba's module-level calls work with jieba's signatures (`import segmenter as jieba`): cut,
lcut, cut_for_search, lcut_for_search, tokenize, add_word, del_word, suggest_freq,
load_userdict and get_FREQ run on the embedded model, `dt` (Segmenter has the same methods); HMM
and use_paddle are accepted and ignored: the heads decide every junction. The module's switches
initialize, setLogLevel, enable_paddle, enable_parallel and disable_parallel have no Segmenter
method: the first loads the model, the second sets the package logger, the others do nothing.
"""
from __future__ import annotations

import logging
import operator
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from .arguments import check_positive_int
from .errors import ModelLoadError
from .model.profile import HeadProfile
from .standards.conventions import Conventions

if TYPE_CHECKING:
    from .api import Segmenter
    from .words.assembly import Token

__version__ = "0.1.0"
__all__ = [
    "Segmenter", "HeadProfile", "Conventions", "ModelLoadError", "default_segmenter", "segment", "segment_levels",
    "cut", "lcut", "cut_for_search", "lcut_for_search", "tokenize",
    "add_word", "del_word", "suggest_freq", "load_userdict", "get_FREQ", "initialize", "setLogLevel",
    "enable_paddle", "enable_parallel", "disable_parallel",
]


def __getattr__(name: str):
    """`Segmenter` is imported on first use: importing segmenter (or running `segmenter --help`)
    does not pay for torch and transformers. `dt`, jieba's name for its default Tokenizer, is
    the embedded model's Segmenter (default_segmenter()), loaded when first read."""
    if name == "Segmenter":
        from .api import Segmenter

        globals()["Segmenter"] = Segmenter
        return Segmenter
    if name == "dt":
        return default_segmenter()
    raise AttributeError(f"module 'segmenter' has no attribute {name!r}")


@lru_cache(maxsize=1)
def default_segmenter() -> "Segmenter":
    """The embedded model, loaded once on first use (like jieba's default Tokenizer)."""
    from .api import Segmenter

    return Segmenter()


def initialize() -> None:
    """Load the embedded model now rather than on the first call (jieba.initialize)."""
    default_segmenter()


def enable_paddle() -> None:
    """jieba's switch to its paddle model: there is none here, so it does nothing, and
    cut(..., use_paddle=True) segments with the heads as always (jieba without paddle installed
    falls back to its own mode the same way)."""
    logging.getLogger(__name__).debug("enable_paddle: no paddle mode here; use_paddle is ignored")


def enable_parallel(processnum: int | None = None) -> None:
    """jieba's switch to segmenting in `processnum` processes: it does nothing here, where a
    Segmenter already uses every core (threads, and on the onnx engine helper processes for a
    large batch: Segmenter's `processes`; segment_lines and the command line's --workers for
    files)."""
    try:  # any integer jieba's Pool takes (a numpy int too); anything else is named in the error
        count = None if processnum is None else operator.index(processnum)
    except TypeError:
        count = processnum
    check_positive_int(count, "processnum", allow_none=True)
    logging.getLogger(__name__).debug("enable_parallel: a Segmenter uses every core already")


def disable_parallel() -> None:
    """jieba's switch back from enable_parallel: nothing to undo here."""


def setLogLevel(log_level) -> None:  # noqa: N802 (jieba's name)
    """Set the level of the package's logger, "segmenter" (jieba.setLogLevel sets jieba's). A
    batch's progress bar follows it: shown at INFO and below, hidden at WARNING and above."""
    logging.getLogger("segmenter").setLevel(log_level)


def segment(text: str, granularity=None) -> list[str]:
    return default_segmenter().segment(text, granularity)


def segment_levels(text: str) -> list[tuple[str, list[str]]]:
    return default_segmenter().segment_levels(text)


def cut(sentence: str, cut_all=False, HMM=True, use_paddle=False, *, granularity=None) -> Iterator[str]:
    return default_segmenter().cut(sentence, cut_all, HMM, use_paddle, granularity=granularity)


def lcut(sentence: str, cut_all=False, HMM=True, use_paddle=False, *, granularity=None) -> list[str]:
    return default_segmenter().lcut(sentence, cut_all, HMM, use_paddle, granularity=granularity)


def cut_for_search(sentence: str, HMM=True, *, granularity=None) -> Iterator[str]:
    return default_segmenter().cut_for_search(sentence, HMM, granularity=granularity)


def lcut_for_search(sentence: str, HMM=True, *, granularity=None) -> list[str]:
    return default_segmenter().lcut_for_search(sentence, HMM, granularity=granularity)


def tokenize(unicode_sentence: str, mode: str = "default", HMM=True, *, granularity=None) -> list[Token]:
    return default_segmenter().tokenize(unicode_sentence, mode, HMM, granularity=granularity)


def add_word(word: str, freq: int | None = None, tag: str | None = None) -> None:
    default_segmenter().add_word(word, freq, tag)


def del_word(word: str) -> None:
    default_segmenter().del_word(word)


def suggest_freq(segment, tune: bool = False) -> int:
    return default_segmenter().suggest_freq(segment, tune)


def load_userdict(f) -> int:
    return default_segmenter().load_userdict(f)


def get_FREQ(word: str, default=None):  # noqa: N802 (jieba's name)
    return default_segmenter().get_FREQ(word, default)
