"""Head profile: which heads to read, how to weigh them, and where to cut.

A profile is a small JSON file that lives beside the weights (`segmenter_heads.json`). It
turns the per-head boundary scores s_k of a junction into one combined score
    c = bias + sum_k weight_k * s_k
and cuts where c > threshold(granularity). Granularity runs from 0 (finest: cut almost
everywhere the heads hint at a boundary) to 1 (coarsest: cut only where they insist); the
profile stores the thresholds at 0, 0.5 and 1 and interpolates linearly between them.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

PROFILE_FILE = "segmenter_heads.json"
GRANULARITY_NAMES = {"fine": 0.0, "default": 0.5, "coarse": 1.0}


def granularity_value(granularity: str | float | int | None) -> float:
    """'fine' | 'default' | 'coarse' | a number in [0, 1] -> the number (None -> default)."""
    if granularity is None:
        return GRANULARITY_NAMES["default"]
    if isinstance(granularity, str):
        if granularity not in GRANULARITY_NAMES:
            raise ValueError(
                f"granularity must be one of {sorted(GRANULARITY_NAMES)} or a number in [0, 1], got {granularity!r}"
            )
        return GRANULARITY_NAMES[granularity]
    if isinstance(granularity, (bool, np.bool_)) or not isinstance(granularity, (int, float, np.integer, np.floating)):
        raise TypeError(f"granularity must be a str or a number in [0, 1], got {type(granularity).__name__}")
    if not 0.0 <= float(granularity) <= 1.0:
        raise ValueError(f"granularity must be in [0, 1], got {granularity}")
    return float(granularity)


def interpolate(x: float, at: tuple[float, float, float]) -> float:
    """np.interp(x, [0, 0.5, 1], at) for x in [0, 1], in Python floats: it runs at every
    segment() call, where np.interp's conversions of its lists cost more than the arithmetic.
    The same operations as numpy's (at a point: its value; between two: slope * (x - left) +
    the left one's value, and where that is NaN, from the right one, then the value where both
    are equal), so the same float (tests/test_standards.py)."""
    if x >= 1.0:  # at the last point (or right of it): its value
        return at[2]
    j = 0 if x < 0.5 else 1
    left, right = j * 0.5, j * 0.5 + 0.5
    if x == left:  # at a point: its value
        return at[j]
    slope = (at[j + 1] - at[j]) / (right - left)
    value = slope * (x - left) + at[j]
    if math.isnan(value):
        value = slope * (x - right) + at[j + 1]
        if math.isnan(value) and at[j] == at[j + 1]:
            value = at[j]
    return value


@dataclass
class HeadProfile:
    """heads: (layer, head) pairs, 0-based (layer 0 is the first encoder layer)."""

    heads: list[tuple[int, int]]
    weights: list[float]
    bias: float = 0.0
    # Thresholds on the combined score at granularity 0 (fine), 0.5 (default), 1 (coarse).
    thresholds: tuple[float, float, float] = (-1.0, 0.0, 1.0)
    # How this profile was made: "unsupervised", "calibrated on pku_dev.txt (100 sentences)", …
    source: str = "manual"
    # Optional extras that later stages read (e.g. per-head granularity, discovery statistics).
    extra: dict = field(default_factory=dict)
    # The window/overlap this model reads best with, e.g. {"window": 126, "overlap": 32} for a
    # model trained on short windows; Segmenter's own window/overlap arguments win.
    runtime: dict = field(default_factory=dict)

    def __post_init__(self):
        self.heads = [(int(layer), int(head)) for layer, head in self.heads]
        self.weights = [float(w) for w in self.weights]
        self.thresholds = tuple(float(t) for t in self.thresholds)
        if not self.heads:
            raise ValueError("a head profile needs at least one (layer, head)")
        if len(self.weights) != len(self.heads):
            raise ValueError(f"profile has {len(self.heads)} heads but {len(self.weights)} weights")
        if len(self.thresholds) != 3 or not self.thresholds[0] <= self.thresholds[1] <= self.thresholds[2]:
            raise ValueError("profile thresholds must be 3 ascending numbers (fine, default, coarse), "
                             f"got {self.thresholds}")
        if any((layer < 0 or head < 0) for layer, head in self.heads):
            raise ValueError(f"profile heads must be non-negative (layer, head) pairs, got {self.heads}")

    @property
    def deepest_layer(self) -> int:
        return max(layer for layer, _ in self.heads)

    def threshold(self, granularity: str | float | None = None) -> float:
        """The threshold at `granularity`, linear between the stored three (np.interp's value)."""
        return interpolate(granularity_value(granularity), self.thresholds)

    def combine(self, head_scores: np.ndarray) -> np.ndarray:
        """(K, n) per-head scores -> (n,) combined scores."""
        if len(self.weights) == 1:  # one head: its product, as the matmul's one term (a short call's 2%)
            return self.bias + np.float32(self.weights[0]) * head_scores[0]
        return self.bias + np.asarray(self.weights, dtype=np.float32) @ head_scores

    def check_model(self, num_layers: int, num_heads: int, where: str = "the model") -> None:
        bad = [(l, h) for l, h in self.heads if l >= num_layers or h >= num_heads]
        if bad:
            raise ValueError(
                f"head profile names heads {bad} but {where} has {num_layers} layers x {num_heads} heads "
                "(layers and heads are 0-based); re-create it with `segmenter heads`"
            )

    def to_json(self) -> str:
        data = asdict(self)
        data["heads"] = [list(h) for h in self.heads]
        data["thresholds"] = list(self.thresholds)
        if not self.runtime:
            del data["runtime"]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def save(self, folder: str | Path) -> Path:
        path = Path(folder) / PROFILE_FILE
        path.write_text(self.to_json(), encoding="utf-8")
        return path

    @classmethod
    def load(cls, folder: str | Path) -> "HeadProfile":
        path = Path(folder) / PROFILE_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(**data)
        except (json.JSONDecodeError, TypeError, ValueError) as err:
            raise ValueError(f"head profile {path} is invalid: {err}") from err
