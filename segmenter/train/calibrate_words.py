"""The user's words from a few examples: what `segmenter calibrate` learns beside the rules.

A standard (levels.py) says how to cut in general: numerals and classifiers, surnames, suffixes.
What it cannot say is how an annotator treats particular strings: a novel's names (韩立 whole),
a medical text's terms (接触性皮炎 whole), a corpus's habits (一|个 cut in one, 一个 whole in
another). The sentences that calibrate say it, and the user dictionary (dictionary.py) can carry
it: a string kept whole (add_word) or always cut into pieces (suggest_freq(pieces, True)).

learn_corrections compares the words of the calibrating sentences with the segmenter's own
(under the calibrated standard) and proposes, where they differ:
  - a join: a word of the sentences that the segmenter cut inside;
  - a split: a word of the segmenter that the sentences write as several whole words.
A proposal is kept when, over every occurrence of its string in the sentences, the sentences'
words agree with it at least `min_share` of the time, at least `min_count` times. Then the
dictionary fixes the string everywhere, which is right where the annotator is consistent.

Chosen on the six dev files (first 100 sentences calibrate, the next 1,000 score: benchmarks/
standards_dev.py): min_count 1 and min_share 0.75 raised word F1 on every file; min_count 2 and
3 less on each (a novel's names and a medical text's terms recur, but few of them twice in 100
sentences); min_share 0.6-0.9 changed nothing measurable.
"""
from __future__ import annotations

from itertools import accumulate

MAX_JOIN = 8  # characters: longer gold words are names of things that rarely recur whole


def word_edges(words: list[str], offset: int = 0) -> list[int]:
    """Offsets (from `offset`) of every word edge of a sentence, in order, its start and end included."""
    return [offset, *(offset + end for end in accumulate(map(len, words)))]


def learn_corrections(gold: list[list[str]], predicted: list[list[str]], min_count: int = 1,
                      min_share: float = 0.75) -> list[tuple[str, ...]]:
    """Dictionary entries, as pieces ((word,) kept whole; (a, b, ...) a forced split), that make
    `predicted` agree with `gold` (the same sentences, as word lists), in the order first met."""
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} sentences and predicted {len(predicted)}")
    texts = ["".join(words) for words in gold]
    if texts != ["".join(words) for words in predicted]:
        raise ValueError("predicted words do not join back to the gold sentences")
    # All sentences in one string (a newline between two: no word crosses it), and their edges.
    starts = [0, *accumulate(len(t) + 1 for t in texts)][:-1]
    joined = "\n".join(texts)
    gold_edges = [word_edges(words, start) for words, start in zip(gold, starts)]
    predicted_edges = [word_edges(words, start) for words, start in zip(predicted, starts)]
    gold_ends = {b for edges in gold_edges for b in edges}
    predicted_ends = {b for edges in predicted_edges for b in edges}

    proposals: dict[str, tuple[str, ...]] = {}
    for edges in gold_edges:
        for begin, end in zip(edges, edges[1:]):
            inside = any(b in predicted_ends for b in range(begin + 1, end))
            if 2 <= end - begin <= MAX_JOIN and inside:  # a gold word the segmenter cut
                proposals.setdefault(joined[begin:end], (joined[begin:end],))
    for edges in predicted_edges:
        for begin, end in zip(edges, edges[1:]):
            cuts = [b for b in range(begin + 1, end) if b in gold_ends]
            if cuts and begin in gold_ends and end in gold_ends:  # gold writes it as whole words
                bounds = [begin, *cuts, end]
                proposals.setdefault(joined[begin:end], tuple(joined[a:b] for a, b in zip(bounds, bounds[1:])))

    kept = []
    for string, pieces in proposals.items():
        inner = list(accumulate(map(len, pieces)))[:-1]  # cut offsets inside the string
        agree = disagree = 0
        at = joined.find(string)
        while at >= 0:
            wanted = {at, at + len(string), *(at + k for k in inner)}
            gold_here = {b for b in range(at, at + len(string) + 1) if b in gold_ends}
            if gold_here == wanted:
                agree += 1
            else:
                disagree += 1
            at = joined.find(string, at + 1)
        if agree >= min_count and agree >= min_share * (agree + disagree):
            kept.append(pieces)
    return kept

