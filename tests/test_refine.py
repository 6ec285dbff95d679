"""segmenter refine: a one-head model's head fine-tuned on its own pipeline's words, raw text only."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from safetensors.numpy import load_file

from conftest import TINY_CHARS, make_tiny_model, planted_sentences
from segmenter import HeadProfile, Segmenter
from segmenter.train.refine import RefineConfig, card_note, pipeline_targets, refine

HAN = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]


@pytest.fixture(scope="module")
def one_head_model(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("refine") / "model", profile=HeadProfile(heads=[(1, 0)], weights=[1.0], source="test"))


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory):
    rng = random.Random(0)
    path = tmp_path_factory.mktemp("raw") / "raw.txt"
    path.write_text("\n".join("".join(rng.choices(HAN, k=rng.randint(10, 40))) + "。" for _ in range(200)) + "\n", encoding="utf-8")
    return path


def test_targets_mix_the_head_and_the_pipeline(one_head_model):
    segmenter = Segmenter(one_head_model, window=30, overlap=8)
    texts = ["".join(HAN[i : i + 12]) + "，" + "".join(HAN[i + 12 : i + 20]) + "。" for i in range(0, 200, 20)]
    plans, hard, changed = pipeline_targets(segmenter, texts, mix=1.0)
    _, soft, _ = pipeline_targets(segmenter, texts, mix=0.0)
    disagree = []
    for plan, target, own, words in zip(plans, hard, soft, segmenter.segment_batch(texts, "default")):
        inside = target[plan.junctions]
        assert set(np.unique(inside)) <= {0.0, 1.0} and np.isnan(np.delete(target, plan.junctions)).all()
        # mix 1: the target after a character is 1 exactly where one of the pipeline's words ends
        ends = set(np.cumsum([len(w) for w in words]).tolist())
        assert [bool(t) for t in inside] == [int(plan.positions[j]) + 1 in ends for j in plan.junctions]
        # mix 0: the head's own soft score, sigmoid(s - threshold)
        score = segmenter.profile.combine(plan.scores) - segmenter.profile.threshold("default")
        np.testing.assert_allclose(own[plan.junctions], 1 / (1 + np.exp(-score)), rtol=1e-5)
        disagree.append((score > 0) != (inside == 1.0))
    assert changed == pytest.approx(np.concatenate(disagree).mean())


def test_inside_a_word_longer_than_the_decoders_the_head_keeps_its_own_score():
    segmenter = Segmenter(num_threads=1)  # the shipped default: word decoding, words of at most 5 characters
    text = "中华人民共和国成立了"
    assert segmenter.lcut(text)[0] == "中华人民共和国"  # 7 characters: join_long's, not the Viterbi's
    (plan,), (hard,), _ = pipeline_targets(segmenter, [text], mix=1.0)
    score = segmenter.profile.combine(plan.scores) - segmenter.profile.threshold("default")
    inside = plan.positions[plan.junctions] + 1 < 7
    np.testing.assert_allclose(hard[plan.junctions][inside], 1 / (1 + np.exp(-score[inside])), rtol=1e-5)
    assert set(hard[plan.junctions][~inside].tolist()) <= {0.0, 1.0} and hard[plan.junctions][~inside][0] == 1.0


def test_with_agree_the_pipelines_cut_counts_only_where_every_standard_cuts_alike():
    """agree=(pku, msr, ud): a junction takes the pipeline's hard cut (mix 1) where the words of
    the model's own standard (general) and of all three cut alike; the head's own score elsewhere:
    上海市 (ud writes 上海 市), 两 个 (msr writes 两个)."""
    segmenter = Segmenter(num_threads=1)
    texts = ["昨天在上海市会见了两个代表团的成员", "我觉得她很可爱，除了他以外都来了"]
    (plans, hard, _), (_, agreed, _) = (pipeline_targets(segmenter, texts, mix=1.0, agree=agree)
                                        for agree in ((), ("pku", "msr", "ud")))
    words = {name: Segmenter(standard=name, num_threads=1).segment_batch(texts) for name in ("general", "pku", "msr", "ud")}
    disputed = 0
    for index, (plan, full, some) in enumerate(zip(plans, hard, agreed)):
        ends = plan.positions[plan.junctions] + 1
        cuts = {name: np.isin(ends, np.cumsum([len(w) for w in ws[index]])) for name, ws in words.items()}
        alike = np.logical_and.reduce([cuts[name] == cuts["general"] for name in cuts])
        soft = 1 / (1 + np.exp(-(segmenter.profile.combine(plan.scores) - segmenter.profile.threshold("default"))))
        np.testing.assert_array_equal(some[plan.junctions][alike], full[plan.junctions][alike])
        np.testing.assert_allclose(some[plan.junctions][~alike], soft[~alike], rtol=1e-5)
        disputed += int((~alike).sum())
    assert disputed == 2  # 上海|市 and 两|个
    with pytest.raises(ValueError, match="standard must be one of"):
        RefineConfig(model=None, raw=[], out="x", agree=("ctb",))


@pytest.mark.slow
def test_refine_writes_a_loadable_folder_with_new_weights(planted_model_dir, tmp_path):
    """The planted one-head model of conftest: its pipeline finds the toy words its head marks;
    fine-tuned on them, the head must still mark every one (wrong targets unlearn it in these
    ~12 steps: inverted ones leave F1 ~0.2, targets one junction off ~0.7)."""
    from segmenter.bench.evaluation import score

    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join("".join(words) for words in planted_sentences(300, seed=1)) + "\n", encoding="utf-8")
    out = tmp_path / "refined"
    record = refine(RefineConfig(model=str(planted_model_dir), raw=[str(raw)], out=str(out), chars=3000, lr=1e-2, minutes=3.0, batch_size=16))
    assert record["label_chars"] >= 3000 and record["training"]["steps"] > 0 and record["pipeline_changed"] < 0.01
    before, after = load_file(str(planted_model_dir / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert set(before) == set(after) and any(not np.array_equal(before[k].astype(np.float16), after[k]) for k in before)
    profile = json.loads((out / "segmenter_heads.json").read_text(encoding="utf-8"))
    assert "refined on its own pipeline's words" in profile["source"] and profile["extra"]["refine"]["chars"] == 3000
    gold = planted_sentences(50, seed=9)
    refined = Segmenter(out, window=30, overlap=8, conventions=None)
    assert score(gold, refined.segment_batch(["".join(words) for words in gold])).F1 == 1.0
    text = "".join(HAN[:50]) + "，１９９７年。"
    assert "".join(refined.segment(text)) == text
    assert not (out / "model.onnx").exists() and not list(tmp_path.glob(".*part"))
    # a second round keeps the first round's record and says which round it is
    again = tmp_path / "again"
    refine(RefineConfig(model=str(out), raw=[str(raw)], out=str(again), chars=3000, lr=1e-2, minutes=1.0, seed=1))
    profile = json.loads((again / "segmenter_heads.json").read_text(encoding="utf-8"))
    assert profile["extra"]["refine"]["round"] == 2 and [r["round"] for r in profile["extra"]["refine_earlier"]] == [1]
    assert "refined again (round 2)" in profile["source"] and "round 2" in card_note(profile["extra"]["refine"])


def test_refine_refuses_what_it_cannot_train(tmp_path, raw_file, one_head_model, capsys):
    """The library's refusals, and the command's (through cli.main, in this process)."""
    from segmenter.cli import main

    two_heads = make_tiny_model(tmp_path / "two")  # the default tiny profile combines two heads
    with pytest.raises(ValueError, match="one head"):
        refine(RefineConfig(model=str(two_heads), raw=[str(raw_file)], out=str(tmp_path / "x")))
    with pytest.raises(ValueError, match="mix"):
        RefineConfig(model=None, raw=[], out="x", mix=1.5)

    def cli(*args) -> tuple[int, str]:
        capsys.readouterr()
        try:
            code = main(["refine", "-m", str(one_head_model), *map(str, args)])
        except SystemExit as exit:  # argparse's refusals
            code = exit.code
        return code, capsys.readouterr().err

    code, err = cli("--raw", tmp_path / "missing.txt", "--out", tmp_path / "y")
    assert code == 2 and "no such file" in err
    code, err = cli("--raw", raw_file, "--out", one_head_model)
    assert code == 2 and "model folder itself" in err
    code, err = cli("--raw", raw_file, "--out", tmp_path / "z", "--agree", "ctb")
    assert code == 2 and "--agree" in err and "invalid choice" in err
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()


@pytest.mark.slow
def test_refining_a_shipped_model_that_reads_anothers_table_writes_a_folder_of_its_own(tmp_path):
    """`fast` reads the default's word table through its profile ("../default"):
    refined into a folder elsewhere, that path would point nowhere, so the folder gets the table."""
    raw = tmp_path / "raw.txt"
    raw.write_text("我们都是中国人民的好朋友。\n今天天气很好，我们去公园散步。\n" * 40, encoding="utf-8")
    out = tmp_path / "refined"
    refine(RefineConfig(model="fast", raw=[str(raw)], out=str(out), chars=2000, seed=0), threads=1)
    profile = json.loads((out / "segmenter_heads.json").read_text(encoding="utf-8"))
    assert "word_table" not in profile.get("runtime", {}) and (out / "ngrams.npz").is_file()
    text = "我们都是中国人民的好朋友"
    assert "".join(Segmenter(out).segment(text)) == text
