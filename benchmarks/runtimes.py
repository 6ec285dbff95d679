"""Runtime comparison: the same model and sentences through torch, numpy and onnxruntime (fp32, int8).

    python benchmarks/runtimes.py                          # embedded model, first 300 PKU dev sentences
    python benchmarks/runtimes.py --sentences 300 --threads 1 --model PATH --markdown OUT.md

Each runtime runs in a process of its own (peak memory = VmHWM of that process alone):
  torch         Segmenter(engine="torch"): transformers + segmenter/model/attention.py
  numpy         Segmenter(engine="numpy"): segmenter/model/numpy_engine.py
  onnx-fp32     Segmenter(engine="onnx"): the reader graph (segmenter/model/onnx_engine.py: embeddings,
                the layers below the deepest selected head, that layer's query/key rows of the
                selected heads -> masked attention logits) on onnxruntime
  onnx-int8     the same graph after onnxruntime.quantization.quantize_dynamic (int8 weights)
The exports happen here, in the parent (they need torch), into copies of the model folder
in --workdir (`segmenter export-onnx` does the same for a folder). Every runtime reads
the same windows (Segmenter's windows and batches); chars/s is timed after a warm-up, and
each runtime's junction scores are compared with numpy's (max |difference|), its words
with numpy's (sentences segmented differently) and with the gold (word F1; a dev file).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's segmenter, not another installed one
DEV = REPO.parent / "shared" / "corpora" / "gold" / "pku_dev.txt"
RUNTIMES = ("torch", "numpy", "onnx-fp32", "onnx-int8")


def export_models(model: str | None, workdir: Path) -> None:
    """workdir/model: a copy of the model folder with its model.onnx (fp32); workdir/model-int8:
    the same with int8 weights. Both made by segmenter.train.onnx_export.export_onnx (needs torch)."""
    from segmenter.api import Segmenter
    from segmenter.model.integrity import update_manifest
    from segmenter.model.onnx_engine import ONNX_FILE
    from segmenter.train.onnx_export import export_onnx

    seg = Segmenter(model, engine="torch")
    for name, int8 in (("model", False), ("model-int8", True)):
        folder = seg.save_pretrained(workdir / name)
        export_onnx(seg, folder / ONNX_FILE, int8=int8)
        update_manifest(folder, [ONNX_FILE])  # the copy's checksums.json listed the model's own export


def measure(runtime: str, texts: list[str], threads: int, workdir: Path) -> dict:
    """In the child: build, warm up, time; the junction scores and words go to a file."""
    import numpy as np

    from segmenter.api import Segmenter
    from segmenter.bench.measure import peak_rss_mb

    start = time.perf_counter()
    folder = workdir / ("model-int8" if runtime == "onnx-int8" else "model")
    seg = Segmenter(folder, engine="onnx" if runtime.startswith("onnx") else runtime, num_threads=threads)
    load_s = time.perf_counter() - start
    seg.segment_batch(texts[:20], show_progress=False)  # warm-up
    start = time.perf_counter()
    plans = seg.score_texts(texts, show_progress=False)
    words = seg.assemble(plans)  # what segment_batch does after scoring
    seconds = time.perf_counter() - start
    np.save(workdir / f"{runtime}.npy", np.concatenate([plan.scores.ravel() for plan in plans]))
    (workdir / f"{runtime}.json").write_text(json.dumps([[w for w, _, _ in t] for t in words], ensure_ascii=False))
    return {"runtime": runtime, "load_s": load_s, "seconds": seconds, "chars_per_s": sum(map(len, texts)) / seconds,
            "peak_mb": peak_rss_mb(), "torch_imported": "torch" in sys.modules}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model folder (default: the embedded model)")
    parser.add_argument("--sentences", type=int, default=300, help="first N sentences of --gold (default 300)")
    parser.add_argument("--gold", default=str(DEV), help="gold file whose sentences (spaces removed) are segmented")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    parser.add_argument("--repeat", type=int, default=3, help="rounds over all runtimes; the table shows each one's median")
    parser.add_argument("--workdir", default=None, help="where the ONNX files and outputs go (default: a temporary folder)")
    parser.add_argument("--markdown", default=None, help="write the table here too")
    parser.add_argument("--child", nargs=1, metavar="RUNTIME", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from segmenter.train.corpus import read_gold

    gold = read_gold(args.gold, args.sentences)
    texts = ["".join(words) for words in gold]
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="runtimes-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.child:
        print(json.dumps(measure(args.child[0], texts, args.threads, workdir)))
        return 0
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    export_models(args.model, workdir)
    runs: dict[str, list[dict]] = {runtime: [] for runtime in runtimes}
    for round_ in range(args.repeat):  # rounds interleave the runtimes: a busy spell hits them all alike
        for runtime in runtimes:
            command = [sys.executable, __file__, "--child", runtime, "--sentences", str(args.sentences), "--gold", args.gold,
                       "--threads", str(args.threads), "--workdir", str(workdir)]
            done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), **_env()})
            if done.returncode != 0:
                print(f"{runtime}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
                continue
            runs[runtime].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {round_ + 1} {runtime}: {runs[runtime][-1]['chars_per_s']:,.0f} chars/s, "
                  f"peak {runs[runtime][-1]['peak_mb']:.0f} MiB", file=sys.stderr)
    # Each runtime's median run by chars/s (its outputs are the same every round).
    rows = [sorted(r, key=lambda run: run["chars_per_s"])[len(r) // 2] for r in runs.values() if r]
    table = report(rows, workdir, gold, args)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")
    return 0


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def report(rows: list[dict], workdir: Path, gold: list[list[str]], args) -> str:
    import numpy as np

    from segmenter.bench.evaluation import score

    texts = ["".join(words) for words in gold]
    reference = np.load(workdir / "numpy.npy") if (workdir / "numpy.npy").is_file() else None
    words = json.loads((workdir / "numpy.json").read_text()) if (workdir / "numpy.json").is_file() else None
    numpy_rate = next((r["chars_per_s"] for r in rows if r["runtime"] == "numpy"), None)
    lines = [
        f"Command: `python benchmarks/runtimes.py {' '.join(sys.argv[1:])}`",
        "",
        f"{len(texts)} sentences of {Path(args.gold).name} ({sum(map(len, texts)):,} characters), {args.threads} thread(s), "
        f"model {args.model or 'embedded'}; chars/s and peak: the median of {args.repeat} interleaved rounds",
        "",
        "| runtime | chars/s | × numpy | peak MiB | load s | max abs score diff vs numpy | sentences segmented differently | F1 | imports torch |",
        "|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        scores = np.load(workdir / f"{r['runtime']}.npy")
        diff = f"{np.abs(scores - reference).max():.2e}" if reference is not None else "–"
        other = json.loads((workdir / f"{r['runtime']}.json").read_text())
        differ = sum(a != b for a, b in zip(other, words)) if words is not None else "–"
        ratio = f"{r['chars_per_s'] / numpy_rate:.2f}" if numpy_rate else "–"
        lines.append(f"| {r['runtime']} | {r['chars_per_s']:,.0f} | {ratio} | {r['peak_mb']:.0f} | {r['load_s']:.2f} "
                     f"| {diff} | {differ} | {score(gold, other).F1:.3f} | {'yes' if r['torch_imported'] else 'no'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
