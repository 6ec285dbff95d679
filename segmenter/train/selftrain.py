"""Self-training on raw text (`segmenter selftrain`): from a boundary signal to a segmenter.

    raw lines ──► n-gram branching entropies (ngrams.py, once)          ┐
    sample of round r ──► teacher: heads of the current model + n-grams ├─► confident labels
                                                                         ┘   (teacher.py)
    student (the base encoder's lower layers, or the previous student) ──► its boundary head
    learns the labels (student.py) ──► dev F1 (optional) ──► next round relabels with it

Round 1's teacher reads every head of the base model's lower `teacher_layers`; later rounds
read the previous student's one boundary head. Every round draws a fresh sample of raw lines.
Nothing here reads segmented text except an optional dev file (to choose rounds, reported) and
an optional calibration file (a few dev sentences; reported as calibrated).

OUT/
  ngrams.npz                    branching-entropy tables of the raw files
  round_1/labels/000000.npz …   teacher head scores per chunk of 500 lines (resumable)
  round_1/model/                the round's student (a segmenter model folder)
  round_1/metrics.json          pseudo-label and dev figures of the round
  curve.jsonl                   one line per finished round
  (the best round's model is copied to OUT itself, with MODEL_CARD.md)
"""
from __future__ import annotations

import json
import logging
import random
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from ..model.folders import load_encoder
from ..model.profile import HeadProfile
from ..model.reader import HeadReader
from ..run.files import atomic_path, write_text_atomic
from ..run.lines import line_pieces
from ..text.plan import TextPlan, score_texts, stacked_scores
from ..text.windows import OVERLAP, WINDOW, clamp_window
from .corpus import iter_raw_lines, read_gold
from .head_measures import JunctionSample, all_heads, auc, gold_junctions, word_f1
from .model_card import selftrain_card, write_card
from .ngrams import BranchingEntropy
from .student import make_examples, train_boundary_head
from .teacher import (
    JunctionTable,
    Teacher,
    confident_targets,
    decode_words,
    fit_calibrated,
    fit_unsupervised,
)

logger = logging.getLogger(__name__)
CHUNK = 500  # lines per label file


@dataclass
class SelftrainConfig:
    model: str
    raw: list[str]
    out: str
    rounds: int = 2
    chars: int = 600_000  # characters of raw text sampled per round
    min_line: int = 8
    max_line: int = 250
    teacher_layers: int = 9
    student_layers: int = 6
    boundary_head: int = 0
    confidence: float = 0.8
    quantile: float = 0.3
    decode: str = "words"  # "words": pseudo-labels from word-level decoding (teacher.decode_words); "none": thresholds
    alpha: float = 1.0  # weight of n-gram autonomy against the boundary logits in word-level decoding
    minutes: float = 30.0  # training time per round, at most
    epochs: float = 1.0
    lr: float = 5e-5
    batch_size: int = 32
    window: int = WINDOW
    overlap: int = OVERLAP
    ngram_max: int = 4
    calibrate: str | None = None
    calibrate_sentences: int = 100
    dev: str | None = None
    dev_sentences: int = 1000
    seed: int = 0
    device: str = "cpu"
    command: str = field(default_factory=lambda: shlex.join(["segmenter", *sys.argv[1:]]))


def sample_lines(paths: list[str], chars: int, seed: int, min_line: int, max_line: int,
                 split_long: bool = False) -> list[str]:
    """A reproducible random sample of raw lines (stripped, `min_line` to `max_line` characters),
    about `chars` characters in all: all lines are shuffled with `seed`, then taken in order.
    split_long: a longer line takes part as its pieces of at most `max_line` characters, cut after
    a sentence's end where one is near (lines.line_pieces), instead of being left out (a domain's
    text of long paragraphs: segmenter adapt --refine)."""
    lines = list(iter_raw_lines(paths, min_chars=0))  # empty lines too: they take part in the shuffle
    if split_long:
        lines = [piece for line in lines for piece, _ in line_pieces(line, max_line)]
    random.Random(seed).shuffle(lines)
    out, total = [], 0
    for line in lines:
        if total >= chars:
            break
        if min_line <= len(line) <= max_line:
            out.append(line)
            total += len(line)
    return out


