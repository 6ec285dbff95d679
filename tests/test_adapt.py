"""segmenter adapt: a model folder whose word table learned a domain's strings from raw text alone."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from conftest import TINY_CHARS, run_cli
from segmenter import Segmenter
from segmenter.train.adapt import COMPOUND_BELOW, adapt, adapted_table, card_note
from segmenter.train.new_strings import LOOSE_SHARE
from segmenter.train.unigram import fit_unigram
from segmenter.model.folders import embedded_model_path
from segmenter.train.ngram_counting import build_word_table
from segmenter.words.table import WordTable

HAN = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]
TERM = "龘靐齉麤"  # four rare characters: a "domain word" no shipped table holds


def domain_lines(count: int = 300, seed: int = 0) -> list[str]:
    """Random Han text with TERM in every line, between varied neighbours (so it is autonomous)."""
    rng = random.Random(seed)
    return ["".join(rng.choices(HAN, k=rng.randint(3, 12))) + TERM + "".join(rng.choices(HAN, k=rng.randint(3, 12))) + "。"
            for _ in range(count)]


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("raw") / "domain.txt"
    path.write_text("\n".join(domain_lines()) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_adapted_default_loads_segments_and_knows_the_domain_string(raw_file, tmp_path):
    out = tmp_path / "adapted"
    result = adapt(None, [raw_file], out, command="test")
    assert result.folder == out and result.added > 0 and result.min_count == 5  # a small text: AUTO_MIN_COUNT
    before = WordTable.load(embedded_model_path()).autonomy(TERM)[0, len(TERM) - 1]
    after = WordTable.load(out).autonomy(TERM)[0, len(TERM) - 1]
    assert np.isnan(before) and np.isfinite(after) and after > 0
    # The weights are the shipped ones, so the folder's model.onnx still runs (checked against them).
    for name in ("model.safetensors", "model.onnx", "vocab.txt", "config.json"):
        assert (out / name).read_bytes() == (embedded_model_path() / name).read_bytes()
    pytest.importorskip("onnxruntime")
    seg = Segmenter(out)
    assert seg.engine == "onnx" and seg.decode == "words"
    text = "今天天气很好，" + TERM + "的人来了。abc 123"
    assert "".join(seg.segment(text)) == text
    profile = json.loads((out / "segmenter_heads.json").read_text(encoding="utf-8"))
    assert profile["extra"]["adapt"]["raw"] == [str(raw_file)] and "adapted" in profile["source"]
    assert "## Adapted to a domain" in (out / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert not list(tmp_path.glob(".*.part"))
    # What it learned, the most frequent first: the term in each of the 300 lines (its pieces are fragments).
    assert result.examples[0] == [TERM, 300] and profile["extra"]["adapt"]["most_frequent_added"][0] == [TERM, 300]
    assert f"{TERM} 300" in (out / "MODEL_CARD.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_adapting_a_folder_without_table_turns_on_word_decoding(tiny_model_dir, raw_file, tmp_path):
    out = adapt(tiny_model_dir, [raw_file], tmp_path / "tiny", min_count=2).folder
    assert not (tiny_model_dir / "ngrams.npz").exists() and (out / "ngrams.npz").is_file()
    seg = Segmenter(out, window=30, overlap=8)
    assert seg.decode == "words" and np.isfinite(seg.word_table.autonomy(TERM)[0, len(TERM) - 1])
    text = domain_lines(1, seed=5)[0]
    assert "".join(seg.segment(text)) == text


def test_the_most_frequent_added_strings_come_first_with_their_counts():
    from segmenter.train.adapt import examples_text
    from segmenter.train.new_strings import most_frequent_new

    shipped = build_word_table(["我爱北京天安门。"] * 3, min_count=1)
    text = "\n".join(["他在上海工作。"] * 4 + ["上海很大。"] * 2)
    table = shipped.combined_with(build_word_table(text.split("\n"), min_count=1), min_count=4)
    examples = most_frequent_new(shipped, table, text, most=3)
    assert examples[0] == ["上海", 6] and all(count == 4 for _, count in examples[1:])  # then the longest of the 4s
    assert len(examples[1][0]) >= len(examples[2][0]) and all(word not in "我爱北京天安门" for word, _ in examples)
    assert examples_text(examples[:1]) == "上海 6" and most_frequent_new(shipped, shipped, text) == []


def test_combined_with_keeps_own_entries_and_adds_frequent_new_ones():
    base = build_word_table(["我爱北京天安门。"] * 3 + ["北京大学在北京。"] * 3, min_count=1)
    domain = build_word_table(["他在北京工作。", "北京工作很忙。", "工作日。"], min_count=1)
    merged = base.combined_with(domain, min_count=2)
    grid = lambda table, text: table.autonomy(text)[0]  # noqa: E731
    assert np.array_equal(grid(merged, "北京"), grid(base, "北京"), equal_nan=True)  # both have it: base wins
    assert np.isnan(grid(base, "工作")[1]) and grid(merged, "工作")[1] == grid(domain, "工作")[1]  # 3 times: added
    assert np.isnan(grid(merged, "日。")[0]) and np.isnan(grid(merged, "工作日")[2])  # once: not added
    for keys, _, _ in merged.tables.values():
        assert np.all(np.diff(keys.astype(np.float64)) >= 0) and len(np.unique(keys)) == len(keys)


def test_a_known_string_with_a_common_word_is_a_phrase_not_added():
    """药疹的 recurs in the domain text, but it is 药疹 (known) + 的 (common): left out; 苔藓样变 is added."""
    rng = random.Random(1)
    general = ["".join(rng.choice(HAN) + "的" for _ in range(6)) + rng.choice(HAN) + "药疹" + rng.choice(HAN) + "。"
               for _ in range(100)]
    shipped = build_word_table(general, min_count=1)
    shipped = shipped.with_unigram(fit_unigram(shipped, general, 2))
    assert shipped.logp_at("的", np.array([0]), np.array([1]))[0] >= -6  # common
    assert np.isfinite(shipped.autonomy("药疹")[0, 1])  # known
    domain = ["皮肤苔藓样变，药疹的治疗。", "苔藓样变可见。药疹的表现。", "可有苔藓样变和药疹的皮损。"]
    table, *_ = adapted_table(shipped, domain, min_count=2)
    assert np.isnan(table.autonomy("药疹的")[0, 2]) and np.isfinite(table.autonomy("苔藓样变")[0, 3])
    assert np.isnan(shipped.autonomy("苔藓样变")[0, 3])
    bare = build_word_table(general, min_count=1)  # no unigram model: no commonness, every new string added
    assert np.isfinite(adapted_table(bare, domain, min_count=2)[0].autonomy("药疹的")[0, 2])


def test_a_fragment_of_a_longer_string_is_not_added():
    """江苏苏宁易 is always followed by 购, 苏宁易购 always preceded by 苏: pieces of 江苏苏宁易购, left
    out; the whole is added. A mark or a line's start beside a string is no longer string (龘靐齉)."""
    rng = random.Random(2)
    shipped = build_word_table(["".join(rng.choices(HAN, k=20)) + "。" for _ in range(100)], min_count=1)
    noise = lambda: "".join(rng.choices(HAN, k=5))  # noqa: E731
    domain = [noise() + "江苏苏宁易购" + noise() + "。" for _ in range(20)] + ["龘靐齉。"] * 5
    table, *_ = adapted_table(shipped, domain, min_count=2)
    assert np.isfinite(table.autonomy("江苏苏宁易购")[0, 5]) and np.isfinite(table.autonomy("龘靐齉")[0, 2])
    for fragment in ("江苏苏宁易", "苏宁易购", "龘靐"):
        assert np.isnan(table.autonomy(fragment)[0, len(fragment) - 1]), fragment


