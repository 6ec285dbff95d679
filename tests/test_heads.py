"""Head discovery, calibration, the oracle, granularity levels and the user dictionary."""

import numpy as np
import pytest

from segmenter import Segmenter
from segmenter.train.head_discovery import calibrate, discover_signature, discover_unsupervised, oracle
from segmenter.train.head_measures import all_heads, gold_junctions, head_table, segment_sample, word_f1
from segmenter.model.folders import load_encoder
from segmenter.model.profile import GRANULARITY_NAMES

from conftest import PLANTED_HEAD, planted_bert, planted_sentences
from test_selftrain import WORDS

GOLD = [["中国", "人民", "发展", "了", "经济", "。"], ["我们", "的", "社会", "工作", "在", "发展", "。"], ["新", "问题", "和", "大", "工作", "。"]] * 4


@pytest.fixture(scope="module")
def encoder(tiny_model_dir):
    model, vocab, _ = load_encoder(tiny_model_dir)
    return model, vocab


def _spans(words):
    ends = np.cumsum([len(w) for w in words]).tolist()
    return list(zip([0] + ends[:-1], ends))


def raw_lines(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(WORDS, size=rng.integers(4, 12))) + "。" for _ in range(n)]


@pytest.fixture(scope="module")
def planted():
    """(model, vocab) of conftest.planted_bert: one head, PLANTED_HEAD, marks the toy words exactly."""
    return planted_bert()


def _planted_f1(model, vocab, profile, gold) -> float:
    sample = gold_junctions(model, vocab, gold, heads=profile.heads)
    return word_f1(sample, profile.combine(sample.scores), gold, profile.threshold())


def test_unsupervised_discovery_finds_the_planted_head(planted, planted_model_dir):
    """Raw toy text only: the profile must hold the one head that knows the words, and segment
    unseen toy sentences exactly (the other heads read positions alone: a wrong pick fails)."""
    model, vocab = planted
    profile = discover_unsupervised(model, vocab, ["".join(s) for s in planted_sentences(100)], max_heads=3)
    assert 1 <= len(profile.heads) <= 3 and profile.source.startswith("unsupervised")
    assert PLANTED_HEAD in profile.heads
    assert list(profile.thresholds) == sorted(profile.thresholds)
    gold = planted_sentences(30, seed=7)
    assert _planted_f1(model, vocab, profile, gold) == 1.0
    seg = Segmenter(planted_model_dir, profile=profile, window=30, overlap=8, conventions=None)
    assert seg.segment_batch(["".join(words) for words in gold]) == gold


def test_signature_discovery_picks_the_planted_head(planted, encoder):
    model, vocab = planted
    profile = discover_signature(model, vocab, ["".join(s) for s in planted_sentences(50)])
    assert profile.heads == [PLANTED_HEAD] and "(1.00)" in profile.source  # every row on the next character or [SEP]
    model, vocab = encoder  # a random model: still one head, one of its own
    profile = discover_signature(model, vocab, raw_lines(50))
    assert len(profile.heads) == 1 and profile.heads[0] in all_heads(model)


def test_calibration_learns_gold_boundaries(planted, encoder):
    model, vocab = planted
    profile = calibrate(model, vocab, planted_sentences(12, seed=3), source="test gold", max_heads=3)
    assert profile.source == "test gold" and len(profile.heads) <= 3 and PLANTED_HEAD in profile.heads
    held_out = planted_sentences(30, seed=9)
    sample = gold_junctions(model, vocab, held_out, heads=profile.heads)
    assert np.array_equal(profile.combine(sample.scores) > profile.threshold(), sample.labels)
    # a random model: no worse than always giving the majority answer on the sentences it saw
    model, vocab = encoder
    profile = calibrate(model, vocab, GOLD, source="test gold", max_heads=8)
    assert len(profile.heads) <= 8
    sample = gold_junctions(model, vocab, GOLD, heads=profile.heads)
    predicted = profile.combine(sample.scores) > profile.threshold()
    always = sample.labels.mean()
    assert (predicted == sample.labels).mean() >= max(always, 1 - always) - 1e-9


def test_calibration_needs_both_classes(encoder):
    model, vocab = encoder
    with pytest.raises(ValueError, match="both"):
        calibrate(model, vocab, [["中", "国"]], source="x")


