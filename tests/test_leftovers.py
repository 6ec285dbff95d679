"""A run killed mid-write (`kill -9`: no cleanup runs) leaves no half output, and the next run
with the same output removes what it left: the CLI's `.OUT.<pid>.part`, a folder's `.DIR.part`."""
from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, TINY_CHARS
from segmenter.run.cores import available_cores
from segmenter.run.files import staged_folder

pytestmark = pytest.mark.slow

HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你"


def big_input(path, lines: int) -> None:
    rng = random.Random(0)
    path.write_text("".join("".join(rng.choices(HAN, k=rng.randint(20, 60))) + "。\n" for _ in range(lines)),
                    encoding="utf-8")


def start_cli(*args) -> subprocess.Popen:
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "segmenter", *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": path})


def part_files(folder, name: str) -> list:
    return sorted(folder.glob(f".{name}.*part"))


def children(pid: int) -> set[int]:
    """The processes `pid` started (Linux /proc; empty elsewhere)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"  # a zombie has ended
    except (OSError, IndexError):
        return False


def test_a_killed_cli_run_leaves_a_part_file_that_the_next_run_removes(tmp_path):
    source, out = tmp_path / "big.txt", tmp_path / "out.txt"
    big_input(source, 40_000)  # well over a few seconds on the embedded model
    run = start_cli(source, "-o", out, "-q")
    try:
        deadline = time.monotonic() + 120
        while not part_files(tmp_path, out.name) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None, f"the run ended before it was killed: {run.stderr.read()!r}"
        left = part_files(tmp_path, out.name)
        assert left == [tmp_path / f".out.txt.{run.pid}.part"]
        time.sleep(0.5)  # mid-way through the segmenting
        helpers = set()
        while available_cores() > 1 and not helpers and time.monotonic() < deadline:  # its worker processes
            helpers = children(run.pid)
            time.sleep(0.05)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
        run.stderr.close()
    assert not out.exists() and part_files(tmp_path, out.name) == left
    # Its workers (and multiprocessing's resource tracker) end with it: none waits for a task forever.
    deadline = time.monotonic() + 30
    while any(map(alive, helpers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, helpers)), f"left running after their parent was killed: {sorted(helpers)}"

    # A part file of a run still going (this process) is not touched; the dead run's is removed.
    live = tmp_path / f".out.txt.{os.getpid()}.part"
    live.write_text("a run still going", encoding="utf-8")
    small = tmp_path / "small.txt"
    small.write_text("".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:50]), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "segmenter", small, "-o", out, "-q"], capture_output=True,
                          check=False, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert part_files(tmp_path, out.name) == [live]
    words = out.read_text(encoding="utf-8").splitlines()
    assert len(words) == 50 and [w.replace(" ", "") for w in words] == small.read_text(encoding="utf-8").splitlines()


def test_a_folder_build_that_fails_leaves_nothing_and_a_killed_ones_part_is_removed(tmp_path):
    source, out = tmp_path / "source", tmp_path / "model"
    source.mkdir()
    (source / "weights.bin").write_bytes(b"w" * 100)
    (source / "config.json").write_text("{}", encoding="utf-8")
    # The source's checksums list files the new folder replaces (refine drops model.onnx and
    # loads the folder before it exports a new one): never copied, the caller writes its own.
    (source / "checksums.json").write_text('{"model.onnx": "..."}', encoding="utf-8")
    # What `kill -9` mid-way leaves: a hidden part folder, half filled.
    stale = tmp_path / ".model.part"
    stale.mkdir()
    (stale / "half.bin").write_bytes(b"h")
    with pytest.raises(RuntimeError), staged_folder(source, out) as building:
        assert not (building / "half.bin").exists()  # the stale folder was removed first
        (building / "new.txt").write_text("x", encoding="utf-8")
        raise RuntimeError("killed mid-way")
    assert not out.exists() and not stale.exists()
    stale.mkdir()
    (stale / "half.bin").write_bytes(b"h")
    with staged_folder(source, out) as building:
        (building / "new.txt").write_text("x", encoding="utf-8")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "new.txt", "weights.bin"]
    assert not stale.exists()


def test_a_killed_adapt_leaves_no_folder_and_the_next_run_succeeds(tmp_path, tiny_model_dir):
    rng = random.Random(0)
    han = [c for c in TINY_CHARS if "\u4e00" <= c <= "\u9fff"]
    raw, out = tmp_path / "raw.txt", tmp_path / "adapted"
    raw.write_text("".join("".join(rng.choices(han, k=rng.randint(5, 15))) + "龘靐齉麤。\n" for _ in range(300)),
                   encoding="utf-8")
    # A big raw text: the run is killed while it counts, before its folder is renamed into place.
    # 5.8 M characters: about 9 s of counting on an idle 2-core machine (1.9 M took 2.4 s there,
    # less than the 3 s below), so the kill lands mid-run on faster and on busier machines alike.
    big = tmp_path / "big_raw.txt"
    big.write_text(raw.read_text(encoding="utf-8") * 1200, encoding="utf-8")
    run = start_cli("adapt", "-m", tiny_model_dir, "--raw", big, "--out", out)
    time.sleep(3)
    still_going = run.poll() is None
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=60)
    run.stderr.close()
    assert still_going, "adapt ended before it was killed: give it a bigger text"
    assert not out.exists()  # whole or absent
    # What a kill during the copy into the staged folder (a short moment, hard to hit) leaves:
    stale = tmp_path / ".adapted.part"
    stale.mkdir(exist_ok=True)
    (stale / "half.bin").write_bytes(b"h")
    done = subprocess.run([sys.executable, "-m", "segmenter", "adapt", "-m", tiny_model_dir, "--raw", raw,
                           "--out", out, "--min-count", "2"], capture_output=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / "ngrams.npz").is_file() and (out / "segmenter_heads.json").is_file()
    assert not list(tmp_path.glob(".*.part"))
