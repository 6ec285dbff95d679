"""The spaCy tokenizer "segmenter.Tokenizer.v1" (segmenter/integrations/spacy_tokenizer.py): found
by entry point, the words of segment() as Doc tokens with spaCy's whitespace, batched pipe, saving."""
import pickle
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

spacy = pytest.importorskip("spacy")

import segmenter  # noqa: E402
from segmenter.integrations.spacy_tokenizer import TOKENIZER_NAME, spacy_words  # noqa: E402

from conftest import GOLD, REPO, require_shared  # noqa: E402

WHITESPACE_TEXTS = [
    "", " ", "  ", "\t", "\n", "共同创造美好的新世纪", "中国 人民", "中国  人民", "中国\t人民",
    "中国 \t 人民", "  前导空格", "尾随空格  ", " 两头 ", "中国\t\t人民 \t 好\n下一行", "New York 纽约",
    "a  b   c", "全角\u3000空格", "第一句。\r\n第二句。", "３０万 元 ", "\u200b零宽",
]


def blank(**options):
    return spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": TOKENIZER_NAME, **options}}})


@pytest.fixture(scope="module")
def nlp():
    return blank()


@pytest.fixture(scope="module")
def reference():
    """A Segmenter of its own, with the defaults of Segmenter()."""
    return segmenter.Segmenter()


def tokens(doc) -> list[str]:
    return [t.text for t in doc]


def solid(words) -> list[str]:
    """The words that are not whitespace."""
    return [w for w in words if not w.isspace()]


