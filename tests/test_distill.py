"""Distillation: teacher labels are cached per chunk and resumed, the student's loss falls,
and the saved student is a segmenter model folder. Tiny random teacher and student."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from segmenter.model.profile import HeadProfile
from segmenter.train.distill import DistillConfig, distill, finished_labels, make_student, soft_targets
from segmenter.train.selftrain import CHUNK, sample_lines

from conftest import TINY_CHARS, make_tiny_model, planted_sentences

HAN = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]


def write_raw(path, lines: int, seed: int = 0):
    rng = random.Random(seed)
    text = ["".join(rng.choice(HAN) for _ in range(rng.randint(8, 40))) + rng.choice("，。") for _ in range(lines)]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def setup(tmp_path):
    teacher = make_tiny_model(
        tmp_path / "teacher", seed=3, layers=2, heads=4,
        profile=HeadProfile(heads=[(1, 0)], weights=[1.0], thresholds=(-1.0, 0.0, 1.0), source="test"),
    )
    raw = write_raw(tmp_path / "raw.txt", lines=CHUNK + 100)
    gold = tmp_path / "dev.txt"
    gold.write_text("我们 的 国家 。\n中国 人民 很 好 。\n", encoding="utf-8")
    config = DistillConfig(
        teacher=str(teacher), raw=[str(raw)], out=str(tmp_path / "out"), chars=10**6, min_line=8, max_line=60,
        layers=2, hidden=16, head_size=8, window=30, overlap=8, minutes=0.2, batch_size=16, lr=3e-3,
        dev=[str(gold)], dev_sentences=10, command="test",
    )
    return config


def test_labels_are_cached_and_resumed(setup):
    config = setup
    config.label_only = True
    assert distill(config) is None
    folder = Path(config.out) / "labels"
    labels = sorted(folder.glob("*.npz"))
    assert [p.name for p in labels] == ["000000.npz", f"{CHUNK:06d}.npz"]
    first = np.load(labels[0])["scores"].copy()
    stamp = labels[0].stat().st_mtime_ns
    labels[1].unlink()  # an interrupted job: the second chunk is missing
    distill(config)
    assert labels[0].stat().st_mtime_ns == stamp  # the finished chunk was not recomputed
    assert labels[1].exists()
    np.testing.assert_array_equal(np.load(labels[0])["scores"], first)
    # Every Han-Han junction of the sample has the teacher's score.
    texts = sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line)
    plans = finished_labels(texts, folder, HeadProfile.load(config.teacher))
    assert len(plans) == len(texts) and all(len(p.scores) == len(p.junctions) > 0 for p in plans)
    capped = finished_labels(texts, folder, HeadProfile.load(config.teacher), max_chars=10)
    assert len(capped) == CHUNK  # whole chunks only


@pytest.mark.slow
def test_training_lowers_the_loss(setup):
    from segmenter.model.attention import AttentionReader
    from segmenter.train.student import collate, head_logits, make_examples, train_boundary_head
    from segmenter.text.vocab import CharVocab

    config = setup
    config.label_only = True
    distill(config)
    texts = sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line)
    plans = finished_labels(texts, Path(config.out) / "labels", HeadProfile.load(config.teacher))
    vocab = CharVocab.from_folder(config.teacher)
    # Hard targets: a random teacher's soft scores sit near 0.5, whose entropy no student can beat.
    targets = soft_targets(plans, 0.0, config.temperature, hard=1.0)
    assert all(np.isnan(t).sum() == len(t) - len(p.junctions) for t, p in zip(targets, plans))
    examples = make_examples(vocab, [p.text for p in plans], [p.positions for p in plans], targets, config.window, config.overlap)
    model = make_student(config, vocab, Path(config.teacher))
    head = (config.layers - 1, 0)

    def loss() -> float:
        ids, mask, lengths, target = collate(examples[:64], vocab, torch.device("cpu"))
        with torch.no_grad():
            logits = head_logits(AttentionReader(model, [head]), ids, mask, lengths)
        known = ~torch.isnan(target)
        return float(torch.nn.functional.binary_cross_entropy_with_logits(logits[known], target[known]))

    before = loss()
    train_boundary_head(model, vocab, examples, head, torch.device("cpu"), minutes=0.5, epochs=1.0, lr=3e-3, batch_size=16, show_progress=False)
    assert loss() < before - 0.05


@pytest.fixture()
def planted_setup(tmp_path, planted_model_dir):
    """A teacher that is right: conftest's planted head marks every word of a toy language.
    Raw text and dev gold are toy sentences (other ones)."""
    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join("".join(words) for words in planted_sentences(CHUNK + 100, seed=1, words=(4, 16))) + "\n", encoding="utf-8")
    gold = tmp_path / "dev.txt"
    gold.write_text("\n".join(" ".join(words) for words in planted_sentences(20, seed=2)) + "\n", encoding="utf-8")
    # epochs=1 ends the run (~45 steps) well before the minutes do, however busy the machine
    return DistillConfig(
        teacher=str(planted_model_dir), raw=[str(raw)], out=str(tmp_path / "out"), chars=10**6, min_line=8, max_line=60,
        layers=2, hidden=16, head_size=8, window=30, overlap=8, minutes=3.0, epochs=1.0, batch_size=16, lr=3e-3,
        dev=[str(gold)], dev_sentences=10, command="test",
    )


@pytest.mark.slow
def test_student_learns_the_teachers_words(planted_setup):
    """The student folder loads, and segments as its teacher does: on the lines it was trained
    on and on the dev sentences, whose figures the metrics file reports."""
    from safetensors.torch import load_file

    from segmenter import Segmenter
    from segmenter.bench.evaluation import score
    from segmenter.train.corpus import read_gold

    import shutil
    from dataclasses import replace

    from segmenter.train.ngram_counting import build_word_table

    # The teacher reads a word table of another folder (as the shipped `fast` reads the default's)
    # and a runtime entry: the student gets both, the table as a copy of its own.
    teacher = shutil.copytree(planted_setup.teacher, Path(planted_setup.out).parent / "teacher")
    (teacher.parent / "tables").mkdir()
    build_word_table(sample_lines(planted_setup.raw, 20_000, 0, 8, 60), min_count=1).save(teacher.parent / "tables")
    replace(HeadProfile.load(teacher), runtime={"decode": "threshold", "word_table": "../tables"}).save(teacher)
    config = replace(planted_setup, teacher=str(teacher))
    out = distill(config)
    assert out == Path(config.out) / "student"
    profile = HeadProfile.load(out)
    assert profile.heads == [(config.layers - 1, 0)] and profile.thresholds == (-1.0, 0.0, 1.0)
    assert profile.runtime == {"decode": "threshold"}
    assert (out / "ngrams.npz").read_bytes() == (teacher.parent / "tables" / "ngrams.npz").read_bytes()
    assert all(t.dtype == torch.float16 for t in load_file(str(out / "model.safetensors")).values())
    assert json.loads((out / "config.json").read_text())["max_position_embeddings"] == config.window + 2
    assert "student F1" in (out / "MODEL_CARD.md").read_text()
    student = Segmenter(out, decode="threshold", conventions=None)
    teacher = Segmenter(config.teacher, window=config.window, overlap=config.overlap, conventions=None)
    texts = sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line)
    same = np.mean([a == b for a, b in zip(student.segment_batch(texts), teacher.segment_batch(texts))])
    assert same >= 0.95, f"the student segments {same:.0%} of its training lines as the teacher does"
    text = "我们的国家很好。ABC 中国人民３.５％"
    assert "".join(student.segment(text)) == text
    # distill_metrics.json: the teacher is perfect on the toy gold, the student nearly, and the
    # figures are those of the saved folders (read as evaluate() reads them).
    metrics = json.loads((out / "distill_metrics.json").read_text())
    gold = read_gold(config.dev[0], config.dev_sentences)
    dev_texts = ["".join(words) for words in gold]
    assert metrics["teacher_dev"]["dev"]["f1"] == 1.0 and metrics["dev"]["dev"]["f1"] >= 0.95
    assert metrics["dev"]["dev"]["f1"] == score(gold, Segmenter(out, decode="threshold").segment_batch(dev_texts)).F1
    assert metrics["dev"]["dev"]["sentences"] == 10 and metrics["teacher_dev"]["dev"]["chars_per_s"] > 0


def test_pca_init_needs_a_wide_enough_teacher(setup):
    from segmenter.text.vocab import CharVocab

    config = setup
    config.hidden = 64  # the tiny teacher has 32 dimensions
    with pytest.raises(ValueError, match="exceeds the teacher"):
        make_student(config, CharVocab.from_folder(config.teacher), Path(config.teacher))


def test_a_fresh_student_takes_its_feed_forward_width(setup):
    """--intermediate: the student's feed-forward width; left out, BERT's 4 x hidden."""
    from segmenter.text.vocab import CharVocab

    config = setup
    vocab = CharVocab.from_folder(config.teacher)
    assert make_student(config, vocab, Path(config.teacher)).config.intermediate_size == 4 * config.hidden
    config.intermediate = 24
    model = make_student(config, vocab, Path(config.teacher))
    assert model.config.intermediate_size == 24 and model.encoder.layer[0].intermediate.dense.out_features == 24


def test_a_training_seed_draws_another_student_from_the_same_sample(setup):
    """--train-seed: another initialisation (and batch order), the raw sample of --seed kept, so the
    labels on disk still match it."""
    from segmenter.text.vocab import CharVocab

    config = setup
    vocab = CharVocab.from_folder(config.teacher)
    first = make_student(config, vocab, Path(config.teacher)).encoder.layer[0].output.dense.weight.detach().clone()
    assert config.training_seed == config.seed
    config.train_seed = config.seed + 1
    assert config.training_seed == config.seed + 1
    other = make_student(config, vocab, Path(config.teacher)).encoder.layer[0].output.dense.weight
    assert not torch.equal(first, other)
    config.train_seed = config.seed
    assert torch.equal(first, make_student(config, vocab, Path(config.teacher)).encoder.layer[0].output.dense.weight)


@pytest.mark.slow
def test_shipped_models_load_by_name():
    """The embedded default (the distilled student, window 126 from its profile) and `fast`
    resolve from their names and segment losslessly."""
    from segmenter import Segmenter
    from segmenter.model.folders import embedded_model_path, resolve_model_folder

    assert resolve_model_folder("fast") == embedded_model_path("fast")
    text = "共同创造美好的新世纪，2001年。"
    for name in (None, "fast"):
        seg = Segmenter(name)
        words = seg.segment(text)
        assert "".join(words) == text and len(words) > 3
        assert seg.decode == "words"  # both profiles ask for word decoding
    seg = Segmenter()
    assert (seg.window, seg.overlap) == (126, 32)
    assert seg.window == json.loads((embedded_model_path() / "config.json").read_text())["max_position_embeddings"] - 2


def test_cli_rejects_bad_arguments(tmp_path, capsys):
    from segmenter.cli import main

    raw = write_raw(tmp_path / "raw.txt", lines=10)
    assert main(["distill", "--raw", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "o")]) == 2
    assert "missing.txt: no such file" in capsys.readouterr().err
    assert main(["distill", "--raw", str(raw), "--out", str(tmp_path / "o"), "--label-only", "--no-label"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    assert main(["distill", "--raw", str(raw), "--out", str(tmp_path / "o"), "--window", "20", "--overlap", "20"]) == 2
    assert "--overlap must be in [2, --window)" in capsys.readouterr().err
