"""Scoring a segmentation against gold: the figures of the SIGHAN bakeoff `score` script.

The official scorer (Perl, Sproat and Emerson; icwb2-data) reports, for a gold file, a
system's output and the training word list:
    RECALL     correct words / gold words
    PRECISION  correct words / output words
    F MEASURE  2PR / (P + R)
    OOV Rate          share of gold word *tokens* not in the training word list
    OOV Recall Rate   correct OOV gold words / OOV gold words
    IV Recall Rate    correct in-vocabulary gold words / in-vocabulary gold words
A word is correct when its character span (start, end) in the sentence equals a gold word's
span: a word that matches in text but sits elsewhere does not count. (The Perl script aligns
one-word-a-line files with `diff`; for two segmentations of the same characters that is the
same count, except for rare repeats such as gold "a|aa" against output "aa|a", where `diff`
credits one word that spans do not: spans are the usual reimplementation and the stricter one.)

Everything here is a pure function of word lists; reading files is `read_lexicon` and
corpus.read_gold. `Counts` add up, so sentences can be scored one by one or all at once.

Diagnostics by word length (LENGTH_BINS: 1, 2, 3, 4, 5+ characters): for each bin the gold
words, the output words and the correct words of that length, so that precision and recall by
length and the output's length histogram against gold come from the same counts. A correct
word has the same length in gold and output, so one `correct` count per bin serves both.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable


def word_spans(words: Iterable[str]) -> list[tuple[int, int]]:
    """Words -> their (start, end) character offsets in the joined sentence, end exclusive."""
    spans, start = [], 0
    for word in words:
        spans.append((start, start + len(word)))
        start += len(word)
    return spans


def read_lexicon(path: str | Path) -> frozenset[str]:
    """A training word list (one word a line, like the SIGHAN `*_training_words.txt`) -> a set.

    Lines are stripped (the Perl scorer strips them too); blank lines are skipped.
    """
    try:
        with open(path, encoding="utf-8-sig") as handle:
            words = frozenset(stripped for line in handle if (stripped := line.strip()))
    except FileNotFoundError:
        raise FileNotFoundError(f"lexicon {path}: no such file (a training word list, one word a line)") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"lexicon {path} is not UTF-8 (byte {err.start}); convert it first") from None
    if not words:
        raise ValueError(f"lexicon {path} holds no words; expected one word a line")
    return words


LENGTH_BINS = ("1", "2", "3", "4", "5+")


def length_bin(word: str) -> int:
    """Index in LENGTH_BINS of a word's length (5 and more share the last bin)."""
    return min(len(word), len(LENGTH_BINS)) - 1


