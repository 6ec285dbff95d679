"""The numpy engine's kernels, float32 throughout:
  erf, gelu         exact (erf) GELU, in place, a few hundred rows at a time       (B, T, 4H)
  layer_norm        over the hidden axis, like torch.nn.LayerNorm                  (B, T, H)
  softmax           in place over the last axis                                     (B, heads, T, T)
  scores_from_logits  the boundary scores s = log a[i, SEP] - log a[i, i+1] (scores.py, same
                    1e-9 floor) from masked attention logits: (B, K, T, T) -> (B, K, T - 3)

Apart from numpy_engine.py because two engines run them: numpy_engine.NumpyBert runs the BERT
layers with the first four, and onnx_engine.py, whose graph stops at the logits, reads its scores
with the last, as numpy_engine.py does. One function floors and differences the attention weights for both,
and onnx_engine.py loads no numpy BERT to get it. numpy and readout.py only.

numpy has no erf: `erf` below is Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, < 6e-7 in float32,
about float32's own rounding; test_engine.py checks it against math.erf).
"""
from __future__ import annotations

import math

import numpy as np

from .readout import ATTENTION_FLOOR

LOG_FLOOR = np.float32(math.log(ATTENTION_FLOOR))  # an attention weight below the floor counts as the floor


def erf(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26, |error| < 1.5e-7: erf(x) = 1 - poly(t) exp(-x^2) for x >= 0,
    t = 1 / (1 + 0.3275911 x), odd in x. Written in place, op by op: a chain of temporaries
    over a (B * T, 4H) array would spend more time in memory than in arithmetic."""
    a = np.abs(x)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(1, poly, out=poly)
    return np.copysign(poly, x, out=out)


GELU_ROWS = 256  # rows of the (B * T, 4H) activations per step: a step's temporaries stay in cache


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), in place on x, GELU_ROWS rows at a time."""
    flat = x.reshape(-1, x.shape[-1])
    for start in range(0, flat.shape[0], GELU_ROWS):
        rows = flat[start : start + GELU_ROWS]
        half = rows * np.float32(0.5)
        rows *= np.float32(1 / math.sqrt(2))
        erf(rows, out=rows)
        rows += 1
        rows *= half
    return x


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """Over the last axis (hidden), like torch.nn.LayerNorm."""
    x = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(x * x, axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(variance + np.float32(eps))
    x *= weight
    x += bias
    return x


def softmax(logits: np.ndarray) -> np.ndarray:
    """In place over the last axis."""
    logits -= logits.max(axis=-1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=-1, keepdims=True)
    return logits


def scores_from_logits(logits: np.ndarray, lengths: np.ndarray, row_max: np.ndarray | None = None) -> np.ndarray:
    """scores.boundary_scores from masked attention logits (B, K, T, T) -> (B, K, T - 3).

    log a[i, j] = logits[i, j] - logsumexp(logits[i]); only two entries per row are read, and
    their difference needs no logsumexp unless one of them is under the floor. logsumexp(row)
    lies in [max(row), max(row) + log T]: a row whose smaller entry is within LOG_FLOOR + log T of
    its max is never floored and scores to_sep - to_next (the same to ~1e-6, without an exp over
    every row); only the others get the exact logsumexp.
    row_max: (B, K, T), each row's max, where the caller has it (onnx_engine's graphs compute it,
    faster than numpy's max over short rows, which would be most of this function's time).
    """
    tokens = logits.shape[-1]
    rows = np.arange(1, tokens - 2)  # token i = character i - 1; junctions 0 .. T - 4
    inner = logits[:, :, 1 : tokens - 2, :]
    to_sep = np.take_along_axis(inner, (lengths + 1)[:, None, None, None], axis=3)[..., 0]
    to_next = logits[:, :, rows, rows + 1]
    scores = to_sep - to_next
    top = inner.max(axis=-1) if row_max is None else row_max[:, :, 1 : tokens - 2]
    near = np.minimum(to_sep, to_next) - top < LOG_FLOOR + np.log(tokens)  # may be floored
    if near.any():
        b, k, i = np.nonzero(near)
        row = inner[b, k, i, :]  # (rows near the floor, T)
        peak = row.max(axis=-1)
        log_total = np.log(np.exp(row - peak[:, None]).sum(axis=-1)) + peak
        scores[b, k, i] = (np.maximum(to_sep[b, k, i] - log_total, LOG_FLOOR)
                           - np.maximum(to_next[b, k, i] - log_total, LOG_FLOOR))
    return scores
