"""The GPU path measured: chars/s on a device, and words identical to the CPU path.

    python benchmarks/gpu_speed.py                                   # cuda, torch + onnx-cuda, 1000 PKU test sentences
    python benchmarks/gpu_speed.py --device cuda:0 --batch-sizes 64 256 1024 4096 --markdown gpu.md --json gpu.json
    python benchmarks/gpu_speed.py --device cpu --sentences 50 --batch-sizes 16 64   # the same code paths on the CPU

The reference is the CPU path as users get it: Segmenter() with its default engine (onnx when the
model folder has a current export, else numpy) on 1 thread, batches of 64; for the torch path, which
computes in float, the numpy engine (float, same scores to 1e-5) where that export is int8 (the
embedded default's: its words differ from float ones on a few sentences in a hundred). Then each
requested path:
  torch       Segmenter(device=--device, engine="torch"): transformers + segmenter/attention.py on the device
  onnx-cuda   the model's model.onnx on onnxruntime's CUDAExecutionProvider (device_id from --device cuda:N).
              Only the separate onnxruntime-gpu package has it (`pip uninstall onnxruntime && pip install
              onnxruntime-gpu`); where onnxruntime.get_available_providers() does not list it, or a session
              falls back to the CPU (CUDA/cuDNN libraries missing), the path is reported unavailable, with why.
  onnx-cpu    the same construction as onnx-cuda on CPUExecutionProvider: a control, and how the CPU tests it
For each path and batch size (--batch-sizes; GPUs want big batches): load seconds (once per path), warm-up
seconds (one batch), chars/s of segment_batch over all sentences (CUDA synchronised before and after the
timing), peak GPU memory (torch: torch.cuda.max_memory_allocated; onnx-cuda: the device's used memory
as torch.cuda.mem_get_info sees it, onnxruntime's arena included, when torch sees CUDA), the sentences
whose words differ from the reference (must be 0; the first few are listed) and the max |difference| of
the head scores (Segmenter.score_texts -> plan.scores) from the reference's.
Exit status 1 when any path's words differ from the reference, else 0.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's segmenter, not another installed one
GOLD = REPO.parent / "shared" / "corpora" / "gold" / "pku_test.txt"
PATHS = ("torch", "onnx-cuda", "onnx-cpu")
ONNX_GPU_HINT = ("CUDAExecutionProvider comes with the separate onnxruntime-gpu package "
                 "(pip uninstall onnxruntime && pip install onnxruntime-gpu)")
SHOWN_DIFFERENCES = 5


def read_texts(path: Path, sentences: int, raw: bool) -> list[str]:
    """The first `sentences` non-empty lines; a gold file's spaces (its word boundaries) removed."""
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = line.strip() if raw else "".join(line.split())
            if text:
                texts.append(text)
                if len(texts) == sentences:
                    break
    return texts


def cuda_ordinal(device: str) -> int:
    return int(device.split(":", 1)[1]) if device.startswith("cuda:") else 0


def torch_cuda(device: str):
    """torch when `device` is a CUDA device that torch can use, else None."""
    if not device.startswith("cuda"):
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def synchronize(device: str) -> None:
    torch = torch_cuda(device)
    if torch is not None:
        torch.cuda.synchronize(device)


def device_used_mb(device: str) -> float | None:
    """Memory in use on the whole device (every process, every allocator), MB; None without CUDA."""
    torch = torch_cuda(device)
    if torch is None:
        return None
    free, total = torch.cuda.mem_get_info(cuda_ordinal(device))
    return (total - free) / 2**20


def onnx_cuda_problem() -> str | None:
    """Why onnxruntime cannot run on CUDA here, or None when it lists CUDAExecutionProvider."""
    try:
        import onnxruntime
    except ImportError:
        return f"onnxruntime is not installed; {ONNX_GPU_HINT}"
    providers = onnxruntime.get_available_providers()
    if "CUDAExecutionProvider" in providers:
        return None
    return f"onnxruntime {onnxruntime.__version__} lists only {providers}; {ONNX_GPU_HINT}"


def onnx_segmenter(model: str | None, providers: list, batch_size: int):
    """Segmenter(engine="onnx") whose reader is rebuilt on `providers` (onnx_engine.OnnxReader); the
    providers the session really got are checked: onnxruntime falls back to the CPU with a warning."""
    from segmenter.api import Segmenter
    from segmenter.model.onnx_engine import OnnxReader

    seg = Segmenter(model, engine="onnx", num_threads=1, batch_size=batch_size)
    old = seg.reader
    seg.reader = OnnxReader(old.path, old.vocab, old.heads, old.max_positions, 1, providers=providers)
    wanted = providers[0][0] if isinstance(providers[0], tuple) else providers[0]
    got = seg.reader.session.get_providers()
    if got[0] != wanted:
        raise RuntimeError(f"onnxruntime asked for {wanted} but the session runs on {got} "
                           "(are the CUDA and cuDNN libraries onnxruntime-gpu needs on the library path?)")
    return seg


