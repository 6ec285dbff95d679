"""How well does each head mark word boundaries? Per-head scores of junctions, and measures.

For every (layer, head) and every junction between two Han characters of a gold text, the head
gives s = log a[i, SEP] - log a[i, i+1]; gold says whether a word ends there. A head's
boundary AUC is the chance that a random gold boundary scores above a random non-boundary
(threshold-free: it says how well the head *ranks*); its boundary F1 is that of the seed's
rule "boundary when s > 0". The model reads exactly what `Segmenter` feeds it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..model.reader import HeadReader
from ..text.plan import TextPlan, score_texts, stacked_scores
from ..text.vocab import CharVocab
from ..text.windows import OVERLAP, WINDOW
from ..words.assembly import cut_ends, split_words
from .corpus import boundary_labels


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with tied scores sharing their mean rank)."""
    labels = np.asarray(labels, dtype=bool)
    positives, negatives = labels.sum(), (~labels).sum()
    if positives == 0 or negatives == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = scores[order]
    ranks = np.empty(len(scores), dtype=np.float64)
    # Average the ranks of tied runs.
    boundaries = np.flatnonzero(np.diff(sorted_scores)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [len(scores)]])
    mean_rank = (starts + ends + 1) / 2.0  # ranks are 1-based
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def boundary_f1(predicted: np.ndarray, labels: np.ndarray) -> float:
    true_positive = np.sum(predicted & labels)
    denominator = predicted.sum() + labels.sum()
    return float(2 * true_positive / denominator) if denominator else 1.0


@dataclass
class JunctionSample:
    """Per-head scores (K, n) of n gold junctions, their gold labels (n,) and the heads."""

    scores: np.ndarray
    labels: np.ndarray
    heads: list[tuple[int, int]]
    plans: list[TextPlan]


def all_heads(model: torch.nn.Module) -> list[tuple[int, int]]:
    config = model.config
    return [(layer, head) for layer in range(config.num_hidden_layers) for head in range(config.num_attention_heads)]


def junction_sample(
    model: torch.nn.Module,
    vocab: CharVocab,
    texts: list[str],
    heads: list[tuple[int, int]] | None = None,
    window: int = WINDOW,
    overlap: int = OVERLAP,
    batch_size: int = 64,
    show_progress: bool | None = False,
) -> JunctionSample:
    """Score every Han-Han junction of the texts with the given heads (default: all), the way
    Segmenter does (junctions.score_texts). Labels are all False: see gold_junctions."""
    heads = heads or all_heads(model)
    reader = HeadReader(model, vocab, heads, next(model.parameters()).device)
    plans = score_texts(reader, texts, window, overlap, batch_size, show_progress)
    scores = stacked_scores(plans, len(heads))
    return JunctionSample(scores, np.zeros(scores.shape[1], dtype=bool), heads, plans)


def gold_junctions(model, vocab: CharVocab, sentences: list[list[str]], heads=None, **options) -> JunctionSample:
    """junction_sample of gold sentences (their words joined), labelled with the gold boundaries."""
    texts, cuts = zip(*(boundary_labels(words) for words in sentences)) if sentences else ((), ())
    sample = junction_sample(model, vocab, list(texts), heads, **options)
    labels = [cut[plan.positions[plan.junctions]] for plan, cut in zip(sample.plans, cuts)]
    sample.labels = np.concatenate(labels) if labels else np.zeros(0, bool)
    return sample


def head_table(sample: JunctionSample) -> list[dict]:
    """One row per head, best AUC first: layer, head, auc, f1 (s > 0), rate (share s > 0)."""
    rows = []
    for k, (layer, head) in enumerate(sample.heads):
        s = sample.scores[k]
        predicted = s > 0
        rows.append(
            {
                "layer": layer,
                "head": head,
                "auc": auc(s, sample.labels),
                "f1": boundary_f1(predicted, sample.labels),
                "rate": float(predicted.mean()) if len(s) else float("nan"),
            }
        )
    return sorted(rows, key=lambda r: -np.nan_to_num(r["auc"], nan=-1.0))


def segment_sample(sample: JunctionSample, combined: np.ndarray, threshold: float = 0.0) -> list[list[str]]:
    """Words of every text of the sample, cutting junctions whose combined score > threshold.
    `combined` holds one score per junction of the sample, in sample order."""
    out, offset = [], 0
    for plan in sample.plans:
        n = len(plan.junctions)
        out.append(split_words(plan.text, cut_ends(plan, combined[offset : offset + n] > threshold)))
        offset += n
    return out


def word_f1(sample: JunctionSample, combined: np.ndarray, gold: list[list[str]], threshold: float = 0.0) -> float:
    from ..bench.evaluation import score

    return score(gold, segment_sample(sample, combined, threshold)).F1
