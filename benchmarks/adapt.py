"""`segmenter adapt` on a domain: word F1 of the embedded default before and after adapting it to
the domain's raw text (a dev file with its spaces removed; no labels are used).

Two stages, in this order:
  python benchmarks/adapt.py --stage dev     # the recipe: dev raw -> dev gold, several tables
                                             #   -> benchmarks/results/adapt_dev.md
  python benchmarks/adapt.py --stage test    # the fixed recipe, once: `segmenter adapt` on the dev
                                             #   raw, benchmarks/run.py on the test file, before and
                                             #   after -> benchmarks/results/adapt.md

The dev stage scores the model once per dev file and decodes the same scores with each word
table, so it takes a minute. The test stage times `segmenter adapt` as a command (a fresh
process, loading included) and scores with benchmarks/run.py (`segmenter:default`, once with the
shipped folder and once with `-m ADAPTED`), so both figures come from the same benchmark.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.train.adapt import AUTO_MIN_COUNT, auto_min_count  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DOMAINS = {"msr": "msr", "ud": "ud_gsdsimp", "pku": "pku"}
RESULTS = ROOT / "benchmarks" / "results"
REFINE_SEEDS = (0, 1, 2)  # test stage: adapt --refine once per seed (its F1 moves between seeds)


def write_raw(domain: str, folder: Path) -> Path:
    """The domain's dev file with its spaces removed: raw text, one sentence a line."""
    path = folder / f"{DOMAINS[domain]}_dev_raw.txt"
    lines = ["".join(words) for words in read_gold(GOLD / f"{DOMAINS[domain]}_dev.txt")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- dev: which table ---------------------------------------------------------------------------
def _replaced(shipped, domain, min_count: int):
    """The other recipe tried: the domain's autonomy wherever it saw the string min_count times,
    the shipped one elsewhere (combined_with the other way round, then the domain's entries)."""
    from segmenter.words.table import WordTable

    mine = domain.pruned(min_count)
    tables = {}
    for n in shipped.tables:
        keys, autonomy, counts = shipped.tables[n]
        dkeys, dautonomy, dcounts = mine.tables.get(n, (keys[:0], autonomy[:0], counts[:0]))
        keep = ~np.isin(keys, dkeys)
        merged = np.concatenate([keys[keep], dkeys])
        order = np.argsort(merged)
        tables[n] = (merged[order], np.concatenate([autonomy[keep], dautonomy])[order],
                     np.concatenate([counts[keep], dcounts])[order])
    return WordTable(tables, dict(shipped.info))


def dev_stage(domains: list[str], out: Path) -> None:
    from segmenter import Segmenter
    from segmenter.bench.evaluation import score
    from segmenter.train.corpus import iter_raw_lines
    from segmenter.train.ngram_counting import build_word_table

    counts = (2, 3, 5, 10)
    seg = Segmenter()
    shipped = seg.word_table
    lines = [
        "Word F1 on each whole dev file, the embedded default's head scores decoded with each word table; the domain's "
        "n-grams counted on the same dev file with its spaces removed (raw text, no labels). Written by "
        f"`python benchmarks/adapt.py --stage dev --domain {' '.join(domains)}`.", "",
        "- shipped: the model's own table (no adaptation)",
        "- domain alone: the dev text's table, n-grams seen >= k times",
        "- domain replaces: the domain's autonomy where it saw the string >= k times, the shipped one elsewhere",
        "- shipped + new (**the recipe**): the shipped autonomy where the shipped table has the string, and the "
        "domain's strings it lacks, seen >= k times (`WordTable.combined_with`)", "",
        "| dev file | Han chars | shipped | k | domain alone | domain replaces | shipped + new |", "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for domain in domains:
        gold = read_gold(GOLD / f"{DOMAINS[domain]}_dev.txt")
        plans = seg.score_texts(["".join(words) for words in gold])

        def f1(table) -> str:
            seg.word_table = table
            words = [[w for w, _, _ in tokens if not w.isspace()] for tokens in seg.assemble(plans)]
            return f"{score(gold, words).F1:.4f}"

        with tempfile.TemporaryDirectory() as scratch:
            raw = list(iter_raw_lines([write_raw(domain, Path(scratch))]))
        table = build_word_table(raw, max_n=shipped.max_n, min_count=1)
        base = f1(shipped)
        for k in counts:
            row = [f1(table.pruned(k)), f1(_replaced(shipped, table, k)), f1(shipped.combined_with(table, k))]
            auto = " (auto)" if k == auto_min_count(table.info["chars"]) else ""
            lines.append(f"| {DOMAINS[domain]}_dev | {table.info['chars']:,} | {base} | {k}{auto} | " + " | ".join(row) + " |")
            print(lines[-1], flush=True)
        seg.word_table = shipped
    lines += ["", f"(auto): the min-count `segmenter adapt` takes by default, AUTO_MIN_COUNT = {AUTO_MIN_COUNT} "
              "((Han characters at least, k), first match)."]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


# -- test: before and after, once -----------------------------------------------------------------
def bench_f1(gold: Path, model: Path | None, scratch: Path) -> dict:
    record = scratch / f"bench_{gold.stem}_{model.name if model else 'default'}.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--gold", str(gold), "--systems", "segmenter:default",
               "--lexicon", "none", "--json", str(record), "--markdown", str(record.with_suffix(".md")), "-q"]
    subprocess.run(command + (["-m", str(model)] if model else []), check=True, cwd=ROOT, capture_output=True)
    return json.loads(record.read_text())["records"][0]


def test_stage(domains: list[str], out: Path, seeds: tuple[int, ...] = REFINE_SEEDS) -> None:
    lines = [
        "`segmenter adapt` on a domain's raw text: the embedded default before and after, scored by "
        "`benchmarks/run.py --systems segmenter:default` (with `-m ADAPTED` after) on the domain's *test* file. Raw text: "
        "the domain's *dev* file with its spaces removed, nothing else (no labels). The recipe (`WordTable.combined_with`, "
        "min-count by the text's size) was fixed on dev before this ran: benchmarks/results/adapt_dev.md. seconds: wall time "
        "of the `segmenter adapt` process (start-up and loading included), 2-core machine shared with other work.", "",
        f"Written by `python benchmarks/adapt.py --stage test --domain {' '.join(domains)}"
        + ("" if seeds == REFINE_SEEDS else " --refine-seeds" + "".join(f" {x}" for x in seeds)) + "`; each row ran "
        "`segmenter adapt --raw DEV_RAW.txt --out ADAPTED`, then `segmenter adapt --raw DEV_RAW.txt --out REFINED "
        f"--refine --seed S` for S in {', '.join(map(str, seeds))} (the table again, then the head self-trained on the "
        "domain text with refine's default recipe, fixed before this ran; the seed orders its training lines). F1 adapt "
        "--refine: the mean over the seeds, Δ seeds: the lowest and highest; seconds and min per M chars: the first "
        "seed's command.", "",
        "| domain | raw chars (dev) | n-grams added | seconds (adapt; adapt --refine) | min per M chars | test file "
        "| F1 before | F1 adapted | Δ | F1 adapt --refine | Δ | Δ, seeds |",
        "|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for domain in domains:
            raw, adapted = write_raw(domain, scratch), scratch / f"adapted_{domain}"
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "segmenter", "adapt", "--raw", str(raw), "--out", str(adapted), "-q"],
                           check=True, cwd=ROOT)
            seconds = time.perf_counter() - started
            record = json.loads((adapted / "segmenter_heads.json").read_text(encoding="utf-8"))["extra"]["adapt"]
            gold = GOLD / f"{DOMAINS[domain]}_test.txt"
            both, refine_seconds = [], []
            for seed in seeds:
                refined = scratch / f"refined_{domain}_{seed}"
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "segmenter", "adapt", "--raw", str(raw), "--out", str(refined),
                                "--refine", "--seed", str(seed), "-q"], check=True, cwd=ROOT, capture_output=True)
                refine_seconds.append(time.perf_counter() - started)
                both.append(bench_f1(gold, refined, scratch)["F1"])
            skipped = "refine_skipped" in json.loads((refined / "segmenter_heads.json").read_text(encoding="utf-8"))["extra"]["adapt"]
            before, after = bench_f1(gold, None, scratch)["F1"], bench_f1(gold, adapted, scratch)["F1"]
            refined_f1 = sum(both) / len(both)
            lines.append(
                f"| {domain} | {record['chars']:,} | {record['added_ngrams']:,} (k = {record['min_count']}) | "
                f"{seconds:.1f}; {refine_seconds[0]:.1f} | {refine_seconds[0] / 60 / record['chars'] * 1e6:.2f} | "
                f"{gold.name} | {before:.4f} | {after:.4f} | {after - before:+.4f} | {refined_f1:.4f}"
                f"{' (skipped: no string added)' if skipped else ''} | "
                f"{refined_f1 - before:+.4f} | {min(both) - before:+.4f} to {max(both) - before:+.4f} |"
            )
            print(lines[-1], flush=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("dev", "test"), required=True)
    parser.add_argument("--domain", nargs="+", choices=sorted(DOMAINS), default=["msr", "ud", "pku"])
    parser.add_argument("--out", default=None, help="the markdown file (default: benchmarks/results/adapt[_dev].md)")
    parser.add_argument("--refine-seeds", type=int, nargs="+", default=list(REFINE_SEEDS), metavar="SEED",
                        help="test stage: the seeds of adapt --refine, one command each (default: 0 1 2)")
    args = parser.parse_args()
    out = Path(args.out) if args.out else RESULTS / ("adapt_dev.md" if args.stage == "dev" else "adapt.md")
    if args.stage == "dev":
        dev_stage(args.domain, out)
    else:
        test_stage(args.domain, out, tuple(args.refine_seeds))


if __name__ == "__main__":
    main()
