"""What a pretraining run leaves on disk: checkpoints, the model folder, the learning curve, the card.

    OUT/                         a segmenter model folder, refreshed at every checkpoint
      config.json model.safetensors vocab.txt tokenizer_config.json [segmenter_heads.json]
      MODEL_CARD.md learning_curve.jsonl learning_curve.png
      checkpoints/
        latest                   name of the newest complete checkpoint (written last)
        step_00001000/           a model folder too, plus training_state.pt (head, optimizer,
                                 scheduler, RNG states, data position, counters, config)

A checkpoint folder is written under a temporary name and renamed when complete, and
`latest` is replaced atomically after it: a run killed at any moment resumes from the last
complete checkpoint.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import torch

from ..model.profile import PROFILE_FILE, HeadProfile
from ..run.files import atomic_path, write_text_atomic
from ..text.vocab import CharVocab

logger = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
LATEST = "latest"
STATE_FILE = "training_state.pt"
CURVE_FILE = "learning_curve.jsonl"
CURVE_PLOT = "learning_curve.png"
MODEL_FILES = ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", PROFILE_FILE)


def save_model_folder(folder: Path, encoder, vocab: CharVocab, profile: HeadProfile | None) -> None:
    """config.json + model.safetensors (BertModel, no pooler) + vocabulary (+ head profile)."""
    from ..model.folders import (
        _quiet_transformers,  # no "Writing model shards" bar at every checkpoint
    )

    folder.mkdir(parents=True, exist_ok=True)
    with _quiet_transformers():
        encoder.save_pretrained(folder)
    vocab.save(folder)
    if profile is not None:
        profile.save(folder)
    elif (folder / PROFILE_FILE).exists():
        (folder / PROFILE_FILE).unlink()


def save_checkpoint(out: Path, step: int, encoder, vocab: CharVocab, profile, state: dict, keep: int) -> Path:
    """Write checkpoints/step_N (model folder + training state), point `latest` at it, prune."""
    root = out / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    name = f"step_{step:08d}"
    partial = root / f".{name}.partial"
    if partial.exists():
        shutil.rmtree(partial)
    save_model_folder(partial, encoder, vocab, profile)
    torch.save(state, partial / STATE_FILE)
    final = root / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(partial, final)
    write_text_atomic(root / LATEST, name + "\n")
    kept = sorted(p for p in root.glob("step_*") if p.is_dir())
    for old in kept[: max(0, len(kept) - keep)]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(out: Path) -> Path | None:
    pointer = out / CHECKPOINTS / LATEST
    if not pointer.is_file():
        return None
    folder = out / CHECKPOINTS / pointer.read_text(encoding="utf-8").strip()
    return folder if (folder / STATE_FILE).is_file() else None


def load_checkpoint_state(folder: Path) -> dict:
    # Only tensors, numbers, strings and containers inside: the safe unpickler suffices.
    return torch.load(folder / STATE_FILE, map_location="cpu", weights_only=True)


def export_model(out: Path, checkpoint: Path) -> None:
    """Copy the checkpoint's model files to OUT (each through a temporary: never half a file)."""
    for name in MODEL_FILES:
        source, target = checkpoint / name, out / name
        if source.is_file():
            with atomic_path(target) as temporary:
                shutil.copyfile(source, temporary)
        elif target.exists():
            target.unlink()


# -- learning curve ---------------------------------------------------------------------------
def append_curve(out: Path, record: dict) -> None:
    with open(out / CURVE_FILE, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_curve(out: Path) -> list[dict]:
    path = out / CURVE_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def truncate_curve(out: Path, step: int) -> None:
    """On resume: forget records written after the checkpoint (they will be written again)."""
    records = read_curve(out)
    kept = [r for r in records if r["step"] <= step]
    if len(kept) != len(records):
        write_text_atomic(out / CURVE_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))


def plot_curve(out: Path) -> Path | None:
    """learning_curve.png: losses against tokens seen; eval accuracy and best-head AUC beside."""
    records = read_curve(out)
    if not records:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed: no %s (pip install matplotlib); the JSONL has the numbers",
                    CURVE_PLOT)
        return None
    tokens = [r["tokens_seen"] / 1e6 for r in records]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(tokens, [r.get("train_loss") for r in records], label="train MLM loss")
    left.plot(tokens, [r.get("eval_loss") for r in records], label="held-out MLM loss")
    left.set_xlabel("tokens seen (M)")
    left.set_ylabel("loss")
    left.legend()
    right.plot(tokens, [r.get("eval_acc") for r in records], label="held-out MLM accuracy")
    if any(r.get("best_auc") is not None for r in records):
        right.plot(tokens, [r.get("best_auc") for r in records], label="best head boundary AUC (dev gold)")
    right.set_xlabel("tokens seen (M)")
    right.legend()
    figure.tight_layout()
    path = out / CURVE_PLOT
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
