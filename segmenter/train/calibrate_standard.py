"""A standard from a few examples: `segmenter calibrate` fits the rules and threshold of a
standard (levels.py) to 20-200 sentences segmented the user's way, and writes a model folder
whose default follows them.

The heads are read once; each candidate re-assembles the words (assembly.py), so a search of a
few hundred candidates takes seconds. The search starts from the best named standard (the
general one wins ties) and then changes one setting of a row of the rule table (rules.TABLE: to
the other values its `search` lists; rows every standard applies alike, such as Han numbers, have
none) or the threshold at a time, the first best in table order, keeping a change only where
word F1 on the sentences rises by more than `min_gain` (few sentences: small gains are noise),
until no change helps or `rounds` changes were kept. So the result never scores below the general default on the sentences
that calibrated it. Then the words (calibrate_words.py): the strings the sentences keep whole
or cut where the segmenter does not, consistently, become the folder's user dictionary. Nothing
trains: the model's weights, head profile weights and word table stay as they are.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..bench.evaluation import score
from ..model.integrity import write_manifest
from ..model.profile import PROFILE_FILE
from ..run.files import check_new_folder, staged_folder
from ..standards.levels import DEFAULT_STANDARD, STANDARDS, Rules, Standard
from ..standards.rules import TABLE
from ..words.assembly import assemble
from ..words.dictionary import UserDictionary
from ..words.table_files import standalone_table
from .calibrate_words import learn_corrections
from .model_card import append_card_section

PROFILE_LEVELS = tuple(np.round(np.linspace(0.0, 1.0, 11), 2).tolist())
MIN_SENTENCES, MAX_SENTENCES = 20, 200


@dataclass
class Calibration:
    standard: Standard
    sentences: int
    f1: float  # on the calibrating sentences, with the words
    f1_default: float  # the general default's, on the same sentences
    tried: int
    seconds: float
    words: list[tuple[str, ...]]  # user dictionary entries: (word,) kept whole, (a, b, ...) cut so
    f1_standard: float  # the standard's alone, before the words

    def dictionary(self, base: UserDictionary | None = None) -> UserDictionary:
        """The user dictionary of the calibrated folder: `base`'s entries (the model's own user
        words) and the learned ones, added after them (a learned entry wins over an old one)."""
        dictionary = UserDictionary()
        if base is not None:
            dictionary.restore(base.records())
        for pieces in self.words:
            if len(pieces) == 1:
                dictionary.add(pieces[0])
            else:
                dictionary.split(pieces)
        return dictionary


def rule_options(rules: Rules) -> list[Rules]:
    """Every Rules that differs from `rules` in one switch: each row's other `search` values, in table order."""
    return [replace(rules, **{row.name: value}) for row in TABLE for value in row.search
            if value != getattr(rules, row.name)]


def calibrate_standard(segmenter, gold: list[list[str]], min_gain: float = 0.002, rounds: int = 5,
                       words: bool = True) -> Calibration:
    """The standard that best fits `gold` (sentences as word lists) for `segmenter`'s model, and
    (words=True) the user dictionary entries that make its words agree (calibrate_words.py)."""
    started = time.perf_counter()
    check_segmented(gold)
    plans = segmenter.score_texts(["".join(words) for words in gold], show_progress=False)
    cache: dict[tuple, float] = {}

    def words_of(standard: Standard, dictionary=None) -> list[list[str]]:
        # assemble, not segmenter.assemble: dictionary None is none here, not the model's user words
        level = segmenter.level("default", standard)
        return assemble(plans, segmenter.profile, level, word_table=segmenter.word_table,
                        conventions=segmenter.conventions, dictionary=dictionary, words_only=True)

    def f1(standard: Standard) -> float:  # the standard alone: the model's user words are not the user's standard
        key = (standard.profile_level, standard.rules)
        if key not in cache:
            cache[key] = score(gold, words_of(standard)).F1
        return cache[key]

    default = STANDARDS[DEFAULT_STANDARD]
    best = max(STANDARDS.values(), key=lambda s: (f1(s), s.name == DEFAULT_STANDARD))
    for _ in range(rounds):
        moves = [replace(best, rules=r) for r in rule_options(best.rules)]
        moves += [replace(best, profile_level=g) for g in PROFILE_LEVELS if g != best.profile_level]
        move = max(moves, key=f1)
        if f1(move) <= f1(best) + min_gain:
            break
        best = move
    chosen = replace(best, name="calibrated", about=f"calibrated on {len(gold)} sentences, from {best.name}")
    result = Calibration(chosen, len(gold), f1(best), f1(default), len(cache), time.perf_counter() - started,
                         words=[], f1_standard=f1(best))
    if words:  # against the words the folder will give: the model's own user words included
        result.words = learn_corrections(gold, words_of(best, segmenter.user_dictionary.snapshot()))
        result.f1 = score(gold, words_of(best, result.dictionary(segmenter.user_dictionary).snapshot())).F1
        result.seconds = time.perf_counter() - started
    return result


