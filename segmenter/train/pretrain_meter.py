"""A sitting's accounting of its training steps: the loss and the throughput (`Meter`).

The loss of each step stays on the device as a 0-d tensor; the meter reads them all at once per
flush, because reading a GPU tensor waits for the GPU (pretrain.Trainer.run flushes every
LOG_EVERY steps, and before an evaluation or a checkpoint). Time spent evaluating or saving is
left out (`restart`): tokens/s counts training time only.
"""
from __future__ import annotations

import time

import torch


class Meter:
    """Training throughput: real tokens per second of step time; losses kept on the device and
    read once per flush (reading a GPU tensor waits for the GPU: once per LOG_EVERY steps)."""

    def __init__(self):
        self.losses: list[torch.Tensor] = []
        self.tokens = self.padded = self.interval_tokens = 0
        self.seconds = 0.0
        self.start = time.time()

    def add(self, loss: torch.Tensor, tokens: int, padded: int) -> None:
        self.losses.append(loss)
        self.tokens, self.padded, self.interval_tokens = (self.tokens + tokens, self.padded + padded,
                                                          self.interval_tokens + tokens)

    def flush(self) -> tuple[int, float, float]:
        """-> (steps, mean loss, tokens/s) since the last flush."""
        losses = torch.stack(self.losses).float().cpu()
        if not torch.isfinite(losses).all():
            raise FloatingPointError("the training loss is not finite; lower --lr, or use --precision fp32 or bf16")
        elapsed = max(time.time() - self.start, 1e-9)
        self.seconds += elapsed
        steps, rate = len(losses), self.interval_tokens / elapsed
        self.losses, self.interval_tokens = [], 0
        self.start = time.time()
        return steps, float(losses.mean()), rate

    def restart(self) -> None:
        self.start = time.time()

    def rate(self) -> float:
        return self.tokens / max(self.seconds, 1e-9)

    def padding(self) -> float:
        return 1 - self.tokens / max(self.padded, 1)
