"""The IDF table of segmenter.analyse (train/idf.py builds it; analyse reads it): jieba's
file format, the shipped table and stop words, and building a table from segmented documents.
test_analyse.py tests the keyword calls that read it."""
import gzip
import importlib
import math
from collections import Counter

import pytest

from segmenter import analyse
from segmenter.analyse import TFIDF
from segmenter.analyse.tfidf import is_keyword
from segmenter.train.idf import document_frequencies, idf_table, sample_lines, write_idf

from test_analyse import SpaceTokenizer


def test_idf_files_in_jiebas_format(tmp_path):
    path = tmp_path / "idf.txt.gz"
    path.write_bytes(gzip.compress("\ufeff经济 5.0\nEdu Trust认证 9.5\n\n农村 8\n".encode("utf-8")))
    extractor = TFIDF(tokenizer=SpaceTokenizer())
    extractor.set_idf_path(path)  # gzip is read too; a BOM, blank lines and spaces in words are fine
    assert extractor.idf_freq == {"经济": 5.0, "Edu Trust认证": 9.5, "农村": 8.0}
    bad = tmp_path / "bad.txt"
    bad.write_text("经济 5.0\n农村\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.txt:2: expected `word idf`"):
        extractor.set_idf_path(bad)
    bad.write_bytes(b"\xff\xfe 1.0\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        extractor.set_idf_path(bad)
    bad.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no entries"):
        extractor.set_idf_path(bad)
    assert extractor.idf_freq["经济"] == 5.0


def test_shipped_files():
    """The shipped table is jieba's format gzipped (jieba's own loader reads it unzipped), a few
    MB at most; the stop words are one word a line, each of two characters or more."""
    table = analyse.read_idf(analyse.DEFAULT_IDF)
    assert analyse.DEFAULT_IDF.stat().st_size < 4 * 2**20 and len(table) > 50_000
    assert table["我们"] < table["经济"] < table["江泽民"]
    assert not [word for word in table if not is_keyword(word, ()) or " " in word]  # no numeral, no 1998年
    words = analyse.read_stop_words(analyse.DEFAULT_STOP_WORDS)
    assert len(words) == len(set(words)) and all(len(w) >= 2 for w in words)


def test_jieba_reads_the_shipped_table(tmp_path):
    plain = tmp_path / "idf.txt"
    plain.write_bytes(gzip.decompress(analyse.DEFAULT_IDF.read_bytes()))
    loader = importlib.import_module("jieba.analyse.tfidf").IDFLoader(str(plain))  # (.tfidf: the function)
    assert loader.idf_freq == analyse.read_idf(analyse.DEFAULT_IDF)


# -- building the table ------------------------------------------------------------------------
def test_document_frequencies_and_idf(tmp_path):
    documents = [["经济", "发展", "经济", "，"], ["经济", "改革"], ["a b", "的", "改革"], ["新词"]]
    df, n = document_frequencies(documents)
    assert n == 4 and df == Counter({"经济": 2, "改革": 2, "发展": 1, "新词": 1})  # per document, words only
    table = idf_table(df, n, min_df=2)
    assert table == {"经济": math.log(2), "改革": math.log(2)}
    path = write_idf(tmp_path / "idf.txt.gz", idf_table(df, n, min_df=1))
    assert analyse.read_idf(path) == pytest.approx(idf_table(df, n, min_df=1), abs=1e-4)
    assert path.read_bytes() == write_idf(tmp_path / "again.txt.gz", idf_table(df, n, 1)).read_bytes()
    with pytest.raises(ValueError):
        idf_table(df, 0)


def test_sample_lines(tmp_path):
    path = tmp_path / "raw.txt"
    path.write_text("".join(f"line {i}\n\n" for i in range(10)), encoding="utf-8")
    assert list(sample_lines(path, every=3, offsets=(1,))) == ["line 1", "line 4", "line 7"]
    assert list(sample_lines(path, every=5, offsets=(0, 3))) == ["line 0", "line 3", "line 5", "line 8"]
    assert list(sample_lines(path, every=2, limit=2)) == ["line 0", "line 2"]
    with pytest.raises(ValueError):
        sample_lines(path, every=2, offsets=(2,))