def label_chunks(reader: HeadReader, texts: list[str], folder: Path,
                 config: SelftrainConfig) -> tuple[list[TextPlan], int]:
    """Teacher head scores of every text, cached per chunk so that an interrupted run resumes.
    Returns the plans and how many chunks came from the cache."""
    folder.mkdir(parents=True, exist_ok=True)
    plans: list[TextPlan] = []
    cached = 0  # chunks found on disk (an earlier sitting labelled them)
    chunks = range(0, len(texts), CHUNK)
    progress = None
    if logger.isEnabledFor(logging.INFO):
        from tqdm.auto import tqdm

        progress = tqdm(total=len(chunks), desc="labelling raw text", unit="chunk")
    for start in chunks:
        path = folder / f"{start:06d}.npz"
        part = _read_chunk(path, texts[start : start + CHUNK])
        if part is not None:
            cached += 1
        else:
            part = score_texts(reader, texts[start : start + CHUNK], config.window, config.overlap)
            offsets = np.concatenate([[0], np.cumsum([len(p.junctions) for p in part])])
            with atomic_path(path) as temporary, open(temporary, "wb") as handle:
                np.savez(handle, scores=stacked_scores(part, len(reader.heads)).astype(np.float16), offsets=offsets)
        plans += part
        progress and progress.update(1)
    if progress is not None:
        progress.close()
    return plans, cached


def _read_chunk(path: Path, texts: list[str]) -> list[TextPlan] | None:
    """The scored plans of a chunk labelled by an earlier sitting, or None (absent, or not these texts)."""
    if not path.exists():
        return None
    stored = np.load(path)
    plans = [TextPlan(t) for t in texts]
    offsets = stored["offsets"]
    if len(offsets) - 1 != len(plans) or any(len(p.junctions) != n for p, n in zip(plans, np.diff(offsets))):
        return None
    for plan, lo, hi in zip(plans, offsets[:-1], offsets[1:]):
        plan.scores = stored["scores"][:, lo:hi].astype(np.float32)
    return plans


def junction_table(plans: list[TextPlan], entropy: BranchingEntropy) -> JunctionTable:
    heads = np.concatenate([p.scores.T for p in plans]).astype(np.float32)
    ngrams = np.concatenate([entropy.junction_features(p.text, p.positions[p.junctions]) for p in plans])
    return JunctionTable(plans, heads, ngrams)


def gold_table(model, vocab, heads, sentences, entropy, config) -> tuple[JunctionTable, np.ndarray]:
    sample = gold_junctions(model, vocab, sentences, heads=heads, window=config.window, overlap=config.overlap)
    return junction_table(sample.plans, entropy), sample.labels


def evaluate_student(model, vocab, head, sentences) -> dict:
    sample = gold_junctions(model, vocab, sentences, heads=[head])
    return {"auc": auc(sample.scores[0], sample.labels), "f1": word_f1(sample, sample.scores[0], sentences, 0.0)}


def student_profile(head: tuple[int, int], config: SelftrainConfig, round_number: int, teacher: Teacher) -> HeadProfile:
    """The student's head is trained with s as a logit: cut at s > 0; fine/coarse at p = 0.2 / 0.8."""
    margin = float(np.log(0.8 / 0.2))
    return HeadProfile(
        heads=[head],
        weights=[1.0],
        thresholds=(-margin, 0.0, margin),
        source=f"self-trained, round {round_number}, teacher {teacher.kind}",
        extra={"selftrain": {k: v for k, v in asdict(config).items() if k not in ("raw", "out")}},
    )


@dataclass
class Round:
    """Which models one round reads (selftrain() makes one per round)."""

    number: int
    folder: Path  # OUT/round_N
    teacher_folder: Path  # the model whose heads label the round's sample
    teacher_heads: list[tuple[int, int]] | None  # None: every head of its lower config.teacher_layers layers
    student_source: Path  # the model the student starts from
    student_layers: int | None  # lower layers of it kept (None: all)
    head: tuple[int, int]  # the student's boundary head


