"""Standards and granularity: everything that decides how words are cut, in one place.

Two knobs:
  - a **standard** (`Standard`, by name: "general", "pku", "msr", "ud") says how words are
    written: the conventions (conventions.py), the word decoder's joins (rules.TABLE's decoder
    rows), and the threshold on the heads' combined score, as a level of the model's profile
    (profile.py: the thresholds it was calibrated with at fine 0, default 0.5 and coarse 1,
    interpolated);
  - a **granularity** ("fine" 0, "default" 0.5, "coarse" 1, or a number in [0, 1]) moves that
    threshold within the standard, by up to GRANULARITY_SPAN / 2 either way: finer or coarser
    words written the standard's way. 0.5 is the standard's own.

Every rule a standard can switch is a row of rules.TABLE; `Rules` has one field a row, and a
`Standard` is a name, a threshold level and its Rules. `Level.at(granularity, profile, decoding,
standard)` builds the policy of one reading; word assembly (assembly.py) reads nothing else.
"pku", "msr" and "ud" imitate the gold standards of the SIGHAN and UD files (README
"Granularity and standards"); "general", the default, was chosen on the mean of six dev files of
news, Weibo, a novel and dermatology (benchmarks/standards_dev.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, make_dataclass
from functools import lru_cache
from typing import Any

from ..arguments import is_finite_number
from ..model.profile import GRANULARITY_NAMES, HeadProfile, granularity_value
from ..words.decoding import WordDecoding
from .rules import COUNT_STANDARDS, JOIN3_LOGP, STANDARD_NAMES, TABLE  # noqa: F401 (COUNT_STANDARDS, JOIN3_LOGP)

DEFAULT_GRANULARITY = GRANULARITY_NAMES["default"]
DEFAULT_STANDARD = "general"
# Granularity 0 to 1 moves the standard's threshold from -2 to +2: with the shipped model, about
# 3% more (0) or fewer (1) words than at 0.5 on 300 sentences of each of the six dev files.
GRANULARITY_SPAN = 4.0
# The standard whose rules a granularity applies when none is named (Rules.at).
LEVEL_STANDARDS = {"fine": "ud", "default": "pku", "coarse": "msr"}


def _check_rules(rules) -> None:
    for row in TABLE:
        value = getattr(rules, row.name)
        if row.choices is not None and value not in row.choices:
            raise ValueError(f"Rules.{row.name} must be one of {row.choices}, got {value!r}")
        if row.choices is None and value is not None and not is_finite_number(value):  # a number the row reads
            raise ValueError(f"Rules.{row.name} must be a finite number or None (off), got {value!r}")


def _rules_at(cls, granularity: str | float | None) -> "Rules":
    """The rules of the standard a granularity imitates when none is named: finer than the
    default UD's, the default PKU's, coarser MSR's."""
    g = granularity_value(granularity)
    level = "fine" if g < DEFAULT_GRANULARITY else "coarse" if g > DEFAULT_GRANULARITY else "default"
    return STANDARDS[LEVEL_STANDARDS[level]].rules


# A standard's setting of each row of rules.TABLE (False or None: off), by keyword: one field a
# row, in table order, its default the general standard's. Rules(**old_dict) of a folder saved
# before a row was added gives that row the general standard's setting.
Rules = make_dataclass(
    "Rules", [(row.name, Any, field(default=row.at[DEFAULT_STANDARD])) for row in TABLE], frozen=True, kw_only=True,
    namespace={"__post_init__": _check_rules, "at": classmethod(_rules_at), "__module__": __name__,
               "__doc__": "Which rows of rules.TABLE a standard applies, and with which values."})


@dataclass(frozen=True)
class Standard:
    name: str
    about: str
    profile_level: float  # its threshold: the profile's at this level (0 fine, 0.5 default, 1 coarse)
    rules: Rules = field(default_factory=Rules)

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
            raise ValueError(f"a standard needs name, profile_level and rules "
                             f"({', '.join(f.name for f in fields(Rules))}): {err}") from None


# The named standards: what each is and the profile level of its threshold; its rules are each
# row's setting for it (rules.TABLE, `at`).
ABOUT = {
    "pku": ("Peking University's (SIGHAN 2005): 江 泽民, 两 个, 一个, 经营者, 上海市, 1997年", DEFAULT_GRANULARITY),
    "msr": ("Microsoft Research's (SIGHAN 2005): 江泽民, 两个, 上海市, １９９７年２月, coarse words", 1.0),
    "ud": ("Universal Dependencies GSD Simplified: 两 个, 上海 市, 中国 队, fine words", 0.0),
    # Chosen on the mean F1 of six dev files, none below jieba (benchmarks/standards_dev.py):
    # PKU's counts and threshold, names whole, every suffix joined, 2+1 pairs by the unigram model,
    # a line's list number with its period (１． 1.).
    "general": ("for any text: names whole (戴沐白), 两 个, 一个, 上海市, 世界杯", DEFAULT_GRANULARITY),
}
STANDARDS = {name: Standard(name, ABOUT[name][0], ABOUT[name][1], Rules(**{row.name: row.at[name] for row in TABLE}))
             for name in STANDARD_NAMES}


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
        if decoding is not None:  # the decoder joins of rules.TABLE, in table order
            joins = tuple((row.name, row.run) for row in TABLE if row.decoder)
            decoding = _with_joins(decoding, standard.rules, joins)  # frozen, checked values: they hash
        return cls(g, threshold, decoding, standard.rules)


# Three dataclass copies a call were most of Level.at's ~30 us, which every segment() call paid.
@lru_cache(maxsize=64)
def _with_joins(decoding: WordDecoding, rules: Rules, joins: tuple) -> WordDecoding:
    """`decoding` with each join of `joins` ((row name, its function), in table order) set as
    `rules` sets that row."""
    for name, run in joins:
        decoding = run(decoding, getattr(rules, name))
    return decoding
