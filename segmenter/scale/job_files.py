"""The files of a `segmenter ray` job (scale/ray.py's run_job): which inputs, where each output
goes, an input's bytes as rows of lines, and the writer that puts the segmented rows back into
one file per input, in order, each once and whole. Plain Python and numpy: no Ray here, so the
writer's promises (no row twice, no gap, nothing half written) are tested without a cluster.
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
from pathlib import Path

import numpy as np

from ..run.lines import join_words, split_lines

FORMATS = ("text", "jsonl")
_JSON_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


def expand_inputs(patterns: list[str]) -> list[str]:
    """Files named or matched by glob patterns (recursive `**` allowed), in order, each once."""
    found: list[str] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        found.extend(m for m in matches if os.path.isfile(m))
        if not any(os.path.isfile(m) for m in matches):
            raise FileNotFoundError(f"{pattern}: no such file"
                                    + (" (the pattern matches no file)" if glob.has_magic(pattern) else ""))
    return list(dict.fromkeys(os.path.abspath(p) for p in found))


def output_paths(inputs: list[str], out_dir: str | os.PathLike, fmt: str) -> dict[str, Path]:
    """Each input's output: its path below the inputs' common folder, under out_dir
    (+ ".jsonl" for JSONL). Refuses to write over an input."""
    base = os.path.commonpath([os.path.dirname(p) for p in inputs])
    outputs = {}
    for path in inputs:
        target = Path(out_dir) / os.path.relpath(path, base)
        if fmt == "jsonl":
            target = target.with_name(target.name + ".jsonl")
        if target.resolve() in {Path(p).resolve() for p in inputs}:
            raise ValueError(f"output {target} would overwrite an input; choose another OUT_DIR")
        outputs[path] = target
    return outputs


def split_file_batch(batch: dict, errors: str) -> dict:
    """read_binary_files rows (one per file) -> one row per line: path, line (1-based), lines
    (the file's line count), text, error. A file that does not decode becomes one row whose
    `error` says where: the driver raises it in order, as a clear message, instead of Ray
    aborting with a task traceback."""
    paths, numbers, totals, texts, problems = [], [], [], [], []
    for data, path in zip(batch["bytes"], batch["path"]):
        try:
            lines, problem = split_lines(bytes(data), errors, name=str(path)), ""
        except ValueError as err:
            lines, problem = [""], str(err)
        if lines:  # a byte-order mark is no text: `segmenter FILE` drops it too
            lines[0] = lines[0].removeprefix("\ufeff")
        paths.extend([str(path)] * len(lines))
        numbers.extend(range(1, len(lines) + 1))
        totals.extend([len(lines)] * len(lines))
        texts.extend(lines)
        problems.extend([problem] * len(lines))
    return {
        "path": np.array(paths, dtype=object), "line": np.array(numbers, dtype=np.int64),
        "lines": np.array(totals, dtype=np.int64), "text": np.array(texts, dtype=object),
        "error": np.array(problems, dtype=object),
    }


class OrderedWriter:
    """Writes rows arriving in input order into one file per input, each once and whole: a hidden
    .part file renamed into place when the input's last line is in (`total` given) or when the
    next input starts. Idempotent: a row it has already written (a batch computed twice after
    an actor died) is skipped and counted in `duplicates`; a gap or an interleaved file stops
    it with RuntimeError, nothing overwritten."""

    def __init__(self, outputs: dict[str, Path], fmt: str, delimiter: str):
        self.outputs, self.fmt, self.delimiter = outputs, fmt, delimiter
        self.done: set[str] = set()
        self.written: dict[str, int] = {}  # lines written per input
        self.duplicates = 0
        self.path, self.stream, self.expected_line, self.total = None, None, 1, None

    def write(self, path: str, line: int, words: list[str], total: int | None = None) -> None:
        if path in self.done or (path == self.path and line < self.expected_line):
            if line <= self.written.get(path, 0):
                self.duplicates += 1
                return
            raise RuntimeError(f"rows of {path} arrived out of order; nothing was overwritten")
        if path != self.path:
            self.close()
            if path not in self.outputs:
                raise RuntimeError(f"rows of {path}, which is not an input, arrived; nothing was overwritten")
            target = self.outputs[path]
            target.parent.mkdir(parents=True, exist_ok=True)
            self.path, self.expected_line, self.written[path] = path, 1, 0
            self.partial = target.with_name(f".{target.name}.part")
            self.stream = open(self.partial, "w", encoding="utf-8", newline="\n")
        if line != self.expected_line:  # preserve_order is on; this guards the promise
            raise RuntimeError(f"{path}: got line {line} where line {self.expected_line} was due")
        self.expected_line += 1
        self.total = total
        if self.fmt == "jsonl":
            record = json.dumps({"line": line, "words": words}, ensure_ascii=False)
            # Valid JSON either way, but readers that split at Unicode line breaks would cut here.
            self.stream.write(record.translate(_JSON_LINE_BREAKS) + "\n")
        else:
            self.stream.write(join_words(words, self.delimiter) + "\n")
        self.written[path] = line
        if total is not None and line == total:
            self.close()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None
            if self.total is not None and self.written[self.path] != self.total:
                os.unlink(self.partial)
                raise RuntimeError(f"{self.path}: {self.written[self.path]} of {self.total} lines arrived; "
                                   "nothing was written for it")
            os.replace(self.partial, self.outputs[self.path])
            self.done.add(self.path)

    def finish(self) -> None:
        """Close the last file; inputs that had no line (empty files) get an empty output."""
        self.close()
        for path, target in self.outputs.items():
            if path not in self.done:
                if os.path.getsize(path):
                    raise RuntimeError(f"no line of {path} arrived; nothing was written for it")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("", encoding="utf-8")

    def abort(self) -> None:
        if self.stream is not None:
            self.stream.close()
            with contextlib.suppress(OSError):
                os.unlink(self.partial)
            self.stream = None
