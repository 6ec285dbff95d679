"""Model windows: how long they are, how they overlap, and how a batch of them is laid out.

Every piece of segmenter that feeds characters to an encoder (the reader at inference, the
student and the pretraining batches in training, head discovery, the head picture) lays a
window out the same way, here:

    token  0      1 … n      n + 1    n + 2 … T - 1
           [CLS]  c1 … cn    [SEP]    [PAD] …            mask 1 on [CLS] … [SEP], 0 on padding

T is rounded up to a multiple of PAD_MULTIPLE so that shapes repeat (kernels like it, and a
window is computed with the same shape whether it comes alone or in a batch).
"""
from __future__ import annotations

import numpy as np

WINDOW = 254  # characters per window: 256 positions with [CLS] and [SEP]
OVERLAP = 64  # characters two neighbouring windows share (each junction is read from one)
PAD_MULTIPLE = 8


def clamp_window(window: int, overlap: int, max_positions: int) -> tuple[int, int]:
    """The window and overlap actually used with a model of `max_positions` positions.

    A window never exceeds the model's positions ([CLS] and [SEP] take two), and the overlap is
    at most half a window (rounded up: a window of 3 keeps the smallest valid overlap, 2), so
    that a window keeps about half of its characters. Clamping twice changes nothing.
    """
    window = min(window, max_positions - 2)
    return window, min(overlap, (window + 1) // 2)


def padded_length(num_chars, multiple: int = PAD_MULTIPLE):
    """Tokens of `[CLS] chars [SEP]` rounded up to a multiple (an int, or an array for an array)."""
    return -(-(np.asarray(num_chars) + 2) // multiple) * multiple


def collate_flat(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, vocab, pad_multiple: int = PAD_MULTIPLE,
    max_tokens: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Windows stored as flat[starts[b] : starts[b] + lengths[b]] -> (ids, mask), both (B, T) int64.

    T is padded_length(longest), but never past max_tokens (the model's positions) unless the
    longest window needs it. One vectorized gather: large GPU batches hold thousands of windows.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    longest = int(lengths.max()) if len(lengths) else 0
    tokens = int(padded_length(longest, pad_multiple))
    if max_tokens is not None:
        tokens = max(min(tokens, max_tokens), longest + 2)
    column = np.arange(tokens)
    character = column[None, :] - 1  # token t holds character t - 1
    is_char = (character >= 0) & (character < lengths[:, None])
    source = np.where(is_char, starts[:, None] + character, 0)
    ids = np.where(is_char, flat[source] if len(flat) else 0, vocab.pad_id).astype(np.int64)
    ids[:, 0] = vocab.cls_id
    ids[np.arange(len(lengths)), lengths + 1] = vocab.sep_id
    mask = (column[None, :] < lengths[:, None] + 2).astype(np.int64)
    return ids, mask


def collate(windows: list[np.ndarray], vocab, pad_multiple: int = PAD_MULTIPLE) -> tuple[np.ndarray, np.ndarray]:
    """Windows of character ids (no specials) -> (ids, mask), both (B, T) int64 (see module doc)."""
    lengths = np.fromiter((len(w) for w in windows), dtype=np.int64, count=len(windows))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(windows) else lengths
    flat = np.concatenate(windows) if len(windows) else np.zeros(0, dtype=np.int64)
    return collate_flat(flat, starts, lengths, vocab, pad_multiple)
