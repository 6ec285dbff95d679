"""The systems a benchmark runs: their settings, the module each needs, and how each is built.

SYSTEMS maps a name to a System: its settings, the module it needs, and a builder that runs in
the worker and returns a function texts -> words plus a one-line description for the table.
segmenter's settings are SEGMENTER_SETTINGS: add an entry there and it joins the table. The
measuring of one run (build, warm-up, timed pass, speed figures) is measure.py's.

A worker loads this file and measure.py by their paths, not through the `segmenter` package
(runner.py, run_isolated): whatever the package imports (numpy; torch ~220 MiB on the torch
path) would count in jieba's memory figure. So this file imports only the standard library at
the top, and names `segmenter.*` absolutely, inside the functions that need it.
"""
from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

SegmentFn = Callable[[list[str]], list[list[str]]]
DEFAULT_SYSTEMS = "segmenter,jieba,jieba-nohmm,rjieba,pkuseg,thulac"
SHORT_SENTENCE = "我爱北京天安门"  # start-up: one short sentence


class BenchmarkError(ValueError):
    """A benchmark that cannot start (unknown system, missing model or file), said plainly."""


class Unavailable(RuntimeError):
    """An installed system that cannot run here (its model is not on this machine): the run is
    skipped and the table's "Not run" list reads "Unavailable: <the reason>"."""


@dataclass
class BenchConfig:
    """Everything a run needs; plain JSON-able values, because it travels to the workers."""

    gold: list[str]
    lexicons: list[str | None]  # one per gold file (None: no OOV figures for that corpus)
    systems: list[tuple[str, str]]  # (system, setting) pairs, in table order
    limit: int | None = None  # first N sentences of each gold file
    model: str | None = None  # segmenter's model folder (None: the embedded model)
    device: str = "cpu"
    threads: int = 1  # torch/BLAS threads of each worker: 1 compares like with like (jieba is serial)
    batch_size: int = 64
    warmup_chars: int = 2000
    isolate: bool = True  # a worker process per run; False: in this process, and peak_mb is None
    show_progress: bool = False
    command: str = ""  # the command line that made this run, for the report


@dataclass
class CorpusRun:
    """What a builder may know of the corpus it is about to segment."""

    name: str
    gold_path: str
    limit: int | None

    def gold(self) -> list[list[str]]:
        """The gold words. Only an oracle setting may read them; a real system never does."""
        from segmenter.train.corpus import read_gold

        return read_gold(self.gold_path, self.limit)


@dataclass(frozen=True)
class System:
    name: str
    settings: tuple[str, ...]
    module: str  # the top-level module it imports: not importable -> skipped with `install`
    install: str
    build: Callable[[str, BenchConfig, CorpusRun], tuple[SegmentFn, str]]  # -> (segment, description)
    check: Callable[[BenchConfig], None] | None = None  # in the parent, before any run: raise BenchmarkError
    # argv of a fresh process that segments the sentence on its stdin (its command line), or None
    startup: Callable[[BenchConfig], list[str]] | None = None


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "?"


# -- segmenter ------------------------------------------------------------------------------
def _granularity_setting(granularity: str, conventions: bool = True, standard: str | None = None,
                         model: str | None = None) -> Callable[[BenchConfig, CorpusRun], tuple[SegmentFn, str]]:
    """model: a shipped model this setting always reads (the `fast` row), else the run's --model."""
    def build(config: BenchConfig, corpus: CorpusRun):
        from segmenter.api import Segmenter
        from segmenter.standards.conventions import DEFAULT_CONVENTIONS

        seg = Segmenter(
            model or config.model, granularity=granularity, device=config.device,
            batch_size=config.batch_size, num_threads=config.threads,
            conventions=DEFAULT_CONVENTIONS if conventions else None, standard=standard,
        )
        rules = ("with the conventions of numbers, counts and names" if conventions
                 else "no conventions (heads and word table only)")
        about = (f"unsupervised, standard {seg.standard.name}, granularity {granularity}, {rules}; "
                 f"model {seg.folder.name}, "
                 f"head profile: {seg.profile.source}; {seg.engine} engine")

        def segment(texts):
            return seg.segment_batch(texts, show_progress=False)

        segment.set_threads = lambda count: _set_threads(seg, count)
        return segment, about

    return build


CALIBRATION_SENTENCES = 100


def _dev_file(corpus: CorpusRun) -> Path:
    """The dev file beside a test file (pku_test.txt -> pku_dev.txt): calibration never reads tests."""
    test = Path(corpus.gold_path)
    dev = test.with_name(test.name.replace("_test", "_dev"))
    if dev == test or not dev.is_file():
        raise BenchmarkError(f"calibrated setting: no dev file beside {test.name} (expected {dev.name})")
    return dev