@dataclass
class Evidence:
    """What every round reads besides the models: n-gram tables and the optional gold sentences."""

    entropy: BranchingEntropy
    dev: list[list[str]] | None  # chooses the round (reported)
    calibration: list[list[str]] | None  # calibrates the teacher (reported as calibrated)


def selftrain(config: SelftrainConfig) -> Path:
    # Windows no longer than the base model's positions ([CLS] and [SEP] take two): a model
    # pretrained at 128 positions (segmenter pretrain's default, the shipped students) gets
    # windows of 126, as the runtime reads it (windows.clamp_window).
    positions = json.loads((Path(config.model) / "config.json").read_text(encoding="utf-8"))["max_position_embeddings"]
    window, overlap = clamp_window(config.window, config.overlap, positions)
    if (window, overlap) != (config.window, config.overlap):
        logger.info("windows of %d characters, overlap %d: the model has %d positions", window, overlap, positions)
        config = replace(config, window=window, overlap=overlap)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    ngram_path = out / "ngrams.npz"
    if ngram_path.exists():
        entropy = BranchingEntropy.load(ngram_path)
    else:
        logger.info("counting n-grams of %s", ", ".join(config.raw))
        entropy = BranchingEntropy.from_texts(iter_raw_lines(config.raw), config.ngram_max)
        entropy.save(ngram_path)
    evidence = Evidence(
        entropy,
        dev=read_gold(config.dev, config.dev_sentences) if config.dev else None,
        calibration=read_gold(config.calibrate, config.calibrate_sentences) if config.calibrate else None,
    )
    base = Path(config.model)
    head = (config.student_layers - 1, config.boundary_head)
    # Round 1: every head of the base model's lower layers teaches; later, the previous student's head.
    current = Round(1, out / "round_1", base, None, base, config.student_layers, head)
    history, best = [], None
    while current.number <= config.rounds:
        if (current.folder / "metrics.json").exists():  # finished in an earlier sitting
            metrics = json.loads((current.folder / "metrics.json").read_text())
        else:
            metrics = run_round(config, current, evidence)
        history.append(metrics)
        logger.info("round %d: %s", current.number, json.dumps(metrics.get("dev", {})))
        score = metrics.get("dev", {}).get("f1")
        if best is None or (score is not None and score > best[1]):
            best = (current.number, score)
        elif score is not None:
            logger.info("dev F1 stopped rising (%.4f after %.4f): stopping", score, best[1])
            break
        model = current.folder / "model"
        current = Round(current.number + 1, out / f"round_{current.number + 1}", model, [head], model, None, head)
    export(out, best[0], history, config, time.monotonic() - started)
    return out


