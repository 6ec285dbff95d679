"""Standards and granularity: everything that decides how words are cut, in one place.

Two knobs:
  - a **standard** (`Standard`, by name: "general", "pku", "msr", "ud") says how words are
    written: the conventions (conventions.py), the word decoder's joins (rules.TABLE's decoder
    rows), and the threshold on the heads' combined score, as a level of the model's profile
    (model.profile: the thresholds it was calibrated with at fine 0, default 0.5 and coarse 1,
    interpolated);
  - a **granularity** ("fine" 0, "default" 0.5, "coarse" 1, or a number in [0, 1]) moves that
    threshold within the standard, by up to GRANULARITY_SPAN / 2 either way: finer or coarser
    words written the standard's way. 0.5 is the standard's own.

Every rule a standard can switch is a row of rules.TABLE; `Rules` has one field a row, and a
`Standard` is a name, a threshold level and its Rules, all read from rules.toml. `Level.at(granularity, profile, decoding,
standard)` builds the policy of one reading; word assembly (words.assembly) reads nothing else.
"pku", "msr" and "ud" imitate the gold standards of the SIGHAN and UD files; "general", the
default, is for any text (rules.toml's [standards] say how each was set).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache

from ..arguments import is_finite_number
from ..model.profile import GRANULARITY_NAMES, HeadProfile, granularity_value
from ..words.decoding import WordDecoding
from .data import LEVELS, STANDARD_DATA
from .rules import COUNT_STANDARDS, JOIN3_LOGP, STANDARD_NAMES, TABLE  # noqa: F401 (COUNT_STANDARDS, JOIN3_LOGP)

DEFAULT_GRANULARITY = GRANULARITY_NAMES["default"]
DEFAULT_STANDARD = LEVELS["default_standard"]
# Granularity 0 to 1 moves the standard's threshold by -GRANULARITY_SPAN / 2 to +GRANULARITY_SPAN / 2.
GRANULARITY_SPAN = LEVELS["granularity_span"]
# The standard whose rules a granularity applies when none is named (Rules.at).
LEVEL_STANDARDS = LEVELS["level_standards"]
_GENERAL = {row.name: row.at[DEFAULT_STANDARD] for row in TABLE}  # the defaults of Rules


@dataclass(frozen=True, kw_only=True)
class Rules:
    """Which rows of rules.TABLE a standard applies, and with which values: one field a row, in
    table order (rules.toml's `at`), its default the general standard's. False or None: off; a
    row's `choices` are the settings it takes (None: a number). Rules(**old_dict) of a folder
    saved before a row was added gives that row the general standard's setting."""

    number_units: bool | str = _GENERAL["number_units"]
    join_list_numbers: bool | str = _GENERAL["join_list_numbers"]
    join_ordinal_digits: bool = _GENERAL["join_ordinal_digits"]
    join_han_numbers: bool = _GENERAL["join_han_numbers"]
    split_surnames: bool = _GENERAL["split_surnames"]
    join_suffixes: bool = _GENERAL["join_suffixes"]
    coarse_suffixes: bool = _GENERAL["coarse_suffixes"]
    join_dates: bool = _GENERAL["join_dates"]
    join_digit_measures: bool | str = _GENERAL["join_digit_measures"]
    split_marks: bool = _GENERAL["split_marks"]
    counts: str = _GENERAL["counts"]
    split_function_words: bool | str = _GENERAL["split_function_words"]
    split_coverbs: bool = _GENERAL["split_coverbs"]
    join_function_words: bool = _GENERAL["join_function_words"]
    split_compounds: bool = _GENERAL["split_compounds"]
    pair_joins: bool = _GENERAL["pair_joins"]
    join3_logp: float | None = _GENERAL["join3_logp"]
    join_long: float | None = _GENERAL["join_long"]

    def __post_init__(self):
        for row in TABLE:
            value = getattr(self, row.name)
            if row.choices is not None and value not in row.choices:
                raise ValueError(f"Rules.{row.name} must be one of {row.choices}, got {value!r}")
            if row.choices is None and value is not None and not is_finite_number(value):  # a number the row reads
                raise ValueError(f"Rules.{row.name} must be a finite number or None (off), got {value!r}")

    @classmethod
    def at(cls, granularity: str | float | None) -> Rules:
        """The rules of the standard a granularity imitates when none is named: finer than the
        default UD's, the default PKU's, coarser MSR's (LEVEL_STANDARDS)."""
        g = granularity_value(granularity)
        level = "fine" if g < DEFAULT_GRANULARITY else "coarse" if g > DEFAULT_GRANULARITY else "default"
        return STANDARDS[LEVEL_STANDARDS[level]].rules


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
    def from_dict(cls, data: dict) -> Standard:
        try:
            return cls(str(data["name"]), str(data.get("about", "")), granularity_value(data["profile_level"]),
                       Rules(**data["rules"]))
        except (KeyError, TypeError) as err:
            raise ValueError(f"a standard needs name, profile_level and rules "
                             f"({', '.join(f.name for f in fields(Rules))}): {err}") from None


# The named standards (rules.toml's [standards]): what each is, the profile level of its threshold
# and each row's setting for it (`at`).
STANDARDS = {name: Standard(name, STANDARD_DATA[name]["about"], float(STANDARD_DATA[name]["profile_level"]),
                            Rules(**{row.name: row.at[name] for row in TABLE}))
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
           standard: Standard) -> Level:
        g = granularity_value(granularity)
        threshold = profile.threshold(standard.profile_level) + (g - DEFAULT_GRANULARITY) * GRANULARITY_SPAN
        # the decoder joins of rules.TABLE, in table order: read at each call (a test takes a row out)
        joins = tuple((row.name, row.run) for row in TABLE if row.decoder)
        return _level(g, threshold, decoding, standard.rules, joins)  # frozen, checked values: they hash


# Cached: Level.at runs at every segment() call, and the joins copy the frozen decoding once each.
@lru_cache(maxsize=64)
def _level(granularity: float, threshold: float, decoding: WordDecoding | None, rules: Rules,
           joins: tuple) -> Level:
    """Level(granularity, threshold, decoding with each of `joins` set as `rules` sets it, rules):
    one frozen Level for each, shared by the calls."""
    return Level(granularity, threshold, _with_joins(decoding, rules, joins), rules)


def _with_joins(decoding: WordDecoding | None, rules: Rules, joins: tuple) -> WordDecoding | None:
    """`decoding` with each join of `joins` ((row name, its function), in table order) set as
    `rules` sets that row; None stays None (no decoder)."""
    if decoding is None:
        return None
    for name, run in joins:
        decoding = run(decoding, getattr(rules, name))
    return decoding