def _calibrated_setting(config: BenchConfig, corpus: CorpusRun):
    """The best of the model's own levels and a profile fitted on the first
    CALIBRATION_SENTENCES sentences of the corpus's dev file (head_discovery.calibrated_choice:
    never below the default on those sentences)."""
    from segmenter.api import Segmenter
    from segmenter.train.corpus import read_gold
    from segmenter.train.head_discovery import calibrated_choice

    dev = _dev_file(corpus)
    source = f"calibrated on {dev.name} ({CALIBRATION_SENTENCES} sentences)"
    profile, granularity, _ = calibrated_choice(config.model, read_gold(dev, CALIBRATION_SENTENCES), source,
                                                device=config.device)
    seg = Segmenter(config.model, profile=profile, granularity=granularity, device=config.device,
                    batch_size=config.batch_size, num_threads=config.threads)
    segment = lambda texts: seg.segment_batch(texts, show_progress=False)  # noqa: E731
    segment.set_threads = lambda count: _set_threads(seg, count)
    return segment, f"{profile.source}, granularity {granularity}; model {seg.folder.name}"


def _oracle_setting(config: BenchConfig, corpus: CorpusRun):
    """Not a system: reads the gold. A junction is cut as gold says wherever at least one of the
    profile's heads (s > 0) decides as gold does, as the combined score says elsewhere: the
    seed's "one head right is enough", the ceiling of any way of choosing among these heads."""
    import numpy as np

    from segmenter.api import Segmenter
    from segmenter.train.corpus import boundary_labels
    from segmenter.words.assembly import words_from_cuts

    seg = Segmenter(config.model, device=config.device, batch_size=config.batch_size, num_threads=config.threads)
    gold = {"".join(words): boundary_labels(words)[1] for words in corpus.gold()}
    threshold = seg.profile.threshold()

    def segment(texts):
        out = []
        for plan in seg.score_texts(texts, show_progress=False):
            combined = seg.profile.combine(plan.scores) if len(plan.junctions) else np.zeros(0)
            truth = gold[plan.text][plan.positions[plan.junctions]] if len(plan.junctions) else np.zeros(0, bool)
            any_right = ((plan.scores > 0) == truth[None]).any(axis=0) if len(plan.junctions) else np.zeros(0, bool)
            decided = np.where(any_right, truth, combined > threshold)
            out.append([token.word for token in words_from_cuts([plan], [decided])[0]])
        return out

    return segment, (f"oracle (reads the gold): any of the profile's {len(seg.profile.heads)} heads right; "
                     f"model {seg.folder.name}")


# setting -> builder (config, corpus) -> (segment function, one-line description for the table).
SEGMENTER_SETTINGS: dict[str, Callable[[BenchConfig, CorpusRun], tuple[SegmentFn, str]]] = {
    "default": _granularity_setting("default"),
    "fine": _granularity_setting("fine"),
    "coarse": _granularity_setting("coarse"),
    "pku": _granularity_setting("default", standard="pku"),
    "msr": _granularity_setting("default", standard="msr"),
    "ud": _granularity_setting("default", standard="ud"),
    "plain": _granularity_setting("default", conventions=False),
    "fast": _granularity_setting("default", model="fast"),  # the shipped small student (-m fast)
    "calibrated": _calibrated_setting,
    "oracle": _oracle_setting,
}
def _set_threads(seg, count: int) -> None:
    """A built Segmenter on `count` cores: the numpy engine's pool, onnxruntime's session, or
    torch's threads."""
    if seg.engine in ("numpy", "onnx"):
        seg.reader.set_threads(count)
    else:
        import torch

        torch.set_num_threads(count)


def _segmenter_command(config: BenchConfig) -> list[str]:
    return [sys.executable, "-m", "segmenter", "-q"] + (["-m", config.model] if config.model else [])


def _build_segmenter(setting: str, config: BenchConfig, corpus: CorpusRun):
    return SEGMENTER_SETTINGS[setting](config, corpus)


def _check_segmenter(config: BenchConfig) -> None:
    from segmenter.model.folders import (
        ModelLoadError,
        read_profile,
        resolve_model_folder,
    )

    try:
        folder = resolve_model_folder(config.model)
        if read_profile(folder) is None:
            raise ModelLoadError(f"{folder} has no head profile; create one with `segmenter heads --model {folder}`")
    except (ModelLoadError, TypeError) as err:
        raise BenchmarkError(f"segmenter cannot load its model: {err}") from None


# -- other segmenters ---------------------------------------------------------------------------
def _build_jieba(hmm: bool):
    def build(setting: str, config: BenchConfig, corpus: CorpusRun):
        import jieba

        jieba.setLogLevel(logging.WARNING)
        tokenizer = jieba.Tokenizer()  # its own instance: the default dictionary, loaded now
        tokenizer.initialize()
        about = f"jieba {_version('jieba')}, default dictionary, HMM {'on (its default)' if hmm else 'off'}"
        return (lambda texts: [tokenizer.lcut(text, HMM=hmm) for text in texts]), about

    return build


