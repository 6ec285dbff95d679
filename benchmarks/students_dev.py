"""Students with the whole pipeline on: word F1 on six dev files and one-thread speed (issue 25).

Each model (a shipped name or a folder) segments the first N sentences of each dev file with its
own pipeline (word decoding, conventions, the general standard); the speed rows time
`segment_batch` on one thread (num_threads=1) over pku_dev + weibo_dev sentences, and jieba in
the same run (the shipped default too when it is named among the models), each the median of --repeats runs, alternating, so a busy
machine slows them alike. The recipe of each student (its distill and refine commands) comes
from its head profile. Dev files only.

    python benchmarks/students_dev.py default fast FOLDER... --markdown benchmarks/results/students_dev.md
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")


def recipe(seg: Segmenter) -> str:
    extra = seg.profile.extra
    steps = [extra[key]["command"] for key in ("distill", "refine", "shrink") if key in extra and "command" in extra[key]]
    return "; then ".join(f"`{step}`" for step in steps) or "shipped"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="shipped names or model folders")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    import jieba

    jieba.setLogLevel(60)
    jieba.lcut("预热")
    gold = {n: read_gold(GOLD / f"{n}.txt", args.sentences) for n in DEV}
    texts = {n: ["".join(words) for words in sentences] for n, sentences in gold.items()}
    timed = texts["pku_dev"] + texts["weibo_dev"]
    chars = sum(map(len, timed))
    segs = {name: Segmenter(name, num_threads=1) for name in args.models}
    rows = {name: [score(gold[n], seg.segment_batch(texts[n], show_progress=False)).F1 for n in DEV]
            for name, seg in segs.items()}
    speeds = {name: [] for name in [*segs, "jieba"]}
    for seg in segs.values():
        seg.segment_batch(timed[:100], show_progress=False)  # warm: sessions, tables
    for _ in range(args.repeats):  # alternating: a busy machine slows every system alike
        started = time.perf_counter()
        for text in timed:
            jieba.lcut(text)
        speeds["jieba"].append(chars / (time.perf_counter() - started))
        for name, seg in segs.items():
            started = time.perf_counter()
            seg.segment_batch(timed, show_progress=False)
            speeds[name].append(chars / (time.perf_counter() - started))
    speed = {name: statistics.median(values) for name, values in speeds.items()}
    first = args.models[0]
    out = [
        "# Students with the whole pipeline on", "",
        f"Command: `python benchmarks/students_dev.py {' '.join(args.models)} --sentences {args.sentences} "
        f"--repeats {args.repeats}`. Word F1 on the first {args.sentences} sentences of each dev file (fewer where "
        "a file is shorter), the general standard, word decoding and conventions on. chars/s: `segment_batch` on one "
        f"thread over {chars:,} characters of pku_dev and weibo_dev, median of {args.repeats} alternating runs "
        "(jieba: `jieba.lcut` a line at a time, HMM on); a shared 2-core machine. Δ: against the first row.", "",
        "| model | layers × hidden, FFN, graph | " + " | ".join(DEV) + " | mean | largest loss | chars/s | × jieba | × first |",
        "|---|--:|" + "--:|" * (len(DEV) + 5),
    ]
    for name, seg in segs.items():
        f, base = rows[name], rows[first]
        shape = _shape(seg.folder)
        out.append(f"| {name} | {shape} | " + " | ".join(f"{x:.4f}" for x in f)
                   + f" | **{sum(f) / len(f):.4f}** | {min(a - b for a, b in zip(f, base)):+.4f} | {speed[name]:,.0f} "
                   f"| {speed[name] / speed['jieba']:.3f} | {speed[name] / speed[first]:.2f} |")
    out += [f"| jieba | | | | | | | | | | {speed['jieba']:,.0f} | 1.000 | {speed['jieba'] / speed[first]:.2f} |", "",
            "Recipes:", "", *(f"- {name}: {recipe(seg)}" for name, seg in segs.items()), ""]
    text = "\n".join(out)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")


def _shape(folder: Path) -> str:
    import json

    from segmenter.train.derived import onnx_kind

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return (f"{config['num_hidden_layers']} × {config['hidden_size']}, {config['intermediate_size']}, "
            f"{onnx_kind(folder) or 'numpy'}")


if __name__ == "__main__":
    main()
