"""The named standards and the choice of the general default, on six dev files.

Word F1 of the embedded model on the first N sentences of each dev file (news: pku_dev, msr_dev,
ud_gsdsimp_dev; other domains and annotators: weibo_dev, novel_dev, derm_dev; fewer where a file
is shorter), for jieba, each named standard (levels.STANDARDS) and each candidate for the
general default: the switches of levels.Rules that no single corpus settles (names whole or
split, suffixes, counts, 2+1 pairs by the unigram model) at the default threshold. The general
standard is the candidate with the best mean F1 among those with no file below jieba, means
within TIE of each other counting as ties that the worst file's margin over jieba settles (margins
within TIE of the best margin are ties again, and the best mean among them wins).
Dev files only; the heads are read once and each row re-assembles the words (assembly.py).

    python benchmarks/standards_dev.py      # writes benchmarks/results/standards_dev.md
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402
from segmenter.standards.levels import JOIN3_LOGP, STANDARDS, Standard  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
CALIBRATE = 100  # sentences that calibrate, in the calibrate table
TIE = 0.001  # F1 closer than this is a tie (noise): means, then the worst file's margins over jieba
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")
REFINE_SEEDS = (0, 1, 2)  # adapt --refine once per seed: its F1 moves by about ±0.001 between them


def candidates() -> list[Standard]:
    """The general default's candidates: PKU's rules with the switches no corpus settles."""
    pku = STANDARDS["pku"]
    out = []
    lists = {True: "１． whole", "any": "１． 1. whole", False: "list numbers apart"}
    for surnames, coarse_suffixes, counts, join3, units, list_numbers in itertools.product(
            (True, False), (False, True), ("default", "fine"), (None, JOIN3_LOGP), ("any", True), (True, "any", False)):
        rules = replace(pku.rules, split_surnames=surnames, coarse_suffixes=coarse_suffixes, counts=counts,
                        join3_logp=join3, number_units=units, join_list_numbers=list_numbers)
        name = (f"names {'split' if surnames else 'whole'}, {'all' if coarse_suffixes else 'PKU'} suffixes, "
                f"counts {counts}, 2+1 by model {'on' if join3 else 'off'}, "
                f"ASCII numbers {'with their unit' if units == 'any' else 'apart from their unit but 万 亿'}, "
                f"{lists[list_numbers]}")
        out.append(replace(pku, name=name, rules=rules))
    return out


def adapt_rows(seg: Segmenter, every: dict, gold: dict, every_plans: dict, tables: dict,
               seeds: tuple[int, ...]) -> list[tuple]:
    """Per dev file: (name, Han chars, min count, n-grams added, seconds, F1 general, F1 adapted,
    F1 adapted with the head refined too (`segmenter adapt --refine`) over `seeds`: its mean and its
    (lowest, highest), None and (None, None) without seeds, the mean seconds of those commands, and
    the same three F1 figures scored on the whole file (the text adapted to) as a tuple: general,
    adapted, refined mean (None without seeds)). every: each file's sentences, gold: its first ones,
    every_plans: the heads' scores of every sentence, tables: adapt_table's (table, Han chars, min
    count, seconds) per file."""
    from segmenter.train.adapt import adapt

    seg.standard, shipped, rows = STANDARDS["general"], seg.word_table, []
    for n in DEV:
        def f1s(model: Segmenter, plans: list) -> tuple[float, float]:
            """F1 on the first sentences and on the whole file, from the heads' scores of every sentence."""
            return tuple(score(g, [[t.word for t in ts] for ts in model.assemble(plans[: len(g)])]).F1
                         for g in (gold[n], every[n]))  # gold[n] is the file's first sentences

        table, chars, min_count, seconds = tables[n]
        before, whole_before = f1s(seg, every_plans[n])
        seg.word_table = table
        after, whole_after = f1s(seg, every_plans[n])
        seg.word_table = shipped
        refined, whole_refined, refine_seconds = [], [], []
        with tempfile.TemporaryDirectory() as scratch:
            raw = ["".join(words) for words in every[n]]
            path = Path(scratch) / "raw.txt"
            path.write_text("\n".join(raw) + "\n", encoding="utf-8")
            for seed in seeds:  # the whole command, into a folder: the head changes, so the heads are read again
                started = time.perf_counter()
                folder = adapt(None, [path], Path(scratch) / f"adapted_{seed}", refine=True, seed=seed).folder
                refine_seconds.append(time.perf_counter() - started)
                tuned = Segmenter(folder, num_threads=None)
                first, on_whole = f1s(tuned, tuned.score_texts(raw, show_progress=False))
                refined.append(first)
                whole_refined.append(on_whole)
        rows.append((n, chars, min_count, len(table) - len(shipped), seconds, before, after,
                     sum(refined) / len(refined) if refined else None,
                     (min(refined), max(refined)) if refined else (None, None),
                     sum(refine_seconds) / max(len(refine_seconds), 1),
                     (whole_before, whole_after, sum(whole_refined) / len(whole_refined) if whole_refined else None)))
        print(rows[-1], flush=True)
    return rows


