"""The fuzzed strings of benchmarks/fuzz.py, generated from a seed: what they draw on (every
Unicode general category, combining marks, ZWJ emoji, variation selectors, RTL text and bidi
controls, control characters, spaces, full-width forms, URLs and e-mails, Han text from the
shared corpus or synthetic), the few long lines among them, and the user dictionary's words cut
from them.
"""
from __future__ import annotations

import collections
import random
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "raw" / "pretrain_raw.txt"


def category_table() -> dict[str, list[int]]:
    """Code points by general category (all 30, Cs and Cn included)."""
    table: dict[str, list[int]] = collections.defaultdict(list)
    for cp in range(0x110000):
        table[unicodedata.category(chr(cp))].append(cp)
    return dict(table)


def corpus_han(limit: int = 2_000_000) -> str:
    """Some of the shared corpus (lines joined), or synthetic Han text."""
    if CORPUS.is_file():
        with open(CORPUS, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit).replace("\n", "")
    rng = random.Random(0)
    words = "我们 中国 人民 经济 发展 社会 主义 建设 今天 明天 北京 上海 政府 工作 报告 提高 问题 研究 科学 技术".split()
    return "".join(rng.choice(words + ["，", "。"]) for _ in range(200_000))


EMOJI_ZWJ = ["👨\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "👩🏽\u200d💻", "🧑\u200d🤝\u200d🧑", "❤\ufe0f\u200d🔥",
             "👁\ufe0f\u200d🗨\ufe0f", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", "🇨🇳", "🇺🇸",
             "👍🏿", "1\ufe0f\u20e3", "\u200d", "\u200d\u200d", "😀", "🙂\ufe0e"]
RTL = ["שלום עולם", "مرحبا بالعالم", "العربية", "עברית", "\u202eabc\u202c", "\u200f", "\u200e", "\u2067x\u2069",
       "\u061c", "ملف.txt", "١٢٣٤٥"]
CONTROLS = [chr(c) for c in list(range(0x20)) + [0x7f] + list(range(0x80, 0xa0))] + ["\u2028", "\u2029", "\ufeff",
                                                                                    "\u00ad", "\u200b", "\ufffe", "\uffff"]
SPACES = [" ", "\t", "\u3000", "\u00a0", "\u2002", "\u2003", "\u2009", "\u200a", "\u202f", "\u205f", "\u1680",
          "\x0b", "\x0c", "\r", "\n", "\r\n", "\x1c", "\x85"]
FULLWIDTH = [chr(c) for c in range(0xFF01, 0xFF5F)] + [chr(c) for c in range(0xFF61, 0xFFA0)]
URLS = ["https://example.com/路径?q=中文&x=1#frag", "http://www.新华网.cn", "user.name+tag@example.org", "张三@例子.公司",
        "ftp://1.2.3.4:21/a_b", "www.baidu.com", "mailto:a@b.c", "https://xn--fiqs8s.xn--fiqz9s/", "C:\\Users\\文件.txt",
        "@用户名", "#话题#", "3.14159", "1,000,000", "2024-01-01T12:00:00Z", "v1.2.3-rc1", "GPT-4o", "COVID-19"]


class Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.table = category_table()
        self.categories = sorted(self.table)
        self.han = corpus_han()
        self.han_chars = [chr(c) for c in range(0x4E00, 0x9FFF)] + [chr(c) for c in range(0x20000, 0x2A6DF, 97)]
        self.marks = self.table["Mn"] + self.table["Me"] + self.table["Mc"]
        self.vs = list(range(0xFE00, 0xFE10)) + list(range(0xE0100, 0xE01F0))

    def han_run(self, n: int) -> str:
        at = self.rng.randrange(0, max(1, len(self.han) - n))
        return self.han[at : at + n]

    def any_char(self, category: str | None = None) -> str:
        category = category or self.rng.choice(self.categories)
        return chr(self.rng.choice(self.table[category]))

    def piece(self) -> str:
        r = self.rng
        kind = r.randrange(13)
        if kind == 0:
            return "".join(self.any_char() for _ in range(r.randint(1, 8)))
        if kind == 1:  # one category, several characters
            return "".join(self.any_char(r.choice(self.categories)) for _ in range(r.randint(1, 5)))
        if kind == 2:  # combining marks on a base
            base = r.choice([r.choice(self.han_chars), r.choice("aeiouxyz"), "", " "])
            return base + "".join(chr(r.choice(self.marks)) for _ in range(r.randint(1, 4)))
        if kind == 3:
            return r.choice(EMOJI_ZWJ)
        if kind == 4:  # variation selectors after Han or emoji
            return r.choice([r.choice(self.han_chars), "☺", "", "葛"]) + chr(r.choice(self.vs))
        if kind == 5:
            return r.choice(RTL)
        if kind == 6:
            return "".join(r.choice(CONTROLS) for _ in range(r.randint(1, 3)))
        if kind == 7:
            return "".join(r.choice(FULLWIDTH) for _ in range(r.randint(1, 8)))
        if kind == 8:
            return r.choice(URLS)
        if kind == 9:
            return "".join(r.choice(SPACES) for _ in range(r.randint(1, 3)))
        if kind == 10:  # lone surrogates, high or low, or a pair in the wrong order
            return r.choice([chr(r.randint(0xD800, 0xDBFF)), chr(r.randint(0xDC00, 0xDFFF)), "\udc00\ud800"])
        if kind == 11:
            return "".join(r.choice(self.han_chars) for _ in range(r.randint(1, 6)))
        return self.han_run(r.randint(1, 40))

    def string(self) -> str:
        r = self.rng
        shape = r.random()
        if shape < 0.02:
            return ""
        if shape < 0.05:
            return "".join(r.choice(SPACES) for _ in range(r.randint(1, 10)))
        if shape < 0.35:  # mostly Han with pieces mixed in
            parts = [self.han_run(r.randint(2, 60))]
            for _ in range(r.randint(1, 4)):
                parts.insert(r.randrange(len(parts) + 1), self.piece())
            return "".join(parts)
        return "".join(self.piece() for _ in range(r.randint(1, 8)))

    def long_string(self, n: int) -> str:
        parts, size = [], 0
        while size < n:
            part = self.han_run(self.rng.randint(50, 500)) if self.rng.random() < 0.7 else self.piece()
            parts.append(part)
            size += len(part)
        return "".join(parts)[:n]


def generate(count: int, seed: int, long_lines: int) -> list[str]:
    gen = Generator(seed)
    strings = [gen.string() for _ in range(count - long_lines)]
    sizes = [10_000, 30_000, 50_000, 100_000, 100_000][:long_lines] + [20_000] * max(0, long_lines - 5)
    for n in sizes:  # the long lines at seeded places
        strings.insert(gen.rng.randrange(len(strings) + 1), gen.long_string(n))
    return strings


def user_words(rng: random.Random, texts: list[str], n: int) -> list[str]:
    words = set()
    pool = [t for t in texts if t]
    while len(words) < n and pool:
        text = rng.choice(pool)
        size = rng.randint(1, 6)
        start = rng.randrange(max(1, len(text) - size + 1))
        word = text[start : start + size]
        if word:
            words.add(word)
    return sorted(words)
