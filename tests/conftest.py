"""Shared fixtures: tiny random BERT folders made in the test, paths to the shared corpora."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Tests never reach the network: a hub name must fail fast and clearly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import torch

from segmenter.model.profile import HeadProfile
from segmenter.text.vocab import SPECIAL_TOKENS, CharVocab

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
GOLD = SHARED / "corpora" / "gold"
RAW = SHARED / "corpora" / "raw"
LEXICON = SHARED / "corpora" / "lexicon"

# A few hundred common characters, enough for the sentences tests use.
TINY_CHARS = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所"
    "民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那"
    "社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通"
    "并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区"
    "强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清"
    "美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群"
    "广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往"
    "酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局"
    "照参红细引听该铁价严，。！？、：；“”（）《》—…０１２３４５６７８９"
)


def tiny_vocab() -> CharVocab:
    return CharVocab(list(SPECIAL_TOKENS) + sorted(set(TINY_CHARS)) + list("0123456789abcdefghijklmnopqrstuvwxyz"))


def tiny_bert(seed: int = 0, layers: int = 3, heads: int = 4, attention: str = "sdpa"):
    """A random BertModel (no pooler) over tiny_vocab(), in eval mode: the same weights for the
    same seed and shape, whatever the attention kernel ("sdpa" or "eager")."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tiny_vocab()),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    config._attn_implementation = attention
    return BertModel(config, add_pooling_layer=False).eval()


def make_tiny_model(folder: Path, seed: int = 0, layers: int = 2, heads: int = 4, profile: HeadProfile | None = None) -> Path:
    """A random BERT folder (config.json, model.safetensors, vocab.txt, head profile)."""
    model = tiny_bert(seed, layers, heads)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tiny_vocab().save(folder)
    (profile or HeadProfile(heads=[(layers - 1, 0), (layers - 1, 1)], weights=[0.5, 0.5], source="test")).save(folder)
    return folder


# -- a planted boundary head ----------------------------------------------------------------------
# A tiny BERT whose head PLANTED_HEAD reads word boundaries exactly, in a toy language where a word
# is 0-2 PLANTED_INNER characters and one PLANTED_END character: every character in PLANTED_END
# attends to [SEP] (s > 0, "a word ends here"), every other one to the next character (s < 0).
# No other head can see the character classes, so only discovery that really finds the planted
# head segments the toy text right: tests of head discovery, calibration and distillation can fail.
_HAN = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]
PLANTED_END, PLANTED_INNER = _HAN[:20], _HAN[20:40]
PLANTED_HEAD = (1, 1)


def planted_lexicon(seed: int = 0, size: int = 40) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(PLANTED_INNER, size=rng.integers(0, 3))) + str(rng.choice(PLANTED_END)) for _ in range(size)]


def planted_sentences(count: int, seed: int = 0, words: tuple[int, int] = (3, 12)) -> list[list[str]]:
    """Gold sentences of the toy language (`words` words, then "。")."""
    lexicon, rng = planted_lexicon(), np.random.default_rng(seed + 1)
    return [[str(w) for w in rng.choice(lexicon, size=rng.integers(*words))] + ["。"] for _ in range(count)]


