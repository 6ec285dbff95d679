"""What every engine (torch: attention.py and reader.HeadReader; numpy: numpy_engine.py;
onnxruntime: onnx_engine.py) does alike when it reads the profile's heads: compute them layer by
layer, put them back in the profile's order, floor the attention weights before the log, and run
a batch in slices. numpy only, and no segmenter module: every engine imports it, torch or not.
"""
from __future__ import annotations

import numpy as np

# Attention weights are floored before the log: a weight of exactly 0 (masked, or underflow)
# must give a large but finite score, not -inf, so that weighted sums of heads stay finite.
ATTENTION_FLOOR = 1e-9
SLICE_TOKENS = 2048  # tokens (windows x padded length) an engine computes together: bounds the activations


def heads_by_layer(heads: list[tuple[int, int]]) -> dict[int, list[int]]:
    """The (layer, head) pairs grouped by layer, layers and heads ascending: the order in which
    every engine computes them (profile_order puts them back in the profile's)."""
    return {layer: sorted({h for l, h in heads if l == layer}) for layer in sorted({l for l, _ in heads})}


def profile_order(heads: list[tuple[int, int]]) -> np.ndarray:
    """Where each of `heads` (profile order) stands among heads_by_layer's: scores computed layer by
    layer, (B, K, ...), go back to profile order as scores[:, profile_order(heads)]."""
    grouped = [(layer, h) for layer, hs in heads_by_layer(heads).items() for h in hs]
    return np.array([grouped.index(tuple(pair)) for pair in heads], dtype=np.int64)


def batch_slices(rows: int, tokens: int, parts: int = 1) -> list[slice]:
    """The rows of a batch of windows of `tokens` padded tokens in slices of at most SLICE_TOKENS
    tokens (one row at least), and at least `parts` slices where there are as many rows (one per
    thread): an engine computes a slice at a time, which bounds its activations."""
    size = max(1, min(SLICE_TOKENS // tokens, -(-rows // parts)))
    return [slice(start, start + size) for start in range(0, rows, size)]
