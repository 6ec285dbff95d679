"""The SIGHAN scorer: hand-made cases, then jieba on the PKU test set against published figures."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segmenter.train.corpus import iter_raw_lines, read_gold
from segmenter.bench.evaluation import Counts, count_sentence, length_table, read_lexicon, score, word_spans

from conftest import GOLD, LEXICON, require_shared


def test_word_spans_tile_the_sentence():
    assert word_spans(["我", "爱", "北京"]) == [(0, 1), (1, 2), (2, 4)]
    assert word_spans([]) == []


def test_perfect_output_scores_one():
    gold = [["我", "爱", "北京", "天安门"], ["你好"]]
    s = score(gold, gold)
    assert (s.P, s.R, s.F1) == (1.0, 1.0, 1.0)
    assert s.oov_rate is None and s.oov_recall is None and s.iv_recall is None  # no lexicon


def test_all_split_output_gets_only_the_one_character_words():
    gold = [["中国", "人民", "的"]]
    s = score(gold, [["中", "国", "人", "民", "的"]])
    # gold: 中国 人民 (2 chars), 的 (1); output: five 1-char words, of which 的 is right
    assert s.counts == Counts(gold=3, test=5, correct=1, gold_by_length=(1, 2, 0, 0, 0),
                              test_by_length=(5, 0, 0, 0, 0), correct_by_length=(1, 0, 0, 0, 0))
    assert s.P == pytest.approx(1 / 5) and s.R == pytest.approx(1 / 3)
    assert s.F1 == pytest.approx(2 * (1 / 5) * (1 / 3) / (1 / 5 + 1 / 3))


def test_merged_words_are_wrong_and_the_rest_right():
    s = score([["我", "爱", "北京"]], [["我爱", "北京"]])
    assert (s.counts.correct, s.P, s.R) == (1, 0.5, pytest.approx(1 / 3))
    assert s.F1 == pytest.approx(0.4)
    assert "=== F MEASURE:\t0.400" in s.report()


def test_a_word_counts_only_at_its_own_span():
    # Same words, other places: "a|aa" against "aa|a" matches no span (diff-based scoring would credit one).
    s = score([["a", "aa"]], [["aa", "a"]])
    assert s.counts.correct == 0


def test_nothing_right_gives_zero_not_an_error():
    s = score([["中国人"]], [["中", "国人"]])
    assert (s.P, s.R, s.F1) == (0.0, 0.0, 0.0)


def test_oov_counting_against_a_lexicon():
    lexicon = {"我", "北京"}
    gold = [["我", "爱", "北京", "天安门"]]
    test = [["我", "爱北京", "天安门"]]  # right: 我 (IV), 天安门 (OOV); wrong: 爱 (OOV), 北京 (IV)
    s = score(gold, test, lexicon)
    assert s.counts == Counts(gold=4, test=3, correct=2, oov=2, oov_correct=1, iv_correct=1,
                              gold_by_length=(2, 1, 1, 0, 0), test_by_length=(1, 0, 2, 0, 0),
                              correct_by_length=(1, 0, 1, 0, 0))
    assert (s.oov_rate, s.oov_recall, s.iv_recall) == (0.5, 0.5, 0.5)


def test_oov_rate_counts_tokens_not_types():
    s = score([["的", "的", "的", "猫"]], [["的", "的", "的", "猫"]], {"猫"})
    assert s.oov_rate == 0.75 and s.oov_recall == 1.0 and s.iv_recall == 1.0


def test_a_recall_with_nothing_to_count_is_none():
    s = score([["我"]], [["我"]], {"我"})
    assert s.oov_rate == 0.0 and s.oov_recall is None and s.iv_recall == 1.0


def test_sentences_pool_their_counts():
    gold = [["我", "爱", "北京"], ["中国", "人民"]]
    test = [["我爱", "北京"], ["中国", "人民"]]
    pooled = score(gold, test).counts
    assert pooled == count_sentence(gold[0], test[0]) + count_sentence(gold[1], test[1])
    assert score(gold, test).P == pytest.approx(3 / 4)  # micro-average: 3 of 4 output words


def test_whitespace_tokens_are_not_words():
    assert score([["我", "爱"]], [["我", " ", "爱", ""]]).counts == Counts(
        gold=2, test=2, correct=2, gold_by_length=(2, 0, 0, 0, 0), test_by_length=(2, 0, 0, 0, 0),
        correct_by_length=(2, 0, 0, 0, 0))


def test_precision_and_recall_by_word_length():
    # gold   中华人民共和国 | 成立 | 了 | 五十 | 周年 | 办公室 | 的 | 同志们      (lengths 7 2 1 2 2 3 1 3)
    # output 中华 | 人民 | 共和国 | 成立 | 了 | 五十周年 | 办公室 | 的 | 同志 | 们  (lengths 2 2 3 2 1 4 3 1 2 1)
    gold = [["中华人民共和国", "成立", "了", "五十", "周年"], ["办公室", "的", "同志们"]]
    test = [["中华", "人民", "共和国", "成立", "了", "五十周年"], ["办公室", "的", "同志", "们"]]
    s = score(gold, test)
    # right: 成立 (2), 了 (1), 办公室 (3), 的 (1); 共和国 is a word of the output but not at a gold span
    assert s.counts.gold_by_length == (2, 3, 2, 0, 1)
    assert s.counts.test_by_length == (3, 4, 2, 1, 0)
    assert s.counts.correct_by_length == (2, 1, 1, 0, 0)
    rows = s.by_length()
    assert rows["1"]["R"] == 1.0 and rows["1"]["P"] == pytest.approx(2 / 3)
    assert rows["2"]["R"] == pytest.approx(1 / 3) and rows["2"]["P"] == pytest.approx(1 / 4)
    assert rows["3"]["R"] == 0.5 and rows["3"]["P"] == 0.5
    assert rows["4"]["R"] is None and rows["4"]["P"] == 0.0  # no gold 4-char word; one output word, wrong
    assert rows["5+"]["R"] == 0.0 and rows["5+"]["P"] is None
    assert sum(s.counts.correct_by_length) == s.counts.correct == 4
    flat = s.as_dict()
    assert flat["by_length"]["3"]["gold"] == 2 and "gold_by_length_words" not in flat
    assert length_table(s)["R"] == [1.0, pytest.approx(1 / 3), 0.5, None, 0.0]


def test_output_with_other_characters_is_refused():
    with pytest.raises(ValueError, match="sentence 2.*characters differ"):
        score([["我"], ["北京"]], [["我"], ["北"]])
    with pytest.raises(ValueError, match="2 sentences but the output has 1"):
        score([["我"], ["北京"]], [["我"]])


def test_read_lexicon(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("\ufeff北京\n  天安门 \n\n我\r\n", encoding="utf-8")
    assert read_lexicon(path) == {"北京", "天安门", "我"}
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no words"):
        read_lexicon(tmp_path / "empty.txt")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_lexicon(tmp_path / "missing.txt")



def test_read_gold_takes_any_whitespace_and_drops_a_byte_order_mark(tmp_path):
    """SIGHAN's files split words by two spaces, some by U+3000; a file saved on Windows starts
    with a byte-order mark, which would otherwise be a character of the first word."""
    path = tmp_path / "gold.txt"
    path.write_text("\ufeff共同  创造\u3000美好\r\n\n我 爱\t北京\n", encoding="utf-8")
    assert read_gold(path) == [["共同", "创造", "美好"], ["我", "爱", "北京"]]
    assert read_gold(path, limit=1) == [["共同", "创造", "美好"]]
    path.write_bytes("我们 的\n".encode() + b"\x89PNG\n")  # not UTF-8: the file and the line, not a codec's words
    with pytest.raises(ValueError, match=r"gold.txt, line 2: bytes that are not UTF-8"):
        read_gold(path)
    raw = tmp_path / "raw.txt"  # raw text (adapt, ngrams, pretrain) drops the mark the same way
    raw.write_text("\ufeff共同创造\n\n美好\n", encoding="utf-8")
    assert list(iter_raw_lines([raw])) == ["共同创造", "美好"]


words = st.text(alphabet="中国人民爱", min_size=1, max_size=3)


@given(st.lists(words, min_size=1, max_size=12), st.data())
def test_any_resegmentation_scores_within_bounds(gold, data):
    text = "".join(gold)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1))) if len(text) > 1 else [])
    test = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    s = score([gold], [test])
    assert 0.0 <= s.P <= 1.0 and 0.0 <= s.R <= 1.0
    assert count_sentence(gold, test).correct == count_sentence(test, gold).correct  # matching is symmetric
    assert (s.F1 == 1.0) == (test == gold)


@pytest.mark.slow
def test_jieba_on_pku_test_gives_the_published_figures():
    """jieba 0.42.1, default mode (HMM on), on the SIGHAN 2005 PKU test set: P 0.853, R 0.787,
    F1 0.818 (pkuseg's README: F1 81.83). The OOV rate 0.058 is the one Emerson (2005) lists
    for the PKU test set against its training words."""
    jieba = pytest.importorskip("jieba")
    if jieba.__version__ != "0.42.1":
        pytest.skip(f"the published figures are for jieba 0.42.1, this is {jieba.__version__}")
    gold = read_gold(require_shared(GOLD / "pku_test.txt"))
    lexicon = read_lexicon(require_shared(LEXICON / "pku_training_words.txt"))
    tokenizer = jieba.Tokenizer()
    output = [tokenizer.lcut("".join(words)) for words in gold]
    s = score(gold, output, lexicon)
    assert (round(s.P, 3), round(s.R, 3), round(s.F1, 3)) == (0.853, 0.787, 0.818)
    assert round(s.oov_rate, 3) == 0.058
