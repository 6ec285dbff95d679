"""Why each word edge is where it is: the stages of word assembly (assembly.py), one at a time.

For each place between two characters of a text, a record of what every stage said:

    heads        the combined score of the profile's heads (profile.combine), the level's
                 threshold and their difference, the margin (> 0 leans to a cut)
    decoder      the word decoder's decision (assembly.decide_cuts): with a word table, whole
                 words by dynamic programming; without, margin > 0
    word table   the decoder's words on either side (cut) or around (joined), with the unigram
                 model's log p of the pieces and of the whole, and the whole's autonomy
    rules        the conventions of the level's rules (standards.rules.TABLE), applied one row at
                 a time (conventions.apply_to_texts(..., table=(row,))): the rows that moved it
    dictionary   the user dictionary, last (UserDictionary.apply): the user word that moved it

and `decided_by`, the last stage that set it. Places that are not junctions (a run edge: Han next
to a digit, a letter or a mark; the inside of a run of digits or letters) are decided by the
text's runs alone. Pure Python over the public stage functions: the explained words are the
words of Segmenter.assemble (tests/test_serve.py checks them against segment()).
"""
from __future__ import annotations

import math

import numpy as np

from ..standards import rules as standard_rules
from ..standards.conventions import apply_to_texts
from ..standards.rules import is_on
from . import assembly


def explain(plans, profile, level, *, word_table=None, conventions=None, dictionary=None) -> list[dict]:
    """A record per text of scored plans (Segmenter.score_texts) at one level (Segmenter.level):
    {"text", "words", "threshold", "junctions": [per place between two characters]}."""
    margins = assembly.junction_margins(plans, profile, level)
    cuts = assembly.decide_cuts(plans, margins, level, word_table)
    texts = assembly.texts_of(plans)
    ends = assembly.cut_ends_of(texts, plans, cuts)
    decoder_ends = texts.split(ends)
    moves = [{} for _ in plans]  # text -> {offset: [(stage, rule name, about, cut or joined)]}
    if conventions is not None and level.rules is not None:
        for row in standard_rules.TABLE:
            if row.decoder or not is_on(getattr(level.rules, row.name, None)):
                continue
            after = apply_to_texts(texts, ends, conventions, level.rules, word_table, table=(row,))
            if not np.array_equal(after, ends):
                for i, (before_own, after_own) in enumerate(zip(texts.split(ends), texts.split(after))):
                    _note(moves[i], before_own, after_own, "rule", row.name, row.about)
            ends = after
    rule_ends = texts.split(ends)
    final_ends = []
    for i, (plan, own) in enumerate(zip(plans, rule_ends)):
        if dictionary is not None and len(dictionary):
            boundary = assembly.boundary_scores(plan, margins[i])
            after = dictionary.apply(plan.text, own, boundary)
            if not np.array_equal(after, own):
                _note(moves[i], own, after, "user", None, None, plan.text, after, dictionary)
            own = after
        final_ends.append(np.asarray(own))
    return [_record(plan, margin, cut, level, decoder, final, move, word_table, profile)
            for plan, margin, cut, decoder, final, move
            in zip(plans, margins, cuts, decoder_ends, final_ends, moves)]


def _note(moves: dict, before, after, stage, name, about, text=None, final=None, dictionary=None) -> None:
    before, after = set(np.asarray(before).tolist()), set(np.asarray(after).tolist())
    for offset in sorted(before ^ after):
        cut = offset in after
        if stage == "user":
            name = _user_word(text, np.asarray(final), offset, cut, dictionary)
            about = "a user dictionary word stays whole" if name else "the user dictionary"
        moves.setdefault(offset, []).append({"stage": stage, "name": name, "about": about, "cut": cut})


def _user_word(text, ends, offset, cut, dictionary):
    """The user word beside (a cut) or around (a join) `offset` in the final words, if any."""
    entries = getattr(dictionary, "entries", {})
    for word, s, e in assembly.tokens(text, ends):
        around = (s < offset < e and not cut) or (cut and offset in (s, e))
        if around and word in entries:
            return word
    return None


def _finite(value) -> float | None:
    value = float(value)
    return round(value, 3) if math.isfinite(value) else None