def adapt_table(shipped, raw: list[str]) -> tuple:
    """train.adapt.adapted_table on a dev file's raw text: (table, Han chars, min count, seconds
    of counting and combining)."""
    from segmenter.train.adapt import adapted_table

    started = time.perf_counter()
    table, chars, min_count, _ = adapted_table(shipped, raw)
    return table, chars, min_count, time.perf_counter() - started


def mean(rows: list[tuple], column: int) -> float:
    return sum(row[column] for row in rows) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1300, help="first N sentences of each dev file")
    parser.add_argument("--markdown", default=str(ROOT / "benchmarks" / "results" / "standards_dev.md"))
    parser.add_argument("--refine-seeds", type=int, nargs="*", default=list(REFINE_SEEDS), metavar="SEED",
                        help="seeds of the adapt --refine columns: each file is adapted once per seed and the "
                             "columns show the mean and the range (default: 0 1 2; none: leave the columns out, "
                             "they need torch)")
    args = parser.parse_args()
    import jieba

    jieba.setLogLevel(60)
    started = time.time()
    seg = Segmenter(num_threads=None)
    every = {name: read_gold(GOLD / f"{name}.txt") for name in DEV}  # each file read once, whole: adapt reads it all
    gold = {name: sentences[: args.sentences] for name, sentences in every.items()}
    raw = {name: ["".join(words) for words in sentences] for name, sentences in every.items()}  # spaces removed
    every_plans = {name: seg.score_texts(raw[name], show_progress=False) for name in DEV}  # the heads, read once
    texts = {name: raw[name][: len(gold[name])] for name in DEV}
    plans = {name: every_plans[name][: len(gold[name])] for name in DEV}

    def f1s(standard: Standard) -> list[float]:
        seg.standard = standard
        return [score(gold[n], [[t.word for t in ts] for ts in seg.assemble(plans[n])]).F1 for n in DEV]

    jieba_f1 = [score(gold[n], [jieba.lcut(t) for t in texts[n]]).F1 for n in DEV]
    rows = [("jieba", jieba_f1)] + [(f"standard `{s.name}`", f1s(s)) for s in STANDARDS.values()]
    tried = [(s.name, f1s(s)) for s in candidates()]
    worst = {name: min(a - b for a, b in zip(f, jieba_f1)) for name, f in tried}
    fair = [(name, f) for name, f in tried if worst[name] >= 0] or tried
    top = max(sum(f) / len(f) for _, f in fair)
    tied = [row for row in fair if sum(row[1]) / len(row[1]) >= top - TIE]
    safest = max(worst[name] for name, _ in tied)  # of the tied means, the best worst-file margin ...
    best = max((row for row in tied if worst[row[0]] >= safest - TIE), key=lambda row: sum(row[1]))  # ... within TIE

    def line(label, f):
        diff = [a - b for a, b in zip(f, jieba_f1)]
        return (f"| {label} | " + " | ".join(f"{x:.4f}" for x in f)
                + f" | **{sum(f) / len(f):.4f}** | {sum(diff) / len(diff):+.4f} | {min(diff):+.4f} |")

    # `segmenter calibrate` from the first CALIBRATE sentences of each file, scored on the next 1,000 (all the
    # rest in the smaller files), against the general default and the best named standard on the same sentences.
    from segmenter.train.calibrate_standard import calibrate_standard

    tables = {n: adapt_table(seg.word_table, raw[n]) for n in DEV}  # each file adapted to its own text, once
    calibrated = []
    for n in DEV:
        result = calibrate_standard(seg, gold[n][:CALIBRATE])
        rest = slice(CALIBRATE, CALIBRATE + 1000)

        def rest_f1(standard: Standard, dictionary=None) -> float:
            seg.standard = standard
            words = [[t.word for t in ts] for ts in seg.assemble(plans[n][rest], dictionary=dictionary)]
            return score(gold[n][rest], words).F1

        named = {name: rest_f1(standard) for name, standard in STANDARDS.items()}
        best_named = max(named, key=named.get)
        learned = result.dictionary(seg.user_dictionary).snapshot()
        calibrated_f1 = rest_f1(result.standard, learned)
        # ... then adapted to the file's text (`segmenter calibrate`, then `segmenter adapt -m CALIBRATED`): a user
        # with a few sentences and raw text of their own
        shipped, seg.word_table = seg.word_table, tables[n][0]
        both = rest_f1(result.standard, learned)
        seg.word_table = shipped
        calibrated.append((n, len(gold[n][rest]), calibrated_f1, rest_f1(result.standard),
                           len(result.words), named["general"], best_named, named[best_named], result.standard.about,
                           both))
    seeds = tuple(args.refine_seeds)
    refined = bool(seeds)  # the adapt --refine columns
    adapted = adapt_rows(seg, every, gold, every_plans, tables, seeds)
    whole_means = [sum(row[10][i] for row in adapted) / len(adapted) if refined or i < 2 else None for i in range(3)]
    header = ("| rules | " + " | ".join(DEV) + " | mean | mean − jieba | worst file − jieba |\n|---|"
              + "--:|" * (len(DEV) + 3))
    sizes = ", ".join(f"{n} {len(gold[n])}" for n in DEV)
    out = [
        "# Standards on six dev files", "",
        f"Command: `python benchmarks/standards_dev.py --sentences {args.sentences}"
        + ("" if seeds == REFINE_SEEDS else " --refine-seeds" + "".join(f" {x}" for x in seeds)) + "` "
        f"({time.time() - started:.0f} s). Word F1 on the first sentences of each dev file ({sizes}); "
        "the embedded default model, word decoding, its conventions. Dev files only.", "",
        "## The named standards", "", header, *(line(label, f) for label, f in rows), "",
        "## Candidates for the general default", "",
        "PKU's rules and threshold with the switches no single corpus settles. Chosen (✓): among those with "
        f"no file below jieba, the best mean; means within {TIE} of the best are ties, settled by the worst "
        f"file's margin over jieba (margins within {TIE} of the best one: the best mean of those).", "", header,
        *(line(("✓ " if name == best[0] else "") + name, f) for name, f in tried), "",
        "## `segmenter calibrate` from 100 sentences", "",
        f"`calibrate_standard` on the first {CALIBRATE} sentences of each file; word F1 on the sentences after them "
        "(at most 1,000), against the general default and the best named standard on the same sentences. calibrated: "
        "the fitted standard and the user dictionary entries learned from the same sentences (train/calibrate_words.py), "
        "as `segmenter calibrate` writes them; standard only: `--no-words`; calibrated + adapt: the same, then adapted "
        "to the whole file's text with its spaces removed (`segmenter adapt -m CALIBRATED`, the word table only; the "
        "table below).", "",
        "| dev file | sentences scored | calibrated | standard only | calibrated + adapt | entries | general "
        "| best named standard | calibrated from |",
        "|---|--:|--:|--:|--:|--:|--:|---|---|",
        *(f"| {n} | {size} | {f:.4f} | {fs:.4f} | {fa:.4f} | {k} | {g:.4f} | {b} {fb:.4f} | {about} |"
          for n, size, f, fs, k, g, b, fb, about, fa in calibrated),
        "| mean | | {:.4f} | {:.4f} | {:.4f} | | {:.4f} | {:.4f} | |".format(
            *(sum(r[i] for r in calibrated) / len(calibrated) for i in (2, 3, 9, 5, 7))),
        "", "## `segmenter adapt` to each file's own text", "",
        "`train.adapt.adapted_table` (the recipe `segmenter adapt` writes into a folder: the model's word table plus the "
        "strings of the raw text it lacks, seen min-count times) on the whole dev file with its spaces removed (raw text, "
        "no labels); word F1 of the general default on the same sentences as above, with the shipped table and with the "
        "adapted one. seconds: counting and combining, model loading excluded."
        + (" --refine: the whole `segmenter adapt --refine` on the same text (the table, then the head fine-tuned on the "
           "text labelled by the adapted pipeline, train/refine.py's default recipe), the folder loaded and the heads read "
           f"again, once per seed ({', '.join(map(str, seeds))}: the order lines train in): the mean F1, its Δ, the "
           "lowest and highest Δ of the seeds; its seconds: the command's work, writing and exporting the folder "
           "included (mean of the seeds)." if refined else ""), "",
        "| dev file | raw Han chars | min count | n-grams added | seconds | general | adapted | Δ |"
        + (" --refine | Δ | Δ, seeds | seconds |" if refined else ""),
        "|---|--:|--:|--:|--:|--:|--:|--:|" + ("--:|--:|--:|--:|" if refined else ""),
        *(f"| {n} | {chars:,} | {k} | {added:,} | {sec:.1f} | {before:.4f} | {after:.4f} | {after - before:+.4f} |"
          + (f" {both:.4f} | {both - before:+.4f} | {low - before:+.4f} to {high - before:+.4f} | "
             f"{both_sec:.1f} |" if refined else "")
          for n, chars, k, added, sec, before, after, both, (low, high), both_sec, _ in adapted),
        f"| mean | | | | | {mean(adapted, 5):.4f} | {mean(adapted, 6):.4f} | {mean(adapted, 6) - mean(adapted, 5):+.4f} |"
        + (f" {mean(adapted, 7):.4f} | {mean(adapted, 7) - mean(adapted, 5):+.4f} | | |" if refined else ""),
        "", "The same, scored on each whole dev file (the text it adapted to; "
        + ", ".join(f"{n} {len(every[n]):,}" for n in DEV) + " sentences):", "",
        "| dev file | general | adapted | Δ |" + (" --refine | Δ |" if refined else ""),
        "|---|--:|--:|--:|" + ("--:|--:|" if refined else ""),
        *(f"| {row[0]} | {b:.4f} | {a:.4f} | {a - b:+.4f} |" + (f" {r:.4f} | {r - b:+.4f} |" if refined else "")
          for row in adapted for b, a, r in [row[10]]),
        "| mean | {0:.4f} | {1:.4f} | {2:+.4f} |".format(*whole_means[:2], whole_means[1] - whole_means[0])
        + (" {0:.4f} | {1:+.4f} |".format(whole_means[2], whole_means[2] - whole_means[0]) if refined else ""),
        "",
    ]
    Path(args.markdown).write_text("\n".join(out), encoding="utf-8")
    print("\n".join(out))


if __name__ == "__main__":
    main()
