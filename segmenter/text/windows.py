"""Model windows: how long they are, how they overlap, and how a batch of them is laid out.

Every piece of segmenter that feeds characters to an encoder (the reader at inference, the
student and the pretraining batches in training, head discovery, the head picture) lays a
window out the same way, here:

    token  0      1 … n      n + 1    n + 2 … T - 1
           [CLS]  c1 … cn    [SEP]    [PAD] …            mask 1 on [CLS] … [SEP], 0 on padding

T is rounded up to a multiple of PAD_MULTIPLE so that shapes repeat (kernels like it, and a
window is computed with the same shape whether it comes alone or in a batch).

A sequence longer than a window is cut here too: make_windows (overlapping windows, each
position kept by the one where it sits farthest from an edge) and sentence_windows (whole
sentences where they fit, overlapping windows only inside a longer one).
"""
from __future__ import annotations

import bisect
import re
from typing import NamedTuple

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
    if isinstance(num_chars, int):  # one window (a short call's): no array
        return -(-(num_chars + 2) // multiple) * multiple
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


class Window(NamedTuple):
    """A slice [start, end) of a sequence fed to the model at once; the scores of positions in
    [keep_start, keep_end) are taken from this window (the others come from a neighbour)."""

    start: int
    end: int
    keep_start: int
    keep_end: int


# A sentence ends after these marks (and the closing quotes or brackets after them): where
# sentence_windows may end a window without overlap.
SENTENCE_END_RE = re.compile("[。！？!?；;]+[”’\"』」）)]*")


def sentence_windows(length: int, size: int, overlap: int, breaks) -> list[Window]:
    """Cover range(length) as make_windows does, ending windows where sentences end when one fits.

    breaks: positions right after a sentence's last mark (SENTENCE_END_RE), ascending. Whole
    sentences are packed into windows of at most `size`, each keeping all it holds: a sentence
    end is an edge the model sees at every text's end, so no overlap is needed there (a long
    text cost ~1.35 tokens per character with overlapping windows, ~1.05 so). Only a sentence
    longer than a window is cut into overlapping ones (make_windows)."""
    windows: list[Window] = []
    start = 0
    while start < length:
        if length - start <= size:
            windows.append(Window(start, length, start, length))
            break
        fits = bisect.bisect_right(breaks, start + size)  # breaks[:fits] end within a window from start
        if fits and breaks[fits - 1] > start:
            end = breaks[fits - 1]
            windows.append(Window(start, end, start, end))
        else:  # one sentence longer than a window: overlapping windows to its end
            end = breaks[fits] if fits < len(breaks) else length
            windows += [Window(w.start + start, w.end + start, w.keep_start + start, w.keep_end + start)
                        for w in make_windows(end - start, size, overlap)]
        start = end
    return windows


def make_windows(length: int, size: int, overlap: int) -> list[Window]:
    """Cover range(length) with windows of at most `size` items overlapping by `overlap`.

    Each position is *kept* by exactly one window, the one where it sits farthest from an
    edge, so that a boundary score never comes from a character cut off from its context.
    """
    if size < 1:
        raise ValueError(f"window size must be at least 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size), got {overlap} for size {size}")
    if length <= size:
        return [Window(0, length, 0, length)] if length else []
    stride = size - overlap
    starts = list(range(0, length - size, stride)) + [length - size]
    windows = []
    for k, start in enumerate(starts):
        end = start + size
        keep_start = 0 if k == 0 else windows[-1].keep_end
        # The overlap with the next window is split in its middle.
        keep_end = length if k == len(starts) - 1 else (end + starts[k + 1]) // 2
        windows.append(Window(start, end, keep_start, keep_end))
    return windows
