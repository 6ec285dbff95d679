"""Distillation (`segmenter distill`): a small, fast student that reads the boundary from its own head.

    raw lines (a reproducible shuffle, 8-250 chars) ──► teacher Segmenter: s of its boundary
        head at every Han-Han junction, cached per chunk of 500 lines (resumable)
    fresh small BERT (same vocabulary; word embeddings = PCA of the teacher's) ──► its last
        layer's head 0 learns sigmoid((s_teacher - threshold) / T) with s_student as the logit
    ──► model folder (float16) + head profile [(L-1, 0)] + MODEL_CARD.md with dev figures

Only raw text trains the student: the teacher's scores are its targets. Dev files (optional)
only report word F1. Why the student can be cheap: s = log a[i,SEP] - log a[i,i+1] is the
difference of two attention logits (the softmax normaliser cancels), so the last layer costs
only the query and key of one head; an L-layer student runs L-1 full layers.

OUT/
  labels/000000.npz …   teacher scores (float16) per chunk of 500 sampled lines
  <run>/                a student model folder (config.json, model.safetensors, vocab.txt, …)
"""
from __future__ import annotations

import json
import logging
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from ..model.integrity import write_manifest
from ..model.profile import HeadProfile
from ..text.plan import TextPlan
from ..words.table_files import TABLE_FILE, TABLE_REFERENCE, table_path
from .model_card import write_card as save_card
from .selftrain import CHUNK, label_chunks, sample_lines, save_half
from .student import soft_targets

logger = logging.getLogger(__name__)
TEACHER_WINDOW, TEACHER_OVERLAP = 254, 64  # the teacher reads the way the runtime does


@dataclass
class DistillConfig:
    teacher: str
    raw: list[str]
    out: str
    chars: int = 2_000_000  # raw characters to label (the sample's prefix is stable as this grows)
    min_line: int = 8
    max_line: int = 250
    label_only: bool = False  # label and stop (run it in the background while training elsewhere)
    label_bf16: bool = True  # teacher in bfloat16 autocast: ~2.5x faster on CPU, s within ~0.02
    max_label_chars: int | None = None  # train on at most this many labelled chars (a sweep's fixed data)
    name: str = "student"  # sub-folder of OUT for the student model
    layers: int = 2
    hidden: int = 128
    ffn: int | None = None  # set: shrink the teacher's feed-forward layers to this width instead (shrink.py)
    int8: bool = False  # with ffn: export model.onnx with int8 weights (onnx_engine: scores then depend on the batch)
    head_size: int = 32  # attention heads = hidden / head_size
    intermediate: int | None = None  # a fresh student's feed-forward width (None: 4 x hidden, BERT's)
    window: int = 126  # characters per student window; max_position_embeddings = window + 2
    overlap: int = 32
    temperature: float = 1.0  # soft target sigmoid(s_teacher / T)
    hard: float = 0.1  # share of the hard label [s_teacher > threshold] mixed into the target
    pca_init: bool = True  # word embeddings from a PCA of the teacher's
    minutes: float = 10.0
    epochs: float = 1.0  # passes over the labels (minutes cap the run)
    lr: float = 2e-3
    batch_size: int = 64
    dev: list[str] = field(default_factory=list)
    dev_sentences: int = 500
    seed: int = 0
    train_seed: int | None = None  # the student's initialisation and batch order (None: seed); not the sample
    command: str = field(default_factory=lambda: shlex.join(["segmenter", *sys.argv[1:]]))

    @property
    def feed_forward(self) -> int:
        """A fresh student's feed-forward width: intermediate, else BERT's 4 x hidden."""
        return self.intermediate or 4 * self.hidden

    @property
    def training_seed(self) -> int:
        """The seed of the student's initialisation and batch order: train_seed, else the seed
        that also draws the raw sample (so another train_seed trains another student from the
        same labels)."""
        return self.seed if self.train_seed is None else self.train_seed


def teacher_segmenter(folder: str):
    from ..api import Segmenter

    teacher = Segmenter(folder, batch_size=64, engine="torch")  # torch: bfloat16 autocast below
    if len(teacher.profile.heads) != 1:
        logger.info("teacher %s combines %d heads: the student learns the combined score", folder,
                    len(teacher.profile.heads))
    return teacher


