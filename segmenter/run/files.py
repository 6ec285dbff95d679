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


def mapped_npz(path: str | os.PathLike) -> dict:
    """The arrays of an uncompressed .npz (np.savez) as read-only memory maps, by name.

    np.load copies every array into the process; a map reads pages on demand from the page
    cache, which the worker processes of one run share (parallel.py: a 26 MiB word table is then
    in memory once, not once per core). A compressed member cannot be mapped: it is read (np.load).
    """
    import mmap
    import struct
    import zipfile

    import numpy as np

    arrays = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
        # One map of the whole file (it outlives `handle`: the arrays hold it); an empty file
        # cannot be mapped, but ZipFile has refused one already.
        pages = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            if info.compress_type != zipfile.ZIP_STORED:
                arrays[name] = np.load(archive.open(info))
                continue
            handle.seek(info.header_offset)  # the local header: 30 bytes, then its name and extra field
            local = handle.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError(f"member {info.filename} has no local header")
            name_length, extra_length = struct.unpack("<HH", local[26:30])
            start = info.header_offset + 30 + name_length + extra_length  # the member: .npy header, data
            if _file_crc32(handle, start, info.file_size) != info.CRC:
                raise ValueError(f"member {info.filename} is truncated or corrupt (CRC-32)")  # as np.load checks
            handle.seek(start)
            version = np.lib.format.read_magic(handle)
            header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = header(handle)
            if dtype.hasobject:
                raise ValueError(f"member {info.filename} holds Python objects")
            count = int(np.prod(shape))
            if handle.tell() + count * dtype.itemsize > start + info.file_size:
                raise ValueError(f"member {info.filename} is shorter than its header says")
            flat = np.frombuffer(pages, dtype=dtype, count=count, offset=handle.tell())  # read-only
            arrays[name] = flat.reshape(shape, order="F" if fortran else "C")
    return arrays


CRC_BLOCK = 1 << 20  # bytes read at a time to check a member's CRC-32


def _file_crc32(handle, start: int, size: int) -> int | None:
    """CRC-32 of `size` bytes of the file from `start`, read through the file (None when it is
    shorter). Not through the map: reading every page of a map makes it part of the process's
    resident set (ru_maxrss counts a mapped file's pages once touched), the whole 26 MiB table
    before a lookup; read, the pages are only in the page cache, and a process holds those of
    the table its lookups touch."""
    import zlib

    handle.seek(start)
    crc = 0
    while size > 0:
        block = handle.read(min(CRC_BLOCK, size))
        if not block:
            return None
        crc, size = zlib.crc32(block, crc), size - len(block)
    return crc


NPZ_ALIGN = 64  # bytes: what numpy aligns an .npy file's data to from the file's start


def save_npz(handle, arrays: dict) -> None:
    """np.savez's format (uncompressed, loadable by np.load), with each member placed at a multiple
    of NPZ_ALIGN bytes in the file, so that its data is too (an .npy header pads to that) and the
    arrays mapped_npz maps are aligned: numpy copies an unaligned array whole for searchsorted,
    on every call. The padding is a zip extra field (0xD935, as Android's zipalign writes), which
    zip readers skip; a fixed date makes the bytes depend on the arrays alone."""
    import io
    import struct
    import zipfile

    import numpy as np

    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            # The local header: 30 bytes, the name, then the extra field (4 bytes + padding).
            data_start = handle.tell() + 30 + len(info.filename.encode("utf-8")) + 4
            padding = -data_start % NPZ_ALIGN
            info.extra = struct.pack("<HH", 0xD935, padding) + bytes(padding)
            archive.writestr(info, member.getvalue())
