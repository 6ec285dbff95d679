"""Writing files so that nobody ever reads half of one: write a temporary beside, then rename.

A rename within one folder is atomic (os.replace), so a reader sees the old file or the new
one, and a run killed mid-write leaves at most a hidden `.NAME.part` beside the target, which
the next write replaces.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator


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