def build(path: str, model: str | None, device: str, threads: int, batch_size: int):
    """(Segmenter, memory counter) of one path; RuntimeError/ValueError with the reason when it cannot run."""
    if path == "torch":
        from segmenter.api import Segmenter

        return Segmenter(model, device=device, engine="torch", num_threads=threads, batch_size=batch_size), "torch"
    if path == "onnx-cuda":
        problem = onnx_cuda_problem()
        if problem is not None:
            raise RuntimeError(problem)
        if not device.startswith("cuda"):
            raise RuntimeError(f"--device {device} is not a CUDA device; onnx-cuda runs on --device cuda[:N]")
        provider = ("CUDAExecutionProvider", {"device_id": cuda_ordinal(device)})
        return onnx_segmenter(model, [provider, "CPUExecutionProvider"], batch_size), "device"
    if path == "onnx-cpu":
        return onnx_segmenter(model, ["CPUExecutionProvider"], batch_size), None
    raise ValueError(f"unknown path {path!r}; choose from {PATHS}")


def max_score_difference(plans, reference) -> float:
    import numpy as np

    worst = 0.0
    for plan, ref in zip(plans, reference, strict=True):
        if plan.scores.shape != ref.scores.shape:
            return float("inf")
        if plan.scores.size:
            worst = max(worst, float(np.abs(plan.scores.astype(np.float64) - ref.scores).max()))
    return worst


def measure(seg, texts: list[str], batch_size: int, device: str, memory: str | None, reference) -> dict:
    """Warm-up, timed segment_batch, peak memory, words and scores against the reference (words, plans)."""
    chars = sum(len(t) for t in texts)
    torch = torch_cuda(device) if memory else None
    start = time.perf_counter()
    seg.segment_batch(texts[:batch_size], batch_size=batch_size)  # warm-up: one batch
    synchronize(device)
    warm_s = time.perf_counter() - start
    if torch is not None:
        torch.cuda.reset_peak_memory_stats(device)
    synchronize(device)
    start = time.perf_counter()
    words = seg.segment_batch(texts, batch_size=batch_size)
    synchronize(device)
    seconds = time.perf_counter() - start
    peak = None
    if torch is not None:
        peak = torch.cuda.max_memory_allocated(device) / 2**20 if memory == "torch" else device_used_mb(device)
    ref_words, ref_plans = reference
    differing = [i for i, (a, b) in enumerate(zip(words, ref_words, strict=True)) if a != b]
    plans = seg.score_texts(texts, batch_size=batch_size, show_progress=False)
    return {
        "batch_size": batch_size, "warm_s": warm_s, "seconds": seconds, "chars_per_s": chars / seconds,
        "peak_gpu_mb": peak, "differing": len(differing),
        "examples": [{"index": i, "reference": ref_words[i], "got": words[i]} for i in differing[:SHOWN_DIFFERENCES]],
        "max_score_diff": max_score_difference(plans, ref_plans),
    }


