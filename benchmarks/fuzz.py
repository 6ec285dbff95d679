"""Fuzz the segmenter with generated strings: no crash, no lost or added character, good offsets.

    python benchmarks/fuzz.py                       # 100,000 strings (588 s with --threads 1 on a shared core)
    python benchmarks/fuzz.py --count 2000          # a quick run
    python benchmarks/fuzz.py --count 100000 --report fuzz.md   # reliability.md's fuzz section (--report writes a whole file)

The strings are generated from a seed (--seed, default 0), so a run is reproducible. They draw
on every Unicode general category (Cs: lone surrogates, which Python's str allows; Cn:
unassigned; Co: private use), combining marks, ZWJ emoji sequences, variation selectors, RTL
text and bidi controls, control characters, full-width digits and letters, URLs and e-mails in
Han text, Han text from the shared corpus (or synthetic), a few long lines (up to 100,000
characters), empty strings and whitespace-only strings.

Checks (each counts crashes = exceptions, and failures):
  segment      segment_batch over every string: "".join(words) == text, no empty word
  tokenize     tokenize_batch over every string: offsets tile the text, text[s:e] == word;
               tokenize() of one string on a sample, which must equal the batch's tokens
  search       tokenize(mode="search") on a sample: every token is text[s:e] at its offsets
  full         cut(cut_all=True) and full_tokens() on a sample: tokens are substrings at their
               offsets and cover every character; cut's words are the tokens' words
  userdict     a Segmenter with a user dictionary of random words cut from the strings
               (load_userdict for the words without whitespace, add_word for the others):
               segment_batch and tokenize_batch on a sample, lossless and tiling
  cli          `python -m segmenter IN -o OUT -d '' -q` on a file of a sample (strings without
               surrogates, which UTF-8 cannot write): OUT must be IN line for line, a line
               ending at "\\n" only and its trailing "\\r" dropped (segmenter/lines.py)

A crash is shrunk to a minimal reproducer (delta debugging on the characters) and printed.
The long-line sample (a few strings of 10k-100k characters) is in every check.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "raw" / "pretrain_raw.txt"

# ---------------------------------------------------------------------------------------------
# generation


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


# ---------------------------------------------------------------------------------------------
# checks


class Tally:
    def __init__(self):
        self.counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.crashes: dict[tuple[str, str], list[str]] = collections.defaultdict(list)  # (check, error) -> texts
        self.failures: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
        self.seconds: dict[str, float] = collections.Counter()

    def crash(self, check: str, text: str, err: BaseException):
        self.counts[check]["crashes"] += 1
        key = (check, f"{type(err).__name__}: {str(err).splitlines()[0][:160] if str(err) else ''}")
        if len(self.crashes[key]) < 3:
            self.crashes[key].append(text)

    def fail(self, check: str, what: str, text: str, amount: int = 1):
        self.counts[check][what] += amount
        if len(self.failures[(check, what)]) < 3:
            self.failures[(check, what)].append(text)


def char_diff(text: str, joined: str) -> tuple[int, int]:
    """(lost, added) characters of `joined` against `text`, as multisets."""
    a, b = collections.Counter(text), collections.Counter(joined)
    return sum((a - b).values()), sum((b - a).values())


def check_words(tally: Tally, check: str, text: str, words) -> None:
    tally.counts[check]["strings"] += 1
    joined = "".join(words)
    if joined != text:
        lost, added = char_diff(text, joined)
        tally.fail(check, "not lossless", text)
        tally.counts[check]["lost chars"] += lost
        tally.counts[check]["added chars"] += added
    if any(not w for w in words):
        tally.fail(check, "empty words", text)


def check_tiling(tally: Tally, check: str, text: str, tokens) -> None:
    tally.counts[check]["strings"] += 1
    at, bad = 0, False
    for word, start, end in tokens:
        if start != at or end <= start or text[start:end] != word:
            bad = True
            break
        at = end
    if bad or at != len(text):
        tally.fail(check, "bad offsets", text)
        lost, added = char_diff(text, "".join(w for w, _, _ in tokens))
        tally.counts[check]["lost chars"] += lost
        tally.counts[check]["added chars"] += added


def check_substrings(tally: Tally, check: str, text: str, tokens, cover: bool) -> None:
    tally.counts[check]["strings"] += 1
    covered = [False] * len(text)
    for word, start, end in tokens:
        if not (0 <= start < end <= len(text)) or text[start:end] != word:
            tally.fail(check, "bad offsets", text)
            return
        if cover:
            for i in range(start, end):
                covered[i] = True
    if cover and not all(covered):
        tally.fail(check, "uncovered chars", text)
        tally.counts[check]["lost chars"] += covered.count(False)


def shrink(fails, text: str, budget: int = 300) -> str:
    """A shorter text on which fails(text) still holds (ddmin on characters, bounded)."""
    n = 2
    while len(text) >= 2 and budget > 0:
        size = max(1, len(text) // n)
        for start in range(0, len(text), size):
            candidate = text[:start] + text[start + size :]
            budget -= 1
            if fails(candidate):
                text, n = candidate, max(n - 1, 2)
                break
            if budget <= 0:
                break
        else:
            if size == 1:
                break
            n = min(len(text), n * 2)
    return text


def batched(seg, tally: Tally, check: str, texts: list[str], method: str, per_text, chunk: int, progress):
    """Call seg.<method>(chunk of texts); a chunk that raises is redone a text at a time."""
    for i in range(0, len(texts), chunk):
        part = texts[i : i + chunk]
        try:
            results = getattr(seg, method)(part, show_progress=False)
        except Exception:
            results = []
            for text in part:
                try:
                    results.append(getattr(seg, method)([text], show_progress=False)[0])
                except Exception as err:
                    tally.crash(check, text, err)
                    results.append(None)
        for text, result in zip(part, results):
            if result is not None:
                per_text(text, result)
        progress(check, i + len(part), len(texts))


def each(tally: Tally, check: str, texts: list[str], call, per_text, progress, every: int = 200):
    for i, text in enumerate(texts):
        try:
            result = call(text)
        except Exception as err:
            tally.crash(check, text, err)
            continue
        per_text(text, result)
        if (i + 1) % every == 0 or i + 1 == len(texts):
            progress(check, i + 1, len(texts))


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


def run_cli(tally: Tally, texts: list[str], work: Path) -> dict:
    """The CLI on a file of `texts` (one a line) with -d '': compare OUT with IN, line by line."""
    source = "\n".join(texts) + "\n"
    infile, outfile = work / "fuzz-in.txt", work / "fuzz-out.txt"
    infile.write_text(source, encoding="utf-8", newline="")
    command = [sys.executable, "-m", "segmenter", str(infile), "-o", str(outfile), "-d", "", "-q"]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", errors="replace")
    info = {"command": "python -m segmenter IN -o OUT -d '' -q", "seconds": round(time.perf_counter() - started, 1),
            "returncode": result.returncode}
    expected = [line.rstrip("\r") for line in source.split("\n")[:-1]]
    info["input lines"] = len(expected)
    tally.counts["cli"]["strings"] += len(texts)
    tally.counts["cli"]["input lines"] += len(expected)
    if result.returncode != 0:
        tally.counts["cli"]["crashes"] += 1
        key = ("cli", f"exit {result.returncode}: " + (result.stderr.strip().splitlines() or [""])[-1][:200])
        tally.crashes[key].append(f"(the whole file, {len(texts)} strings)")
        return info
    with open(outfile, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        out = handle.read()
    got = out.split("\n")
    if got and got[-1] == "":
        got.pop()
    info["output lines"] = len(got)
    if len(got) != len(expected):
        tally.fail("cli", "line count differs", f"{len(expected)} lines in, {len(got)} out")
    differ = 0
    for want, have in zip(expected, got):
        if want != have:
            differ += 1
            tally.fail("cli", "lines that differ", want, 0)
            lost, added = char_diff(want, have)
            tally.counts["cli"]["lost chars"] += lost
            tally.counts["cli"]["added chars"] += added
    tally.counts["cli"]["lines that differ"] += differ
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="strings to generate (default: 100000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long-lines", type=int, default=5, help="strings of 10k-100k characters among them (default 5)")
    parser.add_argument("--sample", type=float, default=None,
                        help="fraction of the strings for tokenize()/search/full (default: 2000 strings at most "
                             "per check, 1000 for full)")
    parser.add_argument("--threads", type=int, default=None, help="the segmenter's threads (default: all cores)")
    parser.add_argument("--report", type=Path, default=None, help="write the counts here as Markdown (a section)")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts as JSON")
    args = parser.parse_args(argv)

    import torch

    from segmenter import Segmenter

    started = time.perf_counter()

    def progress(check, done, total):
        print(f"[{time.perf_counter() - started:7.1f}s] {check:9} {done:>7}/{total}", flush=True)

    texts = generate(args.count, args.seed, min(args.long_lines, max(0, args.count // 100)))
    chars = sum(map(len, texts))
    print(f"{len(texts)} strings, {chars} characters, generated in {time.perf_counter() - started:.1f}s "
          f"(seed {args.seed})", flush=True)
    rng = random.Random(args.seed + 1)
    long_ids = [i for i, t in enumerate(texts) if len(t) >= 10_000]

    def sample(n: int) -> list[str]:
        ids = set(rng.sample(range(len(texts)), min(n, len(texts)))) | set(long_ids)
        return [texts[i] for i in sorted(ids)]

    def n_sample(default: int) -> int:
        return int(len(texts) * args.sample) if args.sample else min(default, len(texts))

    seg = Segmenter(num_threads=args.threads)
    tally = Tally()
    phases = []

    def phase(name, fn):
        t = time.perf_counter()
        fn()
        tally.seconds[name] += time.perf_counter() - t
        phases.append(name)

    # the long lines go alone (a batch pads to its longest window anyway; they are few)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    sorted_texts = [texts[i] for i in order]

    phase("segment", lambda: batched(seg, tally, "segment", sorted_texts, "segment_batch",
                                     lambda t, w: check_words(tally, "segment", t, w), 2000, progress))
    batch_tokens: dict[str, list] = {}
    tok_sample = set(sample(n_sample(1500)))

    def keep_tokens(t, tokens):
        check_tiling(tally, "tokenize", t, tokens)
        if t in tok_sample:
            batch_tokens[t] = [tuple(x) for x in tokens]

    phase("tokenize", lambda: batched(seg, tally, "tokenize", sorted_texts, "tokenize_batch", keep_tokens, 2000,
                                      progress))

    def single(t, tokens):
        check_tiling(tally, "tokenize()", t, tokens)
        if t in batch_tokens and [tuple(x) for x in tokens] != batch_tokens[t]:
            tally.fail("tokenize()", "differs from tokenize_batch", t)

    phase("tokenize()", lambda: each(tally, "tokenize()", sorted(tok_sample, key=len), seg.tokenize, single,
                                     progress))
    phase("search", lambda: each(tally, "search", sample(n_sample(2000)),
                                 lambda t: seg.tokenize(t, mode="search"),
                                 lambda t, toks: check_substrings(tally, "search", t, toks, cover=True), progress))

    def full_one(t):
        tokens = seg.full_tokens(t)
        words = list(seg.cut(t, cut_all=True))
        return tokens, words

    def full_check(t, result):
        tokens, words = result
        check_substrings(tally, "full", t, tokens, cover=True)
        if words != [w for w, _, _ in tokens]:
            tally.fail("full", "cut_all words != full_tokens words", t)

    phase("full", lambda: each(tally, "full", sample(n_sample(1000)), full_one, full_check, progress, every=100))

    # user dictionary: words cut from the strings themselves
    def userdict():
        useg = Segmenter(num_threads=args.threads)
        words = user_words(rng, texts, 2000)
        plain = [w for w in words if w.strip() and not any(c.isspace() for c in w) and "\x00" not in w]
        other = [w for w in words if w not in set(plain)]
        with tempfile.TemporaryDirectory() as work:
            path = Path(work) / "user.dict"
            lines = [f"{w} {rng.randint(1, 100)}" for w in plain if not any(0xD800 <= ord(c) < 0xE000 for c in w)]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            try:
                tally.counts["userdict"]["load_userdict lines"] += useg.load_userdict(str(path))
            except Exception as err:
                tally.crash("userdict", "(load_userdict of the file)", err)
                for line in lines:
                    try:
                        useg.load_userdict(__import__("io").StringIO(line + "\n"))
                    except Exception as err:  # noqa: PERF203
                        tally.crash("userdict", line, err)
        for w in other + [w for w in plain if any(0xD800 <= ord(c) < 0xE000 for c in w)]:
            try:
                useg.add_word(w, freq=rng.randint(1, 100))
                tally.counts["userdict"]["add_word words"] += 1
            except ValueError as err:  # documented: a blank word, or one on two lines (dictionary.check_word)
                if "blank" in str(err) or "one line" in str(err):
                    tally.counts["userdict"]["words rejected (documented ValueError)"] += 1
                else:
                    tally.crash("userdict", w, err)
            except Exception as err:
                tally.crash("userdict", w, err)
        part = sorted(sample(n_sample(10000) if not args.sample else int(len(texts) * 0.1)), key=len)
        batched(useg, tally, "userdict", part, "segment_batch", lambda t, w: check_words(tally, "userdict", t, w),
                2000, progress)
        batched(useg, tally, "userdict tokenize", part, "tokenize_batch",
                lambda t, toks: check_tiling(tally, "userdict tokenize", t, toks), 2000, progress)
        short = [t for t in part if len(t) < 10_000]
        each(tally, "userdict search/full", short[:: max(1, len(short) // 300)],
             lambda t: (useg.tokenize(t, mode="search"), useg.full_tokens(t)),
             lambda t, r: (check_substrings(tally, "userdict search/full", t, r[0], cover=True),
                           check_substrings(tally, "userdict search/full", t, r[1], cover=True)), progress)

    phase("userdict", userdict)

    cli_info = {}

    def cli():
        part = [t for t in sample(n_sample(20000) if not args.sample else int(len(texts) * 0.2))
                if not any(0xD800 <= ord(c) < 0xE000 for c in t)]
        with tempfile.TemporaryDirectory(prefix="segmenter-fuzz-") as work:
            cli_info.update(run_cli(tally, part, Path(work)))
        progress("cli", len(part), len(part))

    phase("cli", cli)
    total = time.perf_counter() - started

    # minimal reproducers
    reproducers = []
    for (check, error), examples in sorted(tally.crashes.items()):
        text = examples[0]
        if check in ("segment", "tokenize", "tokenize()", "search", "full", "userdict") and not text.startswith("("):
            call = {"segment": lambda t: seg.segment(t), "tokenize": lambda t: seg.tokenize_batch([t]),
                    "tokenize()": lambda t: seg.tokenize(t), "search": lambda t: seg.tokenize(t, mode="search"),
                    "full": lambda t: seg.full_tokens(t)}.get(check)
            if call is not None:
                def fails(t, call=call, kind=error.split(":")[0]):
                    try:
                        call(t)
                    except Exception as err:
                        return type(err).__name__ == kind
                    return False
                text = shrink(fails, text) if fails(text) else text
        reproducers.append({"check": check, "error": error, "count": len(examples), "reproducer": ascii(text)[:300]})
    fail_examples = [{"check": c, "what": w, "example": ascii(t[:200])} for (c, w), ts in sorted(tally.failures.items())
                     for t in ts[:1]]

    counts = {check: dict(counter) for check, counter in tally.counts.items()}
    machine = f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), " \
              f"Python {platform.python_version()}, Unicode {unicodedata.unidata_version}"
    summary = {"command": "python benchmarks/fuzz.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "strings": len(texts), "characters": chars, "seed": args.seed, "machine": machine,
               "seconds": round(total, 1), "phase_seconds": {k: round(v, 1) for k, v in tally.seconds.items()},
               "counts": counts, "crashes": reproducers, "failure_examples": fail_examples, "cli": cli_info}
    print(json.dumps(summary, indent=2, ensure_ascii=True))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
    if args.report:
        args.report.write_text(markdown(summary), encoding="utf-8")
    return 0


def markdown(s: dict) -> str:
    checks = ["segment", "tokenize", "tokenize()", "search", "full", "userdict", "userdict tokenize",
              "userdict search/full", "cli"]
    keys = ["strings", "crashes", "not lossless", "empty words", "bad offsets", "uncovered chars", "lost chars",
            "added chars", "words rejected (documented ValueError)", "differs from tokenize_batch", "cut_all words != full_tokens words", "input lines",
            "lines that differ", "line count differs"]
    lines = [f"Command: `{s['command']}`  ", f"Machine: {s['machine']}  ",
             f"Strings: {s['strings']} ({s['characters']} characters, seed {s['seed']}); "
             f"time {s['seconds']} s (per phase: " + ", ".join(f"{k} {v} s" for k, v in s["phase_seconds"].items()) + ")",
             "", "| check | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for check in checks:
        c = s["counts"].get(check, {})
        lines.append(f"| {check} | " + " | ".join(str(c.get(k, 0)) for k in keys) + " |")
    lines.append("")
    if s["crashes"]:
        lines.append("Crashes (minimal reproducers, Python ascii()):\n")
        for r in s["crashes"]:
            lines.append(f"- {r['check']}: `{r['error']}` ({r['count']}+ strings): `{r['reproducer']}`")
    else:
        lines.append("Crashes: none.")
    if s["failure_examples"]:
        lines.append("\nFailures (one example each, Python ascii(), first 200 characters):\n")
        for f in s["failure_examples"]:
            lines.append(f"- {f['check']} / {f['what']}: `{f['example']}`")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
