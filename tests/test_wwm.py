"""Whole-word-masking references (segmenter/integrations/wwm.py, `segmenter wwm-ref`): the positions
transformers' run_chinese_ref.py writes and DataCollatorForWholeWordMask reads, from the model's words."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from segmenter import default_segmenter
from segmenter.hf import chinese_ref, iter_chinese_ref, whole_word_offsets
from segmenter.integrations.wwm import is_chinese_char

from conftest import REPO, TINY_CHARS

PKU_DEV = Path(__file__).parents[2] / "shared" / "corpora" / "gold" / "pku_dev.txt"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LATIN = ["hello", "world", "##s", "gp", "##t", "bert", "##ing", "1997", "-", "4", ",", "."]
EXTRA_HAN = "兴告字模"  # characters of TEXTS beyond TINY_CHARS
MISSING = "龘"  # a Chinese character the vocabulary lacks: [UNK]
TEXTS = [
    "我们的国家是一个大国。",
    "他说，中国人民很高兴！",
    "用GPT-4模型写hello world的报告",
    "1997年中国经济发展很快",
    f"{MISSING}{MISSING}是一个字，他说 hellos 世界",
    "",
    "   ",
    "中国人民很高兴。" * 80,  # more than 512 tokens: truncated
]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory) -> Path:
    """A BERT WordPiece vocabulary written here: specials, the tiny Han characters, some Latin pieces."""
    folder = tmp_path_factory.mktemp("wwm") / "tokenizer"
    folder.mkdir()
    han = sorted({c for c in TINY_CHARS + EXTRA_HAN if is_chinese_char(c)} - {MISSING})
    others = sorted({c for c in TINY_CHARS if not is_chinese_char(c)})
    (folder / "vocab.txt").write_text("\n".join(SPECIALS + han + others + LATIN) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dir):
    from transformers import BertTokenizerFast

    fast = BertTokenizerFast.from_pretrained(tokenizer_dir)  # transformers 4 and 5 alike
    assert fast.is_fast and fast.tokenize("我们hellos") == ["我", "们", "hello", "##s"]
    return fast


def slow_tokenizer(folder: Path):
    try:  # transformers 5: the Python WordPiece tokenizer lives on as BertTokenizerLegacy
        from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy as Slow
    except ImportError:
        from transformers import BertTokenizer as Slow
    slow = Slow.from_pretrained(folder)
    assert not slow.is_fast
    return slow


def expected_ref(text: str, tokenizer, segmenter) -> list[int]:
    """The oracle, by words: the tokens inside each segmenter word after its first one that are a
    single Chinese character."""
    encoded = tokenizer(text, truncation=True, max_length=512, return_offsets_mapping=True,
                        return_special_tokens_mask=True)
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    expected = []
    for _, start, end in segmenter.tokenize(text):
        spans = zip(encoded["offset_mapping"], encoded["special_tokens_mask"])
        inside = [i for i, ((s, e), special) in enumerate(spans) if not special and start <= s and e <= end]
        expected += [i for i in inside[1:] if len(tokens[i]) == 1 and is_chinese_char(tokens[i])]
    return sorted(expected)


def check_refs(texts, refs, tokenizer, segmenter) -> None:
    assert len(refs) == len(texts)
    for text, ref in zip(texts, refs):
        encoded = tokenizer(text, truncation=True, max_length=512, return_special_tokens_mask=True)
        tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
        assert ref == sorted(set(ref)) and all(0 < i < len(tokens) for i in ref), text
        for i in ref:  # never a special token, [UNK], a Latin piece, a digit or punctuation
            assert not encoded["special_tokens_mask"][i] and len(tokens[i]) == 1 and is_chinese_char(tokens[i]), text
        assert ref == expected_ref(text, tokenizer, segmenter), text


def test_references_list_the_chinese_characters_that_continue_a_word(tokenizer):
    refs = chinese_ref(TEXTS, tokenizer, show_progress=False)
    check_refs(TEXTS, refs, tokenizer, default_segmenter())
    # 我们 的 国家 是 一个 大国 。 -> [CLS] 我 ##们 的 国 ##家 是 一 ##个 大 ##国 。 [SEP]
    assert default_segmenter().segment(TEXTS[0]) == ["我们", "的", "国家", "是", "一个", "大国", "。"]
    assert refs[0] == [2, 5, 8, 10]
    assert refs[5] == refs[6] == []
    tokens = tokenizer.tokenize(TEXTS[4])
    assert tokens[:2] == ["[UNK]", "[UNK]"] and 1 not in refs[4] and 2 not in refs[4]  # [UNK] never listed
    long_ids = tokenizer(TEXTS[-1], truncation=True, max_length=512)["input_ids"]
    assert len(long_ids) == 512 and max(refs[-1]) < 511  # truncated as run_mlm_wwm.py truncates


def test_fast_and_slow_tokenizers_align_alike_and_truncation_gives_a_prefix(tokenizer, tokenizer_dir):
    fast = chinese_ref(TEXTS, tokenizer, show_progress=False)
    assert chinese_ref(TEXTS, slow_tokenizer(tokenizer_dir), show_progress=False) == fast
    assert chinese_ref(TEXTS, tokenizer_dir, show_progress=False) == fast  # a folder is loaded
    whole = chinese_ref(TEXTS, tokenizer, max_length=None, show_progress=False)
    assert whole[:-1] == fast[:-1] and len(whole[-1]) > len(fast[-1])
    short = chinese_ref(TEXTS, tokenizer, max_length=64, show_progress=False)
    assert short == [[i for i in ref if i < 63] for ref in whole]  # position 63 is [SEP]
    streamed = iter_chinese_ref(iter(TEXTS), tokenizer, batch_size=3, show_progress=False)
    assert not isinstance(streamed, list) and list(streamed) == fast


def test_a_word_that_mixes_scripts_has_its_chinese_characters_listed(tokenizer):
    from segmenter import Segmenter

    segmenter = Segmenter()
    segmenter.add_word("GPT模型", freq=100)
    text = "用GPT模型写报告"
    assert "GPT模型" in segmenter.segment(text)
    [ref] = chinese_ref([text], tokenizer, segmenter=segmenter, show_progress=False)
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])
    assert tokens[2:6] == ["gp", "##t", "模", "型"]
    assert {4, 5} <= set(ref) and ref == expected_ref(text, tokenizer, segmenter)  # [gp ##t ##模 ##型]


def test_arguments_are_checked(tokenizer):
    with pytest.raises(TypeError):
        chinese_ref("我们的国家", tokenizer)
    with pytest.raises(ValueError):
        chinese_ref(["我们"], tokenizer, batch_size=0)
    with pytest.raises(ValueError):
        chinese_ref(["我们"], tokenizer, max_length=1)
    with pytest.raises(TypeError):
        chinese_ref([1], tokenizer, show_progress=False)
    with pytest.raises(TypeError):
        chinese_ref(["我们"], object())
    with pytest.raises(TypeError):
        iter_chinese_ref(["我们"], tokenizer, segmenter=object())  # checked at once, not on the first next()
    assert chinese_ref(TEXTS[:2], tokenizer, show_progress=True) == chinese_ref(TEXTS[:2], tokenizer)


def test_a_tokenizer_without_chinese_characters_is_warned_about(tmp_path, caplog):
    from transformers import BertTokenizerFast

    (tmp_path / "vocab.txt").write_text("\n".join(SPECIALS + LATIN) + "\n", encoding="utf-8")
    latin_only = BertTokenizerFast.from_pretrained(tmp_path)
    with caplog.at_level("WARNING", logger="segmenter"):
        assert chinese_ref(["我们的国家"], latin_only, show_progress=False) == [[]]
    assert "no token of a single Chinese character" in caplog.text


def word_groups(input_ids, ref, tokenizer) -> list[list[int]]:
    """The words DataCollatorForWholeWordMask (transformers 4) sees: a position of `ref` or a "##"
    piece continues the word before it; [CLS], [SEP] and padding belong to none."""
    groups: list[list[int]] = []
    for i, token in enumerate(tokenizer.convert_ids_to_tokens(list(input_ids))):
        if token in ("[CLS]", "[SEP]", "[PAD]"):
            continue
        if groups and (i in ref or token.startswith("##")):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def collate(tokenizer, texts, refs, seed: int):
    """A batch as run_mlm_wwm.py makes it: transformers 4's DataCollatorForWholeWordMask on
    examples with a "chinese_ref"; in transformers 5 (which dropped it),
    DataCollatorForLanguageModeling(whole_word_mask=True) on whole_word_offsets."""
    import transformers

    if hasattr(transformers, "DataCollatorForWholeWordMask"):
        collator = transformers.DataCollatorForWholeWordMask(tokenizer=tokenizer, mlm_probability=0.3, seed=seed)
        examples = [{**tokenizer(text, truncation=True, max_length=128), "chinese_ref": ref}
                    for text, ref in zip(texts, refs)]
    else:
        collator = transformers.DataCollatorForLanguageModeling(tokenizer, whole_word_mask=True, mlm_probability=0.3,
                                                                seed=seed)
        examples = []
        for text, ref in zip(texts, refs):
            example = dict(tokenizer(text, truncation=True, max_length=128, padding="max_length",
                                     return_special_tokens_mask=True))
            example["offset_mapping"] = whole_word_offsets(example["input_ids"], ref, tokenizer,
                                                           example["special_tokens_mask"])
            examples.append(example)
    return examples, collator(examples)


def test_the_collator_accepts_the_references_and_masks_whole_words(tokenizer):
    import warnings

    texts = [t for t in TEXTS if t.strip()]
    refs = chinese_ref(texts, tokenizer, max_length=128, show_progress=False)
    masked_words = 0
    for seed in range(8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # transformers 5: "random token replacement is not supported…"
            examples, batch = collate(tokenizer, texts, refs, seed)
        labels = batch["labels"].tolist()
        for example, ref, row in zip(examples, refs, labels):
            masked = {i for i, label in enumerate(row) if label != -100}
            assert all(row[i] == example["input_ids"][i] for i in masked)
            for group in word_groups(example["input_ids"], ref, tokenizer):
                assert not masked & set(group) or set(group) <= masked, (group, sorted(masked))
                masked_words += len(group) > 1 and set(group) <= masked
    assert masked_words > 10  # words of several tokens were masked, each whole


def test_whole_word_offsets_join_references_and_wordpieces(tokenizer):
    encoded = tokenizer("我们说hellos", return_special_tokens_mask=True)
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    assert tokens == ["[CLS]", "我", "们", "说", "hello", "##s", "[SEP]"]
    offsets = whole_word_offsets(encoded["input_ids"], [2], tokenizer)
    assert offsets == [(0, 0), (1, 2), (2, 3), (4, 5), (6, 7), (7, 8), (0, 0)]  # touching: one word
    with pytest.raises(ValueError):
        whole_word_offsets(encoded["input_ids"], [2], tokenizer, special_tokens_mask=[0, 1])


def test_the_command_writes_one_line_per_input_line(tmp_path, tokenizer, tokenizer_dir, capsys):
    from segmenter.cli import main

    raw = tmp_path / "train.txt"
    lines = ["我们的国家是一个大国。", "", "  ", "用GPT-4模型写hello world的报告", "中国人民很高兴",
             "他说，中国人民很高兴！"]
    # \r\n and a lone \r end lines too, as run_mlm_wwm.py's text loader (open() in text mode) reads them
    raw.write_bytes(("\r\n".join(lines[:4]) + "\n" + "\r".join(lines[4:]) + "\n").encode("utf-8"))
    out = tmp_path / "train_ref.txt"
    assert main(["wwm-ref", "--tokenizer", str(tokenizer_dir), str(raw), str(out), "--batch-lines", "2"]) == 0
    written = out.read_text(encoding="utf-8").split("\n")
    assert written[-1] == "" and len(written[:-1]) == len(lines)
    refs = chinese_ref(lines, tokenizer, show_progress=False)
    for line, text, ref in zip(written, lines, refs):
        assert line == ("" if not text.strip() else json.dumps(ref))
    # run_mlm_wwm.py's add_chinese_references drops blank lines, as its tokenize_function drops blank texts
    loaded = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line and not line.isspace()]
    assert loaded == [ref for text, ref in zip(lines, refs) if text.strip()]
    assert "wrote" in capsys.readouterr().out
    # stdout, and the errors a user can act on as one line
    assert main(["wwm-ref", "--tokenizer", str(tokenizer_dir), str(raw), "-", "-q"]) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")
    assert main(["wwm-ref", "--tokenizer", str(tmp_path / "none"), str(raw), str(out)]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["wwm-ref", "--tokenizer", str(tokenizer_dir), str(tmp_path / "none.txt"), str(out)]) == 2
    (tmp_path / "bad.txt").write_bytes(b"\xe6\x88\x91\n\xff\n")
    assert main(["wwm-ref", "--tokenizer", str(tokenizer_dir), str(tmp_path / "bad.txt"), str(tmp_path / "b")]) == 2
    assert "line 2" in capsys.readouterr().err and not (tmp_path / "b").exists()


@pytest.mark.slow  # starts a process (conftest: UnmarkedSlowTest)
def test_segmenter_hf_imports_nothing_until_called():
    modules = ("transformers", "torch", "segmenter.integrations.wwm", "segmenter.api")
    code = f"import sys, segmenter.hf; print(sorted(m for m in {modules!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_thousand_pku_dev_sentences(tokenizer_dir):
    """1,000 PKU dev sentences (spaces removed) with the embedded model's own vocabulary: refs agree
    with the oracle, fast and slow tokenizers alike, and the gold words' references mostly agree."""
    if not PKU_DEV.exists():
        pytest.skip(f"{PKU_DEV} not present")
    from transformers import AutoTokenizer

    gold = [line.split() for line in PKU_DEV.read_text(encoding="utf-8").splitlines() if line.strip()][:1000]
    texts = ["".join(words) for words in gold]
    vocab_folder = REPO / "segmenter" / "model" / "shipped" / "default"
    tokenizer = AutoTokenizer.from_pretrained(vocab_folder)
    started = time.perf_counter()
    refs = chinese_ref(texts, tokenizer, show_progress=False)
    seconds = time.perf_counter() - started
    check_refs(texts, refs, tokenizer, default_segmenter())
    assert chinese_ref(texts, slow_tokenizer(vocab_folder), show_progress=False) == refs

    class Gold:  # the gold words, as a segmenter
        def segment_batch(self, batch, show_progress=None):
            words = {"".join(w): w for w in gold}
            return [words[text] for text in batch]

    gold_refs = chinese_ref(texts, tokenizer, segmenter=Gold(), show_progress=False)
    agree = sum(len(set(a) & set(b)) for a, b in zip(refs, gold_refs))
    precision = agree / sum(map(len, refs))
    recall = agree / sum(map(len, gold_refs))
    print(f"1,000 PKU dev sentences: {seconds:.2f} s, {sum(map(len, refs)):,} positions; "
          f"against the gold words' references: precision {precision:.3f}, recall {recall:.3f}")
    assert precision > 0.85 and recall > 0.85
