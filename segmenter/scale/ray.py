"""Ray Data adapter: segment corpora across the cores of a laptop or the nodes of a cluster.

Needs the extra: `pip install "segmenter-heads[ray]"`. Two ways in:

  * `SegmentBatch`, a callable class for Ray Data's `map_batches`: each actor loads the model
    once and segments the `text` column of every batch it is given. Its `words` column holds a
    plain Python list of str per row (Arrow list<string>), which write_json / write_parquet take.

        import ray
        from segmenter.scale.ray import SegmentBatch
        ds = ray.data.read_text("corpus/")        # a folder or a list of files (no glob patterns)
        ds = ds.map_batches(SegmentBatch, fn_constructor_kwargs={"model": "path/to/model"},
                            concurrency=2, num_cpus=0.5, batch_size=256)   # or num_gpus=1
        ds.write_json("out/")                                            # rows: text, words

  * `run_job` (the `segmenter ray` command): read files, segment, write one output file per
    input file with its lines in input order. It reads the bytes itself (`read_lines`)
    because `read_text` splits at U+2028 and other Unicode separators and drops empty lines,
    which would shift lines against the input; here a line is what `segmenter FILE` calls
    a line, so the outputs match the single-process command line for line.

This module is `segmenter.scale.ray` (`segmenter.ray` only raises an ImportError naming it); it
imports the real Ray with an absolute `import ray` inside each function, so importing segmenter
never needs Ray.

On 2 cores, actors that each take a whole CPU can leave the read tasks no CPU and the
pipeline waits forever; `plan_actors` keeps one CPU free, and fractional CPUs
(`num_cpus=0.5`) are fine: the threads of each actor follow the CPUs Ray assigned to it.

Failures: an actor that dies (killed, out of memory, a crashed node) is restarted and the batches
it held are run again (`max_restarts` and `max_task_retries` in the actor's remote args, bounded
by run_job's `max_restarts`). The driver writes the outputs itself (job_files.OrderedWriter), so a
batch computed twice cannot reach a file twice: the writer skips rows it has already written, writes
each file once and whole (renamed into place at its last line), and stops on a gap. `SEGMENTER_RAY_KILL` (see
SegmentBatch) kills one actor on purpose, for tests/test_ray.py and benchmarks/ray_scale.py.
"""
from __future__ import annotations

import contextlib
import logging
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..run.lines import join_words
from .job_files import (
    FORMATS,
    OrderedWriter,
    expand_inputs,
    output_paths,
    split_file_batch,
)

logger = logging.getLogger(__name__)
KILL_ENV = "SEGMENTER_RAY_KILL"  # fault injection, "N:MARKER": see SegmentBatch


def require_ray():
    """The real `ray` package with Ray Data, or an ImportError that says how to get it."""
    try:
        import ray
        import ray.data  # noqa: F401  (ray without the [data] extra has no pyarrow/pandas)
    except ImportError as err:
        raise ImportError(f'segmenter.scale.ray needs Ray Data: pip install "segmenter-heads[ray]" ({err})') from None
    return ray


def _assigned(resource: str) -> float:
    """How much of `resource` Ray gave the current actor (0 outside Ray)."""
    with contextlib.suppress(Exception):
        import ray

        if ray.is_initialized():
            return float(ray.get_runtime_context().get_assigned_resources().get(resource, 0.0))
    return 0.0


