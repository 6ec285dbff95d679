"""The measuring of one benchmark run, in a worker process (or in-process: BenchConfig.isolate).

`segment_run` is one run: build (timed apart: load_s), warm up on the first `warmup_chars`
characters (lazy loading, caches, allocator), then the timed pass over every sentence:
chars_per_s = characters / seconds of that pass alone. Scoring happens in the parent.
Speed figures beside it (speed_figures): startup_s, the wall time of a fresh process that
segments one sentence through the system's command line (`python -m segmenter`, `python -m
jieba`); latency_ms, one short sentence per call, median; seconds_all, the mean timed pass
again on all cores, for a system that can use them (segment.set_threads), after a first pass on
all cores (seconds_all_first), in which what a system starts to use them starts (a Segmenter's
helper processes: ~1 s, a large share of a 3 s pass).

The × jieba figures are timed side by side (paired_seconds, paired_seconds_all): in the same
worker, jieba (HMM on, its own instance) and the system take turns over the same chunks,
PAIRED_ROUNDS passes each on one thread, and as many again with the system on all cores. The
machine is shared and its speed drifts over a run of minutes (jieba ran at 207 k and at 324 k
chars/s in two runs of one afternoon): a ratio of passes a second apart moves far less than one
of passes minutes apart, in other processes.

Like systems.py, this file imports only the standard library at the top: a worker loads both
by their paths (runner.run_isolated: systems.py first, as `segmenter_benchmark_systems`), so
that the `segmenter` package's imports do not count in jieba's memory figure.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

if __package__:  # imported as segmenter.bench.measure
    from .systems import (SHORT_SENTENCE, SYSTEMS, BenchConfig, BenchmarkError, CorpusRun, SegmentFn,
                          label)
else:  # loaded by its path in a worker, after systems.py (runner.run_isolated)
    from segmenter_benchmark_systems import (SHORT_SENTENCE, SYSTEMS, BenchConfig, BenchmarkError, CorpusRun,
                                             SegmentFn, label)

CHUNK_CHARS = 16_384  # characters segmented per call in the timed pass (and per progress tick)
LATENCY_CALLS = 50
STARTUP_RUNS = 3
PAIRED_ROUNDS = 2  # alternating passes of jieba and of the system, for the × jieba figures


def peak_rss_mb() -> float | None:
    """This process's peak resident set size in MiB (None where it cannot be read).

    On Linux it is VmHWM, the high-water mark of this program's own memory map. Not ru_maxrss:
    Linux carries that across exec, so a worker started by a parent holding torch (~220 MiB)
    would begin at the parent's size.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def timed_chunks(texts: list[str], size: int = CHUNK_CHARS) -> list[list[str]]:
    """The texts in the calls of a timed pass: consecutive runs of ~`size` characters (each ends
    with the text that reaches it), large enough to fill segmenter's batches, small enough for a
    live bar (benchmarks/time_stages.py cuts its input the same way)."""
    chunks, chunk, chars = [], [], 0
    for text in texts:
        chunk.append(text)
        chars += len(text)
        if chars >= size:
            chunks.append(chunk)
            chunk, chars = [], 0
    return chunks + ([chunk] if chunk else [])


def segment_run(system: str, setting: str, config: BenchConfig, corpus: CorpusRun, texts: list[str]) -> dict:
    """Build, warm up, time: the measuring part of one run (in a worker, or in-process)."""
    base_mb = peak_rss_mb()
    start = time.perf_counter()
    try:
        segment, about = SYSTEMS[system].build(setting, config, corpus)
    except BenchmarkError as err:  # this corpus lacks what the setting needs (a dev file): others may not
        return {"error": f"{type(err).__name__}: {err}", "stage": "corpus"}
    except Exception as err:  # a system that cannot start is reported, not fatal
        return {"error": f"{type(err).__name__}: {err}", "stage": "build"}
    load_s = time.perf_counter() - start

    warm, chars = [], 0
    for text in texts:
        if chars >= config.warmup_chars:
            break
        warm.append(text)
        chars += len(text)
    start = time.perf_counter()
    segment(warm)
    warmup_s = time.perf_counter() - start

    chunks = timed_chunks(texts)
    from tqdm.auto import tqdm

    bar = tqdm(total=sum(map(len, texts)), unit="char", unit_scale=True, desc=f"{label(system, setting)} {corpus.name}",
               file=sys.stderr, leave=False, disable=not config.show_progress)
    words: list[list[str]] = []
    start = time.perf_counter()
    for chunk in chunks:
        words += segment(chunk)
        bar.update(sum(map(len, chunk)))
    seconds = time.perf_counter() - start
    bar.close()
    peak_mb = peak_rss_mb() if config.isolate else None  # before speed_figures' second pass
    return {"words": words, "about": about, "load_s": load_s, "warmup_s": warmup_s, "seconds": seconds,
            "base_mb": base_mb, "peak_mb": peak_mb, **speed_figures(system, config, segment, texts, chunks)}


