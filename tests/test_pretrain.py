"""`segmenter pretrain`: data pipeline, masked-only logits, exact resume, output folder, CLI."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from segmenter.train import pretrain_data as data
from segmenter.train.pretrain import PretrainConfig, Sitting, pretrain, resume_config
from segmenter.model.profile import HeadProfile
from segmenter.text.vocab import SPECIAL_TOKENS

from conftest import REPO, TINY_CHARS, run_cli

HAN = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]
TINY = dict(layers=2, hidden=32, heads=4, intermediate=64, max_length=32, batch_tokens=256, warmup_steps=2, eval_lines=20)


def _words(rng: np.random.Generator, count: int) -> list[str]:
    """A small lexicon of 1-3 character words: text with some structure to learn."""
    lexicon = ["".join(rng.choice(HAN, size=rng.integers(1, 4))) for _ in range(60)]
    return [lexicon[i] for i in rng.integers(0, len(lexicon), size=count)]


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory) -> tuple[Path, Path]:
    """(raw corpus, gold file): 400 unique raw lines (some longer than a window), 20 gold lines."""
    folder = tmp_path_factory.mktemp("pretrain_corpus")
    rng = np.random.default_rng(0)
    lines = {"".join(_words(rng, int(rng.integers(2, 30)))) + "。" for _ in range(400)}
    (folder / "raw.txt").write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")
    gold = [" ".join(_words(rng, int(rng.integers(3, 12)))) for _ in range(20)]
    (folder / "gold.txt").write_text("\n".join(gold) + "\n", encoding="utf-8")
    return folder / "raw.txt", folder / "gold.txt"


def _config(corpus: Path, **overrides) -> PretrainConfig:
    return PretrainConfig(corpus=[str(corpus)], **{**TINY, **overrides})


def _sitting(out: Path, **overrides) -> Sitting:
    return Sitting(out=out, **{"eval_every": 4, "save_every": 5, "progress": False, "discover_heads": False, **overrides})


# -- data -------------------------------------------------------------------------------------
def test_windows_follow_the_inference_convention(corpus_files):
    config = _config(corpus_files[0])
    corpus = data.Corpus(config)
    store, max_chars = corpus.train, config.max_length - 2
    assert store.lengths.max() <= max_chars and store.lengths.min() >= config.min_chars
    ids, lengths = data.collate(store, np.arange(5), corpus.vocab, config.pad_multiple)
    assert ids.shape[1] % config.pad_multiple == 0
    for row, n in enumerate(lengths):
        assert ids[row, 0] == corpus.vocab.cls_id and ids[row, n + 1] == corpus.vocab.sep_id
        assert (ids[row, 1 : n + 1] >= len(SPECIAL_TOKENS)).all() and (ids[row, n + 2 :] == corpus.vocab.pad_id).all()
    # Held-out lines never reach training: no training window holds a held-out line's text.
    vocab = corpus.vocab
    decode = lambda s, i: "".join(vocab.tokens[t] for t in s.ids[s.starts[i] : s.starts[i] + s.lengths[i]])  # noqa: E731
    train_text = "\n".join(decode(store, i) for i in range(len(store)))
    held = [decode(corpus.heldout, i) for i in range(len(corpus.heldout))]
    assert held and not any(h in train_text for h in held if len(h) > 8)


@pytest.mark.slow
def test_padding_never_exceeds_the_positions(corpus_files, tmp_path):
    """max_length 30 is no multiple of 8: windows of 28 characters must not be padded to 32."""
    pretrain(_config(corpus_files[0], max_length=30, max_steps=3), _sitting(tmp_path / "odd"))
    assert (tmp_path / "odd" / "model.safetensors").is_file()


def test_batch_plan_covers_each_window_once_per_epoch():
    lengths = np.random.default_rng(1).integers(2, 127, size=500)
    for bucketing in (True, False):
        plan = data.BatchPlan(lengths, batch_tokens=1024, pad_multiple=8, seed=3, bucketing=bucketing)
        batches = plan.epoch(0)
        assert sorted(np.concatenate(batches).tolist()) == list(range(500))
        assert all(np.array_equal(a, b) for a, b in zip(batches, data.BatchPlan(lengths, 1024, 8, 3, bucketing).epoch(0)))
        if bucketing:  # one padded length per batch, within the token budget
            assert all(len(set(data.padded_length(lengths[b], 8).tolist())) == 1 for b in batches)
            assert all(len(b) * data.padded_length(lengths[b].max(), 8) <= 1024 for b in batches)
    assert not np.array_equal(np.concatenate(plan.epoch(1)), np.concatenate(batches))


@pytest.mark.parametrize("span_mean", [1.0, 2.5])
def test_masking_rate_and_positions(span_mean):
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=400)
    masking = data.Masking(rate=0.3, span_mean=span_mean)
    selected = masking.select(lengths, 64, rng)
    is_char = (np.arange(64) >= 1) & (np.arange(64) <= lengths[:, None])
    assert not (selected & ~is_char).any()
    assert abs(selected.sum() / is_char.sum() - 0.3) < 0.03
    if span_mean > 1:  # spans: a selected character often has a selected neighbour
        assert (selected[:, 1:] & selected[:, :-1]).sum() / selected.sum() > 0.4


def test_masked_only_logits_equal_full_logits(corpus_files):
    from segmenter.train.pretrain_model import MaskedLM, bert_config, new_encoder

    config = _config(corpus_files[0])
    corpus = data.Corpus(config)
    torch.manual_seed(0)
    model = MaskedLM(new_encoder(bert_config(len(corpus.vocab), 2, 32, 4, 64, 32, 0.0, corpus.vocab.pad_id))).eval()
    ids, lengths = data.collate(corpus.train, np.arange(8), corpus.vocab, 8)
    inputs, positions, targets = data.Masking().apply(ids, lengths, corpus.vocab, np.random.default_rng(0))
    attention = torch.from_numpy((np.arange(ids.shape[1]) < lengths[:, None] + 2).astype(np.int64))
    batch = (torch.from_numpy(inputs), attention, torch.from_numpy(positions), torch.from_numpy(targets))
    gathered, full = model(*batch), model(*batch, full_logits=True)
    assert torch.allclose(gathered[0], full[0], atol=1e-5) and gathered[1] == full[1]


# -- training -----------------------------------------------------------------------------------
def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.parametrize("objective", ["mlm", "electra"])
@pytest.mark.slow
def test_resume_gives_the_same_parameters(corpus_files, tmp_path, objective):
    # dropout and electra's sampling: the RNG state must be restored too
    # 9 steps: evaluations at 4 and 8, saves at 5, at the stop (7) and at the end, both sides of the stop
    config = dict(max_steps=9, dropout=0.1, span_mean=2.0, objective=objective, generator_hidden=16)
    pretrain(_config(corpus_files[0], **config), _sitting(tmp_path / "straight"))
    pretrain(_config(corpus_files[0], **config), _sitting(tmp_path / "split", stop_after=7))
    assert (tmp_path / "split" / "checkpoints" / "latest").read_text().strip() == "step_00000007"
    resumed = resume_config(tmp_path / "split", {})
    pretrain(resumed, _sitting(tmp_path / "split", resume=True))
    straight, split = _weights(tmp_path / "straight"), _weights(tmp_path / "split")
    assert straight.keys() == split.keys()
    assert all(torch.equal(straight[k], split[k]) for k in straight)
    state = torch.load(tmp_path / "split" / "checkpoints" / "step_00000009" / "training_state.pt", weights_only=True)
    assert state["progress"]["step"] == 9 and len(state["progress"]["sittings"]) == 2
    curve = [json.loads(line) for line in (tmp_path / "split" / "learning_curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in curve] == sorted(r["step"] for r in curve) and curve[-1]["step"] == 9
    assert any(r["step"] == 8 for r in curve)  # an evaluation after the resume


@pytest.mark.slow
def test_output_folder_is_a_segmenter_model(corpus_files, tmp_path):
    from segmenter import Segmenter

    out = tmp_path / "model"
    pretrain(_config(corpus_files[0], max_steps=6), _sitting(out, eval_gold=str(corpus_files[1])))
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "segmenter_heads.json",
                 "MODEL_CARD.md", "learning_curve.jsonl"):
        assert (out / name).is_file(), name
    assert (out / "checkpoints" / "step_00000006" / "training_state.pt").is_file()
    record = json.loads((out / "learning_curve.jsonl").read_text().splitlines()[-1])
    assert record["step"] == 6 and 0 <= record["best_auc"] <= 1 and record["eval_loss"] > 0
    card = (out / "MODEL_CARD.md").read_text()
    assert "research" in card.lower() and "6 of 6" in card
    # The profile reads the head the last evaluation ranked first on the gold, and that ranking
    # holds for the saved weights: the folder is the trained model, not another one.
    from segmenter.train.corpus import read_gold
    from segmenter.model.folders import load_encoder
    from segmenter.train.head_measures import gold_junctions, head_table, segment_sample

    gold = read_gold(corpus_files[1])
    profile = HeadProfile.load(out)
    assert profile.heads == [tuple(record["best_head"])] and profile.source.startswith("best head on gold.txt")
    encoder, vocab, _ = load_encoder(out)
    best = head_table(gold_junctions(encoder, vocab, gold))[0]
    assert [best["layer"], best["head"]] == record["best_head"] and best["auc"] == pytest.approx(record["best_auc"], abs=1e-4)
    # Segmenter(out) (no conventions) cuts where that head's score passes its threshold, nowhere else.
    sample = gold_junctions(encoder, vocab, gold, heads=profile.heads)
    texts = ["".join(words) for words in gold]
    words = Segmenter(out, granularity=0.5, conventions=None).segment_batch(texts)
    assert words == segment_sample(sample, sample.scores[0], profile.threshold(0.5))
    assert Segmenter(out / "checkpoints" / "step_00000006", granularity=0.5, conventions=None).segment_batch(texts) == words


@pytest.mark.slow
def test_without_gold_the_discovered_heads_are_saved(corpus_files, tmp_path, monkeypatch):
    """No eval gold: at the end of the sitting unsupervised discovery reads the saved weights on
    the corpus's first raw lines, and the folder and its latest checkpoint hold what it found."""
    from segmenter.train.corpus import iter_raw_lines
    from segmenter.model.folders import load_encoder
    from segmenter.train import pretrain as module
    from segmenter.train.head_discovery import discover_unsupervised

    monkeypatch.setattr(module, "DISCOVERY_LINES", 150)  # of 400: the first lines, not all of them
    out = tmp_path / "model"
    pretrain(_config(corpus_files[0], max_steps=4), _sitting(out, discover_heads=True))
    saved = HeadProfile.load(out)
    encoder, vocab, _ = load_encoder(out)
    texts = [line for _, line in zip(range(150), iter_raw_lines([str(corpus_files[0])]))]
    expected = discover_unsupervised(encoder, vocab, texts)
    assert saved.source == expected.source and saved.source.startswith("unsupervised")
    assert saved.heads == expected.heads and saved.bias == pytest.approx(expected.bias)
    assert saved.weights == pytest.approx(expected.weights) and saved.thresholds == pytest.approx(expected.thresholds)
    assert HeadProfile.load(out / "checkpoints" / "step_00000004") == saved
    assert f"head profile: {saved.source}" in (out / "MODEL_CARD.md").read_text()


