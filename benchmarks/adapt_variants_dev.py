"""Variants of `segmenter adapt`'s word-table recipe, each dev file adapted to its own text.

The recipe (train/adapt.py: the shipped table plus the text's new strings, min-count by the
text's size, phrases, fragments and rare compounds left out) against what issue 24 listed and
later sessions asked about, on the first N sentences of the six dev files, each adapted to its
whole file with the spaces removed (raw text, no labels), the general standard reading the words:

  - min count fixed at 2, 3, 5 or 8 instead of AUTO_MIN_COUNT's choice by the text's size;
  - the unigram model refitted on the domain text (train/unigram.fit_unigram's MAP-EM, 3 rounds)
    with the adapted table's model as a Dirichlet prior worth tau times the text's words: every
    string's log p moves toward how the domain text uses it;
  - domain terms: a string of 3+ characters the shipped table holds, seen >= 5 times in the
    text, takes the larger of its log p and the refit's (tau 0.05: nearly the text's alone), so
    that a term the domain repeats (淋巴细胞) is likelier whole;
  - rare compounds (train/new_strings.compound_keys) judged as before stop 52, by the shipped
    table's strings alone (the recipe also counts the strings the text adds as parts: 极阴+祖师),
    or left out when seen fewer than 20 times in place of adapt.COMPOUND_BELOW;
  - new strings shaped like a personal name (a surname of split_surnames' list, two more
    characters, none of them a transliteration's) kept only where the text has them >= 8 times:
    PKU writes a name apart (李|国安) and the general standard whole;
  - two parts the text uses far more often apart (train/new_strings.loose_pair_keys): the recipe
    without that test (before this row's stop), or with new_strings.LOOSE_SHARE at 0.4 or 0.6.

Dev files only; the heads are read once per file and every row re-assembles the words. The
oracle bound is adapt_ceiling.py's; refine's variants are in the closing notes of issue 24.

    python benchmarks/adapt_variants_dev.py --sentences 1300   # writes benchmarks/results/adapt_variants_dev.md
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapt_ceiling import change_rows, dev_files, f1  # noqa: E402
from character_lists_dev import DEV, dev_arguments  # noqa: E402
from segmenter.api import Segmenter  # noqa: E402
from segmenter.standards.rules import TABLE  # noqa: E402
from segmenter.train import adapt, new_strings  # noqa: E402
from segmenter.train.unigram import fit_unigram  # noqa: E402
from segmenter.words.hashindex import find_keys  # noqa: E402
from segmenter.train.ngram_counting import build_word_table  # noqa: E402
from segmenter.words.table import WordTable  # noqa: E402

MIN_COUNTS = (2, 3, 5, 8)
PRIOR_WEIGHTS = (1, 16, 256)  # tau: the prior's pseudo-words per word of the domain text
EM_ROUNDS = 3
TERM_SHORTEST, TERM_SEEN, TERM_TAU = 3, 5, 0.05
NAME_SEEN = 8
COMPOUND_RARER = 20
LOOSE_SHARES = (0.4, 0.6)
CHARS_PER_WORD = 1.6  # the domain text's words, for tau's scale (about 1.6 characters a word)
_NAMES = next(rule for rule in TABLE if rule.name == "split_surnames").params


def refit(table: WordTable, lines: list[str], tau: float) -> WordTable:
    """`table` with its unigram model refitted on `lines` by MAP-EM, its own model the prior."""
    ns = sorted(table.tables)
    p = np.exp(np.concatenate([table.unigram["logp"][n].astype(np.float64) for n in ns]))
    words = sum(len(line) for line in lines) / CHARS_PER_WORD
    model = fit_unigram(table, lines, EM_ROUNDS, prior=p / p.sum() * words * tau)
    return table.with_unigram({**model, "unseen": table.unigram["unseen"], "words": table.unigram["words"],
                               "chars": table.unigram["chars"]})  # the shipped scale for a brought string


def with_terms(table: WordTable, shipped: WordTable, lines: list[str]) -> WordTable:
    """`table` with the domain terms' log p raised to the refit's (see the module docstring)."""
    domain = build_word_table(lines, max_n=table.max_n, min_count=TERM_SEEN)
    refitted = refit(table, lines, TERM_TAU)
    logp = {}
    for n, (keys, _, _) in table.tables.items():
        own = table.unigram["logp"][n]
        if n < TERM_SHORTEST or n not in domain.tables or n not in shipped.tables:
            logp[n] = own
            continue
        term = find_keys(domain.tables[n][0], keys)[1] & find_keys(shipped.tables[n][0], keys)[1]
        logp[n] = np.where(term, np.maximum(own, refitted.unigram["logp"][n]), own).astype(np.float16)
    return WordTable(table.tables, table.info, {**table.unigram, "logp": logp})


def without_rare_names(shipped: WordTable, lines: list[str]) -> WordTable:
    """The recipe, with new name-shaped strings of 3 characters seen < NAME_SEEN times left out."""
    text, kept, min_count = recipe_strings(shipped, lines)
    drop = {}
    for n, hashes, at in new_strings.new_string_occurrences(shipped, kept, text):
        if n == 3:
            keys, first, seen = np.unique(hashes, return_index=True, return_counts=True)
            name = np.array([text[s] in _NAMES["surnames"] and not set(text[s + 1 : s + 3]) & set(_NAMES["foreign"])
                             for s in at[first].tolist()], dtype=bool)
            drop[n] = keys[name & (seen < NAME_SEEN)]
    kept = new_strings.without_keys(kept, [drop])
    return shipped.combined_with(kept, min_count)


def with_compounds(shipped: WordTable, lines: list[str], below: int, added_parts: bool = True) -> WordTable:
    """The recipe with rare compounds seen < `below` times left out, their parts judged by the
    shipped table and (added_parts) the strings the text adds, or by the shipped table alone."""
    text, candidates, min_count = counted(shipped, lines)
    kept = new_strings.without_phrases_and_fragments(shipped, candidates, text)
    occurrences = list(new_strings.new_string_occurrences(shipped, candidates, text))
    found = new_strings.compound_keys(shipped, text, occurrences, below, domain=kept if added_parts else None)
    loose = new_strings.loose_pair_keys(candidates, text, occurrences)
    kept = new_strings.without_keys(kept, [found, loose])
    return shipped.combined_with(kept, min_count)


def with_loose_share(shipped: WordTable, lines: list[str], share: float | None) -> WordTable:
    """The recipe with the loose-pair test at `share` (None: without it)."""
    _, kept, min_count = recipe_strings(shipped, lines, share)
    return shipped.combined_with(kept, min_count)


def recipe_strings(shipped: WordTable, lines: list[str], loose_share: float | None = new_strings.LOOSE_SHARE):
    """(the text, the new strings the recipe keeps, its min count), as adapt.adapted_table has them."""
    text, candidates, min_count = counted(shipped, lines)
    kept = new_strings.without_phrases_and_fragments(shipped, candidates, text,
                                                     compounds_below=adapt.COMPOUND_BELOW, loose_share=loose_share)
    return text, kept, min_count


def counted(shipped: WordTable, lines: list[str]):
    """(the text, its strings seen at least the min count adapt takes for its size, that count)."""
    text = "\n".join(lines)
    domain = build_word_table(lines, max_n=shipped.max_n, min_count=1)
    min_count = adapt.auto_min_count(int(domain.info["chars"]))
    return text, domain.pruned(min_count), min_count


def variants(shipped: WordTable, lines: list[str]):
    """(label, word table) of each row, the recipe first."""
    recipe = adapt.adapted_table(shipped, lines)[0]
    yield "the recipe (`segmenter adapt`)", recipe
    for k in MIN_COUNTS:
        yield f"min count {k} (not by the text's size)", adapt.adapted_table(shipped, lines, min_count=k)[0]
    for tau in PRIOR_WEIGHTS:
        yield f"unigram refitted on the text, prior tau {tau}", refit(recipe, lines, tau)
    yield (f"terms of {TERM_SHORTEST}+ characters seen >= {TERM_SEEN} times: log p raised to the refit's",
           with_terms(recipe, shipped, lines))
    yield f"new three-character names kept only when seen >= {NAME_SEEN} times", without_rare_names(shipped, lines)
    yield ("rare compounds: parts judged by the shipped table alone (before stop 52)",
           with_compounds(shipped, lines, adapt.COMPOUND_BELOW, added_parts=False))
    yield f"rare compounds: seen < {COMPOUND_RARER} times", with_compounds(shipped, lines, COMPOUND_RARER)
    yield "without the loose-pair test (before stop 53)", with_loose_share(shipped, lines, None)
    for share in LOOSE_SHARES:
        yield (f"loose pairs at {share} (parts each seen more than {1 / share:.3g} times as often as the whole)",
               with_loose_share(shipped, lines, share))


def main() -> None:
    args = dev_arguments(__doc__, "adapt_variants_dev.md")
    started = time.time()
    seg = Segmenter(standard="general")
    shipped = seg.word_table
    rows: dict[str, list[float]] = {"general, unadapted": []}
    for name, every, gold, plans in dev_files(seg, args.sentences):
        seg.word_table = shipped
        rows["general, unadapted"].append(f1(seg, gold, plans))
        for label, table in variants(shipped, ["".join(words) for words in every]):
            seg.word_table = table
            rows.setdefault(label, []).append(f1(seg, gold, plans))
        seg.word_table = shipped
        print(name, {label: round(values[-1], 4) for label, values in rows.items()}, flush=True)

    base = rows["general, unadapted"]
    lines = [
        "# Variants of adapt's word-table recipe, on six dev files", "",
        f"Word F1 of the general default on the first {args.sentences:,} sentences of each dev file, unadapted and "
        "adapted to the file's own text (the whole file, spaces removed; raw text, no labels) by the recipe and by "
        "each variant of it (benchmarks/adapt_variants_dev.py's docstring says what each does). In brackets: the "
        "change over unadapted.", "",
        f"Written by `python benchmarks/adapt_variants_dev.py --sentences {args.sentences}` "
        f"({time.time() - started:.0f} s). Dev files only.", "",
        "| | " + " | ".join(DEV) + " | mean |", "|---" + "|--:" * (len(DEV) + 1) + "|"]
    lines += [*change_rows(rows, base), ""]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
