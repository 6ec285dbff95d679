"""jieba's user dictionary files: a text file of `word [freq] [tag]` lines (load_userdict,
`segmenter -u`), and the two files a model folder keeps its user words in (save_pretrained).

dictionary.UserDictionary reads and writes through these; what an entry does is said there. A
bad line is a ValueError naming the file and the line, raised before anything changes.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..run.lines import split_lines

# In a model folder (write_folder): whole words in jieba's format, forced splits as JSON.
USER_DICT_FILE, USER_SPLITS_FILE = "user_dict.txt", "user_splits.json"
# jieba's own line pattern (word, then optional " freq", then optional " tag"), tabs allowed too.
_LINE = re.compile(r"^(.+?)(?:[ \t]+([0-9]+))?(?:[ \t]+([a-z]+))?$")
_BAD_FREQ = re.compile(r"[ \t]([-+]?[0-9]*[.,][0-9]+|-[0-9]+)(?:[ \t]+[a-z]+)?$")


def source_lines(source) -> tuple[str, list[str]]:
    """(name for messages, lines) of a path or an open file, text or binary."""
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<file>"))
        data = source.read()
        if isinstance(data, bytes):
            return name, split_lines(data, name=f"user dictionary {name}")
        if not isinstance(data, str):
            raise TypeError(f"the user dictionary file gave {type(data).__name__}, not str or bytes")
        return name, [line.rstrip("\r") for line in data.split("\n")]
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"f must be a path or an open file, got {type(source).__name__}")
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(f"user dictionary {path} is a directory: give the dictionary file in it "
                                "(a text file of `word [freq] [tag]` lines)")
    if not path.is_file():
        raise FileNotFoundError(f"user dictionary {path} does not exist")
    return str(path), split_lines(path.read_bytes(), name=f"user dictionary {path}")


def parse_lines(name: str, lines: list[str]) -> list[tuple[str, int | None, str | None]]:
    """(word, freq, tag) of every entry line; blank lines skipped, a BOM on line 1 dropped."""
    parsed = []
    for number, line in enumerate(lines, start=1):
        line = (line.lstrip("\ufeff") if number == 1 else line).strip()
        if not line:
            continue
        bad = _BAD_FREQ.search(line)
        if bad:
            raise ValueError(
                f"user dictionary {name}, line {number}: the frequency must be a whole number >= 0, "
                f"got {bad.group(1)!r} (a line is `word [freq] [tag]`; a word that ends in such a number "
                f"needs a frequency after it: `Windows 3.1 1`)"
            )
        word, freq, tag = _LINE.match(line).groups()
        parsed.append((word.strip(), None if freq is None else int(freq), tag))
    return parsed


def write_folder(folder: str | os.PathLike, records: list[list]) -> None:
    """UserDictionary.records() into a model folder: whole words in user_dict.txt (jieba's
    format, `word freq [tag]`, which load_userdict and jieba read), forced splits in
    user_splits.json (jieba's format cannot say them). A file without entries is removed (no
    stale words)."""
    folder = Path(folder)
    words = "".join(f"{w} {freq}{' ' + tag if tag else ''}\n" for w, freq, tag, pieces in records if len(pieces) == 1)
    splits = [{"pieces": pieces, "freq": freq} for _, freq, _, pieces in records if len(pieces) > 1]
    splits_text = json.dumps(splits, ensure_ascii=False, indent=1) + "\n" if splits else ""
    for name, content in ((USER_DICT_FILE, words), (USER_SPLITS_FILE, splits_text)):
        if content:
            (folder / name).write_text(content, encoding="utf-8")
        else:
            (folder / name).unlink(missing_ok=True)


def read_folder(folder: str | os.PathLike) -> tuple[Path | None, list[tuple]]:
    """What write_folder left in a model folder: the path of its user_dict.txt (None: none), and
    its forced splits as records (word, freq, tag, pieces) for UserDictionary.restore."""
    folder = Path(folder)
    words = folder / USER_DICT_FILE if (folder / USER_DICT_FILE).is_file() else None
    splits = []
    if (folder / USER_SPLITS_FILE).is_file():
        splits = json.loads((folder / USER_SPLITS_FILE).read_text(encoding="utf-8"))
    return words, [("".join(s["pieces"]), s["freq"], None, s["pieces"]) for s in splits]