def test_a_rare_compound_of_two_known_strings_is_not_added():
    """出栏肉猪 is 出栏 + 肉猪, both known: seen fewer than COMPOUND_BELOW times it is a phrase, left
    out; 接触性皮炎 (接触性 + 皮炎) recurs as often as a term does and is added."""
    rng = random.Random(3)
    known = ["出栏", "肉猪", "接触性", "皮炎"]
    general = ["".join(rng.choices(HAN, k=4)) + word + "".join(rng.choices(HAN, k=4)) + "。"
               for word in known for _ in range(20)]
    shipped = build_word_table(general, min_count=1)
    noise = lambda: "".join(rng.choices(HAN, k=4))  # noqa: E731
    domain = ([noise() + "出栏肉猪" + noise() + "。" for _ in range(COMPOUND_BELOW - 1)]
              + [noise() + "接触性皮炎" + noise() + "。" for _ in range(COMPOUND_BELOW)])
    table, *_ = adapted_table(shipped, domain, min_count=2)
    assert np.isnan(table.autonomy("出栏肉猪")[0, 3]) and np.isfinite(table.autonomy("接触性皮炎")[0, 4])
    rarer = domain[: COMPOUND_BELOW - 1] + domain[COMPOUND_BELOW - 1 :][1:]  # 接触性皮炎 below it too
    assert np.isnan(adapted_table(shipped, rarer, min_count=2)[0].autonomy("接触性皮炎")[0, 4])


