"""Benchmark: segment gold corpora with several systems, then score, time and weigh each run.

For every corpus (a gold file: its input is each line with the spaces removed) and every
(system, setting) there is one run (measure.segment_run: build, warm-up, timed pass),
scored here with the SIGHAN figures (evaluation.py) against the gold words.

Each run happens in a Python process of its own (a worker) so that its peak memory is that
system's alone: a process's high-water mark never goes down, so runs sharing one process
would each report the largest before them. The worker loads systems.py and measure.py by their
paths, without the `segmenter` package and the torch it imports (see there). Systems that are not installed,
or cannot start (a model they would download), are skipped, with the reason on the console
and in the report. Reporting (JSON, markdown table, plot): report.py.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..train.corpus import read_gold
from . import measure
from . import systems as benchmark_systems
from .evaluation import read_lexicon, score
from .measure import segment_run
from .systems import (
    DEFAULT_SYSTEMS,
    SEGMENTER_SETTINGS,
    SYSTEMS,
    BenchConfig,
    BenchmarkError,
    CorpusRun,
    System,
    label,
    parse_systems,
)

__all__ = [  # the benchmark's public names, those of systems.py and measure.py included
    "DEFAULT_SYSTEMS", "SEGMENTER_SETTINGS", "SYSTEMS", "BenchConfig", "BenchResult", "BenchmarkError", "CorpusRun",
    "System", "default_lexicon", "label", "parse_systems", "run_benchmark", "run_isolated", "segment_run",
]

logger = logging.getLogger("segmenter.benchmark")


def default_lexicon(gold: str | Path) -> Path | None:
    """The shared layout: gold/pku_test.txt -> lexicon/pku_training_words.txt, when it exists."""
    gold = Path(gold)
    candidate = gold.parent.parent / "lexicon" / f"{gold.stem.split('_')[0]}_training_words.txt"
    return candidate if candidate.is_file() else None


# Loads systems.py, then measure.py (which imports it by that name), as modules of their own
# (registered in sys.modules, which dataclasses need) without importing the segmenter package,
# and torch with it.
_BOOTSTRAP = (
    "import importlib.util, sys\n"
    "def load(name, path):\n"
    "    spec = importlib.util.spec_from_file_location(name, path)\n"
    "    module = importlib.util.module_from_spec(spec); sys.modules[name] = module\n"
    "    spec.loader.exec_module(module); return module\n"
    "load('segmenter_benchmark_systems', sys.argv[1])\n"
    "sys.exit(load('segmenter_benchmark_worker', sys.argv[2]).worker_main(sys.argv[3:]))\n"
)


def run_isolated(system: str, setting: str, config: BenchConfig, corpus: CorpusRun, texts: list[str]) -> dict:
    """segment_run in a fresh worker process; returns its result (or why there is none)."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = str(config.threads)
    # The worker must find this checkout's segmenter even when it is not installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="segmenter-bench-") as tmp:
        spec_path, result_path = Path(tmp) / "spec.json", Path(tmp) / "result.json"
        spec = {"system": system, "setting": setting, "config": asdict(config), "corpus": asdict(corpus),
                "texts": texts}
        spec_path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        try:  # the worker's stdout goes to our stderr: stdout is for the report
            stdout = sys.__stderr__.fileno()
        except (AttributeError, OSError, ValueError):
            stdout = None
        process = subprocess.run(
            [sys.executable, "-c", _BOOTSTRAP, benchmark_systems.__file__, measure.__file__, str(spec_path),
             str(result_path)],
            env=env, stdin=subprocess.DEVNULL, stdout=stdout,
        )
        if not result_path.is_file():
            return {"error": f"the worker process died (exit code {process.returncode}); its messages are above",
                    "stage": "run"}
        return json.loads(result_path.read_text(encoding="utf-8"))


@dataclass
class BenchResult:
    config: BenchConfig
    records: list[dict] = field(default_factory=list)  # one per (system, setting, corpus) that ran
    skipped: list[dict] = field(default_factory=list)  # {system, setting, corpus, reason}
    corpora: list[dict] = field(default_factory=list)  # {name, gold, lexicon, sentences, chars}
    seconds: float = 0.0  # the whole run, workers' start-up included


