"""The checksum list of a model folder: written by every command that writes a folder, checked on load.

`checksums.json` lists each file of the folder with its size and sha256:

    {"format": "segmenter checksums 1",
     "files": {"config.json": {"size": 666, "sha256": "9f…"}, "ngrams.npz": {…}, …}}

Listed: every file but hidden ones, the list itself, documentation (*.md) and the head profile
(segmenter_heads.json: the folder's settings, which `segmenter heads` rewrites and a user may
edit; HeadProfile.load and check_model check it). A folder without the list (a Hugging Face
folder) loads with the structural checks of folders.py and words/table.py alone.

On load (folders.resolve_model_folder, check_folder, WordTable.load) every listed file must have
its size; files without a checksum of their own are hashed too (~15 ms for the default's
weights and ONNX export). A zip (ngrams.npz) carries a CRC-32 per member, which numpy checks as
WordTable.load reads each one, so its size is compared and its hash left to the writer's list.
A hash is computed once per process for a file that has not changed since (same inode, size
and modification time).

    python -m segmenter.model.integrity FOLDER...   # (re)write the list of each folder
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import ModelLoadError
from ..run.files import MANIFEST, write_text_atomic

MANIFEST_FILE = MANIFEST
FORMAT = "segmenter checksums 1"
UNLISTED = (MANIFEST_FILE, "segmenter_heads.json")
SELF_CHECKED = (".npz",)  # formats with checksums inside, verified as they are read
REMEDY = "re-copy the folder or re-run the command that wrote it"


def listed_files(folder: Path) -> list[Path]:
    """The files of `folder` a checksum list covers."""
    return sorted(item for item in Path(folder).iterdir()
                  if item.is_file() and not item.name.startswith(".") and item.name not in UNLISTED
                  and item.suffix != ".md")


def sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256_of(str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=256)
def _sha256_of(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """Keyed by what changes with the file's content, so a file checked once in this process is
    not read again until it changes (the loaders check a folder more than once)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _entry(path: Path) -> dict:
    return {"size": path.stat().st_size, "sha256": sha256(path)}


def _write(folder: Path, files: dict) -> Path:
    path = folder / MANIFEST_FILE
    write_text_atomic(path, json.dumps({"format": FORMAT, "files": dict(sorted(files.items()))}, indent=2) + "\n")
    return path


def write_manifest(folder: str | os.PathLike) -> Path:
    """Write `checksums.json` for every listed file of `folder`; the last step of a command that writes a folder."""
    folder = Path(folder)
    return _write(folder, {item.name: _entry(item) for item in listed_files(folder)})


def update_manifest(folder: str | os.PathLike, names: list[str]) -> Path | None:
    """After writing the files `names` into an existing folder (export-onnx, ngrams): refresh their
    entries in its list; the others keep theirs, so a file changed since is still caught. A folder
    without a list (a user's Hugging Face folder) is left without one."""
    folder = Path(folder)
    files = read_manifest(folder)
    if files is None:
        return None
    for name in names:
        if (folder / name).is_file() and name not in UNLISTED:
            files[name] = _entry(folder / name)
    return _write(folder, files)


def read_manifest(folder: Path) -> dict | None:
    """{file name: {"size", "sha256"}} of the folder's list; None when it has none."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("format") != FORMAT or not all(
                isinstance(e, dict) and isinstance(e.get("size"), int) and isinstance(e.get("sha256"), str)
                for e in files.values()):
            raise ValueError(f"not a {FORMAT!r} list")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ModelLoadError(f"{path} is not a valid checksum list ({type(err).__name__}: {err}); {REMEDY}") from None
    return files


def _check(path: Path, entry: dict) -> None:
    if not path.is_file():
        raise ModelLoadError(f"{path} is missing (listed in {MANIFEST_FILE}); {REMEDY}")
    size = path.stat().st_size
    if size != entry["size"]:
        raise ModelLoadError(f"{path} is truncated or changed: {size:,} bytes, expected {entry['size']:,} "
                             f"({MANIFEST_FILE}); {REMEDY}")
    if path.suffix in SELF_CHECKED:
        return
    found = sha256(path)
    if found != entry["sha256"]:
        raise ModelLoadError(f"{path} is corrupt or changed: sha256 {found[:16]}…, "
                             f"expected {entry['sha256'][:16]}… ({MANIFEST_FILE}); {REMEDY}")


def verify_folder(folder: str | os.PathLike) -> None:
    """Raise ModelLoadError, naming the file, unless every file the folder's list names is as listed."""
    folder = Path(folder)
    files = read_manifest(folder)
    for name, entry in sorted((files or {}).items()):
        _check(folder / name, entry)


def verify_file(path: str | os.PathLike) -> None:
    """Check one file against its folder's list (when the list names it)."""
    path = Path(path)
    files = read_manifest(path.parent)
    if files is not None and path.name in files:
        _check(path, files[path.name])


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m segmenter.model.integrity",
        description=f"(Re)write {MANIFEST_FILE} of each model folder: the size and sha256 of each of its files "
                    "(all but hidden files, *.md and segmenter_heads.json), checked when the folder loads.")
    parser.add_argument("folders", nargs="+", metavar="FOLDER", help="a model folder")
    folders = parser.parse_args(sys.argv[1:]).folders
    for folder in folders:
        if not Path(folder).is_dir():
            parser.error(f"{folder}: not a folder")
    for folder in folders:
        print(f"wrote {write_manifest(folder)}")
