"""distill --ffn: a model's feed-forward layers cut to the neurons that carry its output, then
trained on its own scores; the folder keeps the teacher's profile and exports its graph."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import planted_sentences, tiny_bert, tiny_vocab
from segmenter.train.selftrain import CHUNK
from segmenter.train.shrink import ffn_importance, prune_ffn
from segmenter.train.student import Example


def hidden_states(model, ids):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


def windows(count: int, seed: int = 0) -> list[Example]:
    rng = np.random.default_rng(seed)
    size = len(tiny_vocab())
    lengths = rng.integers(6, 20, count)
    return [Example(rng.integers(5, size, n), np.zeros(n - 1, np.float32)) for n in lengths]


def test_pruning_keeps_the_neurons_that_carry_the_output():
    """Neurons whose output rows are zero add nothing: they rank last, and cutting them (and
    only them) leaves every hidden state as it was; the full width is the model itself."""
    model = tiny_bert(seed=1, layers=2)
    width = model.config.intermediate_size
    silent = torch.randperm(width, generator=torch.Generator().manual_seed(0))[: width // 2]
    with torch.no_grad():
        for layer in model.encoder.layer:
            layer.output.dense.weight[:, silent] = 0.0
    importance = ffn_importance(model, tiny_vocab(), windows(40), sample=40, batch_size=8)
    assert [scores.shape for scores in importance] == [(width,)] * 2
    assert all((scores[silent] == 0).all() and (np.delete(scores.numpy(), silent) > 0).all() for scores in importance)
    ids = torch.from_numpy(np.random.default_rng(2).integers(5, len(tiny_vocab()), (3, 17)))
    half = prune_ffn(model, width // 2, importance)
    assert half.config.intermediate_size == width // 2 and half.encoder.layer[0].intermediate.dense.out_features == width // 2
    torch.testing.assert_close(hidden_states(half, ids), hidden_states(model, ids), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(hidden_states(prune_ffn(model, width, importance), ids), hidden_states(model, ids))
    for keep in (0, width + 1):
        with pytest.raises(ValueError, match=rf"ffn must be in \[1, {width}\].*got {keep}"):
            prune_ffn(model, keep, importance)


@pytest.mark.slow
def test_distill_ffn_writes_the_teacher_shrunk(tmp_path, planted_model_dir):
    """The planted teacher (conftest: its head marks every word of a toy language) shrunk to 16
    feed-forward neurons and trained one pass on its own scores: the folder loads with the new
    width and an int8 graph, keeps the teacher's profile with a record, and still finds every word."""
    from segmenter import HeadProfile, Segmenter
    from segmenter.bench.evaluation import score
    from segmenter.model.onnx_engine import exported_kind
    from segmenter.train.derived import onnx_kind
    from segmenter.train.distill import DistillConfig, distill

    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join("".join(w) for w in planted_sentences(CHUNK + 100, seed=1, words=(4, 16))) + "\n",
                   encoding="utf-8")
    config = DistillConfig(teacher=str(planted_model_dir), raw=[str(raw)], out=str(tmp_path / "out"), chars=10**6,
                           min_line=8, max_line=60, window=30, overlap=8, minutes=3.0, epochs=1.0, batch_size=16,
                           lr=1e-3, ffn=16, int8=True, name="shrunk", command="test")
    out = distill(config)
    assert out == Path(config.out) / "shrunk"
    assert json.loads((out / "config.json").read_text())["intermediate_size"] == 16
    profile = HeadProfile.load(out)
    assert profile.heads == HeadProfile.load(planted_model_dir).heads and "shrunk to 16 neurons" in profile.source
    assert profile.extra["shrink"]["from_ffn"] == 128 and profile.extra["shrink"]["training"]["steps"] > 0
    assert onnx_kind(out) == "int8" and exported_kind(out / "model.onnx") == "int8" and onnx_kind(planted_model_dir) is None
    gold = planted_sentences(40, seed=9)
    texts = ["".join(words) for words in gold]
    for engine in ("onnx", "numpy"):
        shrunk = Segmenter(out, window=30, overlap=8, conventions=None, engine=engine)
        assert score(gold, shrunk.segment_batch(texts)).F1 >= 0.98, engine
    assert not list(tmp_path.glob("out/.*part"))
