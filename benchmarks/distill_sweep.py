"""Size sweep of distilled students: train each size (optional), then measure every student and
the teacher in one process, and print a markdown table.

    python benchmarks/distill_sweep.py --out runs/distill --sizes 1x128:3 2x128 3x128 2x192 3x256 \
        --train --max-label-chars 1000000 --minutes 6 > benchmarks/results/history/distill_sweep.md

--train runs `segmenter distill --no-label` for every size whose folder OUT/LxH has no
distill_metrics.json yet (the labels must already be in OUT/labels: `segmenter distill
--label-only`); "LxH:M" trains that size for M minutes instead of --minutes. Measurement:
word F1 (SIGHAN scoring) and chars/s of `Segmenter.segment_batch` (engine "auto", --threads threads)
on the first --sentences of each dev file, jieba's chars/s on the same sentences in the same
run, float16 weight size, and multiply-accumulates per character counted from the shapes.
"""
from __future__ import annotations

import argparse
import json
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

RAW = ["../shared/corpora/raw/pretrain_raw.txt", "../shared/corpora/raw/extra_raw.txt"]
DEV = ["../shared/corpora/gold/pku_dev.txt", "../shared/corpora/gold/msr_dev.txt", "../shared/corpora/gold/ud_gsdsimp_dev.txt"]


def macs_per_char(config: dict, head: tuple[int, int], window: int) -> float:
    """Multiply-accumulates per character of one forward pass up to the boundary head, for
    windows of `window` characters (T = window + 2 tokens): a full layer is 12 h^2 (Q, K, V,
    output, and a 4h feed-forward) + 2 T h (scores and weighted values); the head's own layer
    computes only that head's query and key (2 h d) and its scores (T d)."""
    h, d = config["hidden_size"], config["hidden_size"] // config["num_attention_heads"]
    tokens = window + 2
    return head[0] * (12 * h * h + 2 * tokens * h) + 2 * h * d + tokens * d


def train(args, size: str) -> None:
    shape, _, minutes = size.partition(":")
    layers, hidden = (int(x) for x in shape.split("x"))
    if (Path(args.out) / shape / "distill_metrics.json").exists():
        return
    command = [sys.executable, "-m", "segmenter", "distill", "--raw", *RAW, "--out", args.out, "--name", shape,
               "--no-label", "--chars", str(args.chars), "--layers", str(layers), "--hidden", str(hidden),
               "--minutes", minutes or str(args.minutes), "--threads", str(args.threads), "--gold", *args.dev,
               "--gold-sentences", str(args.sentences), "-q"]
    if args.max_label_chars:
        command += ["--max-label-chars", str(args.max_label_chars)]
    print(f"training {shape}: {shlex.join(command)}", file=sys.stderr)
    subprocess.run(command, check=True)


def measure(folder: Path, texts: dict, gold: dict, threads: int) -> dict:
    from segmenter import Segmenter
    from segmenter.bench.evaluation import score

    seg = Segmenter(folder, num_threads=threads)
    row = {"f1": {}, "seconds": 0.0, "cpu_seconds": 0.0, "chars": 0}
    for name, lines in texts.items():
        seg.segment_batch(lines[:20])  # warm-up
        start, cpu = time.perf_counter(), time.process_time()
        output = seg.segment_batch(lines)
        row["seconds"] += time.perf_counter() - start
        row["cpu_seconds"] += time.process_time() - cpu
        row["chars"] += sum(map(len, lines))
        row["f1"][name] = score(gold[name], output).F1
    config = json.loads((folder / "config.json").read_text())
    row["window"] = seg.window
    row["macs"] = macs_per_char(config, seg.profile.heads[0], seg.window)
    row["config"] = config
    row["mb"] = (folder / "model.safetensors").stat().st_size / 1e6
    metrics = folder / "distill_metrics.json"
    row["training"] = json.loads(metrics.read_text())["training"] if metrics.exists() else None
    return row