def _table_views(text: str, decoder_ends, offsets: list[int], word_table) -> list[dict | None]:
    """The decoder's words at each of `offsets`: left and right (a cut) or the word around it
    (joined), and what the word table says of the pieces and of the whole: one lookup a text."""
    if word_table is None or not offsets:
        return [None] * len(offsets)
    ends = np.asarray(decoder_ends, dtype=np.int64)
    at = np.asarray(offsets, dtype=np.int64)
    cut = np.isin(at, ends)
    # the word ending at or crossing each offset, and the one after it where the offset is a cut
    k = np.searchsorted(ends, at, side="left")  # ends[k] >= offset
    start = np.where(k > 0, ends[np.maximum(k - 1, 0)], 0)
    end = np.where(cut, ends[np.minimum(k + 1, len(ends) - 1)], ends[np.minimum(k, len(ends) - 1)])
    starts = np.concatenate([start, start, at])
    lengths = np.concatenate([end - start, at - start, end - at])
    autonomy = word_table.autonomy_at(text, start, end - start)
    logp = word_table.logp_at(text, starts, lengths) if getattr(word_table, "unigram", None) is not None else None
    views, n = [], len(offsets)
    for i, (s, o, e) in enumerate(zip(start.tolist(), at.tolist(), end.tolist())):
        view = {"left": text[s:o], "right": text[o:e], "whole": text[s:e], "autonomy": _finite(autonomy[i])}
        if logp is not None:
            whole, left, right = _finite(logp[i]), _finite(logp[n + i]), _finite(logp[2 * n + i])
            view.update(logp_whole=whole, logp_left=left, logp_right=right)
            if None not in (whole, left, right):
                view["logp_margin"] = round(whole - left - right, 3)  # > 0: likelier as one word
        views.append(view)
    return views


def _record(plan, margin, cut, level, decoder_ends, final_ends, moves, word_table, profile) -> dict:
    text = plan.text
    final = set(np.asarray(final_ends).tolist())
    column = {int(plan.positions[q]) + 1: j for j, q in enumerate(plan.junctions.tolist())}
    views = dict(zip(column, _table_views(text, decoder_ends, list(column), word_table)))
    boundary = assembly.boundary_scores(plan, margin)
    head_scores = np.asarray(plan.scores) if plan.scores is not None else np.zeros((0, 0))
    records = []
    for offset in range(1, len(text)):
        entry = {"offset": offset, "left": text[offset - 1], "right": text[offset], "cut": offset in final}
        j = column.get(offset)
        if j is None:  # not between two Han characters: the text's runs decide
            always = math.isinf(boundary[offset]) if not math.isnan(boundary[offset]) else False
            entry.update(kind="run edge" if always else "inside run", decided_by="text runs",
                         why=("a run edge (Han next to a digit, letter, mark or space) is always a word edge"
                              if always else "inside a run of digits, letters, marks or spaces: never cut by the heads"))
        else:
            m = float(margin[j])
            entry.update(kind="junction", score=round(m + level.threshold, 3), threshold=round(level.threshold, 3),
                         margin=round(m, 3), heads=[round(float(v), 3) for v in head_scores[:, j]],
                         heads_cut=m > 0, decoder_cut=bool(cut[j]))
            entry["table"] = views[offset]
            if level.decoding is not None and word_table is not None:
                entry["decided_by"] = "word decoder"
                entry["why"] = (f"the word decoder {'cut' if cut[j] else 'joined'} here; the heads' margin "
                                f"{m:+.2f} {'agrees' if (m > 0) == bool(cut[j]) else 'disagrees'}")
            else:
                entry["decided_by"] = "heads"
                entry["why"] = f"the heads' margin {m:+.2f} is {'above' if m > 0 else 'at or below'} the threshold"
        changes = moves.get(offset, [])
        entry["changes"] = changes
        if changes:
            last = changes[-1]
            entry["decided_by"] = (f"rule {last['name']}" if last["stage"] == "rule"
                                   else f"user word {last['name']}" if last["name"] else "user dictionary")
            entry["why"] = f"{'cut' if last['cut'] else 'joined'} by {entry['decided_by']}: {last['about']}"
        records.append(entry)
    words = assembly.split_words(text, np.asarray(final_ends)) if len(text) else []
    return {"text": text, "words": words, "threshold": round(float(level.threshold), 3),
            "heads": [list(h) for h in profile.heads], "junctions": records}
