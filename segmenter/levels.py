"""Standards and granularity: everything that decides how words are cut, in one place.

Two knobs:
  - a **standard** (`Standard`, by name: "general", "pku", "msr", "ud") says how words are
    written: the conventions (conventions.py), the word decoder's joins (decoding.py), and the
    threshold on the heads' combined score, as a level of the model's profile (profile.py: the
    thresholds it was calibrated with at fine 0, default 0.5 and coarse 1, interpolated);
  - a **granularity** ("fine" 0, "default" 0.5, "coarse" 1, or a number in [0, 1]) moves that
    threshold within the standard, by up to GRANULARITY_SPAN / 2 either way: finer or coarser
    words written the standard's way. 0.5 is the standard's own.

`Level.at(granularity, profile, decoding, standard)` builds the policy of one reading; word
assembly (assembly.py) reads nothing else. "pku", "msr" and "ud" imitate the gold standards
of the SIGHAN and UD files (README "Granularity and standards"); "general", the default, was
chosen on the mean of six dev files of news, Weibo, a novel and dermatology
(benchmarks/standards_dev.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .decoding import WordDecoding
from .profile import GRANULARITY_NAMES, HeadProfile, granularity_value

DEFAULT_GRANULARITY = GRANULARITY_NAMES["default"]

# A 2+1 pair of decoded words also joins where the unigram model has the word e**7 times
# likelier than its two words (世界|杯 -> 世界杯, as MSR writes it; chosen on msr_dev).
JOIN3_LOGP = 7.0
COUNT_STANDARDS = ("fine", "default", "coarse")
# Granularity 0 to 1 moves the standard's threshold from -2 to +2: with the shipped model, about
# 4% more (0) or fewer (1) words than at 0.5 on 300 sentences of each of the six dev files.
GRANULARITY_SPAN = 4.0


@dataclass(frozen=True)
class Rules:
    """Which conventions (conventions.py) and decoder joins (decoding.py) a standard applies;
    the character lists themselves are Conventions'."""

    # numeral + classifier (_count_apart): "fine" (UD: 两 个), "default" (PKU: 一个, 两 个),
    # "coarse" (MSR: 两个)
    counts: str
    split_surnames: bool  # 江|泽民 (PKU, UD) rather than 江泽民 (MSR)
    join_suffixes: bool  # 经营|者 -> 经营者 (PKU, MSR; UD keeps them apart)
    coarse_suffixes: bool  # 上海|市 -> 上海市, 中国|队 -> 中国队 (MSR)
    join_dates: bool  # １９９７年|２月 -> １９９７年２月 (MSR)
    split_marks: bool  # —— -> — — (MSR)
    pair_joins: bool  # the decoder joins cohesive 2+1, 1+2 and 2+2 pairs (PKU, MSR; UD: only 1+1)
    join3_logp: float | None  # ... and 2+1 by the unigram model (MSR); None: not

    def __post_init__(self):
        if self.counts not in COUNT_STANDARDS:
            raise ValueError(f"Rules.counts must be one of {COUNT_STANDARDS}, got {self.counts!r}")

    @classmethod
    def at(cls, granularity: str | float | None) -> "Rules":
        """The rules of the standard a granularity imitates when none is named: finer than the
        default UD's, the default PKU's, coarser MSR's."""
        g = granularity_value(granularity)
        return STANDARDS["ud" if g < DEFAULT_GRANULARITY else "msr" if g > DEFAULT_GRANULARITY else "pku"].rules


@dataclass(frozen=True)
class Standard:
    name: str
    about: str
    profile_level: float  # its threshold: the profile's at this level (0 fine, 0.5 default, 1 coarse)
    rules: Rules

    def to_dict(self) -> dict:
        """What a head profile's runtime entry stores for a standard that has no name here (one
        that `segmenter calibrate` chose)."""
        return {"name": self.name, "about": self.about, "profile_level": self.profile_level,
                "rules": asdict(self.rules)}

    @classmethod
    def from_dict(cls, data: dict) -> "Standard":
        try:
            return cls(str(data["name"]), str(data.get("about", "")), granularity_value(data["profile_level"]),
                       Rules(**data["rules"]))
        except (KeyError, TypeError) as err:
            raise ValueError(f"a standard needs name, profile_level and rules ({', '.join(Rules.__annotations__)}): "
                             f"{err}") from None


STANDARDS = {
    standard.name: standard
    for standard in (
        Standard("pku", "Peking University's (SIGHAN 2005): 江 泽民, 两 个, 一个, 经营者, 上海 市",
                 DEFAULT_GRANULARITY, Rules("default", True, True, False, False, False, True, None)),
        Standard("msr", "Microsoft Research's (SIGHAN 2005): 江泽民, 两个, 上海市, "
                        "１９９７年２月, coarse words",
                 1.0, Rules("coarse", False, True, True, True, True, True, JOIN3_LOGP)),
        Standard("ud", "Universal Dependencies GSD Simplified: 两 个, 上海 市, 中国 队, fine words", 0.0,
                 Rules("fine", True, False, False, False, False, False, None)),
        # Chosen on the mean F1 of six dev files, none below jieba (benchmarks/standards_dev.py):
        # PKU's counts and threshold, names whole, every suffix joined, 2+1 pairs by the unigram model.
        Standard("general", "for any text: names whole (戴沐白), 两 个, 一个, 上海市, 世界杯",
                 DEFAULT_GRANULARITY, Rules("default", False, True, True, False, False, True, JOIN3_LOGP)),
    )
}
DEFAULT_STANDARD = "general"


def standard_named(name: str | Standard | dict | None) -> Standard:
    """A standard by name ("general", "pku", "msr", "ud"), as itself, or from its to_dict()."""
    if name is None:
        return STANDARDS[DEFAULT_STANDARD]
    if isinstance(name, Standard):
        return name
    if isinstance(name, dict):
        return Standard.from_dict(name)
    if not isinstance(name, str) or name not in STANDARDS:
        raise ValueError(f"standard must be one of {', '.join(map(repr, STANDARDS))}, got {name!r}")
    return STANDARDS[name]


@dataclass(frozen=True)
class Level:
    """The policy of one reading: threshold, decoder options (None: cut where the margin is
    positive, no word table) and the standard's rules."""

    granularity: float
    threshold: float
    decoding: WordDecoding | None
    rules: Rules

    @classmethod
    def at(cls, granularity: str | float | None, profile: HeadProfile, decoding: WordDecoding | None,
           standard: Standard) -> "Level":
        g = granularity_value(granularity)
        threshold = profile.threshold(standard.profile_level) + (g - DEFAULT_GRANULARITY) * GRANULARITY_SPAN
        rules = standard.rules
        if decoding is not None:
            if not rules.pair_joins:
                decoding = replace(decoding, join3=None, join4=None)
            if rules.join3_logp is not None and decoding.join3_logp is None:
                decoding = replace(decoding, join3_logp=rules.join3_logp)
        return cls(g, threshold, decoding, rules)