def label_raw(config: DistillConfig, teacher) -> tuple[list[str], Path]:
    """Label the sample chunk by chunk (selftrain.label_chunks: a rerun skips finished chunks).
    Returns the sampled texts and the label folder."""
    texts = sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line)
    folder = Path(config.out) / "labels"
    logger.info("teacher labels for %d lines (%d chars) in %s", len(texts), sum(map(len, texts)), folder)
    # bfloat16 changes the teacher's s by 0.02 on average and flips 0.14% of its cuts (128
    # raw lines measured against float32): noise far below the student's own error.
    with torch.autocast(torch.device(teacher.device).type, dtype=torch.bfloat16, enabled=config.label_bf16):
        label_chunks(teacher.reader, texts, folder, SimpleNamespace(window=TEACHER_WINDOW, overlap=TEACHER_OVERLAP))
    return texts, folder


def finished_labels(texts: list[str], folder: Path, profile: HeadProfile,
                    max_chars: int | None = None) -> list[TextPlan]:
    """Plans (text, positions, junctions) with the teacher's combined score of every junction,
    for the chunks already on disk (a labelling job may still be writing later ones), in
    sample order, up to `max_chars` characters (whole chunks)."""
    plans, chars = [], 0
    for start in range(0, len(texts), CHUNK):
        path = folder / f"{start:06d}.npz"
        if max_chars is not None and chars >= max_chars:
            break
        if not path.exists():
            continue
        stored = np.load(path)
        part = [TextPlan(t) for t in texts[start : start + CHUNK]]
        offsets = stored["offsets"]
        if len(offsets) != len(part) + 1 or any(len(p.junctions) != n for p, n in zip(part, np.diff(offsets))):
            raise ValueError(f"{path} does not match the sample (other --chars/--seed/--raw?); "
                             f"delete {folder} to relabel")
        combined = profile.combine(stored["scores"].astype(np.float32))
        for p, lo, hi in zip(part, offsets[:-1], offsets[1:]):
            p.scores = combined[lo:hi]
            plans.append(p)
            chars += len(p.text)
    return plans


def make_student(config: DistillConfig, vocab, teacher_folder: Path):
    """A fresh BertModel (no pooler, no dropout: the attention rows are the output)."""
    from transformers import BertConfig, BertModel

    if config.hidden % config.head_size:
        raise ValueError(f"hidden ({config.hidden}) must be a multiple of head_size ({config.head_size})")
    bert = BertConfig(
        vocab_size=len(vocab), hidden_size=config.hidden, num_hidden_layers=config.layers,
        num_attention_heads=config.hidden // config.head_size, intermediate_size=config.feed_forward,
        max_position_embeddings=config.window + 2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        pad_token_id=vocab.pad_id,
    )
    torch.manual_seed(config.training_seed)
    model = BertModel(bert, add_pooling_layer=False)
    if config.pca_init:
        with torch.no_grad():
            model.get_input_embeddings().weight.copy_(pca_embeddings(teacher_folder, config.hidden))
    return model


def pca_embeddings(teacher_folder: Path, hidden: int) -> torch.Tensor:
    """The teacher's word embeddings (V, H) projected on their top `hidden` principal axes,
    scaled to std 0.05 (above the 0.02 of the fresh position embeddings: the character's
    identity dominates at the start). Same vocabulary, so rows line up."""
    from safetensors.torch import load_file

    tensors = load_file(str(teacher_folder / "model.safetensors"))
    name = next((k for k in tensors if k.endswith("word_embeddings.weight")), None)
    if name is None:
        raise ValueError(f"{teacher_folder}/model.safetensors has no word_embeddings.weight to initialise from; "
                         "pass pca_init=False (segmenter distill --no-pca-init)")
    weights = tensors[name].float()
    if hidden > weights.shape[1]:
        raise ValueError(f"hidden {hidden} exceeds the teacher's {weights.shape[1]}: PCA cannot add dimensions; "
                         "pass pca_init=False (segmenter distill --no-pca-init)")
    centred = weights - weights.mean(0)
    _, _, vt = torch.linalg.svd(centred, full_matrices=False)
    projected = centred @ vt[:hidden].T  # (V, hidden)
    return projected * (0.05 / projected.std())


