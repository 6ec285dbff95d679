"""Self-training end to end on a tiny random BERT and a small raw corpus (seconds)."""
import json
import math

import numpy as np
import pytest

from segmenter import Segmenter
from segmenter.train.calibration import fit_logistic, fit_mixture
from segmenter.train.ngrams import BranchingEntropy
from segmenter.train.selftrain import SelftrainConfig, sample_lines, selftrain

from conftest import make_tiny_model, planted_sentences

WORDS = ["中国", "人民", "发展", "经济", "我们", "社会", "工作", "问题", "的", "了", "在", "是", "和", "大", "新"]


def write_raw(path, lines=400, seed=0):
    rng = np.random.default_rng(seed)
    text = ["".join(rng.choice(WORDS, size=rng.integers(4, 12))) + "。" for _ in range(lines)]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def test_branching_entropy_counts(tmp_path):
    entropy = BranchingEntropy.from_texts(["甲乙甲乙", "甲丙"], max_n=2)
    keys, counts, right, left = entropy.tables[1]
    # 甲 is followed by 乙, 乙, 丙 -> H_r = entropy of (2/3, 1/3)
    jia = np.searchsorted(entropy.chars, ord("甲")) + 1
    slot = np.searchsorted(keys, jia)
    assert counts[slot] == 3
    assert math.isclose(right[slot], -(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3), rel_tol=1e-5)
    features = entropy.junction_features("甲乙甲", np.array([0, 1]))
    assert features.shape == (2, 12) and np.isfinite(features).all()
    entropy.save(tmp_path / "e.npz")
    again = BranchingEntropy.load(tmp_path / "e.npz")
    assert np.array_equal(again.junction_features("甲乙甲", np.array([0, 1])), features)


def test_logistic_and_mixture():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(-2, 1, 500), rng.normal(2, 1, 500)])
    y = np.r_[np.zeros(500), np.ones(500)]
    score = fit_logistic(x[:, None], y)
    assert ((score(x[:, None]) > 0) == y).mean() > 0.95
    mixture = fit_mixture(x)
    assert abs(mixture.threshold) < 0.5
    assert mixture.posterior(np.array([3.0]))[0] > 0.9 > 0.1 > mixture.posterior(np.array([-3.0]))[0]


def test_sample_is_reproducible(tmp_path):
    raw = write_raw(tmp_path / "raw.txt")
    first = sample_lines([str(raw)], 500, seed=3, min_line=4, max_line=100)
    assert first == sample_lines([str(raw)], 500, seed=3, min_line=4, max_line=100)
    assert 500 <= sum(map(len, first)) < 600


@pytest.fixture(scope="module")
def selftrained(tmp_path_factory, planted_model_dir):
    """Two rounds from conftest's planted model (one head marks every word of a toy language):
    round 1's teacher reads all its heads and the n-grams, its student a fresh head (1, 0)."""
    root = tmp_path_factory.mktemp("selftrain")
    raw = root / "raw.txt"
    raw.write_text("\n".join("".join(words) for words in planted_sentences(400, seed=1)) + "\n", encoding="utf-8")
    dev = root / "dev.txt"
    dev.write_text("\n".join(" ".join(words) for words in planted_sentences(20, seed=2)) + "\n", encoding="utf-8")
    config = SelftrainConfig(
        model=str(planted_model_dir), raw=[str(raw)], out=str(root / "out"), rounds=2, chars=6000, teacher_layers=2,
        student_layers=2, minutes=3.0, confidence=0.6, dev=str(dev), dev_sentences=10, lr=1e-2,
    )
    return selftrain(config), config


def test_selftrain_writes_a_model_that_learned_the_words(selftrained):
    """The student's own head (not the planted one: the profile says which) segments unseen toy
    sentences as their gold does, and the curve records its dev figures."""
    from segmenter.bench.evaluation import score

    out, _ = selftrained
    seg = Segmenter(out, conventions=None)
    assert seg.profile.heads == [(1, 0)] and seg.profile.source.startswith("self-trained, round")
    gold = planted_sentences(50, seed=9)
    assert score(gold, seg.segment_batch(["".join(words) for words in gold])).F1 >= 0.95
    text = "我们的社会发展了。"
    assert "".join(seg.segment(text)) == text
    curve = [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]
    assert curve and {"teacher_dev", "dev", "kept_share", "label_boundary_rate", "training"} <= set(curve[0])
    assert curve[0]["teacher_dev"]["f1"] == 1.0 and max(r["dev"]["f1"] for r in curve) >= 0.95
    assert "selftrain" in (out / "MODEL_CARD.md").read_text() and (out / "ngrams.npz").exists()


