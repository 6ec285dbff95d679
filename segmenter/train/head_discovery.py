"""Head discovery: which heads mark word boundaries, and how to combine them into a profile.

Three ways to make a head profile (segmenter_heads.json) for any BERT-style model:

  unsupervised, with raw text   co-training against the corpus: n-gram branching entropies
                                (ngrams.py) of the raw text label their most confident
                                junctions; a logistic regression on all heads' scores learns
                                those labels; the heads with the largest standardized
                                weights are kept and refitted. No gold at all.
  unsupervised, no n-grams     the seed rule (raw lines, no n-grams, no gold): the head whose rows most often put their
                                largest weight on the next character or on [SEP] (the
                                boundary signature), read with threshold 0.
  calibrated                    the same regression fitted to the gold boundaries of a few
                                dev sentences in the user's target standard.

The profile is a weighted sum of head scores plus a bias; thresholds at granularity
0 / 0.5 / 1 are where the combined score's boundary probability is 0.2 / 0.5 / 0.8.
"""
from __future__ import annotations

import numpy as np
import torch

from ..model.attention import AttentionReader
from ..model.profile import HeadProfile
from ..text.windows import collate
from .calibration import fit_logistic, fit_mixture
from .head_measures import (
    JunctionSample,
    all_heads,
    gold_junctions,
    junction_sample,
    segment_sample,
)
from .ngrams import BranchingEntropy

# Boundary probability at granularity 0 (fine), 0.5 (default) and 1 (coarse).
GRANULARITY_PROBABILITIES = (0.2, 0.5, 0.8)


def signature_share(model, vocab, texts: list[str], heads: list[tuple[int, int]], batch_size: int = 32) -> np.ndarray:
    """For each head, the share of character rows whose largest weight goes to the next
    character or to [SEP]: the boundary signature of the seed observation. (K,)"""
    device = next(model.parameters()).device
    reader = AttentionReader(model, heads)
    hits, rows = np.zeros(len(heads)), 0
    longest = model.config.max_position_embeddings - 2
    sequences = [vocab.encode("".join(ch for ch in t if not ch.isspace())[:longest]) for t in texts]
    sequences = [s for s in sequences if len(s) >= 2]
    with torch.inference_mode():
        for start in range(0, len(sequences), batch_size):
            batch = sequences[start : start + batch_size]
            ids, mask = collate(batch, vocab, pad_multiple=1)
            attentions = reader.run(input_ids=torch.from_numpy(ids).to(device),
                                    attention_mask=torch.from_numpy(mask).to(device))
            for k, (layer, head) in enumerate(heads):
                top = attentions[layer][:, reader.heads_by_layer[layer].index(head)].argmax(-1).cpu()  # (B, T)
                for r, s in enumerate(batch):
                    n = len(s)
                    rows_top = top[r, 1:n]  # characters 0..n-2 (tokens 1..n-1)
                    nxt = torch.arange(2, n + 1)
                    hits[k] += int(((rows_top == nxt) | (rows_top == n + 1)).sum())
            rows += sum(len(s) - 1 for s in batch)
    return hits / max(rows, 1)


def profile_from_logistic(heads, features: np.ndarray, labels: np.ndarray, source: str, max_heads: int,
                          l2: float = 1e-2, extra=None) -> HeadProfile:
    """Fit, keep the `max_heads` heads with the largest standardized weights, refit, and
    write the result as a profile on raw head scores (weights, bias, thresholds)."""
    first = fit_logistic(features, labels, l2=l2)
    keep = np.argsort(-np.abs(first.weights))[:max_heads]
    keep.sort()
    final = fit_logistic(features[:, keep], labels, l2=l2)
    weights, bias = final.raw_weights()
    logits = [float(np.log(p / (1 - p))) for p in GRANULARITY_PROBABILITIES]
    return HeadProfile(
        heads=[heads[i] for i in keep], weights=weights.tolist(), bias=bias, thresholds=tuple(logits), source=source,
        extra=extra or {}
    )


def discover_unsupervised(model, vocab, raw_texts: list[str], max_heads: int = 12, quantile: float = 0.3,
                          max_n: int = 4) -> HeadProfile:
    """Co-training against n-gram entropies of `raw_texts` (see the module docstring)."""
    heads = all_heads(model)
    sample = junction_sample(model, vocab, raw_texts, heads, batch_size=32)
    entropy = BranchingEntropy.from_texts(raw_texts, max_n=max_n)
    ngram = np.concatenate([entropy.junction_features(p.text, p.positions[p.junctions]) for p in sample.plans])
    evidence = BranchingEntropy.entropy_sum(ngram)
    low, high = np.quantile(evidence, [quantile, 1 - quantile])
    confident = (evidence <= low) | (evidence >= high)
    profile = profile_from_logistic(
        heads, sample.scores.T[confident], (evidence[confident] >= high).astype(float),
        source=f"unsupervised: co-trained on n-gram entropies of {len(raw_texts)} raw lines", max_heads=max_heads,
    )
    # The regression learned pseudo-labels, whose balance is not the text's: place the cuts
    # where the combined score splits into its two modes instead.
    combined = profile.combine(sample.scores[[heads.index(h) for h in profile.heads]])
    mixture = fit_mixture(combined)
    grid = np.linspace(np.percentile(combined, 1), np.percentile(combined, 99), 4001)
    posterior = mixture.posterior(grid)
    profile.thresholds = tuple(float(grid[np.argmin(np.abs(posterior - p))]) for p in GRANULARITY_PROBABILITIES)
    profile.thresholds = tuple(sorted(profile.thresholds))
    return profile


