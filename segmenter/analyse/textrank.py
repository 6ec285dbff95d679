"""TextRank keywords with jieba.analyse's calls (jieba/analyse/textrank.py), on the segmenter's words.

As in jieba: each keyword candidate (two characters or more, not a stop word) is linked to the
candidates among the next four words (a window of 5; words that are no candidate still take
their place in it), the weight of a link is how often the pair co-occurs so; ten sweeps of
PageRank with damping 0.85 over the nodes in sorted order, then each rank becomes
(rank - min / 10) / (max - min / 10), so the best word weighs 1.0.

What differs: jieba keeps only the parts of speech of allowPOS, by default ('ns', 'n', 'vn',
'v'); there is no tagger here, so allowPOS must be empty and is so by default (passing jieba's
tuple raises ValueError): every candidate enters the graph, and the stop words
(stop_words.txt, set_stop_words) are what keeps function words out. withFlag is ignored.
"""
from __future__ import annotations

import sys
from collections import defaultdict

from .tfidf import KeywordExtractor, check_allow_pos, check_top_k, is_keyword, top


class UndirectWeightedGraph:
    """jieba's graph and ranking, step for step (the same numbers for the same edges)."""

    d = 0.85
    iterations = 10

    def __init__(self):
        self.graph = defaultdict(list)

    def addEdge(self, start, end, weight):  # noqa: N802 (jieba's name)
        self.graph[start].append((start, end, weight))
        self.graph[end].append((end, start, weight))

    def rank(self) -> dict[str, float]:
        ws = defaultdict(float)
        out_sum = defaultdict(float)
        start = 1.0 / (len(self.graph) or 1.0)
        for node, out in self.graph.items():
            ws[node] = start
            out_sum[node] = sum((edge[2] for edge in out), 0.0)
        nodes = sorted(self.graph)  # a fixed order of updates, as jieba's
        for _ in range(self.iterations):
            for node in nodes:
                total = 0.0
                for edge in self.graph[node]:
                    total += edge[2] / out_sum[edge[1]] * ws[edge[1]]
                ws[node] = (1 - self.d) + self.d * total
        min_rank, max_rank = sys.float_info.max, sys.float_info.min
        for weight in ws.values():
            min_rank, max_rank = min(min_rank, weight), max(max_rank, weight)
        for node, weight in ws.items():
            ws[node] = (weight - min_rank / 10.0) / (max_rank - min_rank / 10.0)
        return ws


class TextRank(KeywordExtractor):
    """jieba.analyse.TextRank, with a tokenizer argument (see KeywordExtractor)."""

    span = 5

    def __init__(self, tokenizer=None):
        super().__init__(tokenizer)

    def pairfilter(self, word) -> bool:
        return is_keyword(word, self.stop_words)

    def textrank(self, sentence, topK=20, withWeight=False, allowPOS=(), withFlag=False):  # noqa: N803
        """Keywords of `sentence` by TextRank, best first: words, or (word, weight) pairs with
        withWeight=True (the best weighs 1.0); topK of them (None or 0: all). allowPOS must be
        empty (no POS tagger here; jieba's default ('ns', 'n', 'vn', 'v') raises); withFlag is
        ignored."""
        check_allow_pos(allowPOS)
        check_top_k(topK)
        words = self.cut(sentence)
        keep = [self.pairfilter(word) for word in words]
        pairs: dict[tuple[str, str], int] = defaultdict(int)
        for i, word in enumerate(words):
            if keep[i]:
                for j in range(i + 1, min(i + self.span, len(words))):
                    if keep[j]:
                        pairs[(word, words[j])] += 1
        graph = UndirectWeightedGraph()
        for (start, end), weight in pairs.items():
            graph.addEdge(start, end, weight)
        return top(graph.rank(), topK, withWeight)

    extract_tags = textrank