def test_selftrain_resumes_finished_rounds(selftrained):
    out, config = selftrained
    before = (out / "curve.jsonl").read_text()
    selftrain(config)  # every round finished: nothing is trained again
    assert (out / "curve.jsonl").read_text() == before


def test_label_chunks_resume_from_their_cache(tmp_path):
    """An interrupted round re-reads the chunks already labelled instead of recomputing them."""
    import torch

    from segmenter.model.reader import HeadReader
    from segmenter.model.folders import load_encoder
    from segmenter.train.selftrain import CHUNK, label_chunks

    model, vocab, _ = load_encoder(make_tiny_model(tmp_path / "m", seed=2), 2, torch.device("cpu"))
    reader = HeadReader(model, vocab, [(0, 0), (1, 1)], torch.device("cpu"))
    texts = write_raw(tmp_path / "raw.txt", lines=CHUNK + 20).read_text(encoding="utf-8").splitlines()
    config = SelftrainConfig(model="m", raw=[], out=str(tmp_path / "out"))
    first, cached = label_chunks(reader, texts, tmp_path / "labels", config)
    assert cached == 0 and len(first) == len(texts)
    again, cached = label_chunks(reader, texts, tmp_path / "labels", config)
    assert cached == 2  # both chunks (CHUNK lines, then 20) came from disk
    for a, b in zip(first, again):  # stored as float16: equal to that precision
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-3, atol=1e-3)


def test_cli_rejects_missing_files(tmp_path, capsys):
    from segmenter.cli import main

    code = main(["selftrain", "--model", str(tmp_path), "--raw", str(tmp_path / "none.txt"), "--out", str(tmp_path / "o")])
    assert code == 2 and "no such file" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_autonomy_and_word_decoding():
    from segmenter.text.plan import TextPlan
    from segmenter.train.teacher import decode_words

    lines = ["".join(np.random.default_rng(i).choice(WORDS, size=8)) for i in range(300)]
    entropy = BranchingEntropy.from_texts(lines, max_n=3)
    text = "中国人民发展经济"
    autonomy = entropy.autonomy(text)
    assert autonomy.shape == (len(text), 3)
    # A corpus word is more autonomous than a string that straddles two words.
    assert autonomy[0, 1] > autonomy[1, 1]  # 中国 vs 国人
    plan = TextPlan(text)
    silent = np.zeros(len(plan.junctions))
    cuts = decode_words(plan, silent, entropy, alpha=1.0)
    assert cuts.tolist() == [False, True, False, True, False, True, False]  # 中国|人民|发展|经济
    # Strong logits win over the lexicon; alpha = 0 leaves the logits alone.
    assert not decode_words(plan, np.full(len(plan.junctions), -50.0), entropy).any()
    logits = np.array([-1.0, -0.5, 0.2, 0.3, -0.6, 0.4, 1.0])
    assert decode_words(plan, logits, entropy, alpha=0.0).tolist() == (logits > 0).tolist()


@pytest.mark.slow
def test_selftrain_gives_a_model_of_128_positions_windows_that_fit(tmp_path):
    """The shipped students (and `segmenter pretrain`'s models) have 128 positions: self-training
    reads and trains them in windows of 126 characters, not the default 254 (that stopped with a
    tensor-size error deep inside torch)."""
    from segmenter.model.folders import embedded_model_path

    raw = tmp_path / "raw.txt"
    raw.write_text(("我们都是中国人民的好朋友。" * 15 + "\n") * 30, encoding="utf-8")  # lines of 195 characters
    config = SelftrainConfig(model=str(embedded_model_path("fast")), raw=[str(raw)], out=str(tmp_path / "out"),
                             rounds=1, chars=3000, teacher_layers=2, student_layers=2, minutes=0.1)
    out = selftrain(config)
    text = "我们都是中国人民的好朋友。" * 15
    assert "".join(Segmenter(out).segment(text)) == text
