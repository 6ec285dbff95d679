"""The shipped model: it loads by default, keeps every character, and its granularity does
what it says on real text (slow: a 6-layer model and the shared corpora)."""
import pytest

import segmenter
from segmenter import Segmenter
from segmenter.train.corpus import read_gold
from segmenter.model.folders import embedded_model_path

from conftest import GOLD, require_shared

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedded():
    return Segmenter(num_threads=1)


def test_embedded_model_is_packaged():
    folder = embedded_model_path()
    for name in ("config.json", "model.safetensors", "vocab.txt", "segmenter_heads.json", "MODEL_CARD.md"):
        assert (folder / name).is_file(), name
    # ~35 MiB: the word table of all the raw text is 26 MiB of it (ngrams.npz; it was 2.8 MiB
    # from 6.9 M characters, and scored lower on every dev file), the model and its ONNX 9 MiB
    assert sum(f.stat().st_size for f in folder.iterdir()) < 40 * 2**20


def test_module_functions_use_the_embedded_model():
    text = "我们都是中国人民的好朋友。"
    words = segmenter.segment(text)
    assert "".join(words) == text and 1 < len(words) < len(text)
    assert segmenter.tokenize(text)[-1][2] == len(text)


@pytest.mark.parametrize("corpus", ["pku_dev", "msr_dev", "ud_gsdsimp_dev"])
def test_finer_granularity_gives_more_shorter_words(embedded, corpus):
    sentences = read_gold(require_shared(GOLD / f"{corpus}.txt"), 100)
    texts = ["".join(words) for words in sentences]
    counts = {}
    for granularity in ("fine", "default", "coarse"):
        batch = embedded.segment_batch(texts, granularity=granularity)
        assert ["".join(words) for words in batch] == texts
        counts[granularity] = sum(map(len, batch))
    assert counts["fine"] > counts["default"] > counts["coarse"]


def test_fast_model_is_packaged_small_and_reads_the_default_word_table():
    fast, default = embedded_model_path("fast"), embedded_model_path()
    assert not (fast / "ngrams.npz").exists()  # one copy of the 26 MiB table in the package
    assert (fast / "model.safetensors").stat().st_size < (default / "model.safetensors").stat().st_size  # narrower
    seg = Segmenter("fast", num_threads=1)
    assert seg.folder == fast and seg.word_table is not None and seg.standard.name == "general"
    text = "中华人民共和国成立了，小明硕士毕业于中国科学院。ABC 123"
    words = seg.segment(text)
    assert "".join(words) == text and "中华人民共和国" in words
