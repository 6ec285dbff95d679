"""Writing files so that nobody ever reads half of one: write a temporary beside, then rename.

A rename within one folder is atomic (os.replace), so a reader sees the old file or the new
one, and a run killed mid-write leaves at most a hidden `.NAME.part` beside the target, which
the next write replaces.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

MANIFEST = "checksums.json"  # integrity.MANIFEST_FILE (integrity.py imports this module, not the reverse)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside `target` to write to; renamed onto `target` when the block ends
    normally, removed when it raises.

        with atomic_path(out / "x.npz") as temporary, open(temporary, "wb") as handle:
            np.savez(handle, ...)
    """
    target = Path(target)
    temporary = target.with_name(f".{target.name}.part")
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def check_new_folder(out: str | os.PathLike, source: Path) -> Path:
    """`out` as a folder a command may build from `source`: new, or empty, and not `source` itself."""
    out = Path(out).expanduser()
    if not str(out) or out.resolve() == Path(source).resolve():
        raise ValueError(f"--out must be a new folder, not the model folder itself ({source})")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"--out {out} exists and is not an empty folder; choose a new folder")
    return out


@contextlib.contextmanager
def staged_folder(source: str | os.PathLike, out: str | os.PathLike, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """A copy of the files of folder `source` (hidden ones and those named in `skip` left out)
    in a hidden `.OUT.part` beside `out`, for the block to change; moved onto `out` (new, or an
    empty folder) when the block ends normally, removed when it raises. A model folder made
    from another one (segmenter adapt, refine) is thus whole or absent. The source's
    checksums.json is never copied: it lists the files being replaced (refine drops model.onnx,
    then loads the folder to export it again), and every caller writes the new folder's own
    (integrity.write_manifest) once it is complete."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = out.with_name(f".{out.name}.part")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    try:
        for item in Path(source).iterdir():
            if item.is_file() and item.name not in (*skip, MANIFEST) and not item.name.startswith("."):
                shutil.copy2(item, building / item.name)
        yield building
        if out.exists():
            out.rmdir()  # empty: the callers check before they start
        building.rename(out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
