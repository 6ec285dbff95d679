"""Which gold words a system misses on a dev file, and how: split into pieces, or merged away.

For every gold word whose span the output does not have: "over-split" when output words tile
its span exactly (办公室 -> 办公|室), "merged" when an output word runs past one of its ends
(the gold 经济 | 发展 -> 经济发展), "crossed" otherwise. Prints the most frequent gold words of
each kind with the output they became, and the recall by word length.

    python benchmarks/diagnose.py ../shared/corpora/gold/pku_dev.txt --limit 500
    python benchmarks/diagnose.py ../shared/corpora/gold/msr_dev.txt --system segmenter:words --model FOLDER
    python benchmarks/diagnose.py ../shared/corpora/gold/pku_dev.txt --system jieba

Dev files only: test files are refused (they only report, never guide).
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from segmenter.bench.evaluation import LENGTH_BINS, length_table, score, word_spans  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

SYSTEMS = ("segmenter", "segmenter:words", "jieba")


def segment(system: str, texts: list[str], model: str | None) -> list[list[str]]:
    if system == "jieba":
        import jieba

        jieba.setLogLevel(60)
        return [jieba.lcut(text) for text in texts]
    from segmenter.api import Segmenter

    decode = "words" if system == "segmenter:words" else "threshold"
    return Segmenter(model, decode=decode).segment_batch(texts, show_progress=False)


def classify(gold: list[list[str]], output: list[list[str]]) -> dict[str, Counter]:
    """kind -> Counter of (gold word, what the output made of its span)."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    for gold_words, out_words in zip(gold, output):
        out_words = [w for w in out_words if w and not w.isspace()]
        out_spans = word_spans(out_words)
        have = set(out_spans)
        starts = {s for s, _ in out_spans} | {len("".join(out_words))}
        ends = {e for _, e in out_spans} | {0}
        for word, (a, b) in zip(gold_words, word_spans(gold_words)):
            if (a, b) in have:
                continue
            touching = [w for w, (s, e) in zip(out_words, out_spans) if s < b and e > a]
            if a in ends and b in starts:  # output words tile the gold span: split inside it
                kinds["over-split"][(word, "|".join(touching))] += 1
            elif len(touching) == 1:  # one output word holds it and more
                kinds["merged"][(word, touching[0])] += 1
            else:
                kinds["crossed"][(word, "|".join(touching))] += 1
    return kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", help="a dev gold file (words split by spaces)")
    parser.add_argument("--system", choices=SYSTEMS, default="segmenter")
    parser.add_argument("--model", default=None, help="model folder (default: the embedded model)")
    parser.add_argument("--limit", type=int, default=500, help="first N sentences (default: 500)")
    parser.add_argument("--top", type=int, default=25, help="words listed per kind (default: 25)")
    args = parser.parse_args(argv)
    if "_test" in Path(args.gold).name:
        parser.error(f"{args.gold} looks like a test file; diagnose on dev files only")
    gold = read_gold(args.gold, args.limit)
    output = segment(args.system, ["".join(words) for words in gold], args.model)
    scores = score(gold, output)
    table = length_table(scores)
    print(f"{args.system} on {Path(args.gold).name}, first {len(gold)} sentences: F1 {scores.F1:.3f}")
    print("length     " + "".join(f"{b:>8}" for b in LENGTH_BINS))
    for key, show in (("gold", "{:>8,}"), ("test", "{:>8,}"), ("R", "{:>8.2f}"), ("P", "{:>8.2f}")):
        name = {"gold": "gold words", "test": "out words", "R": "recall", "P": "precision"}[key]
        print(f"{name:<11}" + "".join("       –" if v is None else show.format(v) for v in table[key]))
    kinds = classify(gold, output)
    for kind in ("over-split", "merged", "crossed"):
        pairs = kinds.get(kind, Counter())
        by_word = Counter()
        for (word, _), n in pairs.items():
            by_word[word] += n
        print(f"\n{kind}: {sum(pairs.values()):,} gold words; most frequent (gold word ×count: output)")
        for word, n in by_word.most_common(args.top):
            made = Counter({out: c for (w, out), c in pairs.items() if w == word}).most_common(2)
            print(f"  {word} ×{n}: " + ", ".join(f"{out} ({c})" for out, c in made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
