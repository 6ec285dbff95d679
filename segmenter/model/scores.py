"""Boundary scores read from attention: s = log a[i, SEP] - log a[i, i+1].

In a head that marks words, a character that ends a word attends mostly to [SEP] and a
character inside a word attends mostly to the next character. So for each character the
log-ratio of those two weights is a boundary score: s > 0 (more weight on [SEP]) says
"boundary after this character", s < 0 says "the word goes on". The last character of a
sequence has [SEP] as its next token, so it gets no score: it always ends a word.
"""
from __future__ import annotations

import torch

from .readout import (
    ATTENTION_FLOOR,  # a weight below it counts as it: finite scores (readout.py)
)


def boundary_scores(attention: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Per-head boundary scores for a padded batch.

    attention: (B, K, T, T) attention rows of K heads for `[CLS] c1 … cn [SEP] [PAD]…`,
               T = max(n) + 2; row b has n_b = lengths[b] characters, its [SEP] at n_b + 1.
    returns:   (B, K, T - 3); entry [b, k, j] scores the junction after character j
               (0-based), valid for j < n_b - 1; the rest is padding.
    """
    batch, heads, tokens, _ = attention.shape
    if tokens < 3:
        return attention.new_zeros(batch, heads, 0)
    # a[i, SEP] for every row i: gather column n_b + 1 of each sequence, (B, K, T).
    sep_column = (lengths + 1).view(batch, 1, 1, 1).expand(batch, heads, tokens, 1)
    to_sep = attention.gather(3, sep_column).squeeze(3)
    # a[i, i+1]: the first super-diagonal, (B, K, T-1), index i.
    to_next = torch.diagonal(attention, offset=1, dim1=2, dim2=3)
    # Character j is token i = j + 1; junctions j = 0 .. T-4 (the last real one is n_b - 2).
    # Only these two entries per row are logged, never the whole (T, T) matrix.
    to_sep = to_sep[:, :, 1 : tokens - 2].clamp_min(ATTENTION_FLOOR).log()
    to_next = to_next[:, :, 1 : tokens - 2].clamp_min(ATTENTION_FLOOR).log()
    return to_sep - to_next
