"""segmenter.analyse: jieba.analyse's keyword calls. Fast tests use a tokenizer that splits on
spaces (or a tiny random model), so the numbers can be checked by hand and against jieba's own
code fed the same words; the slow ones use the shipped model and the shipped IDF table
(test_idf.py tests its file format and its building)."""
import inspect
import subprocess
import sys
from collections import Counter

import pytest

import segmenter
from segmenter import analyse
from segmenter.analyse import TFIDF, TextRank, UndirectWeightedGraph

from conftest import REPO

pytest.importorskip("jieba")
import jieba  # noqa: E402
import jieba.analyse  # noqa: E402
from jieba.analyse.textrank import UndirectWeightedGraph as JiebaGraph  # noqa: E402
from jieba.posseg import pair  # noqa: E402

JIEBA_TEXTRANK_POS = ("ns", "n", "vn", "v")
WORDS = "经济 发展 我们 经济 改革 ， 开放 经济 发展 农村 的 改革 企业 经济 a 农民 收入 增长 企业 改革"
IDF = {"经济": 5.0, "发展": 4.0, "改革": 6.0, "开放": 7.0, "农村": 8.0, "企业": 5.5, "农民": 8.5, "收入": 7.5, "增长": 6.5}


class SpaceTokenizer:
    """Words are what the text's spaces separate: the extractors see exactly these."""

    def cut(self, sentence):
        return iter(sentence.split())


class SpacePosTokenizer:
    """The same words as jieba.posseg pairs, all nouns: jieba's TextRank then keeps them all."""

    def cut(self, sentence):
        return iter(pair(word, "n") for word in sentence.split())


@pytest.fixture
def idf_file(tmp_path):
    path = tmp_path / "idf.txt"
    path.write_text("".join(f"{w} {v}\n" for w, v in IDF.items()), encoding="utf-8")
    return path


@pytest.fixture
def tfidf(idf_file):
    return TFIDF(idf_file, tokenizer=SpaceTokenizer())


@pytest.fixture
def defaults():
    """The module's default extractors, restored after the test (set_* change them)."""
    saved = [(x, x.tokenizer, set(x.stop_words)) for x in (analyse.default_tfidf, analyse.default_textrank)]
    idf = (analyse.default_tfidf.idf_path, analyse.default_tfidf._idf)
    yield analyse
    for extractor, tokenizer, stop_words in saved:
        extractor.tokenizer, extractor.stop_words = tokenizer, stop_words
    analyse.default_tfidf.idf_path, analyse.default_tfidf._idf = idf


