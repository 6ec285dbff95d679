"""Checks of the public API's arguments (api.py; the command line and the training loop use them
too): each bad value raises at once, naming the argument and what was expected, never a traceback
from deep inside an engine."""
from __future__ import annotations

import math
import re

import numpy as np

from .text.windows import OVERLAP as DEFAULT_OVERLAP

ENGINES = ("auto", "numpy", "torch", "onnx")
_DEVICE = re.compile(r"(cpu|cuda|mps)(:\d+)?")


def is_finite_number(value) -> bool:
    """A real number, not NaN or infinite (no bool, str or list: np.isfinite([1]) is truthy)."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            and math.isfinite(value))


def check_text(text, argument: str = "text") -> str:
    if not isinstance(text, str):
        hint = " (decode it first: text.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"{argument} must be a str, got {type(text).__name__}{hint}")
    return text


def check_texts(texts) -> list[str]:
    """A batch: a list (or any iterable) of str, not one str; each item named in the error."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a list of str (for one text, use segment(text))")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"texts must be an iterable of str, got {type(texts).__name__}") from None
    for i, text in enumerate(texts):
        check_text(text, f"texts[{i}]")
    return texts


def check_engine(engine) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    return engine


def check_positive_int(value, argument: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        expected = "a positive int" + (" or None" if allow_none else "")
        raise ValueError(f"{argument} must be {expected}, got {value!r}")
    return value


def resolve_device(device) -> str:
    """'cpu' (without importing torch), or a torch device name that is available here."""
    name = str(device) if device is not None and type(device).__name__ == "device" else device
    if name is None or name == "cpu":
        return "cpu"
    if not isinstance(name, str) or not _DEVICE.fullmatch(name):
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}")
    if name.startswith("cpu"):
        return "cpu"
    torch = require_torch(f"device={name!r}")

    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here; use device='cpu'")
    if name.startswith("mps") and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r} asked for, but MPS is not available here; use device='cpu'")
    return name


def require_torch(what: str):
    """torch, or a ModuleNotFoundError (name "torch", as the command line's error line reads it)
    that says what needs it and how to install it: a lean install has the onnx and numpy engines only."""
    import importlib
    import importlib.util

    try:
        torch = importlib.import_module("torch")
        if importlib.util.find_spec("transformers") is None:  # the torch engine loads models with it
            raise ModuleNotFoundError("No module named 'transformers'", name="transformers")
        return torch
    except ModuleNotFoundError as err:
        if err.name not in ("torch", "transformers"):
            raise
        raise ModuleNotFoundError(
            f"{what} needs {err.name}, which is not installed: pip install torch --index-url "
            "https://download.pytorch.org/whl/cpu && pip install \"segmenter-heads[train]\" "
            "(or use the CPU engines of a lean install: engine='auto', device='cpu')", name=err.name) from None


def check_window(window, overlap) -> None:
    """A window of 3+ characters and an overlap in [2, window): what windows.py can lay out."""
    if not isinstance(window, int) or isinstance(window, bool) or window < 3:
        raise ValueError(f"window must be an int >= 3 (characters per model window), got {window!r}")
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 2 <= overlap < window:
        raise ValueError(
            f"overlap must be an int in [2, window) = [2, {window}), got {overlap!r}"
            + (" (the default; pass a smaller overlap with a small window)" if overlap == DEFAULT_OVERLAP else "")
        )


def check_flag(value, argument: str, hint: str) -> None:
    """jieba's flags take any true or false value: None, a bool or an int (numpy's too). A str or
    a float is refused: it is a granularity given in the flag's place."""
    if value is not None and not isinstance(value, (bool, int, np.bool_, np.integer)):
        raise TypeError(f"{argument} must be True or False, got {value!r} (granularity is a keyword argument: {hint})")
