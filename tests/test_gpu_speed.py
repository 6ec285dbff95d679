"""benchmarks/gpu_speed.py on the CPU: the GPU script's code paths (torch engine, the onnx reader rebuilt
on explicit providers) run with --device cpu, words identical to the CPU reference, onnx-cuda reported."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_speed.py"


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_gpu_speed_on_cpu(tmp_path):
    gold = SHARED / "corpora" / "gold" / "pku_test.txt"
    if not gold.exists():
        pytest.skip(f"shared corpus {gold} not present")
    gpu_speed = load_script()
    markdown, result_json = tmp_path / "gpu.md", tmp_path / "gpu.json"
    code = gpu_speed.main([str(gold), "--device", "cpu", "--sentences", "50", "--batch-sizes", "16", "64",
                          "--paths", "torch", "onnx-cuda", "onnx-cpu",
                          "--markdown", str(markdown), "--json", str(result_json)])
    assert code == 0
    result = json.loads(result_json.read_text(encoding="utf-8"))
    assert result["sentences"] == 50
    rows = result["rows"]
    measured = {(r["path"].split()[0], r["batch_size"]) for r in rows if "reference" not in r["path"]}
    # the embedded default's graph is int8: the torch path is checked against the float numpy engine
    assert [r["path"] for r in rows if "reference" in r["path"]] == [
        "cpu reference (onnx, 1 thread)", "cpu reference (numpy, 1 thread)"]
    assert measured == {(p, b) for p in ("torch", "onnx-cpu") for b in (16, 64)}
    for row in rows:
        assert row["differing"] == 0, row["examples"]
        assert row["chars_per_s"] > 0
        assert row["max_score_diff"] < 1e-3  # float32 engines on the same weights
        assert row["peak_gpu_mb"] is None  # no CUDA device asked for
    text = markdown.read_text(encoding="utf-8")
    assert "Command: `python benchmarks/gpu_speed.py" in text and "Machine: " in text
    assert "| torch (torch) | cpu | 64 |" in text
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("onnxruntime-gpu is installed here: onnx-cuda is not reported unavailable")
    reason = result["unavailable"]["onnx-cuda"]
    assert "onnxruntime-gpu" in reason and "CUDAExecutionProvider" in reason
    assert "**onnx-cuda: unavailable.**" in text


def test_onnx_reader_providers_default_to_cpu():
    """The narrow onnx_engine change: OnnxReader's providers default to the CPU one, as before."""
    import inspect

    from segmenter.model.onnx_engine import OnnxReader

    default = inspect.signature(OnnxReader).parameters["providers"].default
    assert tuple(default) == ("CPUExecutionProvider",)
