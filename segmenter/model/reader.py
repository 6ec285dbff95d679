"""Model encoding: run character windows through the encoder, return per-head boundary scores.

Input: windows of character ids (no specials). Each window becomes `[CLS] ids [SEP]`
(windows.collate); windows are grouped by padded length (multiples of 8) so that a window is
always computed with the same shape whether it comes alone or in a batch, which keeps results
independent of batch composition, and sorted so that little padding is wasted.

Two readers share that bucketing (WindowReader.read): HeadReader runs a torch encoder (GPU,
any Hugging Face layout, training), numpy_engine.NumpyReader runs a BERT folder with numpy alone.
This module imports torch only inside HeadReader, so the numpy path never loads it.

A torch batch is never a single window, though: for a batch of one, the (1, heads, T, d)
query and key views of a BERT layer fold into a batched matmul without being copied, which
takes another CPU kernel than the copied, contiguous ones of a bigger batch, and changes
scores in the 7th digit (seen for T = 8). A lone window is therefore run twice in a batch of two.
"""
from __future__ import annotations

import logging

import numpy as np

from ..text.vocab import CharVocab
from ..text.windows import collate, padded_length
from .readout import profile_order

logger = logging.getLogger(__name__)


def progress_enabled(show_progress: bool | None) -> bool:
    """Follow the log level unless told: a bar at INFO/DEBUG, none at WARNING and above."""
    if show_progress is not None:
        return bool(show_progress)
    return logging.getLogger("segmenter").getEffectiveLevel() <= logging.INFO


def batch_ids(batch: list[np.ndarray], tokens: int, vocab: CharVocab) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`[CLS] ids [SEP] [PAD]…` rows (windows.collate): ids, mask (B, tokens) int64, lengths (B,)."""
    ids, mask = collate(batch, vocab)
    assert ids.shape[1] == tokens, "windows of one batch share their padded length"
    return ids, mask, mask.sum(axis=1) - 2


class WindowReader:
    """Batches windows by padded length; subclasses give `_forward(batch, tokens)`, `vocab`,
    `heads` and `max_positions` (the longest `[CLS] … [SEP]` the model takes)."""

    vocab: CharVocab
    heads: list[tuple[int, int]]
    max_positions: int

    def _forward(self, batch: list[np.ndarray], tokens: int) -> np.ndarray:
        """batch: windows of equal padded length `tokens` -> scores (B, K, tokens - 3)."""
        raise NotImplementedError

    def read_one(self, window: np.ndarray) -> np.ndarray:
        """read([window])[0], the (K, n - 1) scores of one window: an engine may read a lone window
        (a short sentence, segmented on its own) with less around the model, same scores."""
        return self.read([window])[0]

    def read(self, windows: list[np.ndarray], batch_size: int = 64, progress=None) -> list[np.ndarray]:
        """Per-head scores for each window: a (K, n - 1) array for a window of n characters."""
        results: list[np.ndarray | None] = [None] * len(windows)
        sizes = np.fromiter(map(len, windows), dtype=np.int64, count=len(windows))
        padded = padded_length(sizes)
        order = np.lexsort((np.arange(len(windows)), -padded))  # longest first, input order within a length
        # Batches: the windows of one padded length, batch_size at a time.
        edges = np.flatnonzero(np.diff(padded[order])) + 1
        for first, last in zip([0, *edges.tolist()], [*edges.tolist(), len(order)]):
            for start in range(first, last, batch_size):
                members = order[start : min(start + batch_size, last)].tolist()
                scores = self._forward([windows[i] for i in members], int(padded[members[0]]))
                for row, i in enumerate(members):
                    results[i] = scores[row, :, : max(int(sizes[i]) - 1, 0)]
                if progress is not None:
                    progress.update(int(sizes[members].sum()))
        return results


class HeadReader(WindowReader):
    """Reads the boundary scores of selected heads out of a torch BERT-style encoder.

    model: a transformers encoder (see folders.load_encoder), whose layers above the deepest
    selected head were dropped: they would never be read. Its attention kernel does not matter:
    the AttentionReader computes the selected heads' weights itself (attention.py).
    heads: (layer, head) pairs, 0-based.
    """

    def __init__(self, model, vocab: CharVocab, heads: list[tuple[int, int]], device):
        import torch

        from .attention import AttentionReader

        self.model = model
        self.vocab = vocab
        self.heads = list(heads)
        self.device = device
        self.max_positions = model.config.max_position_embeddings
        self.attention = AttentionReader(model, self.heads)
        self._order = torch.from_numpy(profile_order(self.heads))  # the reader's layer order -> the profile's

    def _forward(self, batch: list[np.ndarray], tokens: int) -> np.ndarray:
        import torch

        from .scores import boundary_scores

        rows = len(batch)
        if rows == 1:  # a batch of one takes other kernels (module doc): run it as two
            batch = batch * 2
        ids, mask, lengths = batch_ids(batch, tokens, self.vocab)
        with torch.inference_mode():
            attentions = self.attention.run(
                input_ids=torch.from_numpy(ids).to(self.device), attention_mask=torch.from_numpy(mask).to(self.device)
            )
            # attentions: {layer: (B, K_l, T, T)}; score them, then put the K rows in profile order.
            lengths = torch.from_numpy(lengths).to(self.device)
            scores = torch.cat([boundary_scores(a.float(), lengths) for a in attentions.values()], dim=1)
            return scores[:rows, self._order].cpu().numpy()
