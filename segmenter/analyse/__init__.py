"""Keywords with jieba.analyse's calls: `from segmenter import analyse` as `import jieba.analyse`.

    >>> from segmenter import analyse
    >>> analyse.extract_tags(text, topK=10)                   # TF-IDF
    >>> analyse.textrank(text, topK=10, withWeight=True)      # TextRank, [(word, weight), ...]
    >>> analyse.set_idf_path("idf.txt"); analyse.set_stop_words("stop_words.txt")
    >>> analyse.TFIDF(tokenizer=segmenter.Segmenter(granularity="coarse"))

The same functions, classes and arguments as jieba.analyse (extract_tags, tfidf, textrank,
set_idf_path, set_stop_words, TFIDF, TextRank, default_tfidf, default_textrank); the words
come from the embedded model, the IDF table (idf.txt.gz, jieba's format gzipped) from raw text
it segmented (benchmarks/build_idf.py). There is no part-of-speech tagger: allowPOS must be
empty, and textrank's default is () where jieba's is ('ns', 'n', 'vn', 'v'); numerals (1998,
１２月, 80%) and punctuation never count, and the stop words add Chinese function words to
jieba's English ones (stop_words.txt); jieba's ChineseAnalyzer (whoosh) is not provided.
Importing this module loads nothing: the model and the table load on first use.
benchmarks/results/keywords.md compares the keywords with jieba's.
"""
from __future__ import annotations

from .textrank import TextRank, UndirectWeightedGraph
from .tfidf import DEFAULT_IDF, DEFAULT_STOP_WORDS, TFIDF, KeywordExtractor, read_idf, read_stop_words

__all__ = [
    "extract_tags", "tfidf", "textrank", "set_idf_path", "set_stop_words", "TFIDF", "TextRank",
    "KeywordExtractor", "UndirectWeightedGraph", "default_tfidf", "default_textrank",
    "DEFAULT_IDF", "DEFAULT_STOP_WORDS", "read_idf", "read_stop_words",
]

default_tfidf = TFIDF()
default_textrank = TextRank()

extract_tags = tfidf = default_tfidf.extract_tags
set_idf_path = default_tfidf.set_idf_path
textrank = default_textrank.extract_tags


def set_stop_words(stop_words_path):
    """Add the words of a file (one a line) to the stop words of both extractors, as jieba does."""
    default_tfidf.set_stop_words(stop_words_path)
    default_textrank.set_stop_words(stop_words_path)