@dataclass
class Counts:
    """Word counts behind the figures; `a + b` pools two sets of sentences (micro-average).

    The OOV/IV counts stay 0 when no lexicon was given (the figures are then None).
    """

    gold: int = 0  # gold words
    test: int = 0  # output words
    correct: int = 0  # output words whose span is a gold word's span
    oov: int = 0  # gold words not in the lexicon
    oov_correct: int = 0
    iv_correct: int = 0
    # per LENGTH_BINS bin: gold words, output words, correct words of that length
    gold_by_length: tuple[int, ...] = (0,) * len(LENGTH_BINS)
    test_by_length: tuple[int, ...] = (0,) * len(LENGTH_BINS)
    correct_by_length: tuple[int, ...] = (0,) * len(LENGTH_BINS)

    def __add__(self, other: "Counts") -> "Counts":
        def add(a, b):
            return tuple(x + y for x, y in zip(a, b)) if isinstance(a, tuple) else a + b

        return Counts(*(add(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))


def _visible(words: Iterable[str]) -> list[str]:
    """Drop whitespace tokens: the SIGHAN files separate words by spaces, so spaces are never words."""
    return [w for w in words if w and not w.isspace()]


def count_sentence(gold: list[str], test: list[str], lexicon: frozenset[str] | set[str] | None = None) -> Counts:
    """Counts for one sentence. Both word lists must join to the same characters."""
    gold, test = _visible(gold), _visible(test)
    if "".join(gold) != "".join(test):
        raise ValueError(
            "the output's characters differ from the gold sentence's, so word spans cannot be compared:\n"
            f"  gold:   {''.join(gold)[:80]!r}\n  output: {''.join(test)[:80]!r}\n"
            "a segmenter must return every input character once, in order"
        )
    test_spans = set(word_spans(test))
    counts = Counts(gold=len(gold), test=len(test))
    gold_bins, test_bins, correct_bins = [0] * len(LENGTH_BINS), [0] * len(LENGTH_BINS), [0] * len(LENGTH_BINS)
    for word in test:
        test_bins[length_bin(word)] += 1
    for word, span in zip(gold, word_spans(gold)):
        hit = span in test_spans
        counts.correct += hit
        gold_bins[length_bin(word)] += 1
        correct_bins[length_bin(word)] += hit
        if lexicon is not None:
            if word in lexicon:
                counts.iv_correct += hit
            else:
                counts.oov += 1
                counts.oov_correct += hit
    counts.gold_by_length, counts.test_by_length, counts.correct_by_length = (
        tuple(gold_bins), tuple(test_bins), tuple(correct_bins))
    return counts


def count_corpus(
    gold: list[list[str]], test: list[list[str]], lexicon: frozenset[str] | set[str] | None = None
) -> Counts:
    """Counts pooled over sentences; gold[i] and test[i] are the same sentence."""
    if len(gold) != len(test):
        raise ValueError(f"gold has {len(gold)} sentences but the output has {len(test)}; "
                         "they must pair up line by line")
    total = Counts()
    for i, (gold_words, test_words) in enumerate(zip(gold, test)):
        try:
            total += count_sentence(gold_words, test_words, lexicon)
        except ValueError as err:
            raise ValueError(f"sentence {i + 1}: {err}") from None
    return total


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class Scores:
    """The SIGHAN figures as fractions in [0, 1] (the Perl script prints them to 3 decimals).

    OOV figures are None without a lexicon, and a recall is None when it has no words to count.
    """

    P: float
    R: float
    F1: float
    oov_rate: float | None
    oov_recall: float | None
    iv_recall: float | None
    counts: Counts

    @classmethod
    def from_counts(cls, counts: Counts, with_lexicon: bool) -> "Scores":
        precision = _ratio(counts.correct, counts.test) or 0.0
        recall = _ratio(counts.correct, counts.gold) or 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        iv = counts.gold - counts.oov
        return cls(
            P=precision,
            R=recall,
            F1=f1,
            oov_rate=_ratio(counts.oov, counts.gold) if with_lexicon else None,
            oov_recall=_ratio(counts.oov_correct, counts.oov) if with_lexicon else None,
            iv_recall=_ratio(counts.iv_correct, iv) if with_lexicon else None,
            counts=counts,
        )

    def by_length(self) -> dict[str, dict]:
        """{bin: {gold, test, correct, P, R}} for the bins of LENGTH_BINS (P/R None when empty)."""
        c = self.counts
        return {
            name: {"gold": g, "test": t, "correct": k, "P": _ratio(k, t), "R": _ratio(k, g)}
            for name, g, t, k in zip(LENGTH_BINS, c.gold_by_length, c.test_by_length, c.correct_by_length)
        }

    def as_dict(self) -> dict:
        """Flat figures (P, R, F1, oov_rate, oov_recall, iv_recall), the word counts, and
        `by_length`: precision, recall and word counts per length bin (gold and output)."""
        data = asdict(self)
        counts = data.pop("counts")
        for name in ("gold_by_length", "test_by_length", "correct_by_length"):
            counts.pop(name)
        data.update({f"{name}_words": value for name, value in counts.items()})
        data["by_length"] = self.by_length()
        return data

    def report(self) -> str:
        """The figures in the layout of the Perl script's summary."""
        def show(value):
            return "n/a" if value is None else f"{value:.3f}"

        return "\n".join(
            [
                f"=== TOTAL TRUE WORD COUNT:\t{self.counts.gold}",
                f"=== TOTAL TEST WORD COUNT:\t{self.counts.test}",
                f"=== RECALL:\t{show(self.R)}",
                f"=== PRECISION:\t{show(self.P)}",
                f"=== F MEASURE:\t{show(self.F1)}",
                f"=== OOV Rate:\t{show(self.oov_rate)}",
                f"=== OOV Recall Rate:\t{show(self.oov_recall)}",
                f"=== IV Recall Rate:\t{show(self.iv_recall)}",
            ]
        )


def length_table(scores: "Scores") -> dict[str, list]:
    """Compact per-bin lists for reports: recall, precision, gold and output word counts."""
    rows = scores.by_length()
    return {key: [rows[b][key] for b in LENGTH_BINS] for key in ("R", "P", "gold", "test")}


def score(
    gold: list[list[str]], test: list[list[str]], lexicon: frozenset[str] | set[str] | None = None
) -> Scores:
    """SIGHAN figures of `test` against `gold` (lists of sentences, each a list of words)."""
    return Scores.from_counts(count_corpus(gold, test, lexicon), with_lexicon=lexicon is not None)