def test_a_rare_compound_of_a_new_string_and_a_known_one_is_not_added():
    """极阴 is the domain's own (a novel's name, new to the shipped table and added), 祖师 is known:
    极阴祖师, seen fewer than COMPOUND_BELOW times, is a phrase of the two and is left out, as 出栏肉猪
    is; 龘靐齉麤, whose halves are nobody's words, is added however rarely it is seen (min_count)."""
    rng = random.Random(4)
    noise = lambda: "".join(rng.choices(HAN, k=4))  # noqa: E731
    shipped = build_word_table([noise() + "祖师" + noise() + "。" for _ in range(20)], min_count=1)
    domain = ([noise() + "极阴" + noise() + "。" for _ in range(10)]
              + [noise() + "极阴祖师" + noise() + "。" for _ in range(COMPOUND_BELOW - 1)]
              + [noise() + TERM + noise() + "。" for _ in range(3)])
    table, *_ = adapted_table(shipped, domain, min_count=2)
    assert np.isnan(shipped.autonomy("极阴")[0, 1]) and np.isfinite(table.autonomy("极阴")[0, 1])
    assert np.isnan(table.autonomy("极阴祖师")[0, 3]) and np.isfinite(table.autonomy(TERM)[0, 3])
    often = domain + [noise() + "极阴祖师" + noise() + "。"]  # seen COMPOUND_BELOW times: a term, added
    assert np.isfinite(adapted_table(shipped, often, min_count=2)[0].autonomy("极阴祖师")[0, 3])


def test_two_parts_the_text_uses_far_more_often_apart_are_not_added():
    """鬯爨麷 stands for 让韩立: 鬯 (让) a word and 爨麷 (韩立) the text's own name, each of which the
    text has more than 1 / LOOSE_SHARE times as often without the other: a phrase of the two, left
    out, while 爨麷 is added. Where 鬯 occurs only before 爨麷, the three are a unit of the text's and
    are added."""
    rng = random.Random(5)
    noise = lambda: "".join(rng.choices(HAN, k=4))  # noqa: E731
    shipped = build_word_table([noise() + "。" for _ in range(100)], min_count=1)
    together = [noise() + "鬯爨麷" + noise() + "。" for _ in range(6)]
    name = [noise() + "爨麷" + noise() + "。" for _ in range(20)]
    word = [noise() + "鬯" + noise() + "。" for _ in range(int(len(together) / LOOSE_SHARE))]
    table, *_ = adapted_table(shipped, together + name + word, min_count=2)
    assert np.isfinite(table.autonomy("爨麷")[0, 1]) and np.isnan(table.autonomy("鬯爨麷")[0, 2])
    unit = adapted_table(shipped, together + name, min_count=2)[0]  # 鬯 only ever before 爨麷
    assert np.isfinite(unit.autonomy("鬯爨麷")[0, 2])