def run_round(config: SelftrainConfig, current: Round, evidence: Evidence) -> dict:
    t0 = time.monotonic()
    device = torch.device(config.device)
    entropy, dev, calibration = evidence.entropy, evidence.dev, evidence.calibration
    texts = sample_lines(config.raw, config.chars, config.seed + current.number, config.min_line, config.max_line)
    layers = config.teacher_layers if current.teacher_heads is None else current.teacher_heads[0][0] + 1
    model, vocab, _ = load_encoder(current.teacher_folder, _lower_layers(current.teacher_folder, layers), device)
    heads = current.teacher_heads or all_heads(model)
    reader = HeadReader(model, vocab, heads, device)
    plans, cached_chunks = label_chunks(reader, texts, current.folder / "labels", config)
    table = junction_table(plans, entropy)
    if calibration is not None:
        cal_table, cal_labels = gold_table(model, vocab, heads, calibration, entropy, config)
        teacher = fit_calibrated(cal_table, cal_labels, f"{Path(config.calibrate).name} ({len(calibration)} sentences)")
    elif current.teacher_heads is None:
        teacher = fit_unsupervised(table, config.quantile)
    else:  # a student's boundary head: its s was trained as a logit already
        teacher = Teacher(kind="unsupervised (the previous round's boundary head)", head_score=None)
    logits = teacher.logits(table)
    decode = config.decode == "words"
    metrics = {
        "round": current.number, "teacher": teacher.kind + (" + word decoding" if decode else ""),
        "texts": len(texts), "chars": sum(map(len, texts)), "cached_label_chunks": cached_chunks,
    }
    if dev is not None:
        dev_table, dev_labels = gold_table(model, vocab, heads, dev, entropy, config)
        dev_logits = teacher.logits(dev_table)
        z = np.where(_decoded(dev_table, dev_logits, entropy, config), 1.0, -1.0) if decode else dev_logits
        metrics["teacher_dev"] = {"auc": auc(dev_logits, dev_labels),
                                  "f1": word_f1(JunctionSample(None, None, heads, dev_table.plans), z, dev, 0.0)}
    del model, reader
    if decode:  # every junction gets the decoded label: the decoding is the teacher's best guess
        decided = _decoded(table, logits, entropy, config)
        targets = confident_targets(table, np.where(decided, 10.0, -10.0), config.confidence)
    else:
        targets = confident_targets(table, logits, config.confidence)
    kept = np.concatenate([t[~np.isnan(t)] for t in targets])
    metrics.update(junctions=len(logits), kept_share=len(kept) / max(1, len(logits)),
                   label_boundary_rate=float(kept.mean()) if len(kept) else None)

    student, vocab, _ = load_encoder(current.student_source,
                                     _lower_layers(current.student_source, current.student_layers), device)
    examples = make_examples(vocab, [p.text for p in plans], [p.positions for p in plans], targets,
                             config.window, config.overlap)
    metrics["training"] = train_boundary_head(student, vocab, examples, current.head, device, config.minutes,
                                              config.epochs, config.lr, config.batch_size, config.seed + current.number)
    if dev is not None:
        metrics["dev"] = evaluate_student(student, vocab, current.head, dev)
    from .pretrain_io import save_model_folder

    save_model_folder(current.folder / "model", student, vocab,
                      student_profile(current.head, config, current.number, teacher))
    metrics["minutes"] = (time.monotonic() - t0) / 60
    write_text_atomic(current.folder / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    with open(Path(config.out) / "curve.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(metrics) + "\n")
    return metrics


def save_half(source: Path, target: Path) -> None:
    """Weights in float16 (half the size; loading casts them back to float32)."""
    from safetensors.torch import load_file, save_file

    tensors = {name: t.half() if t.is_floating_point() else t for name, t in load_file(str(source)).items()}
    save_file(tensors, str(target), metadata={"format": "pt"})


def _decoded(table: JunctionTable, logits: np.ndarray, entropy: BranchingEntropy,
             config: SelftrainConfig) -> np.ndarray:
    """Word-level decoding of every text of the table: cut decisions, in table order."""
    offsets = table.offsets
    return np.concatenate(
        [decode_words(plan, logits[lo:hi], entropy, config.alpha)
         for plan, lo, hi in zip(table.plans, offsets[:-1], offsets[1:])]
    ) if table.plans else np.zeros(0, dtype=bool)


def _lower_layers(folder: Path, wanted: int | None) -> int | None:
    """`wanted` lower layers of the model in `folder`, or all it has when it has fewer."""
    if wanted is None:
        return None
    return min(wanted, json.loads((Path(folder) / "config.json").read_text())["num_hidden_layers"])


def export(out: Path, best_round: int, history: list[dict], config: SelftrainConfig, seconds: float) -> None:
    """Copy the best round's model to OUT (weights in float16) and write its model card."""
    source = out / f"round_{best_round}" / "model"
    for item in source.iterdir():
        if item.is_file() and item.name != "model.safetensors":
            shutil.copy2(item, out / item.name)
    save_half(source / "model.safetensors", out / "model.safetensors")
    write_card(out, selftrain_card(config, best_round, history, seconds))
