"""Every rule of a segmentation standard, as one ordered table (TABLE, at the end of this file).

Two kinds of rule, both decisions of a standard that no head can learn (conventions.py says why):
  - a **convention** moves word ends inside the words the decoder chose (１９９７|年 -> １９９７年);
    its function takes (texts, ends, conventions, setting, word_table) and returns the ends: texts
    (text.batch.Texts) is one or many texts joined by text.batch.SEPARATOR, ends the sorted word
    ends of the joined text, so that a rule runs once over a whole batch (one regex pass, one word-table lookup);
  - a **decoder join** sets an option of the word decoder (decoding.WordDecoding) before it runs;
    its function takes (decoding, setting) and returns the decoding.
The conventions live by what they read: number_rules.py (numbers, units, counts), word_rules.py
(the words themselves); the decoder joins, three setters, are below. Everything else about a row
is data, in rules.toml (read by data.py): its name, what it does, the character lists and
thresholds it reads (its `params`: together they are the fields of conventions.Conventions), its
setting in each named standard (False: off, True or a value: on, with that value), which settings
a standard may give it and which `segmenter calibrate` tries, and where each of these came from.
A standard (levels.Standard) is one setting per row (levels.Rules); conventions run in table
order (conventions.apply_to_texts), decoder joins likewise (levels.Level.at).

The order matters where two rules touch the same words: a surname splits before a suffix joins
(江泽民 -> 江|泽民, never 泽民+suffix first), counts split after both (十五|部 joined, then split).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .data import ROWS, STANDARD_DATA
from .number_rules import (
    join_dates,
    join_digit_measures,
    join_han_numbers,
    join_list_numbers,
    join_ordinal_digits,
    number_units,
    split_counts,
)
from .word_rules import (
    join_coarse_suffixes,
    join_function_words,
    join_suffixes,
    split_compounds,
    split_coverbs,
    split_function_words,
    split_marks,
    split_surnames,
)

STANDARD_NAMES = tuple(STANDARD_DATA)  # the named standards (levels.STANDARDS), each row's `at`


@dataclass(frozen=True)
class Rule:
    name: str  # its switch in a standard (a field of levels.Rules)
    about: str
    run: Callable  # what it does (a convention's or a decoder join's function: see above)
    at: dict  # {standard name: setting}; False or None: off
    params: dict | None = None  # {Conventions field: default}: the character lists and thresholds it reads
    decoder: bool = False  # a decoder join: run(decoding, setting), called whatever the setting
    choices: tuple | None = (False, True)  # the settings a standard may give it; None: any number
    search: tuple = (False, True)  # the settings `segmenter calibrate` tries; (): it keeps the standard's
    needs: str | None = None  # it runs only where this row is on too

    def __post_init__(self):
        if set(self.at) != set(STANDARD_NAMES):
            raise ValueError(f"rule {self.name!r} needs a setting for each of {STANDARD_NAMES}, got {sorted(self.at)}")


def is_on(setting) -> bool:
    return setting is not False and setting is not None


# --- decoder joins: (decoding, setting) -> decoding ------------------------------------------------

def pair_joins(decoding, on):
    """Off: the decoder joins no cohesive 2+1, 1+2 or 2+2 pair (words.joins.join_cohesive), 1+1 still."""
    return decoding if on else replace(decoding, join3=None, join4=None)


def join3_logp(decoding, logp):
    """A number: 2+1 pairs also join where the unigram model has the word e**logp times likelier
    than its two words, unless the decoder was given a join3_logp of its own."""
    return replace(decoding, join3_logp=logp) if logp is not None and decoding.join3_logp is None else decoding


def join_long(decoding, share):
    """A number: two decoded words of 2+ characters each, 5+ together, join where the string
    around their junction is that share of both sides' occurrences (words.joins.join_long_words),
    unless the decoder was given a join_long of its own."""
    return replace(decoding, join_long=share) if share is not None and decoding.join_long is None else decoding


# What each row runs, by its name in rules.toml.
RUNS = {run.__name__: run for run in (
    number_units, join_list_numbers, join_ordinal_digits, join_han_numbers, split_surnames, join_suffixes,
    join_dates, join_digit_measures, split_marks, split_function_words, split_coverbs, join_function_words,
    split_compounds, pair_joins, join3_logp, join_long)}
RUNS.update(coarse_suffixes=join_coarse_suffixes, counts=split_counts)


def _table() -> tuple[Rule, ...]:
    missing = [row.name for row in ROWS if row.name not in RUNS]
    if missing:
        raise ValueError(f"rules.toml has rows no function runs: {missing}")
    return tuple(Rule(row.name, row.about, RUNS[row.name], row.at, row.params or None, row.decoder, row.choices,
                      row.search, row.needs) for row in ROWS)


# The rules, in the order they run (rules.toml's order).
TABLE = _table()
COUNT_STANDARDS = next(row.choices for row in TABLE if row.name == "counts")  # fine (UD), default (PKU), coarse (MSR)
JOIN3_LOGP = next(row.at["general"] for row in TABLE if row.name == "join3_logp")  # 世界杯: its value, on
