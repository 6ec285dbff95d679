"""onnxruntime's graph fusions on the shipped graphs: which to leave out (onnx_engine.UNFUSED).

For each model (shipped name or folder) and each setting (every fusion onnxruntime makes;
the fusions of onnx_engine.UNFUSED left out), on one thread:
  graph     model.onnx alone on batches of 64 windows of 32, 64 and 128 tokens (random
            characters): windows/s, median of --repeats alternating rounds, and the share of
            the graph's time its largest nodes take (onnxruntime's profiler, fused setting);
  pipeline  `segment_batch` over the first N sentences of six dev files: word F1, sentences
            segmented differently from the fused setting, and chars/s over pku_dev + weibo_dev,
            median of --repeats alternating runs.
Dev files only.

    python benchmarks/fusions.py default fast --markdown benchmarks/results/fusions.md
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from segmenter.model import onnx_engine# noqa: E402
from segmenter.api import Segmenter  # noqa: E402
from segmenter.bench.evaluation import score  # noqa: E402
from segmenter.train.corpus import read_gold  # noqa: E402

GOLD = ROOT.parent / "shared" / "corpora" / "gold"
DEV = ("pku_dev", "msr_dev", "ud_gsdsimp_dev", "weibo_dev", "novel_dev", "derm_dev")
SETTINGS = {"fused": (), "unfused": onnx_engine.UNFUSED}  # the fusions left out
TOKENS = (32, 64, 128)
MADE_BY = {"SkipLayerNormFusion": "SkipLayerNormalization"}  # the node each left-out fusion makes


def session(path: Path, unfused: tuple[str, ...], profile: bool = False):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.enable_mem_pattern = False
    options.enable_profiling = profile
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                        disabled_optimizers=list(unfused))


def feeds(tokens: int, rows: int = 64) -> dict:
    ids = np.random.default_rng(tokens).integers(5, 3000, size=(rows, tokens)).astype(np.int64)
    ids[:, 0], ids[:, -1] = 2, 3  # [CLS] … [SEP]
    return {"input_ids": ids, "attention_mask": np.ones_like(ids)}


def graph_speed(path: Path, repeats: int) -> dict[tuple[str, int], float]:
    """(setting, tokens) -> windows/s of the graph alone, median of alternating rounds."""
    sessions = {name: session(path, unfused) for name, unfused in SETTINGS.items()}
    times = collections.defaultdict(list)
    for tokens in TOKENS:
        batch = feeds(tokens)
        for s in sessions.values():
            s.run(None, batch)
        for _ in range(repeats):
            for name, s in sessions.items():
                started = time.perf_counter()
                for _ in range(10):
                    s.run(None, batch)
                times[name, tokens].append(640 / (time.perf_counter() - started))
    return {key: statistics.median(values) for key, values in times.items()}


def node_shares(path: Path, top: int = 6) -> tuple[list[tuple[str, float]], set[str]]:
    """The largest nodes of the fused graph at 64 × 64 tokens, (op (node), share of the time),
    and the ops of all its nodes."""
    s = session(path, (), profile=True)
    batch = feeds(64)
    for _ in range(30):
        s.run(None, batch)
    trace = Path(s.end_profiling())
    events = json.loads(trace.read_text())
    trace.unlink()
    spent, ops = collections.Counter(), set()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[f"{event['args']['op_name']} ({event['name'].removesuffix('_kernel_time')})"] += event["dur"]
            ops.add(event["args"]["op_name"])
    total = sum(spent.values())
    return [(name, dur / total) for name, dur in spent.most_common(top)], ops


def pipeline(model: str, gold: dict, repeats: int) -> dict:
    """F1 per dev file, sentences different from the fused setting, chars/s per setting."""
    segs = {}
    for name, unfused in SETTINGS.items():
        with mock.patch.object(onnx_engine, "UNFUSED", unfused):  # read when the session is built
            segs[name] = Segmenter(model, num_threads=1)
    texts = {n: ["".join(words) for words in sentences] for n, sentences in gold.items()}
    words = {name: {n: seg.segment_batch(texts[n], show_progress=False) for n in DEV} for name, seg in segs.items()}
    timed = texts["pku_dev"] + texts["weibo_dev"]
    chars = sum(map(len, timed))
    speeds = collections.defaultdict(list)
    for _ in range(repeats):
        for name, seg in segs.items():
            started = time.perf_counter()
            seg.segment_batch(timed, show_progress=False)
            speeds[name].append(chars / (time.perf_counter() - started))
    return {
        "f1": {name: [score(gold[n], words[name][n]).F1 for n in DEV] for name in segs},
        "different": {name: sum(a != b for n in DEV for a, b in zip(words[name][n], words["fused"][n]))
                      for name in segs},
        "speed": {name: statistics.median(values) for name, values in speeds.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="shipped names or model folders with a model.onnx")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    gold = {n: read_gold(GOLD / f"{n}.txt", args.sentences) for n in DEV}
    sentences = sum(map(len, gold.values()))
    out = [
        "# onnxruntime fusions on the shipped graphs", "",
        f"Command: `python benchmarks/fusions.py {' '.join(args.models)} --sentences {args.sentences} "
        f"--repeats {args.repeats}`. One thread, a shared 2-core machine. unfused: onnxruntime's fusions "
        f"but {', '.join(onnx_engine.UNFUSED)} (onnx_engine.UNFUSED). Graph: the model.onnx alone, 64 windows "
        f"of random characters a batch, windows/s, median of {args.repeats} alternating rounds. Pipeline: "
        f"`segment_batch`, the first {args.sentences} sentences of each dev file ({sentences:,} in all).", "",
        "| model | setting | " + " | ".join(f"graph, {t} tokens" for t in TOKENS)
        + " | pipeline chars/s | × fused | " + " | ".join(DEV) + " | sentences different |",
        "|---|---|" + "--:|" * (len(TOKENS) + 2 + len(DEV) + 1),
    ]
    notes = []
    for model in args.models:
        path = Segmenter(model, num_threads=1).folder / onnx_engine.ONNX_FILE
        graph = graph_speed(path, args.repeats)
        run = pipeline(model, gold, args.repeats)
        for name in SETTINGS:
            out.append(f"| {model} | {name} | " + " | ".join(f"{graph[name, t]:,.0f}" for t in TOKENS)
                       + f" | {run['speed'][name]:,.0f} | {run['speed'][name] / run['speed']['fused']:.2f} | "
                       + " | ".join(f"{f:.4f}" for f in run["f1"][name]) + f" | {run['different'][name]} |")
        largest, ops = node_shares(path)
        absent = [MADE_BY[name] for name in onnx_engine.UNFUSED if MADE_BY.get(name) not in ops]
        notes.append(f"- {model}, fused, 64 × 64 tokens: " + "; ".join(f"{node} {share:.0%}" for node, share in largest)
                     + (f". No {', '.join(absent)} node in its fused graph: both settings run the same graph, "
                        "their rows differ by the machine's noise alone" if absent else ""))
    text = "\n".join(out + ["", "The largest nodes of each graph (onnxruntime's profiler):", "", *notes, ""])
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
