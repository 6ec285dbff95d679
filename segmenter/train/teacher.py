"""Pseudo-labels for self-training: two views of each junction, combined into confident labels.

View 1, the heads: per-head boundary scores s_k of the current model (all heads of a base
encoder, or the profile heads of a self-trained one). View 2, the corpus: branching entropies
of the n-grams around the junction (ngrams.py). The views make different mistakes, so each
can teach the other (co-training):

  unsupervised  the entropy sum labels its most confident junctions (top and bottom
                `quantile`); a logistic regression fits the heads to those labels; the two
                z-scored views are added; a 2-Gaussian mixture on the sum gives P(boundary).
  calibrated    a logistic regression on both views, fitted to the gold boundaries of a few
                dev sentences (reported as calibrated; never the test files).

Either way the teacher outputs a boundary logit per junction; self-training keeps the
junctions whose probability is far enough from 1/2 and ignores the rest.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..text.plan import TextPlan
from ..words.decoding import WordDecoding, best_words
from .calibration import LinearScore, Mixture, fit_logistic, fit_mixture
from .ngrams import BranchingEntropy


@dataclass
class JunctionTable:
    """The junctions of a set of texts, flattened in text order."""

    plans: list[TextPlan]
    heads: np.ndarray  # (J, K) head scores
    ngrams: np.ndarray  # (J, F) n-gram features

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum([len(p.junctions) for p in self.plans])])

    def features(self) -> np.ndarray:
        return np.concatenate([self.heads, self.ngrams], axis=1)


@dataclass
class Teacher:
    """A fitted combination of the two views; `logits(table)` works on any table."""

    kind: str  # "unsupervised" or "calibrated on FILE (N sentences)"
    head_score: LinearScore | None = None  # unsupervised: heads -> pseudo-label logit
    head_moments: tuple[float, float] = (0.0, 1.0)
    entropy_moments: tuple[float, float] = (0.0, 1.0)
    mixture: Mixture | None = None
    joint_score: LinearScore | None = None  # calibrated: both views -> gold logit

    def logits(self, table: JunctionTable) -> np.ndarray:
        if self.joint_score is not None:
            return self.joint_score(table.features())
        if self.head_score is None:  # one head trained as a boundary logit: read it as it is
            return table.heads[:, 0].astype(np.float64)
        combined = self._combined(table)
        p = self.mixture.posterior(combined).clip(1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))

    def _combined(self, table: JunctionTable) -> np.ndarray:
        h = self.head_score(table.heads)
        e = BranchingEntropy.entropy_sum(table.ngrams)
        return ((h - self.head_moments[0]) / self.head_moments[1]
                + (e - self.entropy_moments[0]) / self.entropy_moments[1])


def fit_unsupervised(table: JunctionTable, quantile: float = 0.3) -> Teacher:
    """Co-training: the entropy view's confident junctions teach the heads; then both vote."""
    if not 0 < quantile < 0.5:
        raise ValueError(f"quantile must be in (0, 0.5), got {quantile}")
    entropy = BranchingEntropy.entropy_sum(table.ngrams)
    low, high = np.quantile(entropy, [quantile, 1 - quantile])
    confident = (entropy <= low) | (entropy >= high)
    head_score = fit_logistic(table.heads[confident], (entropy[confident] >= high).astype(float))
    h = head_score(table.heads)
    teacher = Teacher(
        kind="unsupervised",
        head_score=head_score,
        head_moments=(float(h.mean()), float(h.std() + 1e-6)),
        entropy_moments=(float(entropy.mean()), float(entropy.std() + 1e-6)),
    )
    teacher.mixture = fit_mixture(teacher._combined(table))
    return teacher


def fit_calibrated(table: JunctionTable, labels: np.ndarray, source: str, l2: float = 1e-2) -> Teacher:
    """Logistic regression on both views against gold boundaries of a few dev sentences."""
    return Teacher(kind=f"calibrated on {source}",
                   joint_score=fit_logistic(table.features(), labels.astype(float), l2=l2))


def confident_targets(table: JunctionTable, logits: np.ndarray, confidence: float) -> list[np.ndarray]:
    """Per text: float targets over its model sequence's n-1 junctions, NaN where ignored.

    A junction is kept when the teacher's probability is at least `confidence` for one side:
    1.0 (boundary) or 0.0 (inside a word). Junctions that touch a non-Han run are left to rules.
    """
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    margin = np.log(confidence / (1 - confidence))
    out = []
    for plan, lo, hi in zip(table.plans, table.offsets[:-1], table.offsets[1:]):
        targets = np.full(max(len(plan.positions) - 1, 0), np.nan, dtype=np.float32)
        z = logits[lo:hi]
        keep = np.abs(z) >= margin
        targets[plan.junctions[keep]] = (z[keep] > 0).astype(np.float32)
        out.append(targets)
    return out


def decode_words(plan: TextPlan, logits: np.ndarray, entropy: BranchingEntropy, alpha: float = 1.0, max_word: int = 8,
                 unseen: float = -2.0) -> np.ndarray:
    """Word-level decoding: the segmentation of each Han run that maximizes

        sum over words w of  alpha * A(w) * len(w)      (A: n-gram autonomy, ngrams.py)
      + sum over junctions of  +z/2 if cut, -z/2 if not   (z: the teacher's boundary logit)

    by dynamic programming over word ends (decoding.best_words; the same best segmentation as
    scoring each cut junction z and each uncut one 0). Junction-by-junction thresholds let a
    word's two ends disagree about it; here the corpus's sense of which strings are words
    (autonomy, for words up to entropy.max_n characters; longer ones get none) arbitrates.
    Returns the cut decision of every junction of the plan (bool, in plan.junctions order).
    """
    words = WordDecoding(alpha=alpha, unseen=unseen, max_len=max_word)  # its word_values: alpha, unseen
    cut = np.zeros(len(plan.junctions), dtype=bool)
    text_of_junction = plan.positions[plan.junctions]
    runs = []  # (run, its junctions, their logits), decoded together below
    for run in plan.runs:
        n = run.end - run.start
        if run.kind != "han" or n < 2:
            continue
        members = np.flatnonzero((text_of_junction >= run.start) & (text_of_junction < run.end - 1))
        z = logits[members].astype(np.float64)  # junction after run character k, k = 0 .. n-2
        if len(z) != n - 1:  # marks attached inside the run: leave it to the logits
            cut[members] = z > 0
            continue
        runs.append((run, members, z))
    if not runs:
        return cut
    sizes = np.array([run.end - run.start for run, _, _ in runs])
    gains, autonomy = np.zeros((len(runs), sizes.max())), np.zeros((len(runs), sizes.max(), max_word))
    known = min(max_word, entropy.max_n)  # longer words: autonomy 0, not NaN (which is `unseen`)
    for r, (run, _, z) in enumerate(runs):
        gains[r, : len(z)] = z
        autonomy[r, : len(z) + 1, :known] = entropy.autonomy(plan.text[run.start : run.end])[:, :known]
    room = np.maximum(sizes[:, None] - np.arange(sizes.max())[None, :], 0)  # characters left in the run
    ends = best_words(gains, words.word_values(autonomy, room), sizes)
    for r, (_, members, _) in enumerate(runs):
        cut[members] = ends[r, : len(members)]
    return cut
