"""The numpy engine: same scores as the torch path, no torch import, its own errors."""
from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from segmenter.api import Segmenter
from segmenter.model.numpy_engine import read_safetensors
from segmenter.errors import ModelLoadError
from segmenter.model.numpy_ops import erf
from segmenter.model.profile import PROFILE_FILE, HeadProfile

from conftest import GOLD, REPO, TINY_CHARS, make_tiny_model, require_shared

TEXTS = ["".join(random.Random(n).choice(TINY_CHARS + " ab1") for _ in range(n)) for n in (0, 1, 2, 5, 29, 30, 31, 70, 200)]


def junction_scores(seg: Segmenter, texts: list[str]) -> np.ndarray:
    plans = seg.score_texts(texts, show_progress=False)
    return np.concatenate([plan.scores.ravel() for plan in plans])


def test_erf_matches_math_erf():
    x = np.linspace(-8, 8, 200_001, dtype=np.float32)
    exact = np.array([math.erf(v) for v in x.astype(np.float64)])
    assert np.abs(erf(x).astype(np.float64) - exact).max() < 6e-7  # 1.5e-7 of the formula + float32 rounding


def test_scores_from_logits_match_the_log_softmax_with_its_floor():
    """The difference of two logits where no weight is under the floor, the exact log-softmax
    where one is (rows with a logit far below their max)."""
    from segmenter.model.numpy_ops import LOG_FLOOR, scores_from_logits

    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, size=(4, 2, 16, 16)).astype(np.float32)
    logits[0, 0, 3, 13] = logits[1, 1, 7, 8] = -40.0  # weights of ~e-40, to [SEP] and to the next: floored
    lengths = np.array([12, 13, 9, 13])
    log_a = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(-1, keepdims=True)
    rows = np.arange(1, 14)  # token i = character i - 1: junctions 0 .. T - 4
    to_sep = np.maximum(np.take_along_axis(log_a[:, :, 1:14], (lengths + 1)[:, None, None, None], 3)[..., 0], LOG_FLOOR)
    to_next = np.maximum(log_a[:, :, rows, rows + 1], LOG_FLOOR)
    scores = scores_from_logits(logits, lengths)
    np.testing.assert_allclose(scores, to_sep - to_next, atol=1e-4)
    assert to_sep[0, 0, 2] == to_next[1, 1, 6] == LOG_FLOOR  # both floors were used


def test_safetensors_reader_matches_the_library(tiny_model_dir):
    from safetensors.numpy import load_file

    ours = read_safetensors(tiny_model_dir / "model.safetensors")
    theirs = load_file(tiny_model_dir / "model.safetensors")
    assert ours.keys() == theirs.keys()
    assert all(np.array_equal(ours[k], theirs[k]) for k in ours)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_numpy_scores_match_torch(tmp_path, dtype):
    """Heads in two layers, listed out of order; float16/bfloat16 weights computed in float32."""
    from transformers import BertModel

    profile = HeadProfile(heads=[(2, 3), (0, 1), (2, 0)], weights=[0.5, 0.2, 0.3], source="test")
    folder = make_tiny_model(tmp_path / "m", layers=3, profile=profile)
    if dtype != torch.float32:
        BertModel.from_pretrained(folder).to(dtype).save_pretrained(folder)
    fast = Segmenter(folder, window=30, overlap=8, engine="numpy")
    slow = Segmenter(folder, window=30, overlap=8, engine="torch")
    assert fast.engine == "numpy" and slow.engine == "torch"
    assert np.abs(junction_scores(fast, TEXTS) - junction_scores(slow, TEXTS)).max() < 1e-4
    assert fast.segment_batch(TEXTS) == slow.segment_batch(TEXTS)


def test_threads_do_not_change_scores(tiny_model_dir):
    one = Segmenter(tiny_model_dir, window=30, overlap=8, num_threads=1)
    three = Segmenter(tiny_model_dir, window=30, overlap=8, num_threads=3)
    assert np.array_equal(junction_scores(one, TEXTS * 5), junction_scores(three, TEXTS * 5))


