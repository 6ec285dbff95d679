"""The word table on disk: where a model folder's table is, and the layout of its file.

A folder holds its table as `ngrams.npz` (TABLE_FILE), or reads another folder's through its head
profile's runtime entry (TABLE_REFERENCE: the shipped `fast` model reads the default's, so
the package holds one copy of the 26 MiB table). The file is a plain npz, one member per column
and length n: keys{n} (sorted uint64 hashes), autonomy{n} (float16), counts{n} (uint32; absent
in a table saved without them), logp{n} (float16, with a unigram model), and `info` (Han
characters counted, min count) and `unigram` (unseen log p, expected words, characters fitted
on). table.WordTable.save and .load read and write it through write_table and read_table.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

TABLE_FILE = "ngrams.npz"
# A model folder may read another folder's table instead of holding a copy: its head profile's
# runtime entry {"word_table": "../default"} (a path relative to the folder). The shipped
# `fast` model reads the default's, so the package holds one copy of the 26 MiB table.
TABLE_REFERENCE = "word_table"


def table_path(folder: Path, runtime: dict) -> Path | None:
    """The word table a model folder uses: its own ngrams.npz, else the one its profile's
    runtime entry points to; None when it has neither."""
    if (folder / TABLE_FILE).is_file():
        return folder / TABLE_FILE
    reference = runtime.get(TABLE_REFERENCE)
    if reference is None:
        return None
    path = (folder / reference).resolve()
    path = path / TABLE_FILE if path.is_dir() else path
    if not path.is_file():
        raise ValueError(f"{folder}: its head profile reads the word table {reference!r}, but {path} does not exist")
    return path


def standalone_table(folder: Path, runtime: dict, out: Path) -> dict:
    """Copy the word table that `folder` reads from another folder into `out` (a folder saved
    from it stands alone); returns the runtime entry without the reference."""
    table = table_path(folder, runtime)
    if table is None or table.parent.resolve() == folder.resolve():
        return runtime
    shutil.copy2(table, out / TABLE_FILE)
    return {key: value for key, value in runtime.items() if key != TABLE_REFERENCE}


def write_table(folder_or_file: str | Path, tables: dict, info: dict, unigram: dict | None,
                with_counts: bool = True) -> Path:
    """Write a WordTable's columns (`tables`: {n: (keys, autonomy, counts)}, `info`, `unigram`)
    as `ngrams.npz` into a folder, or as the file named; with_counts=False leaves the counts out."""
    path = Path(folder_or_file)
    if path.is_dir():
        path = path / TABLE_FILE
    arrays = {"info": np.array([info.get("chars", 0), info.get("min_count", 0)], dtype=np.int64)}
    for n, (keys, autonomy, counts) in tables.items():
        arrays.update({f"keys{n}": keys, f"autonomy{n}": autonomy})
        if with_counts:
            arrays[f"counts{n}"] = counts
        if unigram is not None:
            arrays[f"logp{n}"] = unigram["logp"][n]
    if unigram is not None:
        arrays["unigram"] = np.array([unigram[k] for k in ("unseen", "words", "chars")], dtype=np.float64)
    from ..run.files import save_npz

    with open(path, "wb") as handle:  # np.savez would add ".npz" to a name without it
        save_npz(handle, arrays)  # hashes do not compress: plain npz loads faster; aligned maps
    return path


def read_table(folder_or_file: str | Path) -> tuple[dict, dict, dict | None]:
    """(tables, info, unigram) of a table file (a folder: its ngrams.npz), memory-mapped, checked
    against its folder's checksums.json when it has one; a clear ValueError when it is unreadable."""
    import zipfile

    from ..model.integrity import verify_file
    from ..run.files import mapped_npz

    path = Path(folder_or_file)
    if path.is_dir():
        path = path / TABLE_FILE
    verify_file(path)  # against its folder's checksums.json, when it has one (integrity.py)
    try:
        data = mapped_npz(path)  # shared pages, not a copy per process
        ns = sorted(int(k[4:]) for k in data if k.startswith("keys"))
        tables = {}
        for n in ns:  # a table saved without counts: every kept n-gram counts 0 (joins read none)
            counts = data[f"counts{n}"] if f"counts{n}" in data else None
            # searchsorted copies an unaligned array whole on every call (0.4 ms for 500 k keys,
            # most of a small batch's lookups): a member np.savez wrote at an odd offset is
            # copied once here (write_table writes aligned ones: files.save_npz).
            keys = np.require(data[f"keys{n}"], requirements="A")
            tables[n] = (keys, data[f"autonomy{n}"],
                         counts if counts is not None else np.zeros(len(keys), np.uint32))
        chars, min_count = (int(v) for v in data["info"])
        unigram = None
        if "unigram" in data:  # a table written before the unigram model has none
            unseen, words, fitted_chars = (float(v) for v in data["unigram"])
            unigram = {"logp": {n: data[f"logp{n}"] for n in ns}, "unseen": unseen, "words": words,
                       "chars": fitted_chars}
        if any(len(tables[n][1]) != len(tables[n][0]) or len(tables[n][2]) != len(tables[n][0]) for n in ns):
            raise ValueError("its columns differ in length")
    except (OSError, KeyError, ValueError, EOFError, TypeError, zipfile.BadZipFile) as err:
        raise ValueError(f"word table {path} is unreadable, truncated or corrupt ({type(err).__name__}: {err}); "
                         "re-copy the model folder, or rebuild it with `segmenter ngrams`") from None
    return tables, {"chars": chars, "min_count": min_count, "max_n": max(ns) if ns else 0}, unigram
