"""Word assembly: the heads' scores of texts -> their words, one explicit stage after another.

    plan.scores (K, J)  -- junction_margins: profile.combine, minus the level's threshold -->  margins (J,)
    margins             -- decide_cuts: the word decoder (decoding.py) or margin > 0 ------>  cuts (J,) bool
    cuts                -- cut_ends: every run ends a word, and every cut junction -------->  ends
    ends                -- conventions.apply_to_texts: the level's rules ------------------>  ends
    ends, margins       -- UserDictionary.apply: its words whole, overlaps by the margins ->  ends
    ends                -- tokens ---------------------------------------------------------->  [(word, start, end)]

J is the number of junctions of a plan (text/plan.py: the places between two Han characters);
`ends` are sorted end offsets into plan.text, the last one len(text), so the words always tile
the text. Up to the user dictionary, a batch's ends are those of its texts joined (text.batch.Texts):
each stage runs once over the batch, not once a text. The level (levels.Level) carries
everything that depends on the granularity. Each stage is a function of its input alone:
benchmarks and training that make cuts of their own (an oracle, an ablation row) enter at
`words_from_cuts`.
"""
from __future__ import annotations

from itertools import accumulate, pairwise
from typing import NamedTuple

import numpy as np

from ..model.profile import HeadProfile
from ..standards.conventions import Conventions, apply_to_texts
from ..standards.levels import Level, Rules
from ..text.batch import Texts, among_sorted
from ..text.plan import TextPlan
from . import decoding
from .decoding import cut_junctions_batch
from .decoding_few import TextLookups
from .dictionary import UserDictionary
from .table import WordTable


class Token(NamedTuple):
    word: str
    start: int
    end: int


def junction_margins(plans: list[TextPlan], profile: HeadProfile, level: Level) -> list[np.ndarray]:
    """(J,) combined head score of each junction minus the level's threshold: > 0 leans to a cut."""
    if len(profile.weights) == 1 and len(plans) > 1:
        # One head: each margin is one product and two sums whether the plans are combined one
        # by one or all at once, so at once (views of one array), not a matmul per plan.
        bounds = [0, *accumulate(len(plan.junctions) for plan in plans)]
        flat = profile.combine(np.concatenate([plan.scores for plan in plans], axis=1)) - level.threshold
        return [flat[a:b] for a, b in pairwise(bounds)]
    return [profile.combine(plan.scores) - level.threshold if len(plan.junctions) else np.zeros(0, np.float32)
            for plan in plans]


def decide_cuts(plans: list[TextPlan], margins: list[np.ndarray], level: Level,
                word_table: WordTable | None, texts: Texts | None = None) -> list[np.ndarray]:
    """(J,) bool per plan: cut this junction? With a word table and the level's decoder options,
    whole words by dynamic programming over all plans at once (decoding.py); else margin > 0.
    texts: the plans' batch (texts_of), where the caller has it."""
    if word_table is None or level.decoding is None:
        return [m > 0 for m in margins]
    return cut_junctions_batch(plans, margins, word_table, level.decoding, texts)


def cut_ends(plan: TextPlan, cuts: np.ndarray) -> np.ndarray:
    """Sorted word end offsets: the end of every run (text/runs.py's rules), and the character after
    every cut junction."""
    return cut_ends_of(texts_of([plan]), [plan], [cuts])


def texts_of(plans: list[TextPlan]) -> Texts:
    return Texts([plan.text for plan in plans], [plan.runs for plan in plans])


def cut_ends_of(texts: Texts, plans: list[TextPlan], cuts: list[np.ndarray]) -> np.ndarray:
    """cut_ends of each plan at once: the batch's word ends in texts.text (text.batch.Texts)."""
    if len(plans) == 1:  # one text (lcut): its run ends and cuts as a set, sorted
        plan = plans[0]
        ends = {run.end for run in plan.runs}
        if len(plan.junctions):  # the character after each cut junction (a spaceless plan's junction q: character q)
            cut = plan.junctions[cuts[0]]
            ends.update(((cut if plan.spaceless else plan.positions[cut]) + 1).tolist())
        return np.array(sorted(ends), dtype=np.int64)
    starts = texts.starts.tolist()
    run_ends = [start + run.end for start, plan in zip(starts, plans) for run in plan.runs]
    # The character before each junction of the batch, in texts.text (a spaceless plan's
    # junction q is its character q), and all plans' cut decisions side by side.
    at = np.concatenate([_NO_ENDS] + [plan.junctions if plan.spaceless else plan.positions[plan.junctions]
                                      for plan in plans])
    at += np.repeat(texts.starts, [len(plan.junctions) for plan in plans])
    edge = np.zeros(len(texts.text) + 1, dtype=bool)  # marks, not a sort: the ends are offsets into the text
    edge[run_ends] = edge[texts.starts[1:]] = True
    cut = np.concatenate([np.zeros(0, bool)] + [c for plan, c in zip(plans, cuts) if len(plan.junctions)])
    edge[at[cut] + 1] = True
    return np.flatnonzero(edge)


_NO_ENDS = np.zeros(0, dtype=np.int64)


def boundary_scores(plan: TextPlan, margins: np.ndarray) -> np.ndarray:
    """(len(text) + 1,) strength of a word edge at each offset, what the user dictionary settles
    overlaps with: +inf at run edges (always a boundary), the junction's margin between two Han
    characters, NaN inside a run (never a boundary)."""
    scores = np.full(len(plan.text) + 1, np.nan)
    scores[[0] + [run.end for run in plan.runs]] = np.inf
    if len(plan.junctions):
        scores[plan.positions[plan.junctions] + 1] = margins
    return scores


