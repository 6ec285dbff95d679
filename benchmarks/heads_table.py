"""Head profiles against the best single head, on dev data (issue 3's table).

For each dev file: the seed rule on the best single head (by boundary AUC on the calibration
part, read with s > 0), and word F1 of given model folders with their own profiles, all on the
same held-out sentences. Prints markdown.

    python benchmarks/heads_table.py --model runs/e5char --gold DEV… --skip 500 --sentences 200
"""
from __future__ import annotations

import argparse
from pathlib import Path

from segmenter.train.corpus import read_gold
from segmenter.train.head_measures import gold_junctions, head_table, word_f1
from segmenter.model.folders import load_encoder, read_profile, resolve_model_folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", required=True, help="model folders (with profiles); the first one's heads are ranked")
    parser.add_argument("--gold", nargs="+", required=True, help="dev gold files")
    parser.add_argument("--skip", nargs="+", type=int, default=[500], help="sentences before the held-out part, per file (the curve's calibration part)")
    parser.add_argument("--sentences", type=int, default=200, help="held-out sentences")
    args = parser.parse_args()
    skips = args.skip * len(args.gold) if len(args.skip) == 1 else args.skip
    models = [resolve_model_folder(m) for m in args.model]
    print("| dev file | held-out sentences | best single head (by AUC on the first part), s > 0 | " + " | ".join(f"`{m.name}` ({read_profile(m).source})" for m in models) + " |")
    print("|---|--:|--:|" + "--:|" * len(models))
    for gold_path, skip in zip(args.gold, skips):
        gold = read_gold(gold_path, skip + args.sentences)
        ranking, held_out = gold[:skip], gold[skip:]
        model, vocab, _ = load_encoder(models[0])
        best = head_table(gold_junctions(model, vocab, ranking))[0]
        head = (best["layer"], best["head"])
        sample = gold_junctions(model, vocab, held_out, heads=[head])
        cells = [f"L{head[0]}H{head[1]}: {word_f1(sample, sample.scores[0], held_out, 0.0):.3f}"]
        for folder in models:
            model, vocab, _ = load_encoder(folder)
            profile = read_profile(folder)
            sample = gold_junctions(model, vocab, held_out, heads=profile.heads)
            cells.append(f"{word_f1(sample, profile.combine(sample.scores), held_out, profile.threshold()):.3f}")
        print(f"| {Path(gold_path).name} | {len(held_out)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
