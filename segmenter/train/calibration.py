"""Small statistical tools to weigh boundary evidence: logistic regression and a 2-Gaussian cut.

Both run on junction features (one row per junction): head scores s_k, n-gram entropies, …
`fit_logistic` learns weights from labels — gold labels of a few dev sentences (calibrated
setting) or confident pseudo-labels (unsupervised setting). `fit_mixture` finds where a
one-dimensional score splits into its "boundary" and "inside a word" modes with no labels at
all (Mixture.posterior, Mixture.threshold).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class LinearScore:
    """score(x) = bias + weights . (x - mean) / std, a logit when fitted by fit_logistic."""

    weights: np.ndarray
    bias: float
    mean: np.ndarray
    std: np.ndarray

    def __call__(self, features: np.ndarray) -> np.ndarray:
        return self.bias + ((features - self.mean) / self.std) @ self.weights

    def raw_weights(self) -> tuple[np.ndarray, float]:
        """The same score written on unstandardized features: (w, b) with score = b + w . x."""
        w = self.weights / self.std
        return w, float(self.bias - (self.mean * w).sum())


def fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float = 1e-2) -> LinearScore:
    """L2-regularized logistic regression on standardized features (L-BFGS, float64)."""
    if len(features) == 0:
        raise ValueError("cannot fit on zero junctions")
    x = torch.as_tensor(np.asarray(features, dtype=np.float64))
    y = torch.as_tensor(np.asarray(labels, dtype=np.float64))
    mean, std = x.mean(0), x.std(0).clamp_min(1e-6) if len(x) > 1 else torch.ones(x.shape[1], dtype=x.dtype)
    x = (x - mean) / std
    w = torch.zeros(x.shape[1], dtype=x.dtype, requires_grad=True)
    b = torch.zeros(1, dtype=x.dtype, requires_grad=True)
    optimizer = torch.optim.LBFGS([w, b], max_iter=500, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w + b, y)
        loss = loss + l2 * (w**2).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    return LinearScore(w.detach().numpy(), float(b.detach()), mean.numpy(), std.numpy())


@dataclass
class Mixture:
    """Two 1-D Gaussians fitted to unlabeled scores; the higher-mean one is "boundary"."""

    means: np.ndarray
    stds: np.ndarray
    priors: np.ndarray

    def _log_densities(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return np.stack(
            [np.log(self.priors[k]) - np.log(self.stds[k]) - 0.5 * ((x - self.means[k]) / self.stds[k]) ** 2
             for k in range(2)]
        )

    def posterior(self, x: np.ndarray) -> np.ndarray:
        """P(boundary | score) for each score."""
        ll = self._log_densities(x)
        high = int(np.argmax(self.means))
        return 1.0 / (1.0 + np.exp(np.clip(ll[1 - high] - ll[high], -50, 50)))

    @property
    def threshold(self) -> float:
        """Where the posteriors are equal, between the two means."""
        grid = np.linspace(self.means.min(), self.means.max(), 2001)
        return float(grid[np.argmin(np.abs(self.posterior(grid) - 0.5))])


def fit_mixture(scores: np.ndarray, iterations: int = 200) -> Mixture:
    """EM for two Gaussians on 1-D scores: a cut with no labels at all."""
    x = np.asarray(scores, dtype=np.float64)
    if len(x) < 2 or x.std() == 0:
        center = float(x.mean()) if len(x) else 0.0
        return Mixture(np.array([center - 1, center + 1]), np.ones(2), np.full(2, 0.5))
    mixture = Mixture(np.percentile(x, [25, 75]), np.full(2, x.std() / 2), np.array([0.5, 0.5]))
    for _ in range(iterations):
        ll = mixture._log_densities(x)
        r = np.exp(ll - ll.max(0))
        r /= r.sum(0)
        mixture.priors = r.mean(1).clip(1e-6)
        mixture.means = (r * x).sum(1) / r.sum(1)
        mixture.stds = np.sqrt((r * (x - mixture.means[:, None]) ** 2).sum(1) / r.sum(1)) + 1e-6
    return mixture