def tokens(text: str, ends: np.ndarray) -> list[Token]:
    """(word, start, end) of each word, from the sorted end offsets."""
    starts = [0, *ends[:-1].tolist()]
    return [Token(text[start:end], start, end) for start, end in zip(starts, ends.tolist())]


def tokens_of(texts: Texts, ends: np.ndarray, words_only: bool = False) -> list[list[Token]] | list[list[str]]:
    """The tokens of each text, from the batch's word ends (text.batch.Texts): one pass over all words.
    words_only: the words alone (segment_batch's answer, without a Token per word)."""
    bounds = ends.tolist() if len(texts) == 1 else None
    if bounds is not None and (not bounds or bounds[0] > 0):  # one text: its words in Python
        text, starts = texts.text, [0, *bounds[:-1]]
        words = [text[start:end] for start, end in zip(starts, bounds)]
        return [words if words_only else list(map(Token, words, starts, bounds))]
    if not among_sorted(texts.starts[1:], ends).all():  # a text's first word would start in a separator
        return _tokens_owned(texts, ends, words_only)
    # Every text starts where a word ends (the separator before it ends a word): text i's words
    # are the pieces that end in (its start, its end], pieces[first[i] : last[i]].
    pieces = texts.pieces(ends)
    first = np.searchsorted(ends, texts.starts, side="right").tolist()
    last = np.searchsorted(ends, texts.starts + texts.lengths, side="right").tolist()
    words = [pieces[a:b] for a, b in zip(first, last)]
    if words_only:
        return words
    begin = np.concatenate([np.zeros(1, np.int64), ends[:-1]])  # the end before each: its word's start
    return [list(map(Token, own, (begin[a:b] - offset).tolist(), (ends[a:b] - offset).tolist()))
            for own, a, b, offset in zip(words, first, last, texts.starts.tolist())]


def _tokens_owned(texts: Texts, ends: np.ndarray, words_only: bool) -> list[list[Token]] | list[list[str]]:
    """tokens_of of ends that leave a text's start unmarked: each word starts at the end before
    it or at its text's start, whichever comes later."""
    ends, owner = texts.owners(ends)
    offset = texts.starts[owner]
    begin = np.maximum(np.concatenate([np.zeros(1, np.int64), ends[:-1]]), offset)  # a text's first word: its start
    text = texts.text
    words = [text[start:end] for start, end in zip(begin.tolist(), ends.tolist())]
    flat = words if words_only else list(map(Token, words, (begin - offset).tolist(), (ends - offset).tolist()))
    bounds = np.cumsum(np.bincount(owner, minlength=len(texts))).tolist()
    return [flat[start:end] for start, end in zip([0, *bounds[:-1]], bounds)]


def split_words(text: str, ends: np.ndarray) -> list[str]:
    return [token.word for token in tokens(text, ends)]


def words_from_cuts(
    plans: list[TextPlan],
    cuts: list[np.ndarray],
    rules: Rules | None = None,
    *,
    conventions: Conventions | None = None,
    word_table: WordTable | None = None,
    dictionary: UserDictionary | None = None,
    margins: list[np.ndarray] | None = None,
    words_only: bool = False,
    texts: Texts | None = None,
) -> list[list[Token]] | list[list[str]]:
    """The stages after the cut decisions: run ends and cuts, the conventions of `rules` (None:
    none), the user dictionary (its overlaps settled by `margins`; None: by length and position).
    Each stage but the user dictionary runs once over the batch (text.batch.Texts; texts_of(plans)
    unless given). words_only: words, not tokens."""
    texts = texts_of(plans) if texts is None else texts
    ends = cut_ends_of(texts, plans, cuts)
    if conventions is not None and rules is not None:
        ends = apply_to_texts(texts, ends, conventions, rules, word_table)
    if dictionary is None or not len(dictionary):
        return tokens_of(texts, ends, words_only)
    batch = []
    for i, (plan, own) in enumerate(zip(plans, texts.split(ends))):
        margin = margins[i] if margins is not None else np.zeros(len(plan.junctions))
        found = tokens(plan.text, dictionary.apply(plan.text, own, boundary_scores(plan, margin)))
        batch.append([token.word for token in found] if words_only else found)
    return batch


def assemble(
    plans: list[TextPlan],
    profile: HeadProfile,
    level: Level,
    *,
    word_table: WordTable | None = None,
    conventions: Conventions | None = None,
    dictionary: UserDictionary | None = None,
    words_only: bool = False,
) -> list[list[Token]] | list[list[str]]:
    """Tokens (words_only: words) of each scored plan (plan.scores set by junctions.score_texts) at one level."""
    margins = junction_margins(plans, profile, level)
    texts = texts_of(plans)  # one layout of the batch, from the decoder to the conventions
    if word_table is not None and len(texts.text) <= decoding.FEW_CHARS:  # a short text: its strings looked up once
        word_table = TextLookups(word_table, texts.text)
    cuts = decide_cuts(plans, margins, level, word_table, texts)
    return words_from_cuts(plans, cuts, level.rules, conventions=conventions, word_table=word_table,
                           dictionary=dictionary, margins=margins, words_only=words_only, texts=texts)
