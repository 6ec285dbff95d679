"""Adapt a model to a user's own raw text, without labels: `segmenter adapt -m MODEL --raw FILE… --out DIR`.

What changes is the word table that word-level decoding reads (decoding.py, wordstats.py):
the n-grams of the user's text are counted like the shipped table's, and the strings the model's
table lacks (a domain's names, terms, idioms, seen at least `min_count` times) are added with
their autonomy; the shipped autonomies stay where the model's table has the string. The weights
and the head profile's numbers are untouched (but with --refine, below), so a folder's model.onnx
stays valid (the loader checks it against the weights) and adapting costs seconds: counting is
~1 s per 400 k characters.

The recipe was chosen on dev files only (raw = a dev file with its spaces removed, scored on
the same dev file; benchmarks/adapt.py writes the figures): adding the domain's missing strings
helped a little on msr_dev; replacing the shipped autonomies by the domain's, or using the domain's
table alone, was worse than the shipped table alone. A tiny text (ud_gsdsimp_dev, 20 k characters) gives
noisy entropies for strings seen 2-3 times, and they cost F1 there, hence AUTO_MIN_COUNT.
A string the model's table lacks is often a phrase that recurs in the user's text, not a word
(the tests below are train/new_strings.py's):
药疹的, 了茶话会, 的新年礼物. Those that are a string the model knows plus a single-character word
as common as the decoder's `units_common` (的 了 在 与 和: decoding.py) are not added
(phrase_keys): on dev this mended derm_dev's 药疹|的 and cost no file anything. Nor are the
rarer compounds of two strings the model knows (compound_keys: 出栏肉猪, 婴幼儿乳粉 seen 3 and 2 times in
pku_dev, phrases of known words that a few repetitions make look autonomous; a domain's term
recurs: 接触性皮炎, 13 times in derm_dev, stays): on dev (the six files, each adapted to its own
text) this gained on pku and weibo (-0.0008 -> -0.0005, +0.0031 -> +0.0041) and moved the others by
0.0002 at most.
The parts may also be the domain's own new strings, those the tests here keep (极阴+祖师, 乾蓝+冰焰:
a novel's name or thing and a word, which novel_dev writes apart): on dev this gained novel_dev
+0.0175 -> +0.0185, weibo_dev -0.0001 (小野大辅, a Japanese name, is 小野 + 大辅 there) and moved no
other file (benchmarks/results/adapt_variants_dev.md).
Nor are strings of 3+ characters whose two parts the text uses far more often apart than together
(loose_pair_keys: each part seen more than twice as often as the whole, new_strings.LOOSE_SHARE):
让韩立 and 韩立心中 (11 and 8 times; 韩立 185), 玄骨的, 妇女脱, 型药疹, phrases a few repetitions make
look autonomous, whatever their parts are; the principle join_cohesive keeps 经济|发展 apart by.
On dev this gained novel_dev +0.0203 from +0.0186 and moved the other files by 0.0002 at most
(benchmarks/results/adapt_variants_dev.md has the recipe without it).
Nor are fragments (fragment_keys): a string that one character before or after it accompanies in
FRAGMENT_SHARE or more of its occurrences is the piece of a longer one (江苏苏宁易 of 江苏苏宁易购,
seen twice: its few contexts give it a high autonomy). On dev (benchmarks/standards_dev.py, each
file adapted to its own text) leaving them out gained on msr, weibo, novel and derm (mean
+0.0051 -> +0.0055), cost pku 0.0001, and added about a quarter as many strings (weibo 5,073 -> 1,345).
On the test files the effect is within a tenth of a point (benchmarks/results/adapt.md).
With `refine=True` (`segmenter adapt --refine`) the head is then fine-tuned on the same text,
labelled by the adapted model's own pipeline (train/refine.py, its default recipe): the head
learns the domain's words the table taught the decoder and carries them to where the table is
silent. On the six dev files, each adapted to its own text (benchmarks/standards_dev.py, the mean
of three seeds), it gains over the table alone on weibo, novel and derm (now +0.0033 -> +0.0042,
+0.0203 -> +0.0212, +0.0036 -> +0.0062; msr +0.0006 -> +0.0003, pku -0.0003 -> -0.0011: news, like the
raw text the shipped head was refined on five times, has less to teach it). A text that adds no string to
the table gives the head nothing new to learn, and self-training on it only drifts the head, so
there --refine is skipped and the folder is the table's (the record says `refine_skipped`).
Chosen on dev texts alone (benchmarks/results/adapt_refine_skip_dev.md: the three that add no
string, ud_gsdsimp_dev whole and the first 500 sentences of pku_dev and msr_dev, each adapted to
itself): refining them anyway moved F1 by -0.0013, -0.0008 and +0.0000 (mean of three seeds; the
mean -0.0007). It needs torch and takes seconds to minutes, so it is asked for. A user's lines longer than refine's 250 characters train as pieces
(RefineConfig.split_long).

The adapted folder is a copy of the model folder (every file, as Segmenter.save_pretrained
copies them) with the new ngrams.npz, a profile whose `source` and `extra["adapt"]` say what was
done, and a note at the end of MODEL_CARD.md when the folder has one. It is written beside the
target and renamed onto it, so a failed run leaves no half folder (with refine: the table's
folder is a scratch folder beside the target, refine writes the target from it).
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..model.folders import (
    check_folder,
    embedded_model_path,
    read_profile,
    resolve_model_folder,
)
from ..model.integrity import write_manifest
from ..model.profile import PROFILE_FILE
from ..run.files import check_new_folder, staged_folder
from ..text.runs import HAN_RE
from .ngram_counting import build_word_table
from ..words.table import WordTable
from ..words.table_files import TABLE_FILE, TABLE_REFERENCE, table_path
from .corpus import iter_raw_lines
from .model_card import append_card_section
from .new_strings import (
    FRAGMENT_SHARE,
    LOOSE_SHARE,
    most_frequent_new,
    without_phrases_and_fragments,
)
from .refine import (  # torch: imported inside refine_head only
    RefineConfig,
    check_refinable,
)
from .refine import refine as refine_head

# (Han characters of the raw text at least, min_count): strings seen this often are added. Dev:
# msr_dev (420 k) best at 2; ud_gsdsimp_dev (20 k) lost F1 below 5 and was unchanged from 5 up.
AUTO_MIN_COUNT = ((100_000, 2), (0, 5))
# A new string of 4+ characters that is two strings the model's table holds, of 2+ characters
# each, is added only when the text has it this often: seen fewer times it is a phrase of two
# known words (出栏|肉猪, 婴幼儿|乳粉: 2 times each in pku_dev); a term of the domain recurs
# (接触性皮炎, 13 times in derm_dev). Dev, six files adapted to their own text: 5 to 20 within
# 0.0001 of each other on the mean; 8 the best; None (no such test): 0.0002 lower. Since the parts may
# be added strings too: 10 +0.0002 and 19 to 22 +0.0006 on the mean, each step a string or two that
# novel_dev writes apart and derm_dev whole (修罗圣火 18 times, 致敏药物 13): a pick of strings, not of
# a rule, so 8 stays (benchmarks/results/adapt_variants_dev.md has 20).
COMPOUND_BELOW = 8
EXAMPLES = 10  # the most frequent added strings, in the command's report, the profile and the model card


def auto_min_count(han_chars: int) -> int:
    return next(count for least, count in AUTO_MIN_COUNT if han_chars >= least)


@dataclass
class AdaptResult:
    folder: Path
    base: Path
    chars: int  # characters of the raw lines read
    han_chars: int  # Han characters among them (what the table counts)
    min_count: int
    added: int  # n-grams added to the model's table
    table_size: int
    seconds: float
    refined: dict | None = None  # refine's record (train/refine.py) when the head was refined too
    refine_skipped: bool = False  # refine was asked for, but the text added no string (adapt's docstring)
    examples: list = ()  # the most frequent added strings and their counts in the text (most_frequent_new)


def adapt(model=None, raw: list[str | Path] = (), out: str | Path = "", min_count: int | None = None,
          max_n: int | None = None, command: str = "", refine: bool = False,
          threads: int | None = None, seed: int = 0) -> AdaptResult:
    """Write `out`: the model folder (None: the embedded default; a shipped name; a folder)
    adapted to the raw files (one text a line). min_count None: AUTO_MIN_COUNT by the text's size.
    refine: then fine-tune the head on the same text (train/refine.py's recipe; needs torch and a
    one-head model such as the shipped default), with `threads` torch threads (None: all cores) and
    `seed` (refine's: the order lines train in; the dev figures move by about ±0.001 between seeds)."""
    started = time.perf_counter()
    base = resolve_model_folder(model)
    check_folder(base)
    profile = read_profile(base)
    if profile is None:
        raise ValueError(f"{base} has no head profile ({PROFILE_FILE}); create one with `segmenter heads` first")
    if not raw:
        raise ValueError("adapt needs raw text: --raw FILE…")
    for path in raw:
        if not Path(path).is_file():
            raise FileNotFoundError(2, "No such file or directory", str(path))
    out = check_new_folder(out, base)
    if min_count is not None and (not isinstance(min_count, int) or min_count < 1):
        raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
    if refine:
        check_refinable(base, profile)  # before counting, not after
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int, got {seed!r}")

    lines = list(iter_raw_lines(raw))
    if not any(HAN_RE.search(line) for line in lines):
        raise ValueError(f"the raw text ({', '.join(map(str, raw))}) holds no Han characters: nothing to adapt to")
    shipped_path = table_path(base, profile.runtime)
    shipped = WordTable.load(shipped_path) if shipped_path is not None else None
    table, han_chars, min_count, max_n = adapted_table(shipped, lines, min_count, max_n)
    added = len(table) - (len(shipped) if shipped is not None else 0)
    examples = most_frequent_new(shipped, table, "\n".join(lines), EXAMPLES) if shipped is not None else []

    chars = sum(map(len, lines))
    seconds = time.perf_counter() - started
    # --refine on a text that adds no string: self-training on what the model already knows only
    # drifts the head (the module docstring; chosen on dev), so the folder is the table's alone.
    skipped = refine and added == 0
    record = {
        "base": _model_name(base), "raw": [str(p) for p in raw], "chars": chars, "han_chars": han_chars,
        "min_count": min_count, "max_n": max_n, "added_ngrams": added, "most_frequent_added": examples,
        "recipe": "model's table + the raw text's n-grams it lacks, seen >= min_count times, "
                  "but for those that are a known string and a common single-character word "
                  f"and those that one character accompanies in >= {FRAGMENT_SHARE} of their occurrences, "
                  f"and those of 4+ characters that are two known or added strings, seen < {COMPOUND_BELOW} times, "
                  f"and those of 3+ characters whose two parts each occur more than {1 / LOOSE_SHARE:g} times as often",
        "seconds": round(seconds, 1), "command": command, "refine": refine and not skipped,
    }
    if skipped:
        record["refine_skipped"] = "the text adds no string to the model's table: the head is left as it is"
    adapted = replace(
        profile, source=f"{profile.source}; word table adapted to {chars:,} characters of raw text",
        extra={**profile.extra, "adapt": record},
        # the new table is its own (no reference to another folder's) and only word decoding reads it
        runtime={**{k: v for k, v in profile.runtime.items() if k != TABLE_REFERENCE}, "decode": "words"},
    )
    if not record["refine"]:
        _write_folder(base, out, table, adapted, record)
        return AdaptResult(out, base, chars, han_chars, min_count, added, len(table), time.perf_counter() - started,
                           refine_skipped=skipped, examples=examples)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".adapt-", dir=out.parent) as scratch:
        table_folder = Path(scratch) / "table"
        _write_folder(base, table_folder, table, adapted, record)
        refined = refine_head(RefineConfig(model=str(table_folder), raw=[str(p) for p in raw], out=str(out),
                                           command=command, model_name=f"{record['base']} with the adapted table",
                                           split_long=True, seed=seed),
                              threads=threads)
    return AdaptResult(out, base, chars, han_chars, min_count, added, len(table), time.perf_counter() - started,
                       refined, examples=examples)