def run_benchmark(config: BenchConfig) -> BenchResult:
    """Every (system, setting) on every corpus; systems that cannot run are skipped with a reason."""
    if len(config.lexicons) != len(config.gold):
        raise BenchmarkError(f"{len(config.gold)} gold files but {len(config.lexicons)} lexicons; "
                             "give one per gold file")
    result = BenchResult(config)
    started = time.perf_counter()
    runnable = []
    for system, setting in config.systems:
        spec = SYSTEMS[system]
        if importlib.util.find_spec(spec.module) is None:
            reason = f"not installed ({spec.install})"
            result.skipped.append({"system": system, "setting": setting, "corpus": None, "reason": reason})
            logger.warning("%s: not run: %s", label(system, setting), reason)
            continue
        if spec.check is not None:
            spec.check(config)
        runnable.append((system, setting))

    corpora = []
    for gold_path, lexicon_path in zip(config.gold, config.lexicons):
        try:
            gold = read_gold(gold_path, config.limit)
            lexicon = read_lexicon(lexicon_path) if lexicon_path else None
        except (OSError, ValueError) as err:
            raise BenchmarkError(str(err)) from None
        if not gold:
            raise BenchmarkError(f"{gold_path} holds no sentences")
        name = Path(gold_path).stem
        if any(c[0].name == name for c in corpora):
            raise BenchmarkError(f"two gold files are named {name}; rename one")
        corpora.append((CorpusRun(name, str(gold_path), config.limit), gold, lexicon))
        texts = ["".join(words) for words in gold]
        result.corpora.append({"name": name, "gold": str(gold_path), "lexicon": lexicon_path,
                               "sentences": len(gold), "chars": sum(map(len, texts))})

    total, done = len(runnable) * len(corpora), 0
    for corpus, gold, lexicon in corpora:
        texts = ["".join(words) for words in gold]
        chars = sum(map(len, texts))
        for system, setting in runnable:
            done += 1
            if any(s["system"] == system and s["setting"] == setting and s["corpus"] is None for s in result.skipped):
                continue  # it could not start on an earlier corpus: it will not start now
            run = run_isolated if config.isolate else segment_run
            outcome = run(system, setting, config, corpus, texts)
            name = label(system, setting)
            if "error" in outcome:
                where = None if outcome["stage"] == "build" else corpus.name
                result.skipped.append({"system": system, "setting": setting, "corpus": where,
                                       "reason": outcome["error"]})
                logger.warning("[%d/%d] %s on %s: not run: %s", done, total, name, corpus.name, outcome["error"])
                continue
            try:
                scores = score(gold, outcome["words"], lexicon)
            except ValueError as err:
                result.skipped.append({"system": system, "setting": setting, "corpus": corpus.name, "reason": str(err)})
                logger.warning("[%d/%d] %s on %s: output not scorable: %s", done, total, name, corpus.name, err)
                continue
            record = {"system": system, "setting": setting, "label": name, "corpus": corpus.name,
                      "sentences": len(gold), "chars": chars, **scores.as_dict(),
                      "chars_per_s": chars / outcome["seconds"] if outcome["seconds"] > 0 else None,
                      **{k: outcome[k] for k in ("peak_mb", "base_mb", "load_s", "warmup_s", "seconds", "about")},
                      **{k: outcome.get(k) for k in ("startup_s", "latency_ms", "cores_all", "paired_seconds",
                                                     "paired_seconds_all")},
                      **{rate: chars / outcome[seconds] if outcome.get(seconds) else None
                         for rate, seconds in (("chars_per_s_all", "seconds_all"),
                                               ("chars_per_s_all_first", "seconds_all_first"))}}
            result.records.append(record)
            logger.info("[%d/%d] %s on %s: F1 %.3f, %s chars/s, peak %s MiB", done, total, name, corpus.name,
                        record["F1"], f"{record['chars_per_s']:,.0f}" if record["chars_per_s"] else "?",
                        f"{record['peak_mb']:.0f}" if record["peak_mb"] is not None else "n/a")
    result.seconds = time.perf_counter() - started
    return result