# -- jieba's calls, arguments and behaviour -------------------------------------------------
def parameters(function):
    return [(p.name, p.default, p.kind) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", ["extract_tags", "tfidf", "set_idf_path", "set_stop_words", "textrank"])
def test_module_functions_have_jiebas_signatures(name):
    ours, theirs = parameters(getattr(analyse, name)), parameters(getattr(jieba.analyse, name))
    if name == "textrank":  # the one deliberate difference: no POS tagger, so allowPOS=() by default
        assert theirs[3][:2] == ("allowPOS", JIEBA_TEXTRANK_POS)
        theirs[3] = ("allowPOS", (), theirs[3][2])
    assert ours == theirs


@pytest.mark.parametrize("ours, theirs", [
    (TFIDF.extract_tags, jieba.analyse.TFIDF.extract_tags),
    (TFIDF.set_idf_path, jieba.analyse.TFIDF.set_idf_path),
    (TFIDF.set_stop_words, jieba.analyse.TFIDF.set_stop_words),
    (TextRank.extract_tags, jieba.analyse.TextRank.extract_tags),
    (TFIDF.__init__, jieba.analyse.TFIDF.__init__),  # ours adds tokenizer=None at the end
    (TextRank.__init__, jieba.analyse.TextRank.__init__),
])
def test_classes_take_jiebas_arguments(ours, theirs):
    ours, theirs = parameters(ours), parameters(theirs)
    # the one deliberate difference: no POS tagger, so textrank's allowPOS=() by default
    theirs = [(n, () if (n, d) == ("allowPOS", JIEBA_TEXTRANK_POS) else d, k) for n, d, k in theirs]
    assert ours[: len(theirs)] == theirs
    assert [name for name, _, _ in ours[len(theirs):]] in ([], ["tokenizer"])
    assert TextRank.textrank is TextRank.extract_tags


def test_tfidf_weights_by_hand(tfidf):
    tags = tfidf.extract_tags(WORDS, topK=None, withWeight=True)
    counted = [w for w in WORDS.split() if len(w) >= 2 and w != "我们"]  # 我们 is a stop word
    total, counts = len(counted), Counter(counted)
    assert dict(tags) == pytest.approx({w: counts[w] * IDF[w] / total for w in counts})
    weights = [weight for _, weight in tags]
    assert weights == sorted(weights, reverse=True)
    assert tags[0][0] == "经济" and tfidf.extract_tags(WORDS, topK=3) == [w for w, _ in tags[:3]]


def test_unknown_words_get_the_median_idf(idf_file):
    extractor = TFIDF(idf_file, tokenizer=SpaceTokenizer())
    values = sorted(IDF.values())
    assert extractor.median_idf == values[len(values) // 2]
    assert extractor.median_idf == 6.5  # the middle of the sorted values, as jieba takes it
    assert extractor.extract_tags("新词 经济", withWeight=True) == [("新词", 6.5 / 2), ("经济", 5.0 / 2)]


def test_same_as_jiebas_code_on_the_same_words(idf_file):
    """Fed the same words and the same table, jieba's TFIDF and TextRank give the same output."""
    theirs = jieba.analyse.TFIDF(str(idf_file))
    theirs.tokenizer = SpaceTokenizer()
    ours = TFIDF(idf_file, tokenizer=SpaceTokenizer())
    ours.stop_words = set(TFIDF.STOP_WORDS)  # jieba's own stop words only
    text = WORDS + " 新词 the 经济"  # (not ——: jieba counts it, see test_stop_words_and_non_words)
    assert ours.extract_tags(text, topK=None, withWeight=True) == theirs.extract_tags(text, topK=None, withWeight=True)
    assert ours.extract_tags(text, topK=4) == theirs.extract_tags(text, topK=4)

    theirs_rank = jieba.analyse.TextRank()
    theirs_rank.tokenizer = SpacePosTokenizer()
    ours_rank = TextRank(tokenizer=SpaceTokenizer())
    ours_rank.stop_words = set(TextRank.STOP_WORDS)
    expected = theirs_rank.textrank(text, topK=None, withWeight=True, allowPOS=("n",))
    assert ours_rank.textrank(text, topK=None, withWeight=True) == expected
    assert expected[0][1] == 1.0


def test_the_graph_ranks_as_jiebas(tmp_path):
    import random

    rng = random.Random(0)
    for _ in range(30):
        ours, theirs = UndirectWeightedGraph(), JiebaGraph()
        nodes = [f"w{i}" for i in range(rng.randint(1, 12))]
        for _ in range(rng.randint(1, 25)):
            start, end, weight = rng.choice(nodes), rng.choice(nodes), rng.randint(1, 3)
            ours.addEdge(start, end, weight)
            theirs.addEdge(start, end, weight)
        assert list(ours.rank().items()) == list(theirs.rank().items())


def test_textrank_window_and_weights():
    rank = TextRank(tokenizer=SpaceTokenizer())
    # A word links to the candidates among the next four words (a window of 5), the others
    # (here ，) taking their place: four words apart links, five apart does not.
    assert set(rank.textrank("甲甲 ， ， ， 乙乙")) == {"甲甲", "乙乙"}
    assert rank.textrank("甲甲 ， ， ， ， 乙乙") == []
    tags = rank.textrank("甲甲 乙乙 ， 丙丙 丁丁 戊戊", topK=None, withWeight=True)
    assert {w for w, _ in tags} == {"甲甲", "乙乙", "丙丙", "丁丁", "戊戊"} and tags[0][1] == 1.0
    weights = [weight for _, weight in tags]
    assert weights == sorted(weights, reverse=True) and all(0 < x <= 1 for x in weights)
    assert rank.textrank("甲甲 乙乙 ， ， ， 丙丙", topK=1) == ["乙乙"]  # 甲甲 - 乙乙 - 丙丙
    assert rank.textrank("", withWeight=True) == [] and rank.textrank("甲甲") == []


@pytest.mark.parametrize("method", ["tfidf", "textrank"])
def test_allow_pos_raises_and_with_flag_is_ignored(tfidf, method):
    extractor = tfidf if method == "tfidf" else TextRank(tokenizer=SpaceTokenizer())
    call = extractor.extract_tags
    for allow in (("n",), ["ns", "n"], JIEBA_TEXTRANK_POS):
        with pytest.raises(ValueError, match="no part-of-speech tagger.*allowPOS=()"):
            call(WORDS, allowPOS=allow)
    with pytest.raises(ValueError, match="allowPOS"):
        call(WORDS, 20, False, ("n",))
    assert call(WORDS, withFlag=True) == call(WORDS) == call(WORDS, allowPOS=[])


def test_top_k(tfidf):
    every = tfidf.extract_tags(WORDS, topK=None)
    assert len(every) == 9 and tfidf.extract_tags(WORDS, topK=0) == every
    assert tfidf.extract_tags(WORDS, 2) == every[:2] and tfidf.extract_tags(WORDS, topK=100) == every
    for bad in (-1, 2.5, "3", True):
        with pytest.raises(ValueError, match="topK"):
            tfidf.extract_tags(WORDS, topK=bad)
    assert tfidf.extract_tags("") == [] and tfidf.extract_tags("， 。 的") == []


def test_stop_words_and_non_words(tfidf, tmp_path):
    assert "我们" in tfidf.stop_words and "the" in tfidf.stop_words
    assert tfidf.extract_tags("—— …… ＃＃ The 经济") == ["经济"]  # no letter/digit/Han; "the" any case
    # numerals never count (jieba's TF-IDF keeps them; its TextRank drops them by part of speech)
    numerals = "1998 ２０００年 二○○一年 80% 12:30 第四十三号 ５０亿元 １２月"
    assert tfidf.extract_tags(numerals + " 经济 5G 十五大 ２１世纪") == ["5G", "十五大", "２１世纪", "经济"]
    assert TextRank(tokenizer=SpaceTokenizer()).textrank(numerals + " 经济 5G") == ["经济", "5G"]
    path = tmp_path / "stop.txt"
    path.write_text("经济\n 改革 \n\n", encoding="utf-8")
    tfidf.set_stop_words(path)
    assert "经济" in tfidf.stop_words and "我们" in tfidf.stop_words  # added, as jieba does
    assert not {"经济", "改革"} & set(tfidf.extract_tags(WORDS, topK=None))
    with pytest.raises(FileNotFoundError, match="stop-word file does not exist"):
        tfidf.set_stop_words(tmp_path / "none.txt")


def test_module_set_stop_words_and_set_idf_path(defaults, idf_file, tmp_path):
    defaults.default_tfidf.tokenizer = defaults.default_textrank.tokenizer = SpaceTokenizer()
    stop = tmp_path / "stop.txt"
    stop.write_bytes("农村\r\n企业\n".encode())
    defaults.set_stop_words(str(stop))
    defaults.set_idf_path(str(idf_file))
    assert defaults.default_tfidf.idf_freq == IDF
    assert "农村" not in defaults.extract_tags(WORDS, topK=None) and "农村" not in defaults.textrank(WORDS, topK=None)
    assert defaults.tfidf is defaults.extract_tags
    assert defaults.extract_tags(WORDS, topK=1) == ["经济"]
    with pytest.raises(FileNotFoundError, match="IDF file does not exist"):
        defaults.set_idf_path(str(tmp_path / "none.txt"))
    assert defaults.default_tfidf.idf_freq == IDF  # a failed call changes nothing


@pytest.mark.slow  # a process of its own
def test_nothing_loads_until_used():
    """import segmenter does not import analyse; importing analyse loads neither model nor table."""
    code = (
        "import sys, segmenter\n"
        "assert 'segmenter.analyse' not in sys.modules\n"
        "from segmenter import analyse\n"
        "import segmenter.analyse as same\n"
        "assert same is analyse and analyse.default_tfidf._idf is None\n"
        "assert analyse.TFIDF()._idf is None\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'torch', 'transformers')"
        " or m == 'segmenter.api' or m.startswith('segmenter.train')]\n"
        "assert not heavy, heavy\n"
        "assert segmenter.default_segmenter.cache_info().currsize == 0\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_default_tokenizer_is_the_default_segmenter(defaults, monkeypatch):
    """tokenizer=None cuts with segmenter.default_segmenter(), looked up at each call: a stub
    whose words no segmenter would make (each space-separated word with 丙 after it) is asked
    once per call, and the keywords are its words."""
    asked = []

    class Stub:
        def cut(self, sentence):
            return iter(word + "丙" for word in sentence.split())

    def stub():
        asked.append(1)
        return Stub()

    monkeypatch.setattr(segmenter, "default_segmenter", stub)
    stubbed = {word + "丙" for word in WORDS.split()}
    assert defaults.default_tfidf.tokenizer is None and defaults.default_textrank.tokenizer is None
    ranked = defaults.textrank(WORDS, topK=None)
    assert ranked and set(ranked) <= stubbed and len(asked) == 1
    tags = defaults.extract_tags(WORDS, topK=None)
    assert tags and set(tags) <= stubbed and len(asked) == 2
    assert set(TFIDF().extract_tags(WORDS, topK=None)) == set(tags) and len(asked) == 3


def test_a_function_works_as_tokenizer(idf_file):
    extractor = TFIDF(idf_file, tokenizer=str.split)
    assert extractor.extract_tags(WORDS, topK=2) == TFIDF(idf_file, tokenizer=SpaceTokenizer()).extract_tags(WORDS, 2)


# -- the shipped model and table ----------------------------------------------------------------
PARAGRAPH = ("１２月３１日，中共中央总书记、国家主席江泽民发表１９９８年新年讲话《迈向充满希望的新世纪》。"
             "江泽民指出，中国政府顺利恢复对香港行使主权，并按照“一国两制”、“港人治港”、高度自治的方针"
             "保持香港的繁荣稳定。国民经济保持了“高增长、低通胀”的良好发展态势，农业生产再次获得好的收成，"
             "企业改革继续深化，人民生活进一步改善。")


@pytest.fixture(scope="module")
def shipped():
    return segmenter.Segmenter(num_threads=1)


@pytest.mark.slow
def test_keywords_of_a_news_paragraph(shipped):
    words = set(shipped.segment(PARAGRAPH))
    tfidf, rank = TFIDF(tokenizer=shipped), TextRank(tokenizer=shipped)
    tags = tfidf.extract_tags(PARAGRAPH, topK=10, withWeight=True)
    ranked = rank.textrank(PARAGRAPH, topK=10, withWeight=True)
    for found in (tags, ranked):
        assert len(found) == 10 and {w for w, _ in found} <= words
        weights = [x for _, x in found]
        assert weights == sorted(weights, reverse=True)
    assert {"江泽民", "香港"} <= {w for w, _ in tags[:5]}
    assert ranked[0][1] == 1.0 and "香港" in {w for w, _ in ranked}
    assert not {"我们", "进一步"} & {w for w, _ in tags + ranked}