def adapted_table(shipped: WordTable | None, lines: list[str], min_count: int | None = None,
                  max_n: int | None = None) -> tuple[WordTable, int, int, int]:
    """The recipe itself, on lines already read: (the adapted table, Han characters counted,
    min_count used, max_n used). shipped None (a folder without a table): the domain's alone.
    benchmarks/standards_dev.py scores it on the six dev files."""
    max_n = max_n or (shipped.max_n if shipped is not None else 6)
    # min_count=1 here: pruning happens in the combination, so the count rule is in one place.
    domain = build_word_table(lines, max_n=max_n, min_count=1)
    han_chars = int(domain.info["chars"])
    min_count = min_count or auto_min_count(han_chars)
    if shipped is None:
        return domain.pruned(min_count), han_chars, min_count, max_n
    kept = without_phrases_and_fragments(shipped, domain.pruned(min_count), "\n".join(lines),
                                         compounds_below=COMPOUND_BELOW, loose_share=LOOSE_SHARE)
    return shipped.combined_with(kept, min_count), han_chars, min_count, max_n


def _model_name(folder: Path) -> str:
    """A shipped model by its name (its path is wherever the package is installed), else the folder."""
    shipped = embedded_model_path().parent.resolve()
    return f"the shipped model {folder.name}" if folder.resolve().parent == shipped else str(folder)


