"""Ablations on dev: which view finds which words, and word-level decoding against the length bias.

Every row segments the same dev sentences (the first 500 of pku_dev, msr_dev, ud_gsdsimp_dev)
and is scored with the SIGHAN figures plus recall by gold word length (evaluation.py):

  n-grams alone      the self-training teacher's word decoding (teacher.decode_words) with no
                     head evidence (logits 0): branching-entropy autonomy of n-grams n <= 4;
                     and decoding.py with beta 0 (n <= 6, the pruned table)
  heads alone        the `accurate` model's head (5,0), cut where s > 0 (the default before the
                     distilled student)
  teacher decoding   teacher.decode_words on the shipped head's scores (alpha 1)
  words decoding     decoding.py: the heads' junction scores plus word autonomy from raw text,
                     without and with the long-word bonus (the first decoder), then what each
                     later round added: cohesive pairs, four-character units, the unigram word
                     model in place of the bonus, words of at most 5 characters, four-character
                     units by the unigram model (the decoder of decode='words' now)
  jieba              for scale
Then the heads alone, the first decoder and the last four rounds of words decoding (on `accurate`'s
head) once more on held-out dev sentences 500-1000.
(The e5 base model's heads are not a row: converting it was left out for time.)

Expensive things are computed once and cached under runs/ablation/ (delete it to recount):
the n-gram tables of a bounded raw sample (the first 5 M characters of pretrain_raw.txt and
3 M of extra_raw.txt) and the `accurate` model's junction scores of the dev sentences.
Gold sentences are only scored, never counted.

    python benchmarks/ablation.py                      # writes benchmarks/results/ablation_dev.md
    python benchmarks/ablation.py --grid               # the first round's dev search: benchmarks/results/history/ablation_grid_dev.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.bench.evaluation import length_table, score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402
from segmenter.text.plan import TextPlan  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora"
DEV = ["pku_dev", "msr_dev", "ud_gsdsimp_dev"]
RAW = [(SHARED / "raw" / "pretrain_raw.txt", 5_000_000), (SHARED / "raw" / "extra_raw.txt", 3_000_000)]
CACHE = ROOT / "runs" / "ablation"
# The retired `accurate` model (no longer shipped): its recipe (docs/models.md) writes it here.
ACCURATE = ROOT / "runs" / "selftrained"


def raw_sample() -> list[str]:
    """The bounded raw sample: the first lines of each raw file up to its character budget."""
    from segmenter.train.ngram_counting import sample_raw_lines

    return sample_raw_lines([path for path, _ in RAW], [budget for _, budget in RAW])


def word_table(max_n: int = 6, min_count: int = 2):
    from segmenter.train.ngram_counting import build_word_table
    from segmenter.words.table import WordTable

    path = CACHE / f"words_n{max_n}_c{min_count}.npz"
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        started = time.time()
        build_word_table(raw_sample(), max_n=max_n, min_count=min_count).save(path, with_counts=True)
        print(f"counted {path.name} in {time.time() - started:.0f} s", file=sys.stderr)
    return WordTable.load(path)


def unigram_table(table):
    """`table` with the unigram word model fitted on the raw sample (train/unigram.py), cached."""
    from segmenter.train.unigram import fit_unigram
    from segmenter.words.table import WordTable

    path = CACHE / f"unigram_n{table.max_n}_c{MIN_COUNT}.npz"
    if not path.is_file():
        started = time.time()
        table.with_unigram(fit_unigram(table, raw_sample())).save(path)
        print(f"fitted {path.name} in {time.time() - started:.0f} s", file=sys.stderr)
    return WordTable.load(path)


def branching_entropy():
    from segmenter.train.ngrams import BranchingEntropy

    path = CACHE / "entropy_n4.npz"
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        started = time.time()
        BranchingEntropy.from_texts(raw_sample(), max_n=4).save(path)
        print(f"counted {path.name} in {time.time() - started:.0f} s", file=sys.stderr)
    return BranchingEntropy.load(path)


def dev_sentences(name: str, start: int, stop: int) -> list[list[str]]:
    return read_gold(SHARED / "gold" / f"{name}.txt", stop)[start:]


def dev_plans(name: str, start: int, stop: int) -> list[TextPlan]:
    """Plans of dev sentences [start, stop) with the `accurate` model's combined junction score
    (threshold of granularity 'default' subtracted) in plan.scores[0]; cached."""
    path = CACHE / f"scores_{name}_{start}_{stop}.npz"
    texts = ["".join(words) for words in dev_sentences(name, start, stop)]
    plans = [TextPlan(text) for text in texts]
    if not path.is_file():
        from segmenter.api import Segmenter

        CACHE.mkdir(parents=True, exist_ok=True)
        if not (ACCURATE / "config.json").is_file():
            sys.exit(f"{ACCURATE}: no `accurate` model; remake it with its recipe (docs/models.md)")
        seg = Segmenter(str(ACCURATE), num_threads=1)  # the 6-layer model these rows were chosen on
        scored = seg.score_texts(texts, show_progress=False)
        threshold = seg.profile.threshold("default")
        flat = [seg.profile.combine(p.scores) - threshold if len(p.junctions) else np.zeros(0) for p in scored]
        np.savez(path, scores=np.concatenate(flat).astype(np.float32), sizes=np.array([len(f) for f in flat]))
    data = np.load(path)
    offsets = np.concatenate([[0], np.cumsum(data["sizes"])])
    for plan, lo, hi in zip(plans, offsets[:-1], offsets[1:]):
        assert hi - lo == len(plan.junctions), f"{path} does not match the dev text; delete it"
        plan.scores = data["scores"][lo:hi][None, :]
    return plans


def words_from_cuts(plans: list[TextPlan], cuts: list[np.ndarray], conventions=None, table=None) -> list[list[str]]:
    """Words of each plan given the cut decision of each junction (runs still end words), then
    the conventions of the default level when given (conventions.py; `table` for its suffixes)."""
    from segmenter.words.assembly import words_from_cuts
    from segmenter.standards.levels import Rules

    words = words_from_cuts(plans, cuts, Rules.at("default"), conventions=conventions, word_table=table)
    return [[token.word for token in tokens] for tokens in words]


def evaluate(name: str, start: int, stop: int, cutter) -> dict:
    """Score `cutter(plan) -> cut decisions` on dev sentences [start, stop) of `name` (a cutter
    with a `conventions` attribute also applies them)."""
    gold = dev_sentences(name, start, stop)
    plans = dev_plans(name, start, stop)
    conventions = getattr(cutter, "conventions", None)
    scores = score(gold, words_from_cuts(plans, [cutter(p) for p in plans], conventions, getattr(cutter, "table", None)))
    return {"F1": scores.F1, **length_table(scores)}


def cache_all() -> None:
    """Everything expensive, once (run it in the background with nohup)."""
    for name in DEV:
        for start, stop in (PICK, HELD_OUT):
            if not dev_sentences(name, start, stop):
                continue  # ud_gsdsimp_dev has 500 sentences only
            started = time.time()
            dev_plans(name, start, stop)
            print(f"scored {name} [{start}, {stop}) in {time.time() - started:.0f} s", file=sys.stderr)
    word_table()
    branching_entropy()


PICK, HELD_OUT = (0, 500), (500, 1000)
MIN_COUNT = 10  # the pruning `segmenter ngrams` applies by default (a 1.8 MiB table)


def rows() -> list[tuple[str, object]]:
    """(label, cutter) per ablation row; a cutter maps a plan (scores cached) to cut decisions,
    or is the string "jieba"."""
    from segmenter.words.decoding import WordDecoding, cut_junctions
    from segmenter.train.teacher import decode_words

    entropy, table = branching_entropy(), word_table().pruned(MIN_COUNT)
    with_unigram = unigram_table(table)

    def teacher(alpha, heads):
        return lambda p: decode_words(p, p.scores[0] if heads else np.zeros(len(p.junctions)), entropy, alpha)

    def words(words_table=table, **options):
        # the first decoder, then what each row names: later defaults stay off unless a row adds them
        first = {"alpha": 0.1, "bonus": 2.0, "gamma": 0.0, "join2": None, "join2_logp": None, "join3": None, "join4": None, "join_units": None, "max_len": 6, "units_logp": None}
        decoding = WordDecoding(**{**first, **options})
        return lambda p: cut_junctions(p, p.scores[0], words_table, decoding)

    def with_conventions(cutter):
        from segmenter.standards.conventions import DEFAULT_CONVENTIONS

        cutter.conventions, cutter.table = DEFAULT_CONVENTIONS, table
        return cutter

    pairs = dict(alpha=0.15, join3=0.7, join4=0.5, join2=0.015, join_units=0.3)
    return [
        ("n-grams alone: teacher's decode_words, logits 0 (n <= 4)", teacher(1.0, heads=False)),
        ("n-grams alone: decoding.py, beta 0 (n <= 6)", words(alpha=1.0, beta=0.0, bonus=0.0)),
        ("heads alone: `accurate`, head (5,0), cut where s > 0", lambda p: p.scores[0] > 0),
        ("teacher's decode_words on that head (alpha 1)", teacher(1.0, heads=True)),
        ("words: heads + autonomy (alpha 0.1, no bonus)", words(bonus=0.0)),
        ("words: heads + autonomy + long-word bonus (alpha 0.1: the first decoder)", words()),
        ("+ alpha 0.15, cohesive pairs 2+1 / 1+2", words(alpha=0.15, join3=0.7)),
        ("+ cohesive pairs 2+2", words(alpha=0.15, join3=0.7, join4=0.5)),
        ("+ cohesive pairs 1+1, four-character units (join_units)", words(**pairs)),
        ("+ unigram word model (gamma 0.2) in place of the bonus", words(with_unigram, **pairs, bonus=0.0, gamma=0.2)),
        ("+ words of at most 5 characters (max_len 5, was 6)", words(with_unigram, **pairs, bonus=0.0, gamma=0.2, max_len=5)),
        ("+ four-character units by the unigram model (units_logp 12): decode='words' now",
         words(with_unigram, **pairs, bonus=0.0, gamma=0.2, max_len=5, units_logp=12.0)),
        ("+ conventions of numbers, counts, names, suffixes and function words: the default level on `accurate`'s head",
         with_conventions(words(with_unigram, **pairs, bonus=0.0, gamma=0.2, max_len=5, units_logp=12.0))),
        ("the embedded default: the 2x192 student, distilled then refined (segmenter refine; its model card lists the rounds), all of the row above, with its word table of all the raw text (51.5 M characters; alpha 0.2)", "embedded"),
        ("jieba 0.42 (default mode, HMM on)", "jieba"),
    ]


def jieba_words(name: str, start: int, stop: int) -> list[list[str]]:
    import jieba

    jieba.setLogLevel(60)
    return [jieba.lcut("".join(words)) for words in dev_sentences(name, start, stop)]


def run_row(cutter, name: str, start: int, stop: int) -> dict:
    if cutter in ("jieba", "embedded"):
        gold = dev_sentences(name, start, stop)
        if cutter == "jieba":
            output = jieba_words(name, start, stop)
        else:
            from segmenter.api import Segmenter

            output = Segmenter(num_threads=1).segment_batch(["".join(words) for words in gold], show_progress=False)
        scores = score(gold, output)
        return {"F1": scores.F1, **length_table(scores)}
    return evaluate(name, start, stop, cutter)


def _recalls(values) -> str:
    return " | ".join("–" if v is None else f"{v:.2f}" for v in values)


def table_lines(results: dict, corpora: list[str]) -> list[str]:
    lines = []
    for name in corpora:
        first = next(iter(results.values()))[name]
        gold = " / ".join(f"{g:,}" for g in first["gold"])
        lines += ["", f"**{name}** (gold words by length 1 / 2 / 3 / 4 / 5+: {gold})", "",
                  "| row | F1 | R 1 | R 2 | R 3 | R 4 | R 5+ | words out 1 / 2 / 3 / 4 / 5+ |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|"]
        for label, by_corpus in results.items():
            r = by_corpus[name]
            lines.append(f"| {label} | **{r['F1']:.3f}** | {_recalls(r['R'])} | {' / '.join(f'{t:,}' for t in r['test'])} |")
    return lines


def main_table(out: Path) -> None:
    labelled = rows()
    pick = {label: {name: run_row(cutter, name, *PICK) for name in DEV} for label, cutter in labelled}
    held_corpora = [name for name in DEV if dev_sentences(name, *HELD_OUT)]
    chosen = [labelled[i] for i in (2, 5, 9, 10, 11, 12)]
    held = {label: {name: run_row(cutter, name, *HELD_OUT) for name in held_corpora} for label, cutter in chosen}
    raw = ", ".join(f"first {budget / 1e6:.0f} M characters of {path.name}" for path, budget in RAW)
    lines = [
        "<!-- Generated by `python benchmarks/ablation.py` (benchmarks/ablation.py): do not edit by hand. -->",
        "",
        "# Ablations on dev: which view finds which words",
        "",
        f"Dev sentences {PICK[0]}–{PICK[1]} of each dev file (they chose every setting of `decode='words'`); "
        f"R n: recall of gold words of n characters. Raw text for the n-gram statistics: {raw} "
        f"(no gold); the decoder's table keeps n-grams (n <= 6) seen at least {MIN_COUNT} times, as "
        "`segmenter ngrams` writes it, with its counts (the cohesive pairs read them). Heads: the `accurate` model "
        "(the shipped default when the first rows were chosen), its junction scores read once and cached; the "
        "rows from alpha 0.15 on were chosen in later rounds on dev sentences 0–1500 or 100–1600, the unigram model's "
        "weight on 100–1600 (no results file keeps that sweep).",
    ]
    lines += table_lines(pick, DEV)
    lines += ["", f"## Held out: dev sentences {HELD_OUT[0]}–{HELD_OUT[1]} (held out from the first round's choices, "
              "read after them twice: first for an earlier pick, alpha 0.2 with a 4 MiB table, then for this one. "
              "Not held out from the later rounds': alpha 0.15, the pairs, the unigram weight and the conventions were "
              f"chosen on sentences 0–1600, which include these; ud_gsdsimp_dev has only {PICK[1]} sentences)"]
    lines += table_lines(held, held_corpora)
    lines += ["", "Commands: `python benchmarks/ablation.py` (this file); `python benchmarks/ablation.py --grid` "
              "(the search on dev sentences 0–500 behind the first decoder's weights, benchmarks/results/history/ablation_grid_dev.md).", ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def grid(out: Path) -> None:
    """The dev search over the decoder's weights (sentences 0-500 of each dev file)."""
    import itertools

    from segmenter.words.decoding import WordDecoding, cut_junctions

    table = word_table().pruned(MIN_COUNT)
    settings = [dict(alpha=a, bonus=0.0) for a in (0.1, 0.2, 0.35, 0.5)]
    settings += [dict(alpha=a, bonus=b, bonus_from=f) for a, b, f in itertools.product((0.1, 0.2, 0.35), (1.0, 2.0, 3.0), (2.0, 3.0, 4.0))]
    lines = ["<!-- Generated by `python benchmarks/ablation.py --grid`: do not edit by hand. -->", "",
             f"Word decoding on dev sentences {PICK[0]}–{PICK[1]}, beta 1, clip 8, unseen -1, max_len 6; "
             "F1 and recall of 3- / 4-character words per dev file. Chosen (marked ←): the highest lowest-F1 "
             "over the three files (at 3 decimals), ties to the highest mean F1.", "",
             "| alpha | bonus | from | " + " | ".join(f"{n} F1 | R3 / R4" for n in DEV) + " | min F1 |",
             "|--:|--:|--:|" + "--:|--:|" * len(DEV) + "--:|"]
    base = {name: evaluate(name, *PICK, lambda p: p.scores[0] > 0) for name in DEV}
    lines.append("| threshold | | | " + " | ".join(f"{base[n]['F1']:.3f} | {base[n]['R'][2]:.2f} / {base[n]['R'][3]:.2f}" for n in DEV)
                 + f" | {min(r['F1'] for r in base.values()):.3f} |")
    found = []
    for options in settings:
        decoding = WordDecoding(**{"join3": None, "join4": None, **options})  # the grid of the first round: no pairs
        res = {name: evaluate(name, *PICK, lambda p: cut_junctions(p, p.scores[0], table, decoding)) for name in DEV}
        f1 = [res[n]["F1"] for n in DEV]
        found.append(((round(min(f1), 3), float(np.mean(f1))), len(lines)))
        lines.append(f"| {decoding.alpha} | {decoding.bonus} | {decoding.bonus_from if decoding.bonus else ''} | "
                     + " | ".join(f"{res[n]['F1']:.3f} | {res[n]['R'][2]:.2f} / {res[n]['R'][3]:.2f}" for n in DEV)
                     + f" | {min(f1):.3f} |")
        print(lines[-1], flush=True)
    best = max(found)[1]
    lines[best] += " ←"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", action="store_true", help="only compute the cached tables and scores")
    parser.add_argument("--grid", action="store_true", help="the dev search behind the decoder's defaults")
    args = parser.parse_args()
    results = ROOT / "benchmarks" / "results"
    if args.cache:
        cache_all()
    elif args.grid:
        grid(results / "history" / "ablation_grid_dev.md")  # the first round's search: a record, not a current table
    else:
        main_table(results / "ablation_dev.md")
