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

The strings are made in fuzz_strings.py and checked by fuzz_checks.py; this file runs the
phases and writes the summary (JSON, and Markdown with --report).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

from fuzz_checks import Tally, batched, check_substrings, check_tiling, check_words, each, run_cli, shrink
from fuzz_strings import generate, user_words


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