def jieba_speed(texts: dict) -> float:
    import jieba

    jieba.initialize()
    lines = [line for lines in texts.values() for line in lines]
    start, cpu = time.perf_counter(), time.process_time()
    for line in lines:
        jieba.lcut(line)
    chars = sum(map(len, lines))
    return chars / (time.perf_counter() - start), chars / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/distill")
    parser.add_argument("--sizes", nargs="+", default=["2x128"], help="LAYERSxHIDDEN[:MINUTES]")
    parser.add_argument("--teacher", default="segmenter/model/shipped/default")
    parser.add_argument("--extra", nargs="*", default=[], help="other model folders to measure")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--chars", type=int, default=12_000_000, help="--chars the labels were made with")
    parser.add_argument("--max-label-chars", type=int, default=None)
    parser.add_argument("--minutes", type=float, default=8.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dev", nargs="+", default=DEV)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--note", default=None, help="a paragraph printed under the table (how the runs differ)")
    args = parser.parse_args()
    if args.train:
        for size in args.sizes:
            train(args, size)

    import torch

    from segmenter.train.corpus import read_gold

    torch.set_num_threads(args.threads)
    gold = {Path(p).stem: read_gold(p, args.sentences) for p in args.dev}
    texts = {name: ["".join(words) for words in sentences] for name, sentences in gold.items()}
    started = time.monotonic()
    folders = [Path(args.teacher)] + [Path(args.out) / s.partition(":")[0] for s in args.sizes] + [Path(p) for p in args.extra]
    rows = {folder: measure(folder, texts, gold, args.threads) for folder in folders}
    jieba_cps, jieba_cpu = jieba_speed(texts)
    teacher = rows[Path(args.teacher)]

    names = list(gold)
    print("# Distilled students: size sweep\n")
    print(f"Command: `python {shlex.join(sys.argv)}`\n")
    print(f"Machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, {args.threads} torch thread(s), "
          f"shared with other jobs (speeds are of one run, compare within the table); "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; measuring took {(time.monotonic() - started) / 60:.1f} min.\n")
    print(f"Dev: the first {args.sentences} sentences of {', '.join(Path(p).name for p in args.dev)} "
          f"({teacher['chars']:,} characters). F1: SIGHAN word F1 (Δ: against the teacher). "
          "chars/s: `Segmenter.segment_batch` (engine \"auto\"), all three files, per second of wall time and per second of "
          "the process's CPU time (the fairer figure on a machine shared with other jobs); jieba (`jieba.lcut` a line at a time) "
          "on the same sentences in the same run; × jieba compares CPU-time figures. MMAC/char: multiply-accumulates per character up to the boundary head at a full window "
          "(benchmarks/distill_sweep.py macs_per_char). Training: characters seen (labels × passes) and minutes.\n")
    print("| model | layers × hidden | heads | window | MMAC/char | weights MB (fp16) | "
          + " | ".join(f"{n} F1 (Δ)" for n in names) + " | chars/s (wall) | chars/CPU-s | × jieba | trained on | minutes |")
    print("|---|--:|--:|--:|--:|--:|" + "--:|" * len(names) + "--:|--:|--:|--:|--:|")
    for folder, r in rows.items():
        c, t = r["config"], r["training"]
        f1 = " | ".join(
            f"{r['f1'][n]:.3f}" + ("" if r is teacher else f" ({r['f1'][n] - teacher['f1'][n]:+.3f})") for n in names
        )
        cps, cpu = r["chars"] / r["seconds"], r["chars"] / r["cpu_seconds"]
        trained = f"{t['chars_seen'] / 1e6:.1f} M ({t['label_chars'] / 1e6:.1f} M labelled)" if t else "–"
        minutes = f"{t['minutes']:.1f}" if t else "–"
        print(f"| `{folder}` | {c['num_hidden_layers']} × {c['hidden_size']} | {c['num_attention_heads']} | {r['window']} "
              f"| {r['macs'] / 1e6:.2f} | {r['mb']:.1f} | {f1} | {cps:,.0f} | {cpu:,.0f} | {cpu / jieba_cpu:.3f} | {trained} | {minutes} |")
    print("| jieba 0.42 (HMM on) | – | – | – | – | – | " + " | ".join("–" for _ in names) + f" | {jieba_cps:,.0f} | {jieba_cpu:,.0f} | 1.000 | – | – |")
    if args.note:
        print(f"\n{args.note}")
    print("\nTraining commands (from each student's segmenter_heads.json; the labels came from "
          "`distill.label_raw`, what `segmenter distill --label-only` runs, with the same --raw, --chars and --seed):\n")
    for folder in rows:
        distilled = json.loads((folder / "segmenter_heads.json").read_text()).get("extra", {}).get("distill")
        if distilled:
            print(f"- `{folder}`: `{distilled['command']}`")


if __name__ == "__main__":
    main()