def test_text_without_han_characters_is_refused_and_leaves_nothing(tmp_path):
    raw = tmp_path / "latin.txt"
    raw.write_text("hello world\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no Han characters"):
        adapt(None, [raw], tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latin.txt"]


def adapt_cli(capsys, *args) -> tuple[int, str, str]:
    """`segmenter adapt ARGS…` through cli.main in this process: (exit code, stdout, stderr)."""
    from segmenter.cli import main

    capsys.readouterr()
    try:
        code = main(["adapt", *map(str, args)])
    except SystemExit as exit:  # argparse's refusals
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_errors_are_one_line(raw_file, tmp_path, capsys):
    code, _, err = adapt_cli(capsys, "--raw", tmp_path / "nope.txt", "--out", tmp_path / "a")
    assert code == 2 and err.strip().count("\n") == 0 and "nope.txt" in err
    code, _, err = adapt_cli(capsys, "-m", embedded_model_path(), "--raw", raw_file, "--out", embedded_model_path())
    assert code == 2 and "model folder itself" in err and err.strip().count("\n") == 0
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    code, _, err = adapt_cli(capsys, "--raw", raw_file, "--out", tmp_path / "full")
    assert code == 2 and "not an empty folder" in err
    code, _, err = adapt_cli(capsys, "--raw", raw_file, "--out", tmp_path / "s", "--seed", "1")
    assert code == 2 and "--seed" in err and "--refine" in err
    assert err.strip().count("\n") == 0 and not (tmp_path / "s").exists()
    with pytest.raises(ValueError, match="seed must be an int"):
        adapt(None, [raw_file], tmp_path / "t", refine=True, seed="1")
    assert not (tmp_path / "t").exists()


@pytest.mark.slow
def test_cli_writes_a_folder_the_cli_segments_with(raw_file, tmp_path, capsys):
    """`segmenter adapt` (in this process), then the folder used by `python -m segmenter -m FOLDER`."""
    out = tmp_path / "cli"
    code, stdout, err = adapt_cli(capsys, "--raw", raw_file, "--out", out, "--min-count", "3")
    assert code == 0, err
    assert "n-grams added" in stdout and json.loads((out / "segmenter_heads.json").read_text())["extra"]["adapt"]["min_count"] == 3
    used = run_cli("-m", out, "-q", stdin=("前面" + TERM + "后面\n").encode(), text=False)
    assert used.returncode == 0 and used.stdout.decode().replace(" ", "").strip() == "前面" + TERM + "后面"


@pytest.mark.slow
def test_adapt_with_refine_writes_one_folder_with_the_table_and_a_refined_head(planted_model_dir, tmp_path):
    """adapt(refine=True): the domain's table and a head fine-tuned on the same text, in one folder
    (both records, the adapt note saying the head is refined next); the scratch table folder is gone."""
    from safetensors.numpy import load_file

    from conftest import planted_sentences

    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join("".join(words) for words in planted_sentences(300, seed=1)) + "\n", encoding="utf-8")
    out = tmp_path / "nested" / "adapted"
    result = adapt(planted_model_dir, [raw], out, refine=True, seed=3)
    assert result.folder == out and result.refined["label_chars"] > 0 and result.refined["training"]["steps"] > 0
    profile = json.loads((out / "segmenter_heads.json").read_text(encoding="utf-8"))
    assert profile["extra"]["refine"]["seed"] == 3  # the seed reaches refine's training and its record
    assert profile["extra"]["adapt"]["refine"] is True and profile["runtime"]["decode"] == "words"
    assert profile["extra"]["refine"]["model"].endswith("with the adapted table")
    before, after = load_file(str(planted_model_dir / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert any(not np.array_equal(before[k].astype(np.float16), after[k]) for k in before)
    assert "fine-tunes its head on the same text" in card_note(profile["extra"]["adapt"])  # the planted folder has no card
    assert sorted(p.name for p in out.parent.iterdir()) == ["adapted"]  # no scratch or half folder left
    text = "".join(planted_sentences(3, seed=5)[0])
    assert "".join(Segmenter(out, window=30, overlap=8).segment(text)) == text


@pytest.mark.slow
def test_adapt_refine_is_skipped_when_the_text_adds_no_string(planted_model_dir, tmp_path, capsys):
    """A text that adds nothing to the table (here: every string seen fewer than min_count times)
    leaves the head as it is: self-training on what the model knows only drifts it (adapt.py)."""
    from conftest import planted_sentences

    raw = tmp_path / "small.txt"
    raw.write_text("\n".join("".join(words) for words in planted_sentences(3, seed=2)) + "\n", encoding="utf-8")
    out = tmp_path / "adapted"
    result = adapt(planted_model_dir, [raw], out, refine=True, min_count=50)
    assert result.added == 0 and result.refine_skipped and result.refined is None
    assert (out / "model.safetensors").read_bytes() == (planted_model_dir / "model.safetensors").read_bytes()
    record = json.loads((out / "segmenter_heads.json").read_text(encoding="utf-8"))["extra"]
    assert record["adapt"]["refine"] is False and "no string" in record["adapt"]["refine_skipped"]
    assert "refine" not in record and "skipped" in card_note(record["adapt"])
    code, stdout, err = adapt_cli(capsys, "-m", planted_model_dir, "--raw", raw, "--out", tmp_path / "cli", "--refine",
                                  "--min-count", "50")
    assert code == 0 and "--refine skipped" in stdout, err


def test_refine_samples_long_lines_as_pieces_when_asked(tmp_path):
    """A user's text of long paragraphs: left out by default (the shipped recipes' sample), trained
    on as pieces of at most max_line characters with split_long (adapt --refine)."""
    from segmenter.train.selftrain import sample_lines

    rng = random.Random(3)
    paragraph = "。".join("".join(rng.choices(HAN, k=rng.randint(10, 30))) for _ in range(30)) + "。"
    raw = tmp_path / "long.txt"
    raw.write_text(paragraph + "\n" + "短句子在这里。\n", encoding="utf-8")
    assert sample_lines([str(raw)], 10**6, 0, 2, 250) == ["短句子在这里。"]
    pieces = sample_lines([str(raw)], 10**6, 0, 2, 250, split_long=True)
    assert "短句子在这里。" in pieces and max(map(len, pieces)) <= 250
    assert len(pieces) >= 3 and sum(map(len, pieces)) == len(paragraph) + len("短句子在这里。")  # nothing lost


@pytest.mark.slow
def test_adapt_refine_refuses_a_model_that_combines_heads_before_counting(tiny_model_dir, raw_file, tmp_path, capsys):
    with pytest.raises(ValueError, match="one head"):
        adapt(tiny_model_dir, [raw_file], tmp_path / "out", refine=True)
    assert not (tmp_path / "out").exists()
    code, _, err = adapt_cli(capsys, "-m", tiny_model_dir, "--raw", raw_file, "--out", tmp_path / "cli", "--refine")
    assert code == 2 and "one head" in err and err.strip().count("\n") == 0
