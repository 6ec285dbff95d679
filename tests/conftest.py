"""Shared fixtures: tiny random BERT folders made in the test, paths to the shared corpora."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Tests never reach the network: a hub name must fail fast and clearly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch

from segmenter.profile import HeadProfile
from segmenter.vocab import SPECIAL_TOKENS, CharVocab

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


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def tiny_segmenter(tiny_model_dir):
    from segmenter import Segmenter

    return Segmenter(tiny_model_dir, window=30, overlap=8)


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
