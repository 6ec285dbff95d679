"""Train a boundary head: fine-tune an encoder so that one attention head's score
s = log a[i, SEP] - log a[i, i+1] separates pseudo-labelled boundaries from word-inner junctions.

The result is still read the segmenter way — one forward pass, one head, s > threshold — so
granularity stays a threshold on a continuous score. The loss is binary cross-entropy with s
as the logit, on the junctions the teacher was confident about (targets 0/1; NaN = ignored).

Shapes: a batch of B windows padded to T = n_max + 2 tokens; s is (B, T - 3), one score per
junction j (after character j); targets the same shape.
"""
from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..model.attention import AttentionReader
from ..model.reader import progress_enabled
from ..model.scores import boundary_scores
from ..text.plan import TextPlan
from ..text.vocab import CharVocab
from ..text.windows import collate as collate_windows, make_windows

logger = logging.getLogger(__name__)


@dataclass
class Example:
    ids: np.ndarray  # (n,) character ids of one window
    targets: np.ndarray  # (n - 1,) float32, NaN = no label


def make_examples(vocab: CharVocab, texts: list[str], positions: list[np.ndarray], targets: list[np.ndarray],
                  window: int, overlap: int) -> list[Example]:
    """Cut each labelled text into windows; a junction keeps its label in every window that
    holds both of its characters."""
    examples = []
    for text, pos, target in zip(texts, positions, targets):
        if np.isnan(target).all():
            continue
        ids = vocab.encode("".join(text[i] for i in pos))
        for w in make_windows(len(ids), window, overlap):
            t = target[w.start : w.end - 1]
            if not np.isnan(t).all():
                examples.append(Example(ids[w.start : w.end], t))
    return examples


def soft_targets(plans: list[TextPlan], threshold: float, temperature: float, hard: float) -> list[np.ndarray]:
    """Per text, one target per model junction (len(positions) - 1): at Han-Han junctions
    (1 - hard) * sigmoid((s - threshold) / T) + hard * [s > threshold], NaN elsewhere (the
    runtime never reads those junctions, so the student is not asked about them)."""
    targets = []
    for plan in plans:
        t = np.full(max(len(plan.positions) - 1, 0), np.nan, dtype=np.float32)
        z = (plan.scores - threshold) / temperature
        t[plan.junctions] = (1 - hard) / (1 + np.exp(-z)) + hard * (z > 0)
        targets.append(t)
    return targets


def batches(examples: list[Example], batch_size: int, rng: random.Random) -> list[list[Example]]:
    """Length-sorted batches (little padding), visited in random order."""
    ordered = sorted(examples, key=lambda e: len(e.ids))
    groups = [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]
    rng.shuffle(groups)
    return groups


def collate(batch: list[Example], vocab: CharVocab, device: torch.device):
    """Examples -> ids, mask (B, T), lengths (B,) and targets (B, T - 3) on `device`."""
    ids, mask = collate_windows([e.ids for e in batch], vocab)
    targets = torch.full((len(batch), ids.shape[1] - 3), float("nan"))
    for row, e in enumerate(batch):
        targets[row, : len(e.ids) - 1] = torch.from_numpy(e.targets)
    lengths = torch.tensor([len(e.ids) for e in batch])
    return torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device), lengths.to(device), targets.to(device)


def head_logits(reader: AttentionReader, ids, mask, lengths) -> torch.Tensor:
    """s of the boundary head (the reader's one head) for every junction: (B, T - 3)."""
    (attention,) = reader.run(input_ids=ids, attention_mask=mask).values()
    return boundary_scores(attention.float(), lengths)[:, 0]


def train_boundary_head(
    model,
    vocab: CharVocab,
    examples: list[Example],
    head: tuple[int, int],
    device: torch.device,
    minutes: float,
    epochs: float = 1.0,
    lr: float = 5e-5,
    batch_size: int = 32,
    seed: int = 0,
    show_progress: bool | None = None,
) -> dict:
    """Fine-tune until `epochs` passes or `minutes` run out; returns training statistics."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    plan = [b for epoch in range(math.ceil(epochs)) for b in batches(examples, batch_size, rng)]
    plan = plan[: max(1, int(len(plan) * epochs / math.ceil(epochs)))] if examples else []
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, len(plan) // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.05, 1 - step / max(1, len(plan)))
    )
    use_amp = device.type == "cuda"
    reader = AttentionReader(model, [head])
    model.train()
    start, seen, losses, step = time.monotonic(), 0, [], 0
    progress = None
    if progress_enabled(show_progress):
        from tqdm.auto import tqdm

        progress = tqdm(total=len(plan), desc="self-training", unit="batch", leave=False)
    for step, batch in enumerate(plan):
        if time.monotonic() - start > minutes * 60:
            break
        ids, mask, lengths, targets = collate(batch, vocab, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp):
            logits = head_logits(reader, ids, mask, lengths)
        labelled = ~torch.isnan(targets)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[labelled], targets[labelled])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        seen += int(lengths.sum())
        if progress is not None:
            progress.update(1)
            progress.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}",
                                 chars_s=f"{seen / (time.monotonic() - start):.0f}")
    if progress is not None:
        progress.close()
    model.eval()
    return {
        "steps": len(losses),
        "planned_steps": len(plan),
        "chars_seen": seen,
        "minutes": (time.monotonic() - start) / 60,
        "final_loss": float(np.mean(losses[-50:])) if losses else None,
    }