@pytest.mark.slow
def test_spacy_finds_the_tokenizer_without_importing_segmenter():
    code = (
        "import sys, spacy\n"
        "assert 'segmenter' not in sys.modules\n"
        f"nlp = spacy.blank('zh', config={{'nlp': {{'tokenizer': {{'@tokenizers': {TOKENIZER_NAME!r}}}}}}})\n"
        "print(' '.join(t.text for t in nlp('共同创造美好的新世纪')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO.parent, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == segmenter.Segmenter().segment("共同创造美好的新世纪")


@pytest.mark.parametrize("text", WHITESPACE_TEXTS)
def test_doc_text_is_the_text_with_spacys_whitespace(nlp, text):
    doc = nlp(text)
    words = nlp.tokenizer.segmenter.segment(text)
    assert doc.text == text
    assert solid(tokens(doc)) == solid(words)
    assert (tokens(doc), [bool(t.whitespace_) for t in doc]) == spacy.util.get_words_and_spaces(words, text)
    assert all(t.is_space for t in doc if t.text.isspace())


_PIECES = ["中国", "人民", "的", "新世纪", "New", "York", "New York", "3.5%", "，", "\u200b",
           " ", "  ", "\t", " \t", "\n", "\u3000", "\r\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_spacy_words_is_spacys_own_alignment(words):
    """On any words that tile a text, spacy_words gives spaCy's get_words_and_spaces (in linear time)."""
    text = "".join(words)
    assert spacy_words(words) == spacy.util.get_words_and_spaces(words, text)


def test_options_reach_the_segmenter(tmp_path, reference):
    text = "共同创造美好的新世纪，１９９７年１２月３１日我们两个人"
    for granularity in ("fine", "coarse", 0.3):
        nlp = blank(granularity=granularity)
        assert tokens(nlp(text)) == reference.segment(text, granularity)
    userdict = tmp_path / "dict.txt"
    userdict.write_text("创造美好 5\n", encoding="utf-8")
    assert "创造美好" in tokens(blank(userdict=str(userdict))(text))


def test_a_bad_option_fails_when_the_pipeline_is_made():
    with pytest.raises(ValueError, match="granularity"):
        blank(granularity="huge")


@pytest.mark.slow
def test_tokens_are_the_words_of_segment_on_pku_lines(nlp, reference):
    """300 pku_test lines without their spaces: the batched pipe and, on some, the per-text call
    give segment()'s words; the gold lines with their spaces come back as they were."""
    lines = require_shared(GOLD / "pku_test.txt").read_text(encoding="utf-8").splitlines()[:300]
    texts = [line.replace(" ", "") for line in lines]
    expected = reference.segment_batch(texts, show_progress=False)
    docs = list(nlp.tokenizer.pipe(texts, batch_size=128))
    assert [tokens(doc) for doc in docs] == expected
    assert [doc.text for doc in docs] == texts
    assert [tokens(nlp(text)) for text in texts[:20]] == expected[:20]
    spaced = [f" {line}  " for line in lines[:100]]
    words = reference.segment_batch(spaced, show_progress=False)
    docs = list(nlp.tokenizer.pipe(spaced))
    assert [doc.text for doc in docs] == spaced
    assert [solid(tokens(doc)) for doc in docs] == [solid(w) for w in words]


def test_nlp_pipe_equals_per_text_docs(nlp):
    texts = WHITESPACE_TEXTS + ["共同创造美好的新世纪——二○○一年新年贺词"] * 3
    one_by_one = [tokens(nlp(text)) for text in texts]
    assert [tokens(doc) for doc in nlp.pipe(texts)] == one_by_one
    assert [tokens(doc) for doc in nlp.tokenizer.pipe(iter(texts), batch_size=4)] == one_by_one
    # the batched tokenizer in front of the rest of the pipeline (spaCy's nlp.pipe takes Docs)
    assert [tokens(doc) for doc in nlp.pipe(nlp.tokenizer.pipe(texts))] == one_by_one
    with pytest.raises(ValueError, match="batch_size"):
        next(nlp.tokenizer.pipe(texts, batch_size=0))


TEXT = "共同创造美好的新世纪，云计算和大数据"


def test_a_saved_pipeline_loads_with_its_user_dictionary(tmp_path):
    userdict = tmp_path / "dict.txt"
    userdict.write_text("创造美好 3 v\n", encoding="utf-8")
    nlp = blank(granularity="coarse", userdict=str(userdict))
    nlp.tokenizer.add_word("云计算和大数据", 2)
    nlp.tokenizer.segmenter.suggest_freq(("新", "世纪"), tune=True)
    before = tokens(nlp(TEXT))
    assert "创造美好" in before and "云计算和大数据" in before and "世纪" in before
    nlp.to_disk(tmp_path / "pipeline")
    userdict.unlink()  # the saved pipeline keeps its own words
    loaded = spacy.load(tmp_path / "pipeline")
    assert tokens(loaded(TEXT)) == before
    assert loaded.tokenizer.cfg["granularity"] == "coarse"
    assert loaded.tokenizer.segmenter.user_dictionary.entries == nlp.tokenizer.segmenter.user_dictionary.entries
    again = blank(granularity="coarse").from_bytes(nlp.to_bytes())
    assert tokens(again(TEXT)) == before
    copied = pickle.loads(pickle.dumps(nlp.tokenizer))
    assert tokens(copied(TEXT)) == before


def test_a_model_folder_is_copied_into_the_saved_pipeline(tmp_path, reference):
    folder = reference.save_pretrained(tmp_path / "model")  # a model folder of its own
    nlp = blank(model=str(folder), granularity="fine")
    before = tokens(nlp(TEXT))
    assert before == reference.segment(TEXT, "fine")
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(folder)
    loaded = spacy.load(tmp_path / "pipeline")
    assert tokens(loaded(TEXT)) == before
    assert loaded.tokenizer.segmenter.folder == tmp_path / "pipeline" / "tokenizer" / "model"
    loaded.to_disk(tmp_path / "again")  # saved again from its copy
    assert tokens(spacy.load(tmp_path / "again")(TEXT)) == before


def test_a_shipped_model_is_saved_by_name(tmp_path):
    nlp = blank(model="fast")
    nlp.to_disk(tmp_path / "pipeline")
    assert not (tmp_path / "pipeline" / "tokenizer" / "model").exists()
    loaded = spacy.load(tmp_path / "pipeline")
    assert tokens(loaded(TEXT)) == segmenter.Segmenter("fast").segment(TEXT)


def test_evaluate_scores_the_tokens(nlp, reference):
    from spacy.tokens import Doc
    from spacy.training import Example

    from segmenter.bench.evaluation import score

    text = "共同创造美好的新世纪"
    predicted = tokens(nlp.make_doc(text))
    assert predicted == reference.segment(text)
    # gold = the tokenizer's own words: every figure 1; gold of other words: spaCy's token P / R / F
    # are the SIGHAN scorer's word figures on the same words (a coarser or finer tokenizer would differ)
    for words in (predicted, ["共同", "创造", "美好的", "新世纪"], list(text)):
        gold = Doc(nlp.vocab, words=words, spaces=[False] * len(words))
        scores = nlp.evaluate([Example(nlp.make_doc(text), gold)])
        expected = score([words], [predicted])
        assert scores["token_p"] == pytest.approx(expected.P)
        assert scores["token_r"] == pytest.approx(expected.R)
        assert scores["token_f"] == pytest.approx(expected.F1)
        if words == predicted:
            assert scores["token_f"] == scores["token_acc"] == 1.0
