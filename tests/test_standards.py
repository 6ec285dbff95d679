"""Standards by name (levels.py): each a set of rules over one granularity scale, the named ones
reproducing the levels they were chosen as, the general one the default, all through one
Segmenter argument, the CLI and the worker processes."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from segmenter.standards.levels import DEFAULT_STANDARD, STANDARDS, Level, Rules, Standard, standard_named
from segmenter.model.profile import HeadProfile

SENTENCE = "江泽民在１９９７年２月去了上海市，见了两个人，中国队赢了世界杯。"


def test_granularity_names_the_standard_it_imitates_when_none_is_named():
    assert Rules.at("fine") == STANDARDS["ud"].rules
    assert Rules.at("default") == Rules.at(0.5) == STANDARDS["pku"].rules
    assert Rules.at("coarse") == Rules.at(0.7) == STANDARDS["msr"].rules


def test_granularity_moves_the_standards_own_threshold():
    from segmenter.standards.levels import GRANULARITY_SPAN

    profile = HeadProfile(heads=[(0, 0)], weights=[1.0], thresholds=(-1.0, 0.0, 1.0))
    msr = standard_named("msr")
    assert Level.at("default", profile, None, msr).threshold == Level.at(None, profile, None, msr).threshold == 1.0
    assert Level.at("fine", profile, None, msr).threshold == 1.0 - GRANULARITY_SPAN / 2
    assert Level.at(0.75, profile, None, standard_named("ud")).threshold == -1.0 + GRANULARITY_SPAN / 4
    assert standard_named(None).name == DEFAULT_STANDARD == "general"
    assert standard_named(msr) is msr
    with pytest.raises(ValueError, match="standard must be one of 'pku', 'msr', 'ud', 'general'"):
        standard_named("ctb")


def test_the_threshold_is_np_interp_of_the_three_to_the_bit():
    """HeadProfile.threshold interpolates in Python floats (profile.interpolate): np.interp's
    value, infinite and NaN thresholds and signed zeros too."""
    import math
    import random

    from segmenter.model.profile import interpolate

    rng = random.Random(5)
    values = [-math.inf, -3.0, -0.0, 0.0, 1e-300, 0.25, 2.5, 1e308, -1e308, math.inf, math.nan]
    points = [0.0, 0.5, 1.0, 0.25, 0.75, 1e-12, 0.4999999999, 0.5000001, 0.999999]
    for _ in range(2000):
        at = tuple(rng.choice(values + [rng.uniform(-5, 5)]) for _ in range(3))
        for x in points + [rng.random()]:
            want, got = float(np.interp(x, [0.0, 0.5, 1.0], at)), interpolate(x, at)
            assert (want == got and math.copysign(1, want) == math.copysign(1, got)) or (math.isnan(want) and math.isnan(got))
    profile = HeadProfile(heads=[(0, 0)], weights=[1.0], thresholds=(-1.5, 0.25, 2.0))
    assert profile.threshold("fine") == -1.5 and profile.threshold(0.8) == float(np.interp(0.8, [0, 0.5, 1], (-1.5, 0.25, 2.0)))


def test_level_applies_the_standards_decoder_joins():
    from segmenter.words.decoding import WordDecoding

    profile = HeadProfile(heads=[(0, 0)], weights=[1.0], thresholds=(-1.0, 0.0, 1.0))
    ud = Level.at(0.5, profile, WordDecoding(), STANDARDS["ud"])  # UD joins 1+1 pairs only
    assert ud.decoding.join3 is None and ud.decoding.join4 is None and ud.threshold == -1.0
    msr = Level.at(0.5, profile, WordDecoding(), STANDARDS["msr"])
    assert msr.decoding.join3_logp is not None and msr.threshold == 1.0
    assert Level.at(0.5, profile, None, STANDARDS["msr"]).decoding is None  # threshold decoding: no decoder
    assert STANDARDS["general"].to_dict() == standard_named(STANDARDS["general"].to_dict()).to_dict()


@pytest.fixture(scope="module")
def by_standard():
    from segmenter.api import Segmenter

    return {name: Segmenter(standard=name) for name in STANDARDS}


@pytest.mark.slow
def test_standards_write_words_their_way(by_standard):
    words = {name: seg.segment(SENTENCE) for name, seg in by_standard.items()}
    assert {"江泽民", "１９９７年２月", "上海市", "两个", "中国队", "世界杯"} <= set(words["msr"])
    assert {"江", "泽民", "１９９７年", "上海市", "中国队", "两", "个"} <= set(words["pku"])
    assert {"江泽民", "上海市", "两", "个", "中国队"} <= set(words["general"])  # names whole, every suffix
    for name, out in words.items():
        assert "".join(out) == SENTENCE, name
    assert by_standard["general"].standard.name == "general"
    assert "standard='msr'" in repr(by_standard["msr"])


@pytest.mark.slow
def test_scores_read_once_assemble_at_any_standard(by_standard):
    """assemble(plans, standard=...): another standard's words from the same scores, as that
    standard's own segmenter writes them (refine --agree reads them so); the segmenter's own standard
    stays its default, and a bad name is refused by name."""
    general = by_standard["general"]
    plans = general.score_texts([SENTENCE, "他说你好，为什么？"])
    for name, seg in by_standard.items():
        assert general.assemble(plans, "default", standard=name) == seg.assemble(plans, "default"), name
        assert general.assemble(plans, "fine", standard=STANDARDS[name]) == seg.assemble(plans, "fine"), name
    assert general.assemble(plans) == general.assemble(plans, standard="general")
    assert general.assemble(plans, standard="msr") != general.assemble(plans)
    with pytest.raises(ValueError, match="standard must be one of"):
        general.assemble(plans, standard="ctb")


@pytest.mark.slow
def test_granularity_moves_words_within_a_standard(by_standard):
    seg = by_standard["msr"]
    texts = [SENTENCE, "小明硕士毕业于中国科学院计算所，后在日本京都大学深造", "他来到了网易杭研大厦"]
    fine, own, coarse = ([seg.segment(text, granularity=g) for text in texts] for g in ("fine", "default", "coarse"))
    count = [sum(map(len, words)) for words in (fine, own, coarse)]
    # fine (-0.05) and default (0) may cut alike on a few sentences; coarse (+0.4) joins more
    assert count[0] >= count[1] >= count[2] and count[0] > count[2]
    assert "江泽民" in fine[0]  # a finer threshold, MSR's rules still


@pytest.mark.slow
def test_workers_and_the_cli_keep_the_standard(by_standard):
    seg = by_standard["msr"]
    assert list(seg.segment_lines([SENTENCE] * 3, workers=2)) == [seg.segment(SENTENCE)] * 3
    out = subprocess.run([sys.executable, "-m", "segmenter", "-s", "msr", "-q"], input=SENTENCE, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == seg.segment(SENTENCE)


def test_cli_offers_every_standard():
    from segmenter.cli.segment import STANDARD_CHOICES

    assert set(STANDARD_CHOICES) == set(STANDARDS)


@pytest.mark.slow
def test_a_model_folder_names_its_standard(tmp_path):
    from segmenter.api import Segmenter
    from tests.conftest import make_tiny_model

    folder = make_tiny_model(tmp_path / "m", profile=HeadProfile(heads=[(1, 0)], weights=[1.0], runtime={"standard": "msr"}))
    assert Segmenter(folder).standard.name == "msr"
    assert Segmenter(folder, standard="ud").standard.name == "ud"
    assert isinstance(STANDARDS["pku"], Standard)


@pytest.mark.slow
def test_calibrate_writes_a_model_whose_default_is_the_fitted_standard(tmp_path):
    """`segmenter calibrate`: a copy of the model whose profile names the standard fitted to the
    sentences, never below the general default on them, with the choice in its model card."""
    from segmenter.api import Segmenter
    from segmenter.bench.evaluation import score
    from segmenter.cli import main

    gold_lines = [" ".join(words) for words in (["江泽民", "在", "上海市", "见", "了", "两个", "人", "。"],
                                                ["中国队", "赢", "了", "世界杯", "。"])] * 12  # MSR's way
    gold = tmp_path / "mine.txt"
    gold.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    assert main(["calibrate", "--gold", str(gold), "--out", str(tmp_path / "mine"), "-q"]) == 0
    fitted = Segmenter(tmp_path / "mine")
    assert fitted.standard.name == "calibrated"
    sentences = [line.split() for line in gold_lines]
    texts = ["".join(words) for words in sentences]
    assert score(sentences, fitted.segment_batch(texts)).F1 >= score(sentences, Segmenter().segment_batch(texts)).F1
    assert "## Calibrated standard" in (tmp_path / "mine" / "MODEL_CARD.md").read_text(encoding="utf-8")
    gold.write_text("我们 的\n" * 5, encoding="utf-8")  # too few sentences: one clear line, exit 2
    assert main(["calibrate", "--gold", str(gold), "--out", str(tmp_path / "other"), "-q"]) == 2
    # raw text (never segmented) would make its whole lines the folder's words: refused
    gold.write_text("\n".join("".join(line.split()) for line in gold_lines) + "\n", encoding="utf-8")
    assert main(["calibrate", "--gold", str(gold), "--out", str(tmp_path / "raw"), "-q"]) == 2
    assert not (tmp_path / "raw").exists()


def test_calibration_learns_the_words_the_sentences_keep_whole_or_cut_consistently():
    from segmenter.train.calibrate_words import learn_corrections

    gold = [["韩立", "看", "了", "一", "眼"], ["韩立", "说", "了"], ["一", "个", "人"], ["一", "个", "字"],
            ["一", "个", "月"], ["一个", "人"], ["走", "了"]]
    mine = [["韩", "立", "看了", "一眼"], ["韩", "立", "说", "了"], ["一个", "人"], ["一个", "字"],
            ["一个", "月"], ["一个", "人"], ["走", "了"]]
    learned = learn_corrections(gold, mine)
    assert ("韩立",) in learned  # twice whole in the sentences, cut by the segmenter
    assert ("看", "了") in learned and ("一", "眼") in learned  # written as two words where it gave one
    assert ("一", "个") in learned  # cut in 3 of its 4 occurrences: 0.75
    assert learn_corrections(gold, mine, min_share=0.8).count(("一", "个")) == 0  # 3 of 4 is below 0.8
    assert ("韩立",) not in learn_corrections(gold, mine, min_count=3)  # whole twice only
    assert learn_corrections(gold, gold) == []  # nothing to correct
    with pytest.raises(ValueError, match="join back"):
        learn_corrections(gold, [["韩立"]] + mine[1:])
    with pytest.raises(ValueError, match="7 sentences and predicted 6"):
        learn_corrections(gold, mine[:6])


# Names written whole by the user that the model cuts here (厉|飞雨, 墨|大夫), and 一|眼 cut where
# the model keeps it whole: sentences that teach calibrate joins and a split.
NAMES = [["厉飞雨", "和", "韩立", "看", "了", "墨大夫", "一", "眼", "。"], ["韩立", "看", "了", "一", "眼", "。"]] * 12


def calibrated_on_names(tmp_path):
    """`segmenter calibrate` on NAMES into tmp_path/mine; returns the gold file it read."""
    from segmenter.cli import main

    gold = tmp_path / "mine.txt"
    gold.write_text("\n".join(" ".join(words) for words in NAMES) + "\n", encoding="utf-8")
    assert main(["calibrate", "--gold", str(gold), "--out", str(tmp_path / "mine"), "-q"]) == 0
    return gold


@pytest.mark.slow
def test_calibrated_folder_carries_the_learned_words_and_no_words_leaves_them_out(tmp_path):
    from segmenter.api import Segmenter
    from segmenter.cli import main

    gold = calibrated_on_names(tmp_path)
    fitted, plain = Segmenter(tmp_path / "mine"), Segmenter()
    text = "厉飞雨和韩立看了墨大夫一眼。"
    assert {"厉飞雨", "韩立", "墨大夫"} <= set(fitted.lcut(text))
    assert fitted.lcut("韩立看了一眼。") == ["韩立", "看", "了", "一", "眼", "。"]
    assert "".join(fitted.lcut(text)) == text and plain.lcut(text) != fitted.lcut(text)
    assert (tmp_path / "mine" / "user_dict.txt").is_file() or (tmp_path / "mine" / "user_splits.json").is_file()
    assert "user dictionary entries learned" in (tmp_path / "mine" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert main(["calibrate", "--gold", str(gold), "--out", str(tmp_path / "rules"), "--no-words", "-q"]) == 0
    assert not any((tmp_path / "rules" / name).exists() for name in ("user_dict.txt", "user_splits.json"))


@pytest.mark.slow
def test_adapting_a_calibrated_folder_keeps_its_standard_and_words(tmp_path):
    """`segmenter calibrate`, then `segmenter adapt -m CALIBRATED`: the adapted folder still follows
    the calibrated standard and the words learned from the sentences, and knows the raw text's term."""
    from segmenter.api import Segmenter
    from segmenter.cli import main

    raw = tmp_path / "raw.txt"
    term = "龘靐齉麤"  # a "domain word" no shipped table holds, between varied neighbours
    raw.write_text("".join(f"{a}{term}{b}。\n" for a in "我你他她它们" for b in "来去说走看跑"), encoding="utf-8")
    calibrated_on_names(tmp_path)
    assert main(["adapt", "-m", str(tmp_path / "mine"), "--raw", str(raw), "--out", str(tmp_path / "both"), "-q"]) == 0
    calibrated, both = Segmenter(tmp_path / "mine"), Segmenter(tmp_path / "both")
    assert both.standard == calibrated.standard and both.standard.name == "calibrated"
    text = "厉飞雨和韩立看了墨大夫一眼。"
    assert both.lcut(text) == calibrated.lcut(text) and {"厉飞雨", "韩立", "墨大夫"} <= set(both.lcut(text))
    assert np.isnan(calibrated.word_table.autonomy(term)[0, 3]) and np.isfinite(both.word_table.autonomy(term)[0, 3])