class SegmentBatch:
    """Ray Data callable class: adds the words of each row's text to the batch.

    model, granularity, batch_size (windows per forward pass), window, overlap: as Segmenter.
    device: "auto" (default) uses CUDA when Ray gave this actor a GPU (num_gpus=…), else CPU.
    num_threads: the engine's threads; default: the CPUs Ray gave this actor, at least 1 (a fractional
        num_cpus=0.5 gets 1 thread), so that actors side by side do not oversubscribe the cores.
    text_column / words_column: where the text is read and the words are written.
    delimiter: None writes a list of words per row; a string writes the words joined by it,
        space words dropped, exactly as the `segmenter` command writes a line.
    kill: fault injection for tests and benchmarks, off unless given or $SEGMENTER_RAY_KILL is
        set: "N:MARKER" makes the actor that first reaches its N-th batch create the file MARKER
        (which must not exist yet) and die there with os._exit(1); the others, and the restarted
        one, find MARKER and carry on, so one actor dies once. Each start of an actor and each
        batch (its first row's path:line) is appended to MARKER.log, so that restarts and batches
        run twice can be counted. run_job hands the driver's $SEGMENTER_RAY_KILL to its actors.

    Works on batches in Ray's default format (dict of numpy arrays) and on pandas DataFrames.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        granularity: str | float = "default",
        device: str = "auto",
        batch_size: int = 64,
        num_threads: int | None = None,
        window: int | None = None,
        overlap: int | None = None,
        text_column: str = "text",
        words_column: str = "words",
        delimiter: str | None = None,
        kill: str | None = None,
    ):
        from ..api import Segmenter
        from ..run.workers import WorkerSpec

        if device == "auto":
            device = "cuda" if _assigned("GPU") > 0 else "cpu"
        if num_threads is None:
            num_threads = max(1, int(_assigned("CPU"))) if _assigned("CPU") else None
        self.segmenter = WorkerSpec(
            None if model is None else str(model), device=device, batch_size=batch_size, granularity=granularity,
            window=window, overlap=overlap, num_threads=num_threads, segmenter_class=Segmenter,
        ).build()
        self.text_column, self.words_column, self.delimiter = text_column, words_column, delimiter
        self.kill, self.batches = kill or os.environ.get(KILL_ENV) or None, 0
        if self.kill:
            at, _, self.marker = self.kill.partition(":")
            if not at.isdigit() or not self.marker:
                raise ValueError(f"{KILL_ENV} must be N:MARKER (a batch number and a file), got {self.kill!r}")
            self.kill_at = int(at)
        self._log("start")

    def _log(self, event: str) -> None:
        if self.kill:
            with open(self.marker + ".log", "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {event}\n")

    def _maybe_die(self, batch) -> None:
        """The fault injection of `kill` (see the class doc); nothing when it is not set."""
        if not self.kill:
            return
        self.batches += 1
        first = f"{batch['path'][0]}:{batch['line'][0]}" if "path" in batch and len(batch["path"]) else "-"
        self._log(f"batch {first}")
        if self.batches == self.kill_at:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return  # another actor (or this one before its restart) has died already
            self._log(f"killed {first}")
            os._exit(1)

    def __call__(self, batch):
        self._maybe_die(batch)
        texts = [str(text) for text in batch[self.text_column]]
        words = self.segmenter.segment_batch(texts, show_progress=False)
        if self.delimiter is not None:
            column = np.array([join_words(w, self.delimiter) for w in words], dtype=object)
        else:
            # One plain list of str per row: Ray stores the column as Arrow list<string>. (Rows of
            # numpy object arrays became a pickled tensor column that write_json crashed on.)
            column = np.empty(len(words), dtype=object)
            for row, row_words in enumerate(words):
                column[row] = list(row_words)
        batch[self.words_column] = column
        return batch


# -- the whole job: read, segment, write ---------------------------------------------------------
def read_lines(paths: list[str], errors: str = "strict"):
    """A Ray Dataset with one row per line of each file: path, line, text (see the module doc)."""
    ray = require_ray()
    files = ray.data.read_binary_files(paths, include_paths=True)
    return files.map_batches(split_file_batch, batch_size=1, fn_kwargs={"errors": errors})


def check_model(model: str | os.PathLike | None, granularity: str | float = "default") -> None:
    """Fail here, with the real message, rather than in every actor: the folder resolves, has
    config, weights and vocabulary, and a head profile. (Weights are loaded by the actors.)"""
    from ..model.folders import (
        ModelLoadError,
        check_folder,
        read_profile,
        resolve_model_folder,
    )
    from ..model.profile import granularity_value

    granularity_value(granularity)
    folder = resolve_model_folder(model)
    check_folder(folder)
    if read_profile(folder) is None:
        raise ModelLoadError(f"{folder} has no head profile; create one with `segmenter heads --model {folder}`")


def plan_actors(cluster: dict, cpus_per_actor: float, gpus_per_actor: float) -> int:
    """How many actors the cluster can hold: one per GPU share when actors take GPUs, else
    one per CPU share with one CPU left to the read tasks (see the module doc)."""
    if gpus_per_actor > 0:
        return max(1, int(cluster.get("GPU", 0) // gpus_per_actor))
    return max(1, int((cluster.get("CPU", 1) - 1) // cpus_per_actor))


@dataclass
class JobReport:
    files: int
    lines: int
    characters: int
    seconds: float
    actors: int
    duplicates: int = 0  # rows computed twice (a batch run again after its actor died), written once

    @property
    def chars_per_second(self) -> float:
        return self.characters / self.seconds if self.seconds > 0 else 0.0


def _restart_args(max_restarts: int) -> dict:
    """Remote args that bound the restarts of a dead actor and the retries of its batches.

    Ray Data restarts actors and retries their tasks by default, without bound (a batch that
    kills every actor it meets would loop forever). Ray 2.60 takes the bound only as
    `**ray_remote_args` of map_batches, deprecated for 2.64 (run_job silences the warning);
    a Ray whose map_batches no longer takes them keeps its own unbounded defaults."""
    import inspect

    import ray.data

    parameters = inspect.signature(ray.data.Dataset.map_batches).parameters.values()
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return {}
    return {"max_restarts": max_restarts, "max_task_retries": max_restarts}


def run_job(
    inputs: list[str],
    out_dir: str | os.PathLike,
    *,
    model: str | os.PathLike | None = None,
    fmt: str = "text",
    delimiter: str = " ",
    granularity: str | float = "default",
    address: str | None = None,
    local_cpus: int | None = None,
    actors: int | None = None,
    cpus_per_actor: float = 1.0,
    gpus_per_actor: float = 0.0,
    lines_per_batch: int = 256,
    batch_size: int = 64,
    errors: str = "strict",
    quiet: bool = False,
    max_restarts: int = 3,
) -> JobReport:
    """Segment every line of `inputs` (files or glob patterns) on Ray and write one output per
    input under out_dir, lines in input order. Joins the cluster at `address` ("auto": the
    one this machine belongs to), else starts Ray here with `local_cpus` (default: all cores).
    Uses Ray as it is when this process already called ray.init. An actor that dies is
    restarted, and the batches it held are run again, up to `max_restarts` times each (0: the
    first death ends the job); each output is still written once (see the module doc)."""
    ray = require_ray()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    if cpus_per_actor <= 0 or gpus_per_actor < 0 or lines_per_batch < 1 or (actors is not None and actors < 1):
        raise ValueError("cpus per actor must be > 0, gpus per actor >= 0, actors and lines per batch >= 1")
    if max_restarts < 0:
        raise ValueError(f"max restarts must be >= 0, got {max_restarts}")
    files = expand_inputs(inputs)
    outputs = output_paths(files, out_dir, fmt)
    if model is not None and Path(model).expanduser().is_dir():
        model = str(Path(model).expanduser().resolve())  # actors may run in another directory
    started_here = not ray.is_initialized()
    if started_here:
        init = {"address": address} if address else {"num_cpus": local_cpus}
        ray.init(**init, include_dashboard=False, logging_level=logging.WARNING if quiet else logging.INFO)
    context = ray.data.DataContext.get_current()
    saved = (context.execution_options.preserve_order, context.enable_progress_bars)
    context.execution_options.preserve_order = True  # rows leave in input order
    context.enable_progress_bars = not quiet
    data_logger = logging.getLogger("ray.data")
    saved_level = data_logger.level
    if quiet:
        data_logger.setLevel(logging.WARNING)
    writer = OrderedWriter(outputs, fmt, delimiter)
    try:
        if actors is None:
            actors = plan_actors(ray.cluster_resources(), cpus_per_actor, gpus_per_actor)
        logger.info("segmenting %d files with %d actors (%.2g CPU, %.2g GPU each)", len(files), actors, cpus_per_actor,
                    gpus_per_actor)
        started = time.perf_counter()
        constructor = {"model": model, "granularity": granularity, "batch_size": batch_size}
        if os.environ.get(KILL_ENV):  # fault injection (SegmentBatch): actors of a running Ray lack our env
            constructor["kill"] = os.environ[KILL_ENV]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
            dataset = read_lines(files, errors).map_batches(
                SegmentBatch,
                fn_constructor_kwargs=constructor,
                compute=ray.data.ActorPoolStrategy(size=actors),
                num_cpus=cpus_per_actor,
                num_gpus=gpus_per_actor or None,
                batch_size=lines_per_batch,
                **_restart_args(max_restarts),
            )
        lines = characters = 0
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for path, line, total, text, words, problem in zip(
                batch["path"], batch["line"], batch["lines"], batch["text"], batch["words"], batch["error"]
            ):
                if problem:
                    raise ValueError(f"{problem}; convert the file to UTF-8 or pass --encoding-errors replace")
                before = writer.duplicates
                writer.write(str(path), int(line), [str(w) for w in words], int(total))
                if writer.duplicates == before:
                    lines += 1
                    characters += len(text)
        writer.finish()
        seconds = time.perf_counter() - started
    except BaseException:
        writer.abort()
        raise
    finally:
        context.execution_options.preserve_order, context.enable_progress_bars = saved
        data_logger.setLevel(saved_level)
        if started_here:
            ray.shutdown()
    return JobReport(len(files), lines, characters, seconds, actors, writer.duplicates)


def user_error(err: BaseException) -> str | None:
    """The message of a ModelLoadError raised inside a Ray actor (Ray wraps it; its cause is
    the real one), or None for anything else."""
    from ..model.folders import ModelLoadError

    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, ModelLoadError):
            return str(err)
        err = getattr(err, "cause", None) or err.__cause__ or err.__context__
    return None
