"""What defines a pretraining run and where it stands: config, sitting, progress, RNG states.

A run is defined by a `PretrainConfig`, saved in every checkpoint and fixed once the run
started (a resumed run takes it from there; only max_steps may be raised). It is carried out
by sittings (`Sitting`: output folder, time budget, device, evaluation cadence), none of which
changes the trained parameters. `Progress` is where the run stands: step, tokens seen, data
position, counters; with the RNG states it is what makes a resumed run exact. `saved_state`
checks a sitting's output folder against the run it starts or resumes.
"""
from __future__ import annotations

import logging
import random
import shlex
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

import torch

from ..text.vocab import SPECIAL_TOKENS
from ..text.windows import padded_length
from . import pretrain_io as io

logger = logging.getLogger(__name__)


@dataclass
class PretrainConfig:
    """Everything that defines a run's result. Saved in checkpoints; fixed once a run started
    (except max_steps, which a later sitting may raise)."""

    corpus: list[str] = field(default_factory=list)
    # model shape
    layers: int = 4
    hidden: int = 256
    heads: int = 8
    intermediate: int = 1024
    max_length: int = 128  # positions, with [CLS] and [SEP]: windows of max_length - 2 characters
    dropout: float = 0.0  # none: the data is seen about once, and dropout costs ~20% of CPU step time
    # vocabulary and data
    vocab_size: int = 8000  # at most, specials included
    min_count: int = 5  # rarer characters become [UNK]
    min_chars: int = 2  # shorter lines are skipped
    eval_lines: int = 1000  # held-out lines (a fixed draw), never trained on
    # objective
    mask_rate: float = 0.3
    span_mean: float = 1.0  # > 1: mask whole spans of geometric length with this mean
    max_span: int = 5
    full_logits: bool = False  # compute (B, T, V) logits: slower, only to measure the saving
    objective: str = "mlm"  # or "electra": replaced-token detection with a small MLM generator
    generator_hidden: int = 64  # electra: the generator's width (its layers as the model's)
    rtd_weight: float = 50.0  # electra: weight of the detection loss (ELECTRA's lambda)
    # batches and optimization
    batch_tokens: int = 4096  # padded tokens per batch
    pad_multiple: int = 8
    bucketing: bool = True
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup_steps: int = 1000
    max_steps: int = 20000  # also the horizon of the cosine decay
    final_lr_ratio: float = 0.1
    clip_norm: float = 1.0
    seed: int = 0

    def check(self) -> None:
        """Raise ValueError naming the offending option."""
        problems = []
        if not self.corpus:
            problems.append("--raw: give at least one raw text file")
        if self.layers < 1 or self.heads < 1 or self.hidden < 1 or self.intermediate < 1:
            problems.append("--layers, --heads, --hidden, --intermediate must be positive")
        elif self.hidden % self.heads:
            problems.append(f"--hidden {self.hidden} must be a multiple of --heads {self.heads}")
        if self.max_length < 4:
            problems.append(f"--max-length must be at least 4 ([CLS], 2 characters, [SEP]), got {self.max_length}")
        if not 0 <= self.dropout < 1:
            problems.append(f"--dropout must be in [0, 1), got {self.dropout}")
        if self.vocab_size <= len(SPECIAL_TOKENS):
            problems.append(f"--vocab-size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {self.vocab_size}")
        if self.min_count < 1 or self.min_chars < 1 or self.eval_lines < 0:
            problems.append("--min-count and --min-chars must be >= 1, --eval-lines >= 0")
        if not 0 < self.mask_rate < 1:
            problems.append(f"--mask-rate must be in (0, 1), got {self.mask_rate}")
        if self.span_mean < 1 or self.max_span < 1:
            problems.append("--span-mean and --max-span must be >= 1")
        if self.objective not in ("mlm", "electra"):
            problems.append(f"--objective must be mlm or electra, got {self.objective!r}")
        elif self.objective == "electra" and (self.generator_hidden < 1
                                              or self.generator_hidden % self.generator_heads):
            problems.append(
                f"--generator-hidden {self.generator_hidden} must be a positive multiple of its "
                f"{self.generator_heads} heads"
            )
        if self.pad_multiple < 1:
            problems.append(f"--pad-multiple must be >= 1, got {self.pad_multiple}")
        if self.batch_tokens < padded_length(self.max_length - 2, self.pad_multiple):
            problems.append(f"--batch-tokens {self.batch_tokens} cannot hold one window of "
                            f"--max-length {self.max_length}")
        if self.lr <= 0 or self.weight_decay < 0 or self.clip_norm <= 0 or not 0 <= self.final_lr_ratio <= 1:
            problems.append("--lr and --clip-norm must be positive, --weight-decay >= 0, --final-lr-ratio in [0, 1]")
        if self.max_steps < 1 or self.warmup_steps < 0:
            problems.append("--max-steps must be >= 1 and --warmup-steps >= 0")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def generator_heads(self) -> int:
        """The generator keeps the model's head width: heads scale with its hidden size."""
        return max(1, self.heads * self.generator_hidden // max(self.hidden, 1))

    @classmethod
    def from_dict(cls, values: dict) -> "PretrainConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclass
class Sitting:
    """How this sitting runs; nothing here changes the trained parameters."""

    out: Path
    resume: bool = False
    minutes: float | None = None  # stop taking steps after this much wall time
    stop_after: int | None = None  # stop this sitting after this many steps (the schedule still aims at max_steps)
    device: str = "cpu"
    precision: str = "auto"  # auto (bf16, else fp16, on CUDA; fp32 on CPU) | fp32 | bf16 | fp16
    threads: int | None = None
    eval_every: int = 500
    save_every: int = 1000
    eval_gold: str | None = None
    eval_gold_limit: int = 200
    discover_heads: bool = True  # without eval_gold: unsupervised head profile at the end of the sitting
    keep_checkpoints: int = 2
    progress: bool = True
    command: str = field(default_factory=lambda: shlex.join(["segmenter"] + sys.argv[1:]))



# Sitting options that a resumed run takes from the previous sitting unless given again: leaving
# them out must not quietly switch bf16 to fp32 or stop the learning curve's gold evaluation.
# (device is not among them: a run may move between machines.)
CARRIED_OPTIONS = ("precision", "threads", "eval_every", "save_every", "eval_gold", "eval_gold_limit",
                   "keep_checkpoints")


def sitting_options(sitting: Sitting) -> dict:
    """What a sitting record keeps of the options, for the next sitting to carry over."""
    options = {name: getattr(sitting, name) for name in CARRIED_OPTIONS}
    if options["eval_gold"]:  # the next sitting may start in another directory
        options["eval_gold"] = str(Path(options["eval_gold"]).resolve())
    return options


def previous_sitting_options(out: Path) -> dict:
    """The carried options of the last sitting of the run in `out` ({} when none are recorded)."""
    checkpoint = io.latest_checkpoint(Path(out))
    if checkpoint is None:
        return {}
    sittings = io.load_checkpoint_state(checkpoint)["progress"].get("sittings") or [{}]
    return dict(sittings[-1].get("options", {}))


@dataclass
class Progress:
    """Where a run stands; saved in checkpoints so that a later sitting continues exactly."""

    step: int = 0
    tokens_seen: int = 0  # real tokens ([CLS] and [SEP] included, padding not)
    epoch: int = 0  # data position: batch `batch_index` of epoch `epoch` comes next
    batch_index: int = 0
    seconds: float = 0.0  # wall time of the previous sittings
    loss_sum: float = 0.0  # train loss summed since the last curve record
    loss_steps: int = 0
    sittings: list = field(default_factory=list)
    last_eval: dict | None = None
    profile: dict | None = None  # the head profile of the last gold evaluation


def resume_config(out: Path, given: dict) -> PretrainConfig:
    """The config of the run in `out`, checked against options given again (only max_steps may
    change: it stretches the learning-rate schedule)."""
    checkpoint = io.latest_checkpoint(Path(out))
    if checkpoint is None:
        raise ValueError(f"--resume: {out} holds no checkpoint to resume from; start without --resume")
    saved = PretrainConfig.from_dict(io.load_checkpoint_state(checkpoint)["config"])
    if given.get("corpus"):
        given = {**given, "corpus": [str(Path(p).resolve()) for p in given["corpus"]]}
    conflicts = [
        f"--{name.replace('_', '-')} {value} (the run has {getattr(saved, name)})"
        for name, value in given.items()
        if value is not None and name != "max_steps" and value != getattr(saved, name)
    ]
    if conflicts:
        raise ValueError(f"--resume continues the run in {out} as it was started; drop or fix: " + "; ".join(conflicts))
    if given.get("max_steps") is not None and given["max_steps"] != saved.max_steps:
        logger.warning(
            "--max-steps %s instead of %s: the cosine decay is stretched to the new horizon, so the learning "
            "rate rises again from where it stood", f"{given['max_steps']:,}", f"{saved.max_steps:,}",
        )
        saved.max_steps = given["max_steps"]
    return saved


def saved_state(out: Path, resume: bool, config: PretrainConfig) -> tuple[Path | None, dict | None]:
    """The checkpoint a sitting starts from and its training state: (None, None) for a fresh run.
    A fresh run refuses a folder that holds one already; a resumed one needs its checkpoint and
    the run's own config (resume_config), max_steps aside."""
    checkpoint = io.latest_checkpoint(out)
    if not resume and (checkpoint is not None or (out / io.CURVE_FILE).exists()):
        raise ValueError(f"{out} already holds a pretraining run; "
                         "pass --resume to continue it, or choose another --out")
    saved = io.load_checkpoint_state(checkpoint) if resume else None
    if resume and saved is None:
        raise ValueError(f"--resume: {out} holds no checkpoint to resume from; start without --resume")
    if saved is not None and PretrainConfig.from_dict({**saved["config"], "max_steps": config.max_steps}) != config:
        raise ValueError("--resume needs the run's own config (see resume_config)")
    return checkpoint, saved


def capture_rng() -> dict:
    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
