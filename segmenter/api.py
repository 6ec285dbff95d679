"""The public API: `Segmenter` turns text into words.

Data flow for a batch of texts:
  TextPlan (junctions)  ->  runs of each text, its model sequence (the non-space characters)
                            and its junctions between two Han characters
  read_junction_scores  ->  overlapping windows through a reader (engine.py: numpy; reader.py: torch): per-head
                            boundary scores s_k for every junction
  HeadProfile           ->  combined score c, cut where c > threshold(granularity)
  runs + cuts           ->  words; every character of the text is in exactly one word
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterable, Iterator

import re

from .dictionary import UserDictionary
from .junctions import TextPlan, read_junction_scores, word_ends
from .model import ModelLoadError, check_folder, load_encoder, read_config, read_profile, read_vocab, resolve_model_folder
from .profile import PROFILE_FILE, HeadProfile, granularity_value

DEFAULT_WINDOW = 254  # characters per window: 256 positions with [CLS] and [SEP]
DEFAULT_OVERLAP = 64
ENGINES = ("auto", "numpy", "torch", "onnx")
_DEVICE = re.compile(r"(cpu|cuda|mps)(:\d+)?")


def check_text(text, argument: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{argument} must be a str, got {type(text).__name__}")
    return text


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
    import torch

    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here; use device='cpu'")
    if name.startswith("mps") and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r} asked for, but MPS is not available here; use device='cpu'")
    return name


def check_window(window, overlap) -> None:
    if not isinstance(window, int) or isinstance(window, bool) or window < 3:
        raise ValueError(f"window must be an int >= 3 (characters per model window), got {window!r}")
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 2 <= overlap < window:
        raise ValueError(
            f"overlap must be an int in [2, window) = [2, {window}), got {overlap!r}"
            + (" (the default; pass a smaller overlap with a small window)" if overlap == DEFAULT_OVERLAP else "")
        )


class Segmenter:
    """Unsupervised Chinese word segmentation from the attention heads of a character BERT.

    >>> seg = Segmenter()                       # the embedded model
    >>> seg.segment("我爱北京天安门")
    Segmenter.from_pretrained(path_or_hub_name) loads any BERT-style folder with a head
    profile (`segmenter heads --model PATH` writes one).

    engine: "numpy" runs a BERT folder (model.safetensors) with numpy alone (engine.py; no
    torch import); "torch" runs any Hugging Face encoder with transformers, on any device;
    "auto" (default) takes numpy on the CPU when the folder allows it, torch otherwise;
    "onnx" runs the folder's model.onnx (`segmenter export-onnx`) with onnxruntime (onnx_engine.py).
    window/overlap: None takes the profile's "runtime" entry, else 254/64.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        profile: HeadProfile | None = None,
        device: str | None = "cpu",
        batch_size: int = 64,
        num_threads: int | None = None,
        granularity: str | float = "default",
        window: int | None = None,
        overlap: int | None = None,
        engine: str = "auto",
    ):
        check_positive_int(batch_size, "batch_size")
        check_positive_int(num_threads, "num_threads", allow_none=True)
        check_window(DEFAULT_WINDOW if window is None else window, DEFAULT_OVERLAP if overlap is None else overlap)
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
        if profile is not None and not isinstance(profile, HeadProfile):
            raise TypeError(f"profile must be a HeadProfile or None, got {type(profile).__name__}")
        self.granularity = granularity_value(granularity)
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.folder = resolve_model_folder(model)
        self.profile = profile or read_profile(self.folder)
        if self.profile is None:
            raise ModelLoadError(
                f"{self.folder} has no head profile ({PROFILE_FILE}); create one with "
                f"`segmenter heads --model {self.folder}` (no gold needed), or pass profile=HeadProfile(...)"
            )
        self.engine, self.reader = self._load_reader(engine, num_threads)
        self.model, self.vocab = self.reader.model, self.reader.vocab
        sizes = self.profile.runtime
        window = window if window is not None else sizes.get("window", DEFAULT_WINDOW)
        overlap = overlap if overlap is not None else sizes.get("overlap", DEFAULT_OVERLAP)
        check_window(window, overlap)
        self.window = min(window, self.reader.max_positions - 2)
        self.overlap = min(overlap, self.window - 1)
        self.user_dictionary = UserDictionary()

    def _load_reader(self, engine: str, num_threads: int | None):
        """(engine name, reader): the numpy engine where it can run, else torch (see the class doc)."""
        from .engine import load_numpy_reader, numpy_problem
        from .scale.workers import available_cores

        check_folder(self.folder)
        config = read_config(self.folder)
        problem = numpy_problem(self.folder, config)
        if engine == "auto":
            engine = "numpy" if self.device == "cpu" and problem is None else "torch"
        if engine == "torch":
            import torch

            from .reader import HeadReader

            if num_threads is not None:
                torch.set_num_threads(num_threads)
            model, vocab, num_layers = load_encoder(self.folder, self.profile.deepest_layer + 1, self.device)
            self.profile.check_model(num_layers, model.config.num_attention_heads, where=str(self.folder))
            return engine, HeadReader(model, vocab, self.profile.heads, self.device)
        if self.device != "cpu":
            raise ValueError(f"engine={engine!r} runs on the CPU; for device={self.device!r} use engine='torch' (or 'auto')")
        if problem is not None and engine == "numpy":
            raise ModelLoadError(f"{self.folder} cannot run on the numpy engine: {problem}; use engine='torch' (or 'auto')")
        vocab = read_vocab(self.folder)
        try:
            layers, heads = int(config["num_hidden_layers"]), int(config["num_attention_heads"])
            int(config["hidden_size"]), int(config["max_position_embeddings"])
        except (KeyError, TypeError, ValueError) as err:
            raise ModelLoadError(f"{self.folder}/config.json is not a valid model config: {err!r} missing or not a number") from None
        if self.profile.deepest_layer >= layers:
            raise ModelLoadError(f"{self.folder}: asked for {self.profile.deepest_layer + 1} layers but the model has {layers}")
        self.profile.check_model(layers, heads, where=str(self.folder))
        if engine == "onnx":
            from .onnx_engine import load_onnx_reader

            return engine, load_onnx_reader(self.folder, config, vocab, self.profile.heads, num_threads or available_cores())
        return engine, load_numpy_reader(self.folder, config, vocab, self.profile.heads, num_threads or available_cores())

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike | None = None, **kwargs) -> "Segmenter":
        return cls(name_or_path, **kwargs)

    def save_pretrained(self, folder: str | os.PathLike) -> Path:
        """Copy the model folder (all its layers) with this segmenter's profile."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        for item in self.folder.iterdir():
            if item.is_file() and item.name != PROFILE_FILE and not item.name.startswith("."):
                shutil.copy2(item, out / item.name)
        self.profile.save(out)
        return out

    def __repr__(self) -> str:
        return f"Segmenter(model={str(self.folder)!r}, heads={self.profile.heads}, device={self.device!r}, engine={self.engine!r})"

    # -- scoring ----------------------------------------------------------------------------
    def _read_scores(self, plans: list[TextPlan], batch_size: int | None, show_progress: bool | None) -> None:
        read_junction_scores(
            self.reader, plans, self.window, self.overlap, batch_size or self.batch_size, show_progress
        )

    def _plans(self, texts: list[str], batch_size=None, show_progress=None) -> list[TextPlan]:
        plans = [TextPlan(text) for text in texts]
        self._read_scores(plans, batch_size, show_progress)
        return plans

    def _tokens(self, plan: TextPlan, threshold: float) -> list[tuple[str, int, int]]:
        combined = self.profile.combine(plan.scores) if len(plan.junctions) else None
        start, tokens = 0, []
        for end in word_ends(plan, combined, threshold, self.user_dictionary).tolist():
            tokens.append((plan.text[start:end], start, end))
            start = end
        return tokens

    # -- public API -------------------------------------------------------------------------
    def tokenize_batch(self, texts: Iterable[str], granularity=None, batch_size=None, show_progress=None):
        texts = self._check_texts(texts)
        check_positive_int(batch_size, "batch_size", allow_none=True)
        threshold = self.profile.threshold(self.granularity if granularity is None else granularity)
        return [self._tokens(plan, threshold) for plan in self._plans(texts, batch_size, show_progress)]

    def segment_levels(self, text: str, coarse="coarse", fine="fine") -> list[tuple[str, list[str]]]:
        """Coarse words, each with its fine sub-words (like jieba's search mode, from the heads):
        the scores are read once and cut at two thresholds; a coarse cut is always a fine cut."""
        check_text(text)
        low, high = sorted((self.profile.threshold(fine), self.profile.threshold(coarse)))
        plan = self._plans([text], show_progress=False)[0]
        fine_tokens = self._tokens(plan, low)
        levels, k = [], 0
        for word, start, end in self._tokens(plan, high):
            parts = []
            while k < len(fine_tokens) and fine_tokens[k][2] <= end:
                parts.append(fine_tokens[k][0])
                k += 1
            levels.append((word, parts))
        return levels

    # -- user dictionary (jieba style) ---------------------------------------------------------
    def add_word(self, word: str) -> None:
        """Never split `word` (Han characters) and never merge it into a longer word."""
        self.user_dictionary.add(word)

    def del_word(self, word: str) -> None:
        self.user_dictionary.remove(word)

    def load_userdict(self, source) -> int:
        """A file (path or open file) with one word a line; jieba's frequency/tag columns are ignored."""
        return self.user_dictionary.load(source)

    def segment_batch(self, texts: Iterable[str], granularity=None, batch_size=None, show_progress=None) -> list[list[str]]:
        """Words of each text; `"".join(words) == text` for every text."""
        return [[w for w, _, _ in tokens] for tokens in self.tokenize_batch(texts, granularity, batch_size, show_progress)]

    def segment_lines(self, lines: Iterable[str], *, workers: int = 1, **options) -> Iterator[list[str]]:
        """Words of each line, streamed in input order; workers > 1: that many processes (parallel.py)."""
        from .scale.workers import segment_lines

        return segment_lines(lines, segmenter=self, workers=workers, **options)

    def segment_files(self, paths, *, workers: int = 1, errors: str = "strict", **options) -> Iterator[tuple[str, list[str]]]:
        """(path, words) for each line of each UTF-8 file, streamed in order (see segment_lines)."""
        from .scale.workers import segment_files

        return segment_files(paths, segmenter=self, workers=workers, errors=errors, **options)

    def segment(self, text: str, granularity=None) -> list[str]:
        return self.segment_batch([check_text(text)], granularity, show_progress=False)[0]

    def tokenize(self, text: str, granularity=None) -> list[tuple[str, int, int]]:
        """(word, start, end) triples like jieba.tokenize; the offsets tile the text."""
        return self.tokenize_batch([check_text(text)], granularity, show_progress=False)[0]

    def cut(self, text: str, granularity=None) -> Iterator[str]:
        yield from self.segment(text, granularity)

    def lcut(self, text: str, granularity=None) -> list[str]:
        return self.segment(text, granularity)

    @staticmethod
    def _check_texts(texts) -> list[str]:
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a list of str (for one text, use segment(text))")
        try:
            texts = list(texts)
        except TypeError:
            raise TypeError(f"texts must be an iterable of str, got {type(texts).__name__}") from None
        for i, text in enumerate(texts):
            check_text(text, f"texts[{i}]")
        return texts
