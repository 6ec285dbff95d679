"""The public API on tiny random BERTs: lossless words, offsets, batching, model folders, errors."""
import json
import shutil

import pytest

from segmenter import HeadProfile, ModelLoadError, Segmenter
from segmenter.model.profile import PROFILE_FILE

from conftest import make_tiny_model

TEXTS = [
    "共同创造美好的新世纪——二○○一年新年贺词",
    "我们都是中国人民的好朋友。他说：“明天见！”",
    "增长3.5%以上，达到1,000,000元；见https://example.com/x。",
    "",
    "   ",
    "abc def",
    "中\n国",
    "一" * 200,  # longer than the test window: several windows
]


@pytest.mark.parametrize("text", TEXTS)
def test_words_join_back_to_text(tiny_segmenter, text):
    words = tiny_segmenter.segment(text)
    assert "".join(words) == text
    assert all(words)


@pytest.mark.parametrize("text", TEXTS)
def test_tokenize_offsets_tile_text(tiny_segmenter, text):
    tokens = tiny_segmenter.tokenize(text)
    position = 0
    for word, start, end in tokens:
        assert start == position and text[start:end] == word and end > start
        position = end
    assert position == len(text)


def test_cut_lcut_segment_agree(tiny_segmenter):
    text = TEXTS[1]
    assert list(tiny_segmenter.cut(text)) == tiny_segmenter.lcut(text) == tiny_segmenter.segment(text)


def test_batch_equals_single(tiny_segmenter):
    batch = tiny_segmenter.segment_batch(TEXTS)
    assert batch == [tiny_segmenter.segment(t) for t in TEXTS]
    assert tiny_segmenter.segment_batch(TEXTS, batch_size=1) == batch


def test_non_han_runs_stay_whole(tiny_segmenter):
    words = tiny_segmenter.segment("达到3.5%，见https://example.com/x。")
    for kept in ("3.5%", "，", "https://example.com/x", "。"):
        assert kept in words


def test_only_layers_up_to_deepest_head_are_loaded(tmp_path):
    folder = make_tiny_model(tmp_path / "m", layers=4, profile=HeadProfile(heads=[(1, 0)], weights=[1.0]))
    seg = Segmenter(folder, engine="torch")
    assert len(seg.model.encoder.layer) == 2
    seg = Segmenter(folder, engine="numpy")  # layer 0 whole, layer 1's query/key rows of head 0
    assert len(seg.model.layers) == 1 and seg.model.readers[1]["query"][0].shape == (32, 8)


def test_granularity_monotone(tiny_segmenter):
    text = "".join(TEXTS[:3]) * 2
    counts = [len(tiny_segmenter.segment(text, granularity=g)) for g in ("fine", 0.25, "default", 0.75, "coarse")]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[2] > counts[4]  # the knob moves the words (a granularity ignored would tie)


def test_save_and_load_round_trip(tiny_segmenter, tmp_path):
    saved = tiny_segmenter.save_pretrained(tmp_path / "copy")
    again = Segmenter.from_pretrained(saved, window=30, overlap=8)
    assert again.segment_batch(TEXTS) == tiny_segmenter.segment_batch(TEXTS)
    assert json.loads((saved / PROFILE_FILE).read_text())["heads"] == [list(h) for h in tiny_segmenter.profile.heads]


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["list"]])
def test_non_str_text_is_a_type_error(tiny_segmenter, bad):
    with pytest.raises(TypeError, match="text must be a str"):
        tiny_segmenter.segment(bad)


def test_batch_with_non_str_names_the_item(tiny_segmenter):
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        tiny_segmenter.segment_batch(["好", None])
    with pytest.raises(TypeError, match="list of str"):
        tiny_segmenter.segment_batch("一个字符串")


@pytest.mark.parametrize("granularity", ["medium", 1.5, -0.1])
def test_bad_granularity(tiny_segmenter, granularity):
    with pytest.raises(ValueError, match="granularity"):
        tiny_segmenter.segment("你好", granularity=granularity)


def test_bad_device(tiny_model_dir):
    with pytest.raises(ValueError, match="device"):
        Segmenter(tiny_model_dir, device="tpu")