def planted_bert(head: tuple[int, int] = PLANTED_HEAD, layers: int = 2, heads: int = 4, hidden: int = 64, positions: int = 64):
    """The BertModel (eval mode) of the planted head over tiny_vocab().

    Embeddings (hidden dims): 0-3 one-hot class (end, inner, [SEP], other) and 4-7 its negative;
    8-35 cos/sin of the position at 7 frequencies and their negatives. Every token's vector has
    mean 0 and the same norm, so the embedding LayerNorm only scales it. Each layer passes its
    input on unchanged (attention output and feed-forward weights zero). The planted head's
    query rotates the position one step (q_i . k_j peaks at j = i + 1) and an end character's
    query also meets [SEP]'s key (3x the largest positional logit); other heads' queries and
    keys ignore dims 0-7."""
    import math

    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    vocab = tiny_vocab()
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=2 * hidden, max_position_embeddings=positions)
    model = BertModel(config, add_pooling_layer=False).eval()
    size, freqs = hidden // heads, [1, 2, 4, 8, 16, 32, 64]  # angles 2 pi f p / 128: no alias below 128 positions
    n = len(freqs)
    assert 8 + 4 * n <= hidden and 2 * n + 1 <= size
    with torch.no_grad():
        classes = np.full(len(vocab), 3)
        classes[[vocab.char_id(c) for c in PLANTED_END]] = 0
        classes[[vocab.char_id(c) for c in PLANTED_INNER]] = 1
        classes[vocab.sep_id] = 2
        word = torch.zeros(len(vocab), hidden)
        word[torch.arange(len(vocab)), torch.from_numpy(classes)] = 1.0
        word[torch.arange(len(vocab)), torch.from_numpy(classes) + 4] = -1.0
        angles = 2 * math.pi * torch.arange(positions, dtype=torch.float32)[:, None] * torch.tensor(freqs, dtype=torch.float32) / 128
        trig = torch.stack([angles.cos(), angles.sin()], dim=2).reshape(positions, 2 * n)
        position = torch.zeros(positions, hidden)
        position[:, 8 : 8 + 2 * n], position[:, 8 + 2 * n : 8 + 4 * n] = trig, -trig
        embeddings = model.embeddings
        embeddings.word_embeddings.weight.copy_(word)
        embeddings.position_embeddings.weight.copy_(position)
        embeddings.token_type_embeddings.weight.zero_()
        embeddings.LayerNorm.weight.fill_(1.0)
        embeddings.LayerNorm.bias.zero_()
        for block in model.encoder.layer:
            for dense in (block.attention.output.dense, block.output.dense):
                dense.weight.zero_()
                dense.bias.zero_()
            block.attention.self.query.weight[:, :8] = 0
            block.attention.self.key.weight[:, :8] = 0
        query, key = torch.zeros(size, hidden), torch.zeros(size, hidden)
        for i, f in enumerate(freqs):
            step = 2 * math.pi * f / 128
            c, s = math.cos(step), math.sin(step)
            a, b = 8 + 2 * i, 9 + 2 * i  # q = R(step) (cos, sin) of position i: (cos, sin) of position i + 1
            query[2 * i, a], query[2 * i, b], query[2 * i + 1, a], query[2 * i + 1, b] = c, -s, s, c
            key[2 * i, a], key[2 * i + 1, b] = 1.0, 1.0
        query[2 * n, 0], key[2 * n, 2] = 1.0, 3.0 * n  # an end character meets [SEP]
        # After the LayerNorm a vector is its embedding / std, std = sqrt((2 + 2n) / hidden); q.k
        # is scaled by 1/sqrt(size): logits of 4 per frequency (the next token leads by >= 8).
        factor = math.sqrt(4.0 * math.sqrt(size) * (2 + 2 * n) / hidden)
        rows = slice(head[1] * size, (head[1] + 1) * size)
        attention = model.encoder.layer[head[0]].attention.self
        attention.query.weight[rows], attention.key.weight[rows] = query * factor, key * factor
        attention.query.bias[rows], attention.key.bias[rows] = 0.0, 0.0
    return model, vocab


def make_planted_model(folder: Path) -> Path:
    """planted_bert() as a model folder whose profile reads the planted head (threshold 0)."""
    model, vocab = planted_bert()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    vocab.save(folder)
    HeadProfile(heads=[PLANTED_HEAD], weights=[1.0], thresholds=(-1.0, 0.0, 1.0), source="planted").save(folder)
    return folder


@pytest.fixture(scope="session")
def planted_model_dir(tmp_path_factory) -> Path:
    return make_planted_model(tmp_path_factory.mktemp("planted") / "model")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def tiny_segmenter(tiny_model_dir):
    from segmenter import Segmenter

    return Segmenter(tiny_model_dir, window=30, overlap=8)


# -- slow tests ------------------------------------------------------------------------------------
# `python -m pytest -m "not slow"` must stay quick (well under two minutes on 2 shared cores). A
# test is slow when it starts a process (the CLI, worker pools, Ray), loads a shipped model
# (segmenter/model/shipped/default or fast), reads the shared corpora, trains a model, or takes more
# than ~3 s. Whole modules say so with `pytestmark = pytest.mark.slow`, single tests with
# `@pytest.mark.slow`, and every test that uses one of these fixtures is marked here:
SLOW_FIXTURES = {
    "embedded_segmenter": "the shipped default model (test_robustness)",
    "exported": "`segmenter export-onnx` in a subprocess (test_onnx)",
    "selftrained": "two rounds of self-training (test_selftrain)",
    "local_ray": "a local Ray cluster (test_ray)",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class UnmarkedSlowTest(UserWarning):
    """A test that is not marked slow started a process."""


@pytest.fixture(autouse=True)
def _quick_tests_start_no_process(request, monkeypatch):
    """Keeps the markers honest: a test outside `slow` that starts a process (subprocess, a
    multiprocessing worker) is named in a warning. The process still runs."""
    if request.node.get_closest_marker("slow") is not None:
        return
    import multiprocessing.process
    import warnings

    def warn():
        warnings.warn(UnmarkedSlowTest(f"{request.node.nodeid} starts a process: mark it slow"), stacklevel=3)

    class Popen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            warn()
            super().__init__(*args, **kwargs)

    start = multiprocessing.process.BaseProcess.start

    def watched_start(self):
        warn()
        return start(self)

    monkeypatch.setattr(subprocess, "Popen", Popen)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", watched_start)


def require_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared corpus {path} not present")
    return path


def run_cli(*args, stdin: bytes | None = None, cwd=None, text: bool = False, env=None) -> subprocess.CompletedProcess:
    """`python -m segmenter ARGS…` in a subprocess (this checkout first on the path), output captured."""
    extra = dict(env or {})
    path = os.pathsep.join(filter(None, [str(REPO), extra.pop("PYTHONPATH", None), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **extra, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "segmenter", *map(str, args)], input=stdin, capture_output=True, cwd=cwd, env=env,
        timeout=300, text=text,
    )
