"""The boundary rule on hand-made attention matrices."""
import math

import numpy as np
import torch

from segmenter.model.profile import HeadProfile
from segmenter.model.scores import ATTENTION_FLOOR, boundary_scores


def attention_for(cuts: list[bool], n: int, tokens: int | None = None) -> torch.Tensor:
    """A (1, 1, T, T) head that looks at [SEP] after word ends and at the next char inside words."""
    tokens = tokens or n + 2
    a = torch.full((tokens, tokens), 0.01)
    sep = n + 1
    for j, cut in enumerate(cuts):  # character j is token j + 1
        row = j + 1
        a[row, sep if cut else row + 1] = 0.9
    a = a / a.sum(-1, keepdim=True)
    return a.view(1, 1, tokens, tokens)


def test_sign_follows_seed_rule():
    cuts = [False, True, False, False, True]  # 我爱|北京天|…  (the last char is not scored)
    s = boundary_scores(attention_for(cuts, 6), torch.tensor([6]))
    assert s.shape == (1, 1, 5)
    assert ((s[0, 0] > 0).tolist()) == cuts


def test_exact_value():
    a = torch.zeros(1, 1, 5, 5)
    a[0, 0, 1, 4] = 0.6  # char 0 -> [SEP] (n = 3, SEP at 4)
    a[0, 0, 1, 2] = 0.2  # char 0 -> char 1
    s = boundary_scores(a, torch.tensor([3]))
    assert math.isclose(float(s[0, 0, 0]), math.log(0.6) - math.log(0.2), rel_tol=1e-6)


def test_padding_rows_use_their_own_sep():
    long = attention_for([True, False, True], 4, tokens=7)
    short = attention_for([False], 2, tokens=7)
    s = boundary_scores(torch.cat([long, short]), torch.tensor([4, 2]))
    assert (s[0, 0, :3] > 0).tolist() == [True, False, True]
    assert bool(s[1, 0, 0] < 0)


def test_zero_weights_are_finite():
    a = torch.zeros(1, 1, 4, 4)
    s = boundary_scores(a, torch.tensor([2]))
    assert torch.isfinite(s).all() and float(s[0, 0, 0]) == 0.0
    a[0, 0, 1, 2] = 0.5  # weight on the next character only: [SEP] gets the floor, not log(0)
    s = boundary_scores(a, torch.tensor([2]))
    assert math.isclose(float(s[0, 0, 0]), math.log(ATTENTION_FLOOR) - math.log(0.5), rel_tol=1e-5)


def test_too_short_sequences_have_no_junctions():
    assert boundary_scores(torch.ones(2, 3, 2, 2), torch.tensor([0, 0])).shape == (2, 3, 0)


def test_profile_combination_and_granularity():
    profile = HeadProfile(heads=[(0, 1), (1, 0)], weights=[0.5, 0.5], bias=0.1, thresholds=(-1, 0, 2))
    scores = np.array([[1.0, -1.0], [3.0, -3.0]])
    assert np.allclose(profile.combine(scores), [2.1, -1.9])
    assert profile.threshold("fine") == -1 and profile.threshold("coarse") == 2
    assert profile.threshold(0.25) == -0.5 and profile.threshold(0.75) == 1.0