def _write_folder(base: Path, out: Path, table: WordTable, profile, record: dict) -> None:
    """`base`'s files with the new table, profile and card note, moved onto `out` whole."""
    with staged_folder(base, out, skip=(PROFILE_FILE, TABLE_FILE)) as building:  # weights, vocabulary, model.onnx, …
        table.save(building / TABLE_FILE)
        profile.save(building)
        append_card_section(building, card_note(record))
        write_manifest(building)  # checksums.json, checked on load (integrity.py)


def examples_text(examples) -> str:
    """[[string, count], …] -> "苔藓样变 24, 致敏药物 13" (the report's and the card's form)."""
    return ", ".join(f"{word} {count:,}" for word, count in examples)


def _examples_line(record: dict) -> str:
    examples = record.get("most_frequent_added")  # absent in folders adapted before it was recorded
    return f"\nThe most frequent strings added (occurrences in the text): {examples_text(examples)}." if examples else ""


def card_note(record: dict) -> str:
    """The section added to the model card of an adapted folder (the facts of the run)."""
    files = ", ".join(f"`{p}`" for p in record["raw"])
    kept = ("the model's own entries are unchanged, and the next section fine-tunes its head on the same text"
            if record.get("refine") else "the model's own entries, its weights and its\nhead profile are unchanged")
    if record.get("refine_skipped"):
        kept += " (--refine was asked for and skipped: the text adds no string to the table)"
    return f"""## Adapted to a domain (segmenter adapt)
This folder is {record['base']} with its word table (`ngrams.npz`) adapted to {record['chars']:,} characters
of raw text ({record['han_chars']:,} Han): {files}. The n-grams of that text (n <= {record['max_n']}) that the
model's table lacked and that occur at least {record['min_count']} times were added with their autonomy
({record['added_ngrams']:,} n-grams), but for phrases of a known string and a common single-character word
(药疹的), for fragments of a longer string (江苏苏宁易), for rarer compounds of two known or added
strings (出栏肉猪, seen < {COMPOUND_BELOW} times) and for two parts the text has far more often apart
(让韩立); {kept}. No labels were used.
{record['seconds']:.1f} s.{_examples_line(record)}

Command: `{record['command']}`
"""
