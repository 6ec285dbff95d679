"""The word decoder's weights (`WordDecoding`): how much each term of decoding.py's sum counts,
and the thresholds of the joins after it (joins.py). Both modules read them from here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arguments import is_finite_number


@dataclass(frozen=True)
class WordDecoding:
    """Weights of the word decoder. Chosen on dev files only; how, value by value: "How the
    decoder's weights were chosen" in segmenter/model/shipped/default/MODEL_CARD.md."""

    alpha: float = 0.2  # weight of word autonomy per character: small, it fixes the heads' 1-2 character mistakes
    beta: float = 1.0  # weight of the heads' junction scores
    clip: float = 8.0  # junction scores are clipped to [-clip, clip]: a very sure head is sure enough
    unseen: float = -1.0  # autonomy given to strings of 2+ characters the table lacks
    # Longest word considered (characters): a longer string the raw text repeats is nearly always
    # a phrase (国内生产总值); numbers and dates that long come from the conventions.
    max_len: int = 5
    # Added to a word of 3+ characters whose autonomy is at least `bonus_from`: 0, the unigram
    # term keeps 联合国-like units whole instead.
    bonus: float = 0.0
    bonus_from: float = 3.0
    gamma: float = 0.2  # weight of the unigram model's log p(w) per word (a table without one: no term)
    # Cohesive pairs (join_cohesive): two decoded words join into one of 3 / 4 characters when
    # the raw text rarely has the two-character part(s) without the rest. None: never.
    join3: float | None = 0.7  # 2+1 or 1+2: count(word) / count(its two-character part)
    # 2+1 also joins where the unigram model's log p(word) - log p(2) - log p(1) >= join3_logp
    # (世界|杯: MSR writes such words whole, PKU splits many). None: never, the default; the
    # standards set it (standards/rules.toml).
    join3_logp: float | None = None
    join4: float | None = 0.5  # 2+2: the larger of count(word) / count(half)
    join_min_count: int = 10  # the joined word must have been seen this often
    # Two decoded words of 2+ characters each, 5+ together (中华人民|共和国, longer than max_len):
    # they join when the string of up to three characters either side of their junction is a share
    # >= join_long of the occurrences of each side (join_long_words). None: never.
    join_long: float | None = None  # the standards set it (standards/rules.toml)
    # 1+1 (其|中, 为|了, 以|上): count(word) / the larger count of its two characters, and only
    # where the heads' score of the junction (threshold subtracted) is below join2_below: 他|说
    # is as cohesive, and the head is sure of that cut.
    join2: float | None = 0.015
    join2_below: float = 3.0
    # ... and also 1+1 where the unigram model has the pair e**join2_logp times likelier as one word
    # than as its two characters and the heads' score is below join2_logp_below (对|方 之|一: the
    # heads cut after a character that is mostly a word of its own). Conventions split the
    # function-word pairs this joins again (就是 -> 就|是, word_rules.split_function_words). None: never.
    join2_logp: float | None = 5.0
    join2_logp_below: float = 5.0
    # Four-character units the decoder left in pieces with a single character among them
    # (翻|山|越|岭, 自|力|更生, 鄂尔多|斯; join_units): they join when the four characters are a
    # share >= join_units of the occurrences of their most frequent inner two characters and
    # their autonomy is at least units_from. None: never.
    join_units: float | None = 0.3
    units_from: float = 2.0
    # ... seen this often (below join_min_count: the table's rare rows, 塞翁失马 seen 6 times). An
    # inner pair the table lacks counts as seen min_count - 1 times, the most it can have been:
    # 塞翁, 翁失 and 失马 occur only inside 塞翁失马, so the four are most of their occurrences.
    units_min_count: int = 5
    # ... and also where the unigram model has the four characters e**units_logp times likelier
    # as one word than as the decoder's pieces, their autonomy is at least units_logp_from, and
    # none of the four is a single-character word as common as e**units_common (的 在 和 是 了 年
    # 月 与 中: those make phrases, 的|基础|上, not idioms: 迄今|为|止, 鲜|为|人|知). None: never.
    units_logp: float | None = 12.0
    units_logp_from: float = 3.0
    units_common: float = -6.0

    def __post_init__(self):
        for name in ("max_len", "units_min_count"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an int >= 1, got {getattr(self, name)!r}")
        for name in ("alpha", "beta", "clip", "unseen", "bonus", "bonus_from", "join2_below", "join2_logp_below",
                     "units_from", "gamma", "units_logp_from", "units_common"):
            if not is_finite_number(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        for name in ("join2_logp", "join3_logp", "units_logp"):
            if getattr(self, name) is not None and not is_finite_number(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number or None (never join), got {getattr(self, name)!r}")
        for name in ("join2", "join3", "join4", "join_units", "join_long"):
            value = getattr(self, name)
            if value is not None and not (is_finite_number(value) and value > 0):
                raise ValueError(f"{name} must be a positive number or None (never join), got {value!r}")

    @property
    def joins_units(self) -> bool:
        """Whether the decoder runs join_units (by share, by the unigram model, or both)."""
        return self.join_units is not None or self.units_logp is not None

    @property
    def joins_cohesive(self) -> bool:
        """Whether the decoder runs join_cohesive's passes (1+1, 2+1, 1+2 or 2+2 pairs)."""
        return any(getattr(self, name) is not None for name in ("join2", "join2_logp", "join3", "join4"))

    def word_values(self, autonomy: np.ndarray, room: np.ndarray, logp: np.ndarray | None = None) -> np.ndarray:
        """(..., L) autonomy of the words starting at a character (NaN = unknown), (...)
        characters left in its run from there, and (..., L) their unigram log p (None: no
        model) -> (..., L) value of each candidate word."""
        max_len = autonomy.shape[-1]
        values = np.where(np.isnan(autonomy), self.unseen, autonomy)  # the known autonomy
        values[..., 0] = np.nan_to_num(autonomy[..., 0], nan=0.0)  # unknown single characters: neutral
        lengths = np.arange(1, max_len + 1, dtype=np.float64)
        # alpha * known * lengths, in place where the autonomy is float64 (a large decoder group's
        # (R, N, L) arrays would be fresh pages each); float32 autonomy widens at * lengths.
        np.multiply(self.alpha, values, out=values)
        values = np.multiply(values, lengths, out=values if values.dtype == lengths.dtype else None)
        if self.bonus:  # NaN >= x is False: unknown strings get no bonus
            values += np.where((lengths >= 3) & (autonomy >= self.bonus_from), self.bonus, 0.0)
        if logp is not None and self.gamma:
            values += self.gamma * logp
        values[lengths > room[..., None]] = -np.inf  # a word may not run past the end of its run
        return values