def train_student(config: DistillConfig, plans: list[TextPlan], teacher_profile: HeadProfile) -> tuple[Path, dict]:
    from ..text.vocab import CharVocab
    from .pretrain_io import save_model_folder
    from .student import make_examples, train_boundary_head

    teacher_folder = Path(config.teacher)
    vocab = CharVocab.from_folder(teacher_folder)
    model = make_student(config, vocab, teacher_folder)
    head = (config.layers - 1, 0)
    targets = soft_targets(plans, teacher_profile.threshold("default"), config.temperature, config.hard)
    examples = make_examples(vocab, [p.text for p in plans], [p.positions for p in plans], targets,
                             config.window, config.overlap)
    # `epochs` passes over every label; `minutes` only caps the run (a cut run ends before the
    # learning rate has decayed: pick epochs that fit, from the chars/s of an earlier run).
    stats = train_boundary_head(model, vocab, examples, head, torch.device("cpu"), config.minutes, config.epochs,
                                config.lr, config.batch_size, config.training_seed)
    stats["epochs"] = config.epochs * stats["steps"] / max(1, stats["planned_steps"])
    stats["label_chars"] = sum(len(p.text) for p in plans)
    folder = Path(config.out) / config.name
    folder.mkdir(parents=True, exist_ok=True)
    # The student reads as its teacher does: the teacher's runtime entry (window, overlap, decoder,
    # standard) and a copy of the word table it decodes with, so that the student's folder stands
    # alone and its dev figures below are read the way the teacher's are.
    table = table_path(teacher_folder, teacher_profile.runtime)
    if table is not None:
        shutil.copy2(table, folder / TABLE_FILE)
    profile = HeadProfile(
        heads=[head], weights=[1.0], bias=0.0, thresholds=teacher_profile.thresholds,
        source=f"distilled from {teacher_folder.name} ({teacher_profile.source}) on raw text",
        extra={"distill": {k: v for k, v in asdict(config).items() if k not in ("out", "label_only")}},
        runtime={key: value for key, value in teacher_profile.runtime.items() if key != TABLE_REFERENCE},
    )
    save_model_folder(folder, model, vocab, profile)
    weights = folder / "model.safetensors"
    save_half(weights, folder / "half.safetensors")
    (folder / "half.safetensors").replace(weights)
    write_manifest(folder)  # checksums.json, checked on load (integrity.py)
    return folder, stats


def evaluate(folder: str | Path, dev: list[str], sentences: int, threads: int | None = None) -> dict:
    """Word F1 (SIGHAN scoring) and chars/s of Segmenter(folder).segment_batch on the first
    `sentences` of each dev file, after a warm-up on 20 sentences. Both models read their head
    with the threshold (decode="threshold"), whatever their profiles ask: that is what the
    student learns from the teacher."""
    from ..api import Segmenter
    from ..bench.evaluation import score
    from .corpus import read_gold

    seg = Segmenter(folder, num_threads=threads, decode="threshold")
    results = {}
    for path in dev:
        gold = read_gold(path, sentences)
        texts = ["".join(words) for words in gold]
        seg.segment_batch(texts[:20])
        start = time.perf_counter()
        output = seg.segment_batch(texts)
        seconds = time.perf_counter() - start
        results[Path(path).stem] = {"f1": score(gold, output).F1, "chars_per_s": sum(map(len, texts)) / seconds,
                                    "sentences": len(gold)}
    return results


def cached_evaluate(folder: Path, config: DistillConfig, path: Path) -> dict:
    """The teacher's dev figures, computed once per (teacher, dev files, sentences) under OUT:
    every student of a sweep is compared with the same teacher run."""
    key = json.dumps([str(folder), config.dev, config.dev_sentences])
    cache = json.loads(path.read_text()) if path.exists() else {}
    if key not in cache:
        cache[key] = evaluate(folder, config.dev, config.dev_sentences)
        path.write_text(json.dumps(cache, indent=2) + "\n")
    return cache[key]


def weight_mb(folder: str | Path) -> float:
    return (Path(folder) / "model.safetensors").stat().st_size / 1e6


