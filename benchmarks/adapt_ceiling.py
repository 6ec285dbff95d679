"""How far adapting the word table could go at best: an oracle lexicon on the six dev files.

`segmenter adapt` adds to the word table the strings it finds in a domain's raw text. To bound
what any such word finding could gain, this takes the adapted default's words and forces whole
the gold file's own recurring words: every string the gold writes as one word in at least
SHARE of its occurrences and at least MIN_WHOLE times, of at least 4, 3 or 2 characters
(three rows). Found left to right, the longest at each character (forward maximum matching),
each is cut at its ends and joined inside. The lexicon reads the gold, so it is a ceiling,
never a recipe: a finder that reads raw text cannot know which strings an annotator writes
whole. Whatever stays below it is the annotators' conventions for short words (一|个, 好发|于,
4月), which no list of domain words mends.

General standard, embedded default, first --sentences of each dev file; the adapted table is
`train.adapt.adapted_table` on the whole dev file with its spaces removed, as
benchmarks/standards_dev.py adapts it. Dev files only.

    python benchmarks/adapt_ceiling.py   # writes benchmarks/results/adapt_ceiling.md
"""
from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from character_lists_dev import DEV, GOLD, dev_arguments  # noqa: E402
from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402
from segmenter.train.adapt import adapted_table  # noqa: E402

SHARE = 0.8  # the gold writes the string whole in this share of its occurrences in the text ...
MIN_WHOLE = 3  # ... and at least this many times
SHORTEST = (4, 3, 2)  # one row per shortest word length of the lexicon
HAN_WORD = re.compile(r"[\u4e00-\u9fff]+")


def oracle_lexicon(gold: list[list[str]], shortest: int) -> set[str]:
    """The Han words of `gold` of >= `shortest` characters that it writes whole in >= SHARE of the
    occurrences of their string in its text (whole or not), >= MIN_WHOLE times."""
    whole = Counter(w for words in gold for w in words if len(w) >= shortest and HAN_WORD.fullmatch(w))
    text = "\n".join("".join(words) for words in gold)
    return {w for w, n in whole.items() if n >= MIN_WHOLE and n >= SHARE * text.count(w)}


def forced(words: list[str], lexicon: set[str], longest: int) -> list[str]:
    """`words` with the lexicon's words made whole (cut at their ends, not inside), found left to
    right, the longest at each character (forward maximum matching); an occurrence overlapping one
    found before it is skipped."""
    text = "".join(words)
    ends, at = set(), 0
    for w in words:
        at += len(w)
        ends.add(at)
    start = 0
    while start < len(text):
        end = next((start + n for n in range(min(longest, len(text) - start), 1, -1)
                    if text[start : start + n] in lexicon), None)
        if end is None:
            start += 1
            continue
        ends.difference_update(range(start + 1, end))
        ends.update((start, end))
        start = end
    ends.discard(0)
    cuts = [0, *sorted(ends)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


def dev_files(seg: Segmenter, sentences: int):
    """Per dev file: (name, every gold sentence, the first `sentences` of them, their heads' scores
    read once: each row re-assembles them with its word table)."""
    for name in DEV:
        every = read_gold(GOLD / f"{name}.txt")
        gold = every[:sentences]
        yield name, every, gold, seg.score_texts(["".join(words) for words in gold], show_progress=False)


def f1(seg: Segmenter, gold: list[list[str]], plans) -> float:
    """Word F1 of `seg`'s words (its word table as it is now) from the heads' scores `plans`."""
    return score(gold, [[t.word for t in ts] for ts in seg.assemble(plans)]).F1


def change_rows(rows: dict[str, list[float]], base: list[float]) -> list[str]:
    """Markdown rows: each label's F1 per dev file and their mean, the change over `base` (one of
    the rows, shown bare) in brackets. adapt_variants_dev.py writes its table so too."""
    lines, base_mean = [], sum(base) / len(base)
    for label, values in rows.items():
        mean = sum(values) / len(values)
        cells = [f"{v:.4f}" if values is base else f"{v:.4f} ({v - b:+.4f})" for v, b in zip(values, base)]
        total = f"{mean:.4f}" if values is base else f"{mean:.4f} ({mean - base_mean:+.4f})"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {total} |")
    return lines


def main() -> None:
    args = dev_arguments(__doc__, "adapt_ceiling.md")
    started = time.time()
    seg = Segmenter()
    shipped = seg.word_table
    rows = {"general, unadapted": [], "adapted (the recipe)": [],
            **{f"adapted + oracle lexicon, words of {n}+ characters": [] for n in SHORTEST}}
    sizes = []
    for name, every, gold, plans in dev_files(seg, args.sentences):
        seg.word_table = shipped
        rows["general, unadapted"].append(f1(seg, gold, plans))
        seg.word_table = adapted_table(shipped, ["".join(words) for words in every])[0]
        adapted = [[t.word for t in ts] for ts in seg.assemble(plans)]
        rows["adapted (the recipe)"].append(score(gold, adapted).F1)
        sizes.append([])
        for n in SHORTEST:
            lexicon = oracle_lexicon(every, n)
            sizes[-1].append(len(lexicon))
            rows[f"adapted + oracle lexicon, words of {n}+ characters"].append(
                score(gold, [forced(words, lexicon, max(map(len, lexicon), default=0)) for words in adapted]).F1)
        print(name, {k: round(v[-1], 4) for k, v in rows.items()}, flush=True)

    base = rows["general, unadapted"]
    lines = [
        f"Word F1 of the general default on the first {args.sentences:,} sentences of each dev file: "
        "unadapted, adapted to the file's own text (the whole file, spaces removed: `train.adapt.adapted_table`), "
        "and adapted with the gold file's own recurring words forced whole (an oracle: it reads the gold, "
        f"so it bounds what finding words in raw text could give; words the gold writes whole in >= {SHARE:.0%} "
        f"of their string's occurrences and >= {MIN_WHOLE} times). In brackets: the change over unadapted.",
        "", f"Written by `python benchmarks/adapt_ceiling.py --sentences {args.sentences}` "
        f"({time.time() - started:.0f} s). Dev files only.", "",
        "| | " + " | ".join(DEV) + " | mean |", "|---" + "|--:" * (len(DEV) + 1) + "|"]
    lines += change_rows(rows, base)
    lines += ["", "Lexicon sizes (words of 4+ / 3+ / 2+ characters): "
              + ", ".join(f"{name} {' / '.join(map(str, s))}" for name, s in zip(DEV, sizes)) + ".", ""]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