def test_oracle_is_an_upper_bound_of_each_head(encoder):
    model, vocab = encoder
    heads = all_heads(model)[:4]
    sample = gold_junctions(model, vocab, GOLD, heads=heads)
    figures = oracle(sample, heads, GOLD)
    total = sum(len(words) for words in GOLD)
    for k in range(len(heads)):
        single = ((sample.scores[k] > 0) == sample.labels).mean()
        assert figures["junction_accuracy"] >= single
        one_head = oracle(sample, [heads[k]], GOLD)  # one head: its own word recall, counted by hand
        found = sum(w in set(_spans(g)) for g, words in zip(GOLD, segment_sample(sample, sample.scores[k])) for w in _spans(words))
        assert one_head["word_recall"] == pytest.approx(found / total)
        assert figures["word_recall"] >= one_head["word_recall"]


def test_head_table_sorted(encoder):
    model, vocab = encoder
    rows = head_table(gold_junctions(model, vocab, GOLD))
    aucs = [r["auc"] for r in rows]
    assert aucs == sorted(aucs, reverse=True) and {"layer", "head", "f1", "rate"} <= set(rows[0])


def test_levels_nest_and_granularity_orders_counts(tiny_segmenter):
    text = "我们的社会发展了新问题和大工作。" * 3
    levels = tiny_segmenter.segment_levels(text)
    # the coarse words, each with the fine words inside it: both levels' own words
    assert [word for word, _ in levels] == tiny_segmenter.segment(text, granularity="coarse")
    assert [part for _, parts in levels for part in parts] == tiny_segmenter.segment(text, granularity="fine")
    for word, parts in levels:
        assert "".join(parts) == word
    counts = {name: len(tiny_segmenter.segment(text, granularity=name)) for name in GRANULARITY_NAMES}
    assert counts["fine"] > counts["default"] > counts["coarse"]


def test_user_dictionary_words_stay_whole(tiny_model_dir):
    seg = Segmenter(tiny_model_dir, window=30, overlap=8)
    text = "我们的社会发展了新问题和大工作。"
    seg.add_word("社会发展")
    seg.add_word("了新")
    for granularity in ("fine", "default", "coarse"):
        words = seg.segment(text, granularity=granularity)
        assert "社会发展" in words and "了新" in words
        assert "".join(words) == text
    seg.del_word("了新")
    words = seg.segment(text)
    assert "社会发展" in words and "了新" not in words


@pytest.mark.slow
def test_heads_command(tiny_model_dir, tmp_path, capsys):
    """`segmenter heads` through the command's own entry point (cli.main, in this process: the
    interpreter's start-up seven times over was most of this test's minutes)."""
    import shutil

    from segmenter.cli import main

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join(raw_lines(200)), encoding="utf-8")
    gold = tmp_path / "dev.txt"
    gold.write_text("\n".join(" ".join(s) for s in GOLD), encoding="utf-8")

    def run(*args):
        """(exit code, stdout, stderr) of `segmenter heads -m FOLDER ARGS…`."""
        capsys.readouterr()
        try:
            code = main(["heads", "-m", str(folder), *map(str, args)])
        except SystemExit as exit:  # argparse's refusals
            code = exit.code
        out, err = capsys.readouterr()
        return code, out, err

    code, _, err = run("--raw", raw, "--max-heads", "2")
    assert code == 0, err
    assert "unsupervised" in (folder / "segmenter_heads.json").read_text()
    code, out, err = run("--gold", gold, "--max-sentences", "6", "--out", tmp_path / "cal.json")
    assert code == 0, err
    assert "calibrated on dev.txt (6 sentences)" in (tmp_path / "cal.json").read_text() and "word F1" in out
    code, out, _ = run("--gold", gold, "--report")
    assert code == 0 and len(out.splitlines()) == 1 + 2 * 4
    png = tmp_path / "heads.png"
    code, _, err = run("--show", "我们的社会发展了", "--png", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run("--raw", tmp_path / "none.txt")[0] == 2
    raw.write_text("\n".join(raw_lines(200))[:900] + "\nabc\n", encoding="utf-8")  # too little Han: one line
    code, _, err = run("--raw", raw, "--out", tmp_path / "short.json")
    assert code == 2 and "fewer than 1,000 Han characters" in err and "Traceback" not in err
    assert run()[0] == 2