def write_card(folder: Path, config: DistillConfig, stats: dict, dev: dict, teacher_dev: dict | None) -> None:
    rows = "\n".join(
        f"| {name} | {r['f1']:.3f} | "
        + (f"{teacher_dev[name]['f1']:.3f} | {r['f1'] - teacher_dev[name]['f1']:+.3f}" if teacher_dev else "– | –")
        + f" | {r['chars_per_s']:,.0f} |"
        for name, r in dev.items()
    )
    card = f"""# segmenter distilled model

A {config.layers}-layer BERT (hidden {config.hidden}, {config.hidden // config.head_size} heads, feed-forward
{config.feed_forward}, window {config.window}
characters) distilled by `segmenter distill` from `{Path(config.teacher).name}`. The boundary is read like the
teacher's: s = log a[i, SEP] - log a[i, i+1] of one head, (layer {config.layers - 1}, head 0), cut where s > the teacher's default threshold;
the teacher's thresholds for fine/coarse. Weights in float16: {weight_mb(folder):.1f} MB.

## Recipe
Targets: the teacher's boundary score s at every Han-Han junction of {stats['label_chars']:,} characters of raw text
(lines {config.min_line}-{config.max_line} characters, a seeded shuffle of \
{', '.join(Path(p).name for p in config.raw)}), as
{1 - config.hard:.2f} * sigmoid((s - t) / {config.temperature}) + {config.hard:.2f} * [s > t] (t: its default threshold), \
learned with the student's s as the logit
of a binary cross-entropy (teacher read in bfloat16 autocast: {config.label_bf16}). \
No segmented text trained it. Word embeddings initialised from a PCA of the
teacher's: {config.pca_init}. AdamW, lr {config.lr}, batch {config.batch_size} windows, \
{stats['epochs']:.2f} passes; {stats['steps']} steps,
{stats['chars_seen']:,} characters seen in {stats['minutes']:.1f} min (final loss {stats['final_loss']:.4f}).

Command: `{config.command}`

## Dev figures
First {config.dev_sentences} sentences of each dev file: word F1 of student and teacher, and the student's
chars/s (`Segmenter.segment_batch`, torch, wall clock of this run on a possibly shared machine; speeds
against the teacher and jieba in one run: `benchmarks/distill_sweep.py`). Test files were not used.

| dev file | student F1 | teacher F1 | Δ | student chars/s |
|---|--:|--:|--:|--:|
{rows}

## Data and terms
Raw text: public corpora with mixed terms, some research or non-commercial use only (see the corpora
README). **Use this model for research.**
"""
    save_card(folder, card)


def distill(config: DistillConfig, label: bool = True) -> Path | None:
    """Label (unless label=False: use the chunks on disk), then train, save and report one student."""
    from ..model.folders import read_profile

    started = time.monotonic()
    teacher_folder = Path(config.teacher)
    if label:
        texts, folder = label_raw(config, teacher_segmenter(config.teacher))
    else:
        texts, folder = (sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line),
                         Path(config.out) / "labels")
    if config.label_only:
        return None
    teacher_profile = read_profile(teacher_folder)
    plans = finished_labels(texts, folder, teacher_profile, config.max_label_chars)
    if not plans:
        raise ValueError(f"no teacher labels in {folder}: label first (run without --no-label)")
    logger.info("training on %d labelled lines (%d chars)", len(plans), sum(len(p.text) for p in plans))
    if config.ffn is not None:  # the teacher itself, shrunk: its folder's card and profile carry over
        from .shrink import train_shrunk

        out, stats = train_shrunk(config, plans, teacher_profile)
    else:
        out, stats = train_student(config, plans, teacher_profile)
    metrics = {"training": stats, "dev": evaluate(out, config.dev, config.dev_sentences) if config.dev else {}}
    if config.ffn is None:  # a fresh student's card compares it with its teacher
        metrics["teacher_dev"] = (cached_evaluate(teacher_folder, config, Path(config.out) / "teacher_dev.json")
                                  if config.dev else None)
        stats["wall_minutes"] = (time.monotonic() - started) / 60
        write_card(out, config, stats, metrics["dev"], metrics["teacher_dev"])
        metrics["weight_mb"] = weight_mb(out)
    (out / "distill_metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return out