def discover_signature(model, vocab, raw_texts: list[str]) -> HeadProfile:
    """No n-grams, no gold: the single head with the strongest boundary signature, threshold 0."""
    heads = all_heads(model)
    share = signature_share(model, vocab, raw_texts, heads)
    best = int(np.argmax(share))
    return HeadProfile(heads=[heads[best]], weights=[1.0], thresholds=(-1.0, 0.0, 1.0),
                       source=f"unsupervised: strongest boundary signature ({share[best]:.2f}) "
                              f"on {len(raw_texts)} lines")


def calibrate(model, vocab, sentences: list[list[str]], source: str, max_heads: int = 12) -> HeadProfile:
    """Logistic regression on the gold boundaries of a few (dev!) sentences."""
    heads = all_heads(model)
    sample = gold_junctions(model, vocab, sentences, heads=heads)
    if sample.labels.all() or not sample.labels.any():
        raise ValueError("calibration needs sentences with both word boundaries and multi-character words")
    return profile_from_logistic(heads, sample.scores.T, sample.labels.astype(float), source=source,
                                 max_heads=max_heads)


def oracle(sample: JunctionSample, heads_in_profile: list[tuple[int, int]], gold: list[list[str]]) -> dict:
    """The seed's "one head right is enough" figures, for the profile's heads read with s > 0:
    per junction, the share where at least one head decides as gold does; per word, the share
    of gold words that at least one head's own segmentation contains. An upper bound no single
    output reaches: it chooses a head *after* seeing the gold."""
    index = [sample.heads.index(h) for h in heads_in_profile]
    decisions = sample.scores[index] > 0  # (K, J)
    any_right = (decisions == sample.labels[None]).any(axis=0)
    found = [set() for _ in gold]
    for k in index:
        for i, words in enumerate(segment_sample(sample, sample.scores[k], 0.0)):
            found[i] |= _spans(words)
    hits = sum(len(_spans(words) & f) for words, f in zip(gold, found))
    total = sum(len(words) for words in gold)
    return {"junction_accuracy": float(any_right.mean()) if len(any_right) else float("nan"),
            "word_recall": hits / max(total, 1)}


def _spans(words: list[str]) -> set[tuple[int, int]]:
    ends = np.cumsum([len(w) for w in words])
    return set(zip((ends - [len(w) for w in words]).tolist(), ends.tolist()))


def calibrated_choice(folder, sentences: list[list[str]], source: str, max_heads: int = 12,
                      **segmenter_options) -> tuple[HeadProfile, str, dict]:
    """The calibrated setting, never below the default on the sentences that calibrate.

    Candidates: the folder's own profile with each named standard (levels.STANDARDS: its
    threshold and its conventions; the chosen one is written into the profile's runtime entry),
    and a profile fitted on the gold boundaries of `sentences` (calibrate(); it keeps the
    folder's runtime entry, so word decoding still runs). The one with the best word F1 on
    `sentences` wins; a tie keeps the folder's default standard, listed first. Returns (profile,
    granularity name, {candidate: F1}).
    """
    from dataclasses import replace

    from ..api import Segmenter
    from ..bench.evaluation import score
    from ..model.folders import load_encoder, read_profile, resolve_model_folder
    from ..standards.levels import DEFAULT_STANDARD, STANDARDS

    folder = resolve_model_folder(folder)
    own = read_profile(folder)
    texts = ["".join(words) for words in sentences]
    own_standard = own.runtime.get("standard", DEFAULT_STANDARD) if own else DEFAULT_STANDARD
    names = [own_standard] * isinstance(own_standard, str) + [name for name in STANDARDS if name != own_standard]
    candidates: list[tuple[str, HeadProfile, str]] = [
        (name, replace(own, runtime={**own.runtime, "standard": name}), "default") for name in names] if own else []
    model, vocab, _ = load_encoder(folder)
    try:
        fitted = calibrate(model, vocab, sentences, source, max_heads)
        candidates.append(("fitted heads", replace(fitted, runtime=dict(own.runtime) if own else {}), "default"))
    except ValueError:  # one-word sentences only: no boundaries to fit, the named levels remain
        pass
    del model
    results, best = {}, None
    for label, profile, granularity in candidates:
        segmenter = Segmenter(folder, profile=profile, granularity=granularity, **segmenter_options)
        results[label] = score(sentences, segmenter.segment_batch(texts, show_progress=False)).F1
        if best is None or results[label] > results[best[0]]:  # strictly better: ties keep the earlier (default first)
            best = (label, profile, granularity)
    if best is None:
        raise ValueError(f"{folder} has no head profile and the sentences could not calibrate one")
    label, profile, granularity = best
    return replace(profile, source=f"{source}: {label}"), granularity, results
