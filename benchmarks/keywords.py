"""Keywords of segmenter.analyse beside jieba.analyse's, on news paragraphs and held-out raw text.

Two sets of paragraphs: "news", consecutive sentences of pku_test.txt (People's Daily, 2001;
not in the raw text the IDF table was built from) joined, spaces removed, until a paragraph
holds --min-chars characters; "raw", lines of extra_raw.txt that build_idf.py left out of its
sample (non-empty line numbers 5, 15, 25, ...) of --min-chars to 1,500 characters. The gold
file is only read as text here, and for one reference row: the gold words' own keywords.

For each paragraph the top 10 of each extractor; the overlap of two extractors is
|A & B| / min(|A|, |B|, 10), averaged over the paragraphs. Besides ours against jieba, rows that
swap one part at a time tell what makes the difference: our words with jieba's IDF table (the
segmentation alone), jieba's words with ours (the table alone), for TextRank jieba's words
without its part-of-speech filter (the filter alone). Each word in one top 10 and not in the
other is put down to segmentation when the other side never cuts that word in the paragraph,
else to weighting (the other cuts it, but ranks it lower).

    python benchmarks/keywords.py --paragraphs 300 --markdown benchmarks/results/keywords.md
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
from collections import Counter
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jieba  # noqa: E402
import jieba.analyse  # noqa: E402
import jieba.posseg  # noqa: E402

import segmenter  # noqa: E402
from segmenter import analyse  # noqa: E402
from segmenter.analyse import TFIDF, TextRank  # noqa: E402
from segmenter.analyse.tfidf import is_numeral  # noqa: E402
from segmenter.train.idf import sample_lines  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora"
JIEBA_IDF = os.path.join(os.path.dirname(jieba.analyse.__file__), "idf.txt")
TOP = 10


class Cached:
    """A tokenizer that cuts each text once (the rows below reuse the same words)."""

    def __init__(self, cut):
        self.cut_text, self.cache = cut, {}

    def cut(self, sentence):
        if sentence not in self.cache:
            self.cache[sentence] = list(self.cut_text(sentence))
        return iter(self.cache[sentence])


def news_paragraphs(path: Path, count: int, min_chars: int) -> tuple[list[str], list[list[str]]]:
    """(texts, gold words) of paragraphs made of consecutive gold sentences."""
    texts, golds, words = [], [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            words += line.split()
            if sum(map(len, words)) >= min_chars:
                texts.append("".join(words))
                golds.append(words)
                words = []
                if len(texts) == count:
                    break
    return texts, golds


def raw_paragraphs(path: Path, count: int, min_chars: int) -> list[str]:
    lines = sample_lines(path, every=10, offsets=(5,))
    return list(islice((x for x in lines if min_chars <= len(x) <= 1500), count))


def overlap(a: list[str], b: list[str]) -> float:
    n = min(len(a), len(b), TOP)
    return len(set(a[:TOP]) & set(b[:TOP])) / n if n else 1.0


def mean(values) -> float:
    return statistics.fmean(values) if values else float("nan")


def run_set(name: str, texts: list[str], golds: list[list[str]] | None, ours_cut: Cached, coarse_cut: Cached,
            jieba_cut: Cached, jieba_pos: Cached, timings: Counter) -> dict:
    """Top 10s of every extractor for every paragraph. "ours" and "jieba" are both as shipped
    (stop words included); the other rows use our stop words and filters on both sides (the
    TF-IDF rows run our TFIDF class, which is jieba's code plus the filters), so that only the
    part they name differs."""
    jieba.analyse.default_tfidf.tokenizer = jieba_cut
    jieba.analyse.default_textrank.tokenizer = jieba_pos
    jieba_rank_stops = jieba.analyse.TextRank()  # jieba's code, words and POS filter; our stop words
    jieba_rank_stops.tokenizer = jieba_pos
    extractors = {
        "ours": TFIDF(tokenizer=ours_cut),
        "jieba words and IDF, our filters": TFIDF(JIEBA_IDF, tokenizer=jieba_cut),
        "ours words, jieba IDF": TFIDF(JIEBA_IDF, tokenizer=ours_cut),
        "jieba words, our IDF": TFIDF(tokenizer=jieba_cut),
        "ours, coarse words": TFIDF(tokenizer=coarse_cut),
        "ours textrank": TextRank(tokenizer=ours_cut),
        "ours textrank, coarse words": TextRank(tokenizer=coarse_cut),
        "jieba textrank, our stop words": jieba_rank_stops,
        "jieba words textrank, no POS filter": TextRank(tokenizer=jieba_cut),
    }
    if golds is not None:
        by_text = dict(zip(texts, golds))
        extractors["gold words, jieba IDF"] = TFIDF(JIEBA_IDF, tokenizer=lambda text: iter(by_text[text]))
    jieba_rank_stops.stop_words |= analyse.default_tfidf.stop_words
    tops: dict[str, list[list[str]]] = {key: [] for key in [*extractors, "jieba", "jieba textrank"]}
    for text in texts:
        start = time.perf_counter()
        ours_cut.cut(text)
        timings["ours: segment"] += time.perf_counter() - start
        start = time.perf_counter()
        coarse_cut.cut(text)
        timings["ours, coarse: segment"] += time.perf_counter() - start
        start = time.perf_counter()
        jieba_cut.cut(text)
        jieba_pos.cut(text)
        timings["jieba: segment, and segment and tag"] += time.perf_counter() - start
        for key, extractor in extractors.items():
            tops[key].append(extractor.extract_tags(text, topK=TOP))
        tops["jieba"].append(jieba.analyse.extract_tags(text, topK=TOP))
        tops["jieba textrank"].append(jieba.analyse.textrank(text, topK=TOP))
    return {"name": name, "texts": texts, "tops": tops}


def compare(result: dict, a: str, b: str) -> list[float]:
    return [overlap(x, y) for x, y in zip(result["tops"][a], result["tops"][b])]


def reasons(result: dict, a: str, b: str, a_cut: Cached, b_cut: Cached) -> Counter:
    """Why a word is in one top 10 and not the other: the other side never cuts it (segmentation)
    or cuts it and ranks it lower (weighting)."""
    found = Counter()
    for text, x, y in zip(result["texts"], result["tops"][a], result["tops"][b]):
        x_words, y_words = set(a_cut.cut(text)), set(b_cut.cut(text))
        for word in set(x[:TOP]) - set(y[:TOP]):
            found[f"{a} only: segmentation" if word not in y_words else f"{a} only: weighting"] += 1
        for word in set(y[:TOP]) - set(x[:TOP]):
            found[f"{b} only: segmentation" if word not in x_words else f"{b} only: weighting"] += 1
    return found


def pos_reasons(result: dict, jieba_pos: Cached) -> Counter:
    """Our textrank words that jieba's textrank lacks: does jieba tag them outside ('ns','n','vn','v')?"""
    found = Counter()
    allowed = {"ns", "n", "vn", "v"}
    for text, x, y in zip(result["texts"], result["tops"]["ours textrank"], result["tops"]["jieba textrank"]):
        flags = {}
        for p in jieba_pos.cut(text):
            flags.setdefault(p.word, set()).add(p.flag)
        for word in set(x[:TOP]) - set(y[:TOP]):
            if word not in flags:
                found["jieba never cuts it"] += 1
            elif not flags[word] & allowed:
                found["jieba cuts it, POS filter drops it"] += 1
            else:
                found["jieba keeps it, ranks it lower"] += 1
    return found


def example_rows(result: dict, a: str, b: str, count: int) -> list[str]:
    scores = compare(result, a, b)
    order = sorted(range(len(scores)), key=lambda i: (scores[i], i))[:count]
    lines = []
    for i in order:
        x, y = result["tops"][a][i], result["tops"][b][i]
        text = result["texts"][i]
        mark = lambda words, other: " ".join(w if w in other else f"**{w}**" for w in words)  # noqa: E731
        lines += [f"- paragraph {i} ({len(text)} chars, overlap {scores[i]:.1f}): {text[:80]}…",
                  f"  - {a}: {mark(x, y)}", f"  - {b}: {mark(y, x)}"]
    return lines


def table(result: dict, rows: list[tuple[str, str, str]]) -> list[str]:
    out = ["| compared | top-10 overlap | what differs |", "|---|--:|---|"]
    for a, b, note in rows:
        if a in result["tops"] and b in result["tops"]:
            out.append(f"| {a} vs {b} | {mean(compare(result, a, b)):.3f} | {note} |")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paragraphs", type=int, default=300, help="paragraphs of each set")
    parser.add_argument("--min-chars", type=int, default=250)
    parser.add_argument("--examples", type=int, default=4)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args(argv)

    jieba.setLogLevel(60)
    jieba.initialize()
    model = segmenter.Segmenter(num_threads=1)
    coarse = segmenter.Segmenter(num_threads=1, granularity="coarse")
    ours_cut, coarse_cut, jieba_cut = Cached(model.cut), Cached(coarse.cut), Cached(jieba.dt.cut)
    jieba_pos = Cached(jieba.posseg.dt.cut)
    texts, golds = news_paragraphs(SHARED / "gold" / "pku_test.txt", args.paragraphs, args.min_chars)
    raw = raw_paragraphs(SHARED / "raw" / "extra_raw.txt", args.paragraphs, args.min_chars)
    timings: Counter = Counter()
    start = time.perf_counter()
    cuts = (ours_cut, coarse_cut, jieba_cut, jieba_pos, timings)
    results = [run_set("news (pku_test)", texts, golds, *cuts),
               run_set("raw (held-out extra_raw lines)", raw, None, *cuts)]
    seconds = time.perf_counter() - start
    idf = analyse.read_idf(analyse.DEFAULT_IDF)

    tfidf_rows = [
        ("ours", "jieba", "everything: words, IDF table, stop words and filters"),
        ("jieba words and IDF, our filters", "jieba", "our stop words and filters alone"),
        ("ours, coarse words", "jieba", "everything, our words at granularity=\"coarse\""),
        ("ours words, jieba IDF", "jieba words and IDF, our filters", "the words alone (same table, filters)"),
        ("jieba words, our IDF", "jieba words and IDF, our filters", "the table alone (same words, filters)"),
        ("gold words, jieba IDF", "jieba words and IDF, our filters", "reference: gold words vs jieba's words"),
        ("gold words, jieba IDF", "ours words, jieba IDF", "reference: gold words vs our words"),
    ]
    textrank_rows = [
        ("ours textrank", "jieba textrank", "everything: words, POS filter, stop words"),
        ("jieba textrank, our stop words", "jieba textrank", "the stop words alone"),
        ("ours textrank, coarse words", "jieba textrank", "everything, our words at granularity=\"coarse\""),
        ("jieba words textrank, no POS filter", "jieba textrank, our stop words", "jieba's POS filter alone"),
        ("ours textrank", "jieba words textrank, no POS filter", "the words alone (no POS filter on both)"),
        ("ours textrank", "ours", "our TextRank vs our TF-IDF"),
        ("jieba textrank", "jieba", "jieba's TextRank vs jieba's TF-IDF"),
    ]
    lines = [
        "# Keywords: segmenter.analyse vs jieba.analyse",
        "",
        f"Command: `{shlex.join(['python', 'benchmarks/keywords.py', *sys.argv[1:]])}` "
        f"({seconds / 60:.1f} min on 2 shared CPU cores; jieba {jieba.__version__})",
        "",
        f"Our IDF table: {analyse.DEFAULT_IDF.relative_to(ROOT)}, {len(idf):,} words, "
        f"{analyse.DEFAULT_IDF.stat().st_size / 2**20:.1f} MiB (benchmarks/build_idf.py has its command); "
        f"jieba's: {len(jieba.analyse.default_tfidf.idf_freq):,} words. \"ours\" and \"jieba\" run as shipped: "
        "jieba's stop words are 32 English words, ours add segmenter/analyse/stop_words.txt (Chinese "
        "function words), and ours never return numerals (1998, １２月, 80%) or punctuation runs; the rows "
        "that swap one part give jieba our stop words and filters too. jieba's TextRank keeps "
        "its default allowPOS ('ns', 'n', 'vn', 'v'); ours has no POS filter. Overlap: |A & B| / "
        "min(|A|, |B|, 10) of the top 10s, averaged over the paragraphs.",
        "",
    ]
    for result in results:
        n = len(result["texts"])
        chars = sum(map(len, result["texts"]))
        lines += [f"## {result['name']}: {n} paragraphs, {chars:,} characters", "", "TF-IDF (extract_tags):", ""]
        lines += table(result, tfidf_rows) + ["", "TextRank:", ""] + table(result, textrank_rows) + [""]
        why = reasons(result, "ours", "jieba", ours_cut, jieba_cut)
        why_rank = reasons(result, "ours textrank", "jieba textrank", ours_cut, jieba_cut)
        lines += ["Why a top-10 word is on one side only (segmentation: the other side never cuts that "
                  "word in the paragraph; weighting: it does, and ranks it lower):", ""]
        lines += ["- TF-IDF: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items()))]
        lines += ["- TextRank: " + ", ".join(f"{k} {v}" for k, v in sorted(why_rank.items()))]
        pos = pos_reasons(result, jieba_pos)
        lines += ["- our TextRank's words that jieba's lacks: " + ", ".join(f"{k} {v}" for k, v in pos.most_common())]
        length = {key: mean([len(w) for top in result["tops"][key] for w in top])
                  for key in ("ours", "ours, coarse words", "jieba")}
        numerals = sum(is_numeral(w) for top in result["tops"]["jieba"] for w in top)
        lines += [f"- numerals in jieba's TF-IDF top 10s (ours drops them): {numerals} of "
                  f"{sum(map(len, result['tops']['jieba']))} words"]
        lines += ["- mean keyword length (TF-IDF top 10): " + ", ".join(f"{k} {v:.2f}" for k, v in length.items())
                  + " characters", ""]
        lines += ["Lowest TF-IDF overlaps (bold: not in the other top 10):", ""]
        lines += example_rows(result, "ours", "jieba", args.examples) + [""]
        lines += ["Lowest TextRank overlaps:", ""]
        lines += example_rows(result, "ours textrank", "jieba textrank", args.examples) + [""]
    lines += ["Segmenting time of the run (single process, contended cores: rough): "
              + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()), ""]
    report = "\n".join(lines)
    print(report)
    if args.markdown:
        Path(args.markdown).write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