# Segmented Chinese averages under 2 characters a word (the six dev files: 1.5 to 1.8); lines with
# words this long on average are raw text, whose whole lines would become the folder's "words".
UNSEGMENTED_CHARS_PER_WORD = 5.0


def check_segmented(gold: list[list[str]], name: str = "gold") -> None:
    """Refuse sentences that were never segmented: a line without spaces is one long 'word'."""
    words = sum(map(len, gold))
    chars = sum(len(word) for sentence in gold for word in sentence)
    if words and chars / words > UNSEGMENTED_CHARS_PER_WORD:
        raise ValueError(f"{name}: its words average {chars / words:.1f} characters; calibrating needs segmented "
                         "sentences, one a line, words split by spaces (is it raw text?)")


def calibrate(model, gold_path: str | Path, out: str | Path, sentences: int = MAX_SENTENCES,
              command: str = "", words: bool = True) -> Calibration:
    """Fit a standard to the first `sentences` lines of `gold_path` and write `model` with it as
    the default to `out` (a new or empty folder; whole or absent after a crash)."""
    from ..api import Segmenter
    from ..model.folders import resolve_model_folder
    from .corpus import read_gold

    folder = resolve_model_folder(model)
    out = check_new_folder(out, folder)
    gold = read_gold(gold_path, sentences)
    if len(gold) < MIN_SENTENCES:
        raise ValueError(f"{gold_path} has {len(gold)} sentences; calibrating needs at least {MIN_SENTENCES} "
                         "(one a line, words split by spaces)")
    check_segmented(gold, str(gold_path))
    segmenter = Segmenter(folder)
    result = calibrate_standard(segmenter, gold, words=words)
    with staged_folder(segmenter.folder, out, skip=(PROFILE_FILE,)) as building:
        runtime = standalone_table(segmenter.folder, segmenter.profile.runtime, building)
        profile = replace(segmenter.profile, runtime={**runtime, "standard": result.standard.to_dict()},
                          source=f"{segmenter.profile.source}; standard calibrated on {len(gold)} sentences")
        profile.save(building)
        result.dictionary(segmenter.user_dictionary).save_folder(building)  # the learned words: user_dict.txt ...
        append_card_section(building, card_note(result, gold_path, command))
        write_manifest(building)  # checksums.json, checked on load (integrity.py)
    return result


def card_note(result: Calibration, gold_path, command: str) -> str:
    rules = ", ".join(f"{k} {v}" for k, v in result.standard.to_dict()["rules"].items())
    return (f"## Calibrated standard\n\n{result.standard.about} of `{Path(gold_path).name}` (command: `{command}`): "
            f"threshold at the profile's level {result.standard.profile_level}; rules: {rules}. "
            f"Word F1 on those sentences {result.f1_standard:.4f} with the standard, {result.f1:.4f} with it and "
            f"the {len(result.words)} user dictionary entries learned from them (user_dict.txt, user_splits.json), "
            f"the general default's {result.f1_default:.4f}; {result.tried} candidates tried in "
            f"{result.seconds:.1f} s. Nothing was trained: the weights, the head profile's weights and the word "
            f"table are the model's.\n")
