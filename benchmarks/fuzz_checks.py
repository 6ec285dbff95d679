"""The checks of benchmarks/fuzz.py: the tally of crashes and failures; the checks of one result
(lossless words, offsets that tile the text, substrings that cover it); the shrinking of a crash
to a minimal reproducer; the callers that run a Segmenter method over the strings and tally what
raises; the command line's round trip on a file of them.
"""
from __future__ import annotations

import collections
import subprocess
import sys
import time
from pathlib import Path


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
