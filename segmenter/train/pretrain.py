"""Pretrain a character-level BERT from scratch with masked-LM on raw text (`segmenter pretrain`).

    corpus files -> vocabulary (CharVocab.build) -> windows [CLS] c1..cn [SEP] (pretrain_data)
    -> length-bucketed batches -> masks -> BertModel + MLM head, logits at masked positions only
    -> AdamW, warmup + cosine decay, gradient clipping, autocast (bf16/fp16) on CUDA
    every eval_every steps: held-out MLM loss/accuracy and, given dev gold, the best head's AUC
    every save_every steps: checkpoint (exactly resumable) + refreshed model folder in OUT

Training continues across sittings (pretrain_config): `--resume` restores model, optimizer,
scheduler, RNG states, the data position, the step and the tokens seen, and gives the same
parameters as an uninterrupted run. Library use:

    >>> from pathlib import Path
    >>> from segmenter.train.pretrain import PretrainConfig, Sitting, pretrain
    >>> pretrain(PretrainConfig(corpus=["raw.txt"], max_steps=1000), Sitting(out=Path("runs/x")))
"""
from __future__ import annotations

import logging
import random
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from ..arguments import resolve_device
from ..model.profile import HeadProfile
from ..text.vocab import CharVocab
from . import pretrain_data as data
from . import pretrain_io as io
from .model_card import pretrain_card, write_card
from .pretrain_config import (
    CARRIED_OPTIONS,
    PretrainConfig,
    Progress,
    Sitting,
    capture_rng,
    previous_sitting_options,
    restore_rng,
    resume_config,
    saved_state,
    sitting_options,
)
from .pretrain_meter import Meter
from .pretrain_model import (
    autocast,
    best_head_profile,
    build_model,
    build_optimizer,
    build_scheduler,
    evaluate_heads,
    evaluate_mlm,
    resolve_precision,
    to_device,
)

logger = logging.getLogger(__name__)
LOG_EVERY = 10  # steps between progress-bar updates (each one syncs the GPU once)
DISCOVERY_LINES = 2000  # raw lines for unsupervised head discovery (as `segmenter heads`)
__all__ = ["CARRIED_OPTIONS", "PretrainConfig", "Sitting", "pretrain", "previous_sitting_options", "resume_config"]