def test_missing_folder(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist|not a local folder"):
        Segmenter(tmp_path / "nowhere")


def test_hub_name_offline_is_clear():
    with pytest.raises(ModelLoadError, match="Hugging Face hub"):
        Segmenter("no-such-user/no-such-model")


def test_missing_weights(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="no weights"):
        Segmenter(folder)


def test_corrupt_weights(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    (folder / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ModelLoadError, match="corrupt"):
        Segmenter(folder)


def test_missing_profile_says_how_to_make_one(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    (folder / PROFILE_FILE).unlink()
    with pytest.raises(ModelLoadError, match="segmenter heads"):
        Segmenter(folder)


def test_profile_head_outside_model(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    HeadProfile(heads=[(0, 9)], weights=[1.0]).save(folder)
    with pytest.raises(ValueError, match=r"\(0, 9\)"):
        Segmenter(folder)
    HeadProfile(heads=[(7, 0)], weights=[1.0]).save(folder)
    with pytest.raises(ModelLoadError, match="layers"):
        Segmenter(folder)


def test_vocab_that_does_not_match_embeddings(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    with open(folder / "vocab.txt", "a", encoding="utf-8") as handle:
        handle.write("额\n外\n")
    with pytest.raises(ModelLoadError, match="vocab.txt has"):
        Segmenter(folder)


def test_invalid_profile_json(tiny_model_dir, tmp_path):
    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    (folder / PROFILE_FILE).write_text("{not json")
    with pytest.raises(ModelLoadError, match="invalid"):
        Segmenter(folder)


def test_module_level_functions_use_one_default(monkeypatch, tiny_model_dir):
    # default_segmenter() builds segmenter.api.Segmenter: patch that name (patching
    # segmenter.Segmenter would go unseen and load the embedded model).
    import segmenter.api

    segmenter.default_segmenter.cache_clear()
    monkeypatch.setattr(segmenter.api, "Segmenter", lambda: Segmenter(tiny_model_dir))
    try:
        words = segmenter.segment("我爱北京")
        assert segmenter.default_segmenter().folder == tiny_model_dir  # the patched one, not the embedded model
        assert "".join(words) == "我爱北京"
        assert segmenter.lcut("我爱北京") == words == list(segmenter.cut("我爱北京"))
        assert segmenter.default_segmenter() is segmenter.default_segmenter()
    finally:
        segmenter.default_segmenter.cache_clear()


def test_tokens_of_a_batch_by_pieces_and_by_owners_agree():
    """assembly.tokens_of splits the batch's text once where every text starts at a word end
    (pieces), else finds each end's text (owners): the same words and tokens, empty texts too."""
    import random

    import numpy as np

    from segmenter.text.batch import Texts
    from segmenter.words.assembly import _tokens_owned, tokens_of

    rng = random.Random(7)
    for _ in range(300):
        texts = ["".join(rng.choice("ab\x00\x01\uffff中\n") for _ in range(rng.randint(0, 6)))
                 for _ in range(rng.randint(2, 5))]
        batch = Texts(texts, [[] for _ in texts])
        ends = set(batch.starts[1:].tolist()) if rng.random() < 0.8 else set()
        for text, start in zip(texts, batch.starts.tolist()):
            if text:  # a text's last word ends at its end
                ends |= set(rng.sample(range(start + 1, start + len(text)), rng.randint(0, len(text) - 1)))
                ends.add(start + len(text))
        ends = np.array(sorted(ends), dtype=np.int64)
        for words_only in (True, False):
            found = tokens_of(batch, ends, words_only)
            assert found == _tokens_owned(batch, ends, words_only)
            assert ["".join(w if words_only else w.word for w in words) for words in found] == texts


def test_margins_of_one_head_at_once_are_those_of_each_plan():
    """assembly.junction_margins combines a one-head profile's scores of all plans at once: the
    margins of each plan alone, to the bit (a product and two sums either way)."""
    import numpy as np

    from segmenter.standards.levels import Level, standard_named
    from segmenter.text.plan import plan_texts
    from segmenter.words.assembly import junction_margins

    rng = np.random.default_rng(0)
    plans = plan_texts(["我爱北京天安门", "", "中", "今天天气不错，他说的确实在理", "a b"])
    for plan in plans:
        plan.scores = rng.normal(size=(1, len(plan.junctions))).astype(np.float32)
    profile = HeadProfile(heads=[(1, 0)], weights=[0.7], bias=0.3)
    level = Level.at(0.5, profile, None, standard_named("general"))
    for margins, plan in zip(junction_margins(plans, profile, level), plans):
        alone = profile.combine(plan.scores) - level.threshold if len(plan.junctions) else np.zeros(0, np.float32)
        assert margins.dtype == alone.dtype and margins.tobytes() == alone.tobytes()


def test_kept_levels_follow_the_segmenters_settings(tiny_segmenter):
    """Segmenter.level keeps the levels it made (a short call's 3%), and a change of the
    segmenter's granularity, standard or profile makes a new one; a bad argument fails as before,
    True after 1 too (equal keys to a dict)."""
    from dataclasses import replace

    from segmenter.standards.levels import STANDARDS

    seg = Segmenter(tiny_segmenter.folder)
    first = seg.level()
    assert seg.level() is first and seg.level("fine", "pku") is seg.level("fine", "pku")
    seg.granularity = 0.9
    assert seg.level().granularity == 0.9
    seg.standard = STANDARDS["msr"]
    assert seg.level().rules == STANDARDS["msr"].rules
    seg.profile = replace(seg.profile, thresholds=(-2.0, -1.0, 0.5))
    assert seg.level().threshold != first.threshold
    seg.level(1)
    for bad in (True, [1], "huge", float("nan")):
        with pytest.raises((TypeError, ValueError), match="granularity"):
            seg.level(bad)