def test_auto_takes_numpy_on_cpu_and_torch_when_the_folder_needs_it(tiny_model_dir, tmp_path):
    assert Segmenter(tiny_model_dir).engine == "numpy"
    import shutil

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_act": "gelu_new"}))
    assert Segmenter(folder).engine == "torch"
    with pytest.raises(ModelLoadError, match="hidden_act='gelu_new'.*engine='torch'"):
        Segmenter(folder, engine="numpy")


def test_a_config_that_does_not_fit_the_weights_is_refused_at_load(tiny_model_dir, tmp_path):
    """As torch's loader refuses it: not a reshape error at the first text."""
    import shutil

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    (folder / "checksums.json").unlink(missing_ok=True)  # a hand-edited folder without a manifest
    config = json.loads((folder / "config.json").read_text())
    for change in ({"hidden_size": config["hidden_size"] + 4}, {"max_position_embeddings": 4 * config["max_position_embeddings"]}):
        (folder / "config.json").write_text(json.dumps({**config, **change}))
        with pytest.raises(ModelLoadError, match="config.json has hidden_size .* model.safetensors has"):
            Segmenter(folder, engine="numpy")


def test_bad_engine_arguments(tiny_model_dir):
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'numpy', 'torch', 'onnx', got 'tpu'"):
        Segmenter(tiny_model_dir, engine="tpu")
    if not torch.cuda.is_available():
        return
    with pytest.raises(ValueError, match="engine='numpy' runs on the CPU"):
        Segmenter(tiny_model_dir, engine="numpy", device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cuda_runs_the_torch_path(tiny_model_dir):
    gpu = Segmenter(tiny_model_dir, window=30, overlap=8, device="cuda")
    cpu = Segmenter(tiny_model_dir, window=30, overlap=8)
    assert gpu.engine == "torch" and gpu.device == "cuda"
    assert np.abs(junction_scores(gpu, TEXTS) - junction_scores(cpu, TEXTS)).max() < 1e-3


def test_profile_runtime_sets_window_and_overlap(tiny_model_dir, tmp_path):
    import shutil

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    profile = json.loads((folder / PROFILE_FILE).read_text())
    (folder / PROFILE_FILE).write_text(json.dumps({**profile, "runtime": {"window": 20, "overlap": 6}}))
    seg = Segmenter(folder)
    assert (seg.window, seg.overlap) == (20, 6)
    assert (Segmenter(folder, window=30, overlap=8).window, Segmenter(folder, overlap=4).overlap) == (30, 4)
    # A window alone takes the profile's overlap: (30, 6) is valid, (30, 64) would not be.
    assert (Segmenter(folder, window=30).window, Segmenter(folder, window=30).overlap) == (30, 6)
    assert json.loads(seg.save_pretrained(tmp_path / "copy").joinpath(PROFILE_FILE).read_text())["runtime"] == {"window": 20, "overlap": 6}
    assert (Segmenter(tiny_model_dir).window, Segmenter(tiny_model_dir).overlap) == (62, 31)  # 254/64 clamped to 64 positions: overlap at most half a window


@pytest.mark.slow
def test_segmenting_imports_neither_torch_nor_transformers(tiny_model_dir):
    """The library on the CPU and the plain CLI, in fresh interpreters."""
    check = "import sys; assert not {'torch', 'transformers'} & set(sys.modules), sorted(m for m in sys.modules if m.startswith(('torch', 'transformers')))[:3]"
    code = f"import segmenter; s = segmenter.Segmenter({str(tiny_model_dir)!r}); s.segment('共同创造'); {check}"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=120)
    cli = f"import sys, runpy; sys.argv = ['segmenter', '-m', {str(tiny_model_dir)!r}]; from segmenter.cli import main; main(); {check}"
    result = subprocess.run([sys.executable, "-c", cli], cwd=REPO, input="共同创造\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.replace(" ", "") == "共同创造\n"


@pytest.mark.slow
def test_default_model_numpy_equals_torch():
    texts = ["".join(line.split()) for line in open(require_shared(GOLD / "pku_dev.txt"), encoding="utf-8")][:100]
    fast, slow = Segmenter(engine="numpy"), Segmenter(engine="torch")
    assert np.abs(junction_scores(fast, texts) - junction_scores(slow, texts)).max() < 1e-4
    assert fast.segment_batch(texts) == slow.segment_batch(texts)