class Trainer:
    """One sitting of a run: set up (fresh or resumed), take steps, evaluate, checkpoint."""

    def __init__(self, config: PretrainConfig, sitting: Sitting):
        self.started = time.time()
        config = replace(config, corpus=[str(Path(p).resolve()) for p in config.corpus])
        config.check()
        missing = [p for p in config.corpus if not Path(p).is_file()]
        if missing:
            raise ValueError(f"--raw: no such file: {', '.join(missing)}")
        self.config, self.sitting = config, sitting
        self.out = Path(sitting.out)
        self.device = torch.device(resolve_device(sitting.device))
        self.dtype = resolve_precision(sitting.precision, self.device)
        if sitting.threads:
            torch.set_num_threads(sitting.threads)
        checkpoint, saved = saved_state(self.out, sitting.resume, config)  # (None, None): a fresh run
        self.gold = self._read_gold()

        torch.manual_seed(config.seed)
        random.seed(config.seed)
        self.corpus = data.Corpus(config, CharVocab.from_folder(checkpoint) if saved else None)
        if saved is not None and saved["data"]["files"] != self.corpus.stats["files"]:
            raise ValueError("the corpus files changed since the run started: the data order would differ; "
                             "resume with the same files")
        self.vocab = self.corpus.vocab
        self.encoder, self.model = build_model(config, len(self.vocab), self.vocab.pad_id)
        if saved is not None:
            from safetensors.torch import load_file

            self.encoder.load_state_dict(load_file(checkpoint / "model.safetensors"))
            # The training-only parts (heads, generator) come from the training state.
            result = self.model.load_state_dict(saved["training_modules"], strict=False)
            if result.unexpected_keys or any(not k.startswith("encoder.") for k in result.missing_keys):
                raise ValueError(f"checkpoint {checkpoint} does not fit this model: {result}")
        self.model.to(self.device).train()
        self.optimizer = build_optimizer(self.model, config.lr, config.weight_decay, fused=self.device.type == "cuda")
        self.scheduler = build_scheduler(self.optimizer, config.warmup_steps, config.max_steps, config.final_lr_ratio)
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.dtype == torch.float16)
        self.masking = data.Masking(config.mask_rate, config.span_mean, config.max_span)
        self.progress = Progress()
        if saved is not None:
            self.optimizer.load_state_dict(saved["optimizer"])
            self.scheduler.load_state_dict(saved["scheduler"])
            self.scaler.load_state_dict(saved["scaler"])
            restore_rng(saved["rng"])
            self.progress = Progress(**saved["progress"])
            io.truncate_curve(self.out, self.progress.step)
        self.first_step = self.progress.step
        self.progress.sittings.append({})
        self._update_sitting()
        self.last_saved = self.progress.step if saved is not None else -1
        self.parameters = sum(p.numel() for p in self.encoder.parameters())
        logger.info(
            "model: %d layers x %d hidden, %d heads, %.1f M parameters; device %s, %s; %s",
            config.layers, config.hidden, config.heads, self.parameters / 1e6, self.device,
            "fp32" if self.dtype is None else str(self.dtype).replace("torch.", ""),
            f"resuming at step {self.progress.step:,}" if saved else "fresh start",
        )

    def _read_gold(self) -> list[list[str]]:
        if not self.sitting.eval_gold:
            return []
        from .corpus import read_gold

        gold = Path(self.sitting.eval_gold).resolve()
        if str(gold) in self.config.corpus:
            raise ValueError(f"--gold {gold} is also a --raw file: never train on gold text")
        if "test" in gold.name.lower():
            logger.warning("--gold %s looks like a test file: pick heads on dev sentences, keep test for the end",
                           gold.name)
        return read_gold(gold, limit=self.sitting.eval_gold_limit)

    def _update_sitting(self) -> None:
        self.progress.sittings[-1] = {
            "command": self.sitting.command,
            "device": str(self.device),
            "precision": "fp32" if self.dtype is None else str(self.dtype).replace("torch.", ""),
            "options": sitting_options(self.sitting),
            "first_step": self.first_step,
            "last_step": self.progress.step,
            "seconds": time.time() - self.started,
        }

    def _minutes(self) -> float:
        return (self.progress.seconds + time.time() - self.started) / 60

    # -- one step -----------------------------------------------------------------------------
    def train_step(self) -> tuple[torch.Tensor, int, int]:
        """One optimizer step -> (loss on the device, real tokens, padded tokens of the batch)."""
        p, config = self.progress, self.config
        batches = self.corpus.plan.epoch(p.epoch)
        ids, lengths = data.collate(
            self.corpus.train, batches[p.batch_index], self.vocab, config.pad_multiple, config.max_length
        )
        # Masks depend on the data position only: a resumed run draws the very same ones.
        rng = np.random.default_rng([config.seed, p.epoch, p.batch_index])
        inputs, positions, targets = self.masking.apply(ids, lengths, self.vocab, rng)
        batch = to_device(inputs, positions, targets, lengths, self.device)
        with autocast(self.device, self.dtype):
            loss, _ = self.model(*batch, full_logits=config.full_logits)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.clip_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        p.step += 1
        p.tokens_seen += int(lengths.sum()) + 2 * len(lengths)
        p.batch_index += 1
        if p.batch_index == len(batches):
            p.epoch, p.batch_index = p.epoch + 1, 0
        return loss.detach(), int(lengths.sum()) + 2 * len(lengths), ids.size

    # -- evaluation and checkpoints -------------------------------------------------------------
    def evaluate(self) -> dict:
        p = self.progress
        eval_loss, eval_acc = evaluate_mlm(self.model, self.corpus.eval_batches, self.device, self.dtype)
        record = {
            "step": p.step,
            "tokens_seen": p.tokens_seen,
            "minutes": round(self._minutes(), 3),
            "lr": self.scheduler.get_last_lr()[0],
            "train_loss": p.loss_sum / p.loss_steps if p.loss_steps else None,
            "eval_loss": eval_loss,
            "eval_acc": eval_acc,
        }
        if self.gold:
            rows = evaluate_heads(self.encoder, self.vocab, self.gold)
            profile = best_head_profile(rows, self.sitting.eval_gold, len(self.gold))
            p.profile = asdict(profile) if profile else None
            if rows:
                record.update(best_head=[rows[0]["layer"], rows[0]["head"]], best_auc=rows[0]["auc"],
                              best_f1=rows[0]["f1"])
        p.loss_sum, p.loss_steps, p.last_eval = 0.0, 0, record
        io.append_curve(self.out, record)
        logger.info(
            "step %s: eval loss %s acc %s%s", f"{p.step:,}", _fmt(eval_loss), _fmt(eval_acc),
            f", best head {record['best_head']} AUC {record['best_auc']:.3f}" if "best_head" in record else "",
        )
        return record

    def save(self) -> Path:
        p = self.progress
        self._update_sitting()
        state = {
            "config": asdict(self.config),
            "progress": {**asdict(p), "seconds": p.seconds + time.time() - self.started},
            "data": self.corpus.stats,
            "training_modules": {k: v for k, v in self.model.state_dict().items() if not k.startswith("encoder.")},
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": capture_rng(),
        }
        profile = HeadProfile(**p.profile) if p.profile else None
        checkpoint = io.save_checkpoint(self.out, p.step, self.encoder, self.vocab, profile, state,
                                        self.sitting.keep_checkpoints)
        io.export_model(self.out, checkpoint)
        write_card(self.out, pretrain_card(self._card_info()))
        self.last_saved = p.step
        return checkpoint

    def _card_info(self) -> dict:
        p = self.progress
        return {
            "config": asdict(self.config), "data": self.corpus.stats, "sittings": p.sittings, "step": p.step,
            "tokens_seen": p.tokens_seen, "seconds": p.seconds + time.time() - self.started,
            "train_loss": (p.last_eval or {}).get("train_loss"), "last_eval": p.last_eval,
            "eval_gold": self.sitting.eval_gold, "parameters": self.parameters, "vocab_size": len(self.vocab),
        }

    # -- the sitting ----------------------------------------------------------------------------
    def _should_stop(self) -> str | None:
        p, s = self.progress, self.sitting
        if p.step >= self.config.max_steps:
            return f"reached --max-steps {self.config.max_steps:,}"
        if s.stop_after is not None and p.step - self.first_step >= s.stop_after:
            return f"took --stop-after {s.stop_after:,} steps"
        if s.minutes is not None and time.time() - self.started >= s.minutes * 60:
            return f"used --minutes {s.minutes:g}"
        return None

    def run(self) -> Path:
        from tqdm.auto import tqdm
        from tqdm.contrib.logging import logging_redirect_tqdm

        p, s = self.progress, self.sitting
        bar = tqdm(total=self.config.max_steps, initial=p.step, unit="step", desc="pretraining", file=sys.stderr,
                   disable=not s.progress, dynamic_ncols=True)
        meter = Meter()
        try:
            with logging_redirect_tqdm():
                while (reason := self._should_stop()) is None:
                    meter.add(*self.train_step())
                    evaluate, save = p.step % s.eval_every == 0, p.step % s.save_every == 0
                    if p.step % LOG_EVERY == 0 or evaluate or save or self._should_stop():
                        steps, loss, rate = meter.flush()
                        p.loss_sum, p.loss_steps = p.loss_sum + loss * steps, p.loss_steps + steps
                        bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{rate:,.0f}",
                                        lr=f"{self.scheduler.get_last_lr()[0]:.1e}")
                        bar.update(steps)
                    if evaluate:
                        self.evaluate()
                    if save:
                        self.save()
                    if evaluate or save:
                        meter.restart()  # evaluation and saving are not training time
                bar.close()
                logger.info(
                    "stopping: %s; step %s, %s tokens seen; this sitting: %s tokens/s over %.0f s of training, "
                    "%.1f%% of the computed tokens were padding",
                    reason, f"{p.step:,}", f"{p.tokens_seen:,}", f"{meter.rate():,.0f}", meter.seconds,
                    100 * meter.padding(),
                )
                if p.last_eval is None or p.last_eval["step"] != p.step:
                    self.evaluate()
                if self.last_saved != p.step:
                    self.save()
        except KeyboardInterrupt:
            bar.close()
            if p.step > self.first_step and self.last_saved != p.step:
                logger.warning("interrupted: saving a checkpoint at step %s", f"{p.step:,}")
                self.save()
            raise
        io.plot_curve(self.out)
        if p.profile is None:
            self.discover_profile()
        return self.out

    def discover_profile(self) -> None:
        """No dev gold: find the boundary heads without supervision (segmenter.train.head_discovery) on raw
        corpus lines, read from the saved folder exactly as `segmenter heads --raw` would, and
        write the profile to OUT and to the latest checkpoint."""
        hint = f"`segmenter heads --model {self.out} --raw FILE` will create it"
        if not self.sitting.discover_heads:
            logger.info("no head profile yet (no --gold): %s", hint)
            return
        from ..model.folders import load_encoder
        from .corpus import iter_raw_lines
        from .head_discovery import discover_unsupervised

        started = time.time()
        texts = [line for _, line in zip(range(DISCOVERY_LINES), iter_raw_lines(self.config.corpus))]
        try:
            model, vocab, _ = load_encoder(self.out, device=self.device)
            profile = discover_unsupervised(model, vocab, texts)
        except Exception as err:  # discovery is a bonus: the trained model is saved already
            logger.warning("unsupervised head discovery failed (%s: %s); %s", type(err).__name__, err, hint)
            return
        profile.save(self.out)
        profile.save(io.latest_checkpoint(self.out))
        write_card(self.out, pretrain_card({**self._card_info(), "profile_source": profile.source}))
        logger.info("head profile: %s, heads %s (%.0f s)", profile.source, profile.heads, time.time() - started)


def pretrain(config: PretrainConfig, sitting: Sitting) -> Path:
    """Train (or continue training) and leave a segmenter model folder in sitting.out."""
    Path(sitting.out).mkdir(parents=True, exist_ok=True)
    return Trainer(config, sitting).run()


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"