@pytest.mark.slow
def test_a_failed_discovery_keeps_the_model_and_says_why(corpus_files, tmp_path, monkeypatch, caplog):
    from segmenter.train import head_discovery

    def broken(*args, **kwargs):
        raise RuntimeError("no boundaries today")

    monkeypatch.setattr(head_discovery, "discover_unsupervised", broken)
    out = tmp_path / "model"
    with caplog.at_level("WARNING"):
        pretrain(_config(corpus_files[0], max_steps=2), _sitting(out, discover_heads=True))
    assert (out / "model.safetensors").is_file() and not (out / "segmenter_heads.json").exists()
    assert "unsupervised head discovery failed (RuntimeError: no boundaries today)" in caplog.text


@pytest.mark.slow
def test_interrupted_run_leaves_a_model_and_resumes(corpus_files, tmp_path, monkeypatch):
    from segmenter.train import pretrain as module

    original = module.Trainer.train_step

    def interrupted(self):
        if self.progress.step == 3:
            raise KeyboardInterrupt
        return original(self)

    monkeypatch.setattr(module.Trainer, "train_step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pretrain(_config(corpus_files[0], max_steps=6), _sitting(tmp_path / "run", save_every=100))
    assert (tmp_path / "run" / "checkpoints" / "step_00000003").is_dir() and (tmp_path / "run" / "model.safetensors").is_file()
    monkeypatch.setattr(module.Trainer, "train_step", original)
    pretrain(resume_config(tmp_path / "run", {}), _sitting(tmp_path / "run", resume=True))
    assert json.loads((tmp_path / "run" / "learning_curve.jsonl").read_text().splitlines()[-1])["step"] == 6


def test_gold_file_is_refused_as_corpus(corpus_files, tmp_path):
    with pytest.raises(ValueError, match="never train on gold"):
        pretrain(PretrainConfig(corpus=[str(corpus_files[1])], **TINY), _sitting(tmp_path / "x", eval_gold=str(corpus_files[1])))


# -- command line -------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli("pretrain", *args, cwd=REPO, text=True)


@pytest.mark.slow
def test_cli_trains_resumes_and_explains_bad_arguments(corpus_files, tmp_path, caplog, capsys):
    """The first sitting through `python -m segmenter pretrain` (the command as a user runs it, -q
    quiet); the sittings that resume it through cli.main in this process (what they log is read
    from caplog): each process of its own cost the interpreter's and torch's start-up again."""
    from segmenter.cli import main

    out = tmp_path / "cli"
    shape = ["--layers", "1", "--hidden", "32", "--heads", "2", "--intermediate", "64", "--max-length", "32",
             "--batch-tokens", "256", "--eval-lines", "20", "--warmup-steps", "1", "--eval-every", "3"]
    done = _cli("--corpus", str(corpus_files[0]), "--out", str(out), "--max-steps", "3", "-q", "--no-discover-heads", *shape)
    assert done.returncode == 0, done.stderr
    assert (out / "model.safetensors").is_file() and "stopping" not in done.stderr  # -q: warnings only
    assert not (out / "segmenter_heads.json").exists()

    def sitting(*args: str) -> str:
        """A later sitting in this process: what it logged and printed to stderr."""
        caplog.clear()
        capsys.readouterr()
        with caplog.at_level("INFO"):
            assert main(["pretrain", *args]) == 0, capsys.readouterr().err
        return caplog.text + capsys.readouterr().err

    logged = sitting("--out", str(out), "--resume", "--max-steps", "4", "--precision", "bf16", "--keep-checkpoints", "1")
    assert "resuming at step 3" in logged and "reached --max-steps 4" in logged
    # Sitting options left out of a later --resume carry over (bf16 stays bf16), and say so.
    logged = sitting("--out", str(out), "--resume", "--max-steps", "5", "--eval-every", "2")
    assert "previous sitting's --precision bf16" in logged and "--keep-checkpoints 1" in logged
    state = torch.load(out / "checkpoints" / "step_00000005" / "training_state.pt", weights_only=True)
    last = state["progress"]["sittings"][-1]
    assert last["precision"] == "bfloat16" and last["options"]["eval_every"] == 2
    assert last["options"]["keep_checkpoints"] == 1 and len(list((out / "checkpoints").glob("step_*"))) == 1
    assert json.loads((out / "learning_curve.jsonl").read_text().splitlines()[-1])["step"] == 5
    # Without dev gold (and without --no-discover-heads this sitting), unsupervised discovery
    # (segmenter.train.head_discovery) writes the profile to the folder and the latest checkpoint.
    assert "head discovery failed" not in logged, logged
    profile = json.loads((out / "segmenter_heads.json").read_text())
    assert profile["source"].startswith("unsupervised") and profile["heads"]
    assert json.loads((out / "checkpoints" / "step_00000005" / "segmenter_heads.json").read_text()) == profile

    assert main(["pretrain", "--corpus", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "a")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--out", "{out}"], "--raw is required"),
        (["--raw", "{raw}", "--out", "{out}", "--hidden", "30", "--heads", "4"], "multiple of --heads"),
        (["--raw", "{raw}", "--out", "{out}", "--mask-rate", "1.5"], "--mask-rate must be in (0, 1)"),
        (["--raw", "{raw}", "--out", "{out}", "--minutes", "0"], "must be positive: --minutes 0"),
        (["--raw", "{raw}", "--out", "{out}", "--device", "cuda:7" if torch.cuda.is_available() else "cuda"], "device"),
        (["--raw", "{raw}", "--out", "{out}", "--gold", "{raw}x"], "no such file"),
        (["--out", "{out}", "--resume"], "no checkpoint"),
    ],
)
def test_cli_bad_arguments_are_explained(corpus_files, tmp_path, capsys, args, message):
    from segmenter.cli import main

    argv = [a.format(raw=corpus_files[0], out=tmp_path / "out") for a in args]
    assert main(["pretrain", *argv, "-q"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


@pytest.mark.slow
def test_cli_refuses_to_mix_runs(corpus_files, tmp_path, capsys):
    from segmenter.cli import main

    out = str(tmp_path / "out")
    shape = ["--layers", "1", "--hidden", "32", "--heads", "2", "--intermediate", "64", "--max-length", "32",
             "--batch-tokens", "256", "--eval-lines", "20", "--max-steps", "2", "-q"]
    assert main(["pretrain", "--raw", str(corpus_files[0]), "--out", out, *shape]) == 0
    assert main(["pretrain", "--corpus", str(corpus_files[0]), "--out", out, *shape]) == 2
    assert "pass --resume" in capsys.readouterr().err
    assert main(["pretrain", "--out", out, "--resume", "--hidden", "64", "-q"]) == 2
    assert "--hidden 64 (the run has 32)" in capsys.readouterr().err
