"""Where the CLI's words go: standard output, or a file written atomically (a temporary beside it,
renamed over it on success), and the checks that let a bad -o fail before the model loads.

A write error (a full disk, a file without permission) becomes one line naming where (CLIError);
a broken pipe is left to the caller (`segmenter big.txt | head` stops quietly).
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path

from . import CLIError


def check_output(path: str | None, inputs: list[str] = ()) -> None:
    """Fail before the model loads when -o cannot be written (atomic_output would only find out
    after it), or is one of the `inputs` (its file is replaced at the end: that text would be gone)."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"-o {path} is a directory; give a file name")
    if target.exists() and any(name != "-" and os.path.samefile(name, target) for name in inputs):
        raise CLIError(f"-o {path} is also an input file; write the words to another file")
    folder = target.resolve().parent if target.is_symlink() else target.parent
    if not folder.is_dir():
        raise CLIError(f"cannot write {path}: its folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) and not (target.exists() and not target.is_file()):
        raise CLIError(f"cannot write {path}: no permission to create files in {folder}")


@contextlib.contextmanager
def atomic_output(path: str | None):
    """Yield a UTF-8 text stream; for a file, write a temporary beside it and rename it on success.

    A failed write (disk full) becomes a CLIError; a broken pipe is left to the caller. An
    existing path that is not a regular file (/dev/null, a FIFO) is written in place: a
    rename would replace the device itself.
    """
    if path is None:
        if (getattr(sys.stdout, "encoding", "utf-8").lower() not in ("utf-8", "utf8")
                and hasattr(sys.stdout, "reconfigure")):
            sys.stdout.reconfigure(encoding="utf-8")  # input is read as UTF-8 whatever the locale: so is output
        with _write_errors("standard output", on_error=silence_stdout):
            yield sys.stdout
        return
    target = Path(path)
    if target.is_dir():
        raise CLIError(f"-o {path} is a directory; give a file name")
    if target.is_symlink():
        target = target.resolve()  # replace the file it points to, not the link
    if target.exists() and not target.is_file():
        with _write_errors(path), open(target, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        return
    try:
        handle, temporary = _part_file(target)
    except OSError as err:
        raise CLIError(f"cannot write {path}: {err.strerror}") from None
    try:
        with _write_errors(path):
            os.chmod(temporary, _file_mode(target))  # mkstemp's 0600 would stick to the output
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                yield stream
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _part_file(target: Path) -> tuple[int, str]:
    """(descriptor, path) of a new `.OUT.<pid>.part` beside `target`, mode 0600. First removes the
    part files of earlier runs that were killed (their process is gone: `kill -9` skips the
    cleanup), so that leftovers do not pile up; those of runs still going are left alone."""
    folder = target.parent
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([0-9]+)\.part")
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            found = pattern.fullmatch(name)
            if found and (int(found.group(1)) == os.getpid() or not _running(int(found.group(1)))):
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
    temporary = str(folder / f".{target.name}.{os.getpid()}.part")
    return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temporary


def _running(pid: int) -> bool:
    """Is process `pid` alive? True where that cannot be told (not POSIX, where os.kill(pid, 0)
    would end the process instead of asking): a part file is then kept, never one of a live run removed."""
    if os.name != "posix" or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's live process
        return True
    return True


@contextlib.contextmanager
def _write_errors(where: str, on_error=None):
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as err:
        if on_error is not None:
            on_error()
        raise CLIError(f"cannot write {where}: {err.strerror or err}") from None


def _file_mode(target: Path) -> int:
    """The mode the output should have: the old file's, else what open() would give (umask)."""
    if target.is_file():
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail (and print) again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