def _build_rjieba(setting: str, config: BenchConfig, corpus: CorpusRun):
    import rjieba

    tokenizer = rjieba.Jieba()  # its own instance: jieba-rs's embedded default dictionary, loaded now
    about = f"rjieba {_version('rjieba')} (jieba-rs binding), default dictionary, HMM on (its default)"
    return (lambda texts: [tokenizer.cut(text) for text in texts]), about


# rjieba has no command line of its own: its start-up is a Python process that imports it and cuts stdin.
RJIEBA_COMMAND = "import sys, rjieba; [print(' '.join(rjieba.cut(line.rstrip()))) for line in sys.stdin]"


def _build_pkuseg(setting: str, config: BenchConfig, corpus: CorpusRun):
    import pkuseg

    seg = pkuseg.pkuseg()  # model_name="default": the mixed-domain model inside the package
    return ((lambda texts: [seg.cut(text) for text in texts]),
            f"pkuseg {_version('pkuseg')}, its shipped default (mixed-domain) model")


def _build_spacy_pkuseg(setting: str, config: BenchConfig, corpus: CorpusRun):
    """Its default model, spacy_ontonotes, where a first use elsewhere left it (PKUSEG_HOME, ~/.pkuseg).
    The wheel ships none, and the benchmark does not download one: a missing model is Unavailable."""
    import os

    import spacy_pkuseg
    from spacy_pkuseg.config import config as pkuseg_config

    folder = os.path.join(pkuseg_config.pkuseg_home, "spacy_ontonotes")
    if not os.path.isfile(os.path.join(folder, "weights.npz")):
        raise Unavailable(
            f"spacy-pkuseg {_version('spacy-pkuseg')}: its model files are not in the wheel (it ships a dictionary, "
            f"dicts/default.pkl, and no model) and must be downloaded: pkuseg() fetches spacy_ontonotes.zip from "
            f"GitHub at first use, and {folder} does not hold it; the benchmark downloads no model (where GitHub is "
            f"reachable: python -c 'import spacy_pkuseg; spacy_pkuseg.pkuseg()', once)")
    seg = spacy_pkuseg.pkuseg(model_name=folder)  # a folder: loaded as it is, never downloaded
    about = f"spacy-pkuseg {_version('spacy-pkuseg')}, its spacy_ontonotes model (from {folder})"
    return (lambda texts: [seg.cut(text) for text in texts]), about


def _build_thulac(setting: str, config: BenchConfig, corpus: CorpusRun):
    import thulac

    with contextlib.redirect_stdout(sys.stderr):  # it prints "Model loaded succeed"
        model = thulac.thulac(seg_only=True)
    about = f"thulac {_version('thulac')}, shipped model, seg_only (pure-Python cut: the wheel has no libthulac)"
    return (lambda texts: [[word for word, _ in model.cut(text)] for text in texts]), about


SYSTEMS: dict[str, System] = {
    s.name: s
    for s in [
        System("segmenter", tuple(SEGMENTER_SETTINGS), "numpy", "pip install segmenter-heads", _build_segmenter,
               _check_segmenter, _segmenter_command),
        System("jieba", ("default",), "jieba", "pip install jieba", _build_jieba(hmm=True),
               startup=lambda config: [sys.executable, "-m", "jieba", "-q"]),
        System("jieba-nohmm", ("default",), "jieba", "pip install jieba", _build_jieba(hmm=False),
               startup=lambda config: [sys.executable, "-m", "jieba", "-q", "-n"]),
        System("rjieba", ("default",), "rjieba", "pip install rjieba", _build_rjieba,
               startup=lambda config: [sys.executable, "-c", RJIEBA_COMMAND]),
        System("pkuseg", ("default",), "pkuseg", "pip install numpy cython && pip install --no-build-isolation pkuseg",
               _build_pkuseg),
        System("spacy-pkuseg", ("default",), "spacy_pkuseg", "pip install spacy-pkuseg", _build_spacy_pkuseg),
        System("thulac", ("default",), "thulac", "pip install thulac", _build_thulac),
    ]
}


def parse_systems(spec: str) -> list[tuple[str, str]]:
    """'segmenter,jieba' or 'segmenter:fine,jieba' -> (system, setting) pairs; bare = all settings."""
    pairs: list[tuple[str, str]] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        name, _, setting = item.partition(":")
        if name not in SYSTEMS:
            raise BenchmarkError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")
        settings = SYSTEMS[name].settings
        if setting and setting not in settings:
            raise BenchmarkError(f"{name} has no setting {setting!r}; its settings: {', '.join(settings)}")
        pairs += [(name, s) for s in ([setting] if setting else settings) if (name, s) not in pairs]
    if not pairs:
        raise BenchmarkError(f"no system given; e.g. --systems {DEFAULT_SYSTEMS}")
    return pairs


def label(system: str, setting: str) -> str:
    return system if len(SYSTEMS[system].settings) == 1 else f"{system}:{setting}"