def speed_figures(system: str, config: BenchConfig, segment: SegmentFn, texts: list[str],
                  chunks: list[list[str]]) -> dict:
    """latency_ms (the shortest of the first 100 sentences of >= 5 characters, one per call),
    startup_s, and the timed pass on all cores (seconds_all, cores_all; None for a system that
    runs on one core whatever it is given)."""
    import os
    import statistics
    import subprocess

    from segmenter.run.cores import (
        available_cores,  # after peak_mb: jieba's figure stays its own
    )

    short = min((t for t in texts[:100] if len(t) >= 5), key=len, default=SHORT_SENTENCE)
    calls = []
    for _ in range(LATENCY_CALLS):
        start = time.perf_counter()
        segment([short])
        calls.append(time.perf_counter() - start)
    figures = {"latency_ms": statistics.median(calls) * 1000, "startup_s": None, "seconds_all": None,
               "seconds_all_first": None, "cores_all": None}
    command = SYSTEMS[system].startup
    if command is not None:
        # The segmenter the benchmark runs, whatever the working directory: its package's parent first.
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": package_root}
        runs = []
        for _ in range(STARTUP_RUNS):
            start = time.perf_counter()
            done = subprocess.run(command(config), input=SHORT_SENTENCE + "\n", capture_output=True, text=True, env=env,
                                  timeout=300)
            runs.append(time.perf_counter() - start)
            if done.returncode != 0 or not done.stdout.strip():
                runs = []
                break
        figures["startup_s"] = statistics.median(runs) if runs else None
    jieba = _reference(config, chunks[0])
    if jieba is not None:
        figures["paired_seconds"] = list(_in_turns(segment, jieba, chunks))
    cores = available_cores()
    set_threads = getattr(segment, "set_threads", None)
    if set_threads is not None and cores > config.threads:
        set_threads(cores)
        figures["seconds_all_first"] = _timed(segment, chunks)  # the first pass starts what the cores need
        own, reference = _in_turns(segment, jieba, chunks)  # as on one thread: one pass moved too much
        figures["seconds_all"] = own / PAIRED_ROUNDS
        if jieba is not None:  # a pass each, as the first pass is one (report.py divides them)
            figures["paired_seconds_all"] = [own / PAIRED_ROUNDS, reference / PAIRED_ROUNDS]
        figures["cores_all"] = cores
        set_threads(config.threads)
    return figures


def _in_turns(segment: SegmentFn, jieba: SegmentFn | None, chunks: list[list[str]]) -> tuple[float, float]:
    """(the system's seconds, jieba's) over PAIRED_ROUNDS passes each, in turns: jieba, the
    system, jieba, the system (jieba's 0 without jieba)."""
    own = reference = 0.0
    for _ in range(PAIRED_ROUNDS):
        reference += _timed(jieba, chunks) if jieba is not None else 0.0
        own += _timed(segment, chunks)
    return own, reference


def _timed(segment: SegmentFn, chunks: list[list[str]]) -> float:
    start = time.perf_counter()
    for chunk in chunks:
        segment(chunk)
    return time.perf_counter() - start


def _reference(config: BenchConfig, warm: list[str]) -> SegmentFn | None:
    """jieba as the "jieba" row runs it, warmed up on `warm`, to time beside the system; None
    when it is not installed (the report then divides by the jieba row's own chars/s)."""
    import importlib.util

    if importlib.util.find_spec("jieba") is None:
        return None
    segment, _ = SYSTEMS["jieba"].build("default", config, None)
    segment(warm)
    return segment


def worker_main(argv: list[str]) -> int:
    """`python -c BOOTSTRAP systems.py measure.py SPEC RESULT`: one run, its result written as JSON."""
    spec_path, result_path = argv
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    config = BenchConfig(**{**spec["config"], "systems": [tuple(p) for p in spec["config"]["systems"]]})
    try:
        result = segment_run(spec["system"], spec["setting"], config, CorpusRun(**spec["corpus"]), spec["texts"])
    except Exception as err:
        result = {"error": f"{type(err).__name__}: {err}", "stage": "run"}
    Path(result_path).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0