def machine_line(device: str) -> str:
    parts = [f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"]
    try:
        import torch

        cuda = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU build"
        parts.append(f"torch {torch.__version__} ({cuda})")
        if torch.cuda.is_available():
            index = cuda_ordinal(device) if device.startswith("cuda") else 0
            parts.append(f"GPU {torch.cuda.get_device_name(index)}")
        else:
            parts.append("no GPU visible to torch")
    except ImportError:
        parts.append("torch not installed")
    try:
        import onnxruntime

        parts.append(f"onnxruntime {onnxruntime.__version__} {onnxruntime.get_available_providers()}")
    except ImportError:
        parts.append("onnxruntime not installed")
    return ", ".join(parts)


def cpu_reference(model: str | None, engine: str, texts: list[str]):
    """The CPU path on 1 thread, batches of 64: its row, its (words, plans) and the Segmenter."""
    from segmenter.api import Segmenter

    start = time.perf_counter()
    ref = Segmenter(model, num_threads=1, engine=engine)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    ref.segment_batch(texts[:ref.batch_size])
    warm_s = time.perf_counter() - start
    start = time.perf_counter()
    words = ref.segment_batch(texts)
    seconds = time.perf_counter() - start
    row = {"path": f"cpu reference ({ref.engine}, 1 thread)", "device": "cpu", "load_s": load_s,
           "batch_size": ref.batch_size, "warm_s": warm_s, "seconds": seconds,
           "chars_per_s": sum(map(len, texts)) / seconds, "peak_gpu_mb": None, "differing": 0, "examples": [],
           "max_score_diff": 0.0}
    return row, (words, ref.score_texts(texts, show_progress=False)), ref


def run(args) -> dict:
    from segmenter.model.onnx_engine import exported_kind

    texts = read_texts(Path(args.input), args.sentences, args.raw)
    if not texts:
        raise SystemExit(f"{args.input}: no sentences")
    chars = sum(len(t) for t in texts)
    row, graph_reference, ref = cpu_reference(args.model, "auto", texts)
    rows, unavailable = [row], {}
    # The torch path computes in float: its reference is the CPU's float arithmetic. That is the
    # default's own where its graph holds float weights (or it has none), else the numpy engine's
    # (an int8 graph's words differ from float ones on a few sentences in a hundred: onnx_static.py).
    float_reference = graph_reference
    if "torch" in args.paths and ref.engine == "onnx" and exported_kind(ref.reader.path) != "float":
        float_row, float_reference, _ = cpu_reference(args.model, "numpy", texts)
        rows.append(float_row)
    for path in args.paths:
        device = "cpu" if path == "onnx-cpu" else args.device
        start = time.perf_counter()
        try:
            seg, memory = build(path, args.model, device, args.threads, args.batch_sizes[0])
        except Exception as err:  # noqa: BLE001 (the reason is the report)
            unavailable[path] = f"{type(err).__name__}: {err}"
            print(f"{path}: unavailable: {unavailable[path]}", file=sys.stderr)
            continue
        load_s = time.perf_counter() - start
        for batch_size in args.batch_sizes:
            result = measure(seg, texts, batch_size, device, memory,
                             float_reference if path == "torch" else graph_reference)
            rows.append({"path": f"{path} ({seg.engine})", "device": device, "load_s": load_s, **result})
            print(f"{path} batch {batch_size}: {result['chars_per_s']:,.0f} chars/s, "
                  f"{result['differing']} differing", file=sys.stderr)
        del seg
    return {"command": args.command, "machine": machine_line(args.device), "input": str(args.input),
            "sentences": len(texts), "chars": chars, "rows": rows, "unavailable": unavailable}


def to_markdown(result: dict) -> str:
    def mb(value):
        return "-" if value is None else f"{value:,.0f}"

    lines = [
        "# GPU path: speed and agreement with the CPU path", "",
        f"Command: `{result['command']}`  ",
        f"Machine: {result['machine']}  ",
        f"Input: {result['input']}, {result['sentences']} sentences, {result['chars']:,} characters", "",
        "| path | device | batch | load s | warm-up s | chars/s | peak GPU MB | sentences differing | max score diff |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(f"| {r['path']} | {r['device']} | {r['batch_size']} | {r['load_s']:.2f} | {r['warm_s']:.2f} | "
                     f"{r['chars_per_s']:,.0f} | {mb(r['peak_gpu_mb'])} | {r['differing']} | "
                     f"{r['max_score_diff']:.2e} |")
    lines += ["", ("Differing = sentences whose words are not those of the CPU reference (must be 0). Peak GPU MB: "
                   "torch.cuda.max_memory_allocated for torch; the device's used memory (torch.cuda.mem_get_info, "
                   "onnxruntime's arena and other processes included) for onnx-cuda.")]
    for path, reason in result["unavailable"].items():
        lines += ["", f"**{path}: unavailable.** {reason}"]
    for r in result["rows"]:
        for e in r["examples"]:
            lines += ["", f"{r['path']} batch {r['batch_size']}, sentence {e['index']}:  ",
                      f"reference: {' '.join(e['reference'])}  ", f"got: {' '.join(e['got'])}"]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("input", nargs="?", default=str(GOLD), help="a gold file (spaces removed) or, with --raw, text")
    parser.add_argument("--raw", action="store_true", help="the input is raw text: lines kept as they are")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--device", default="cuda", help="torch's device for the torch path: cuda, cuda:N or cpu")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=["torch", "onnx-cuda"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[64, 256, 1024])
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the torch path (on the CPU)")
    parser.add_argument("--model", default=None, help="model name or folder (default: the embedded model)")
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    args.command = "python benchmarks/gpu_speed.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    text = to_markdown(result)
    print(text)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if any(r["differing"] for r in result["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
