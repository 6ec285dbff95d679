"""Reporting a benchmark: the JSON records, the markdown tables, the plot.

Everything here is generated from a BenchResult (runner.py): no figure is ever typed by hand.
The markdown says the command that made it and the machine it ran on, so that a reader can
tell how far the speed and memory columns carry to their own machine.
"""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from .evaluation import LENGTH_BINS
from .measure import PAIRED_ROUNDS
from .runner import BenchResult
from .systems import label

# system -> the distributions whose versions the report names
DISTRIBUTIONS = {"segmenter": ("segmenter-heads", "torch", "transformers"), "jieba": ("jieba",),
                 "jieba-nohmm": ("jieba",), "rjieba": ("rjieba",), "pkuseg": ("pkuseg",),
                 "spacy-pkuseg": ("spacy-pkuseg",), "thulac": ("thulac",)}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20  # kB -> GiB
    except (OSError, ValueError):
        pass
    return None


def machine_info(result: BenchResult) -> dict:
    config = result.config
    return host_info(dict.fromkeys(r["system"] for r in result.records), config.device, config.threads)


def host_info(systems, device: str = "cpu", threads: int = 1) -> dict:
    """The machine a run measured on: CPU, cores, memory, OS, Python, the versions of the
    `systems`' packages (bench.systems' names), the device and threads, and the date."""
    from importlib.metadata import PackageNotFoundError, version

    packages = {}
    for system in systems:
        for name in DISTRIBUTIONS.get(system, ()):
            try:
                packages[name] = version(name)
            except PackageNotFoundError:
                pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    from ..model.onnx_engine import int8_instructions

    info = {
        "cpu": _cpu_model(),
        "int8": int8_instructions(),  # the int8 graphs' speed (and an 8-bit graph's words) depend on it
        "commit": _commit(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "device": device,
        "threads": threads,
        "packages": packages,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if device != "cpu":
        import torch

        info["gpu"] = torch.cuda.get_device_name(device) if device.startswith("cuda") else device
    return info


def to_json(result: BenchResult, machine: dict) -> dict:
    config = result.config
    return {
        "command": config.command,
        "machine": machine,
        "settings": {k: getattr(config, k)
                     for k in ("limit", "model", "device", "threads", "batch_size", "warmup_chars", "isolate")},
        "corpora": result.corpora,
        "seconds": result.seconds,
        "records": result.records,
        "skipped": result.skipped,
    }


def write_json(result: BenchResult, machine: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_json(result, machine), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def read_json(path: str | Path) -> tuple[BenchResult, dict]:
    """A run written by write_json, back as (result, machine): to render its table or plot again
    (after a change to this module) without running the systems again."""
    from .systems import BenchConfig

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    systems = list(dict.fromkeys((r["system"], r["setting"]) for r in data["records"]))
    config = BenchConfig(gold=[c["gold"] for c in data["corpora"]], lexicons=[c["lexicon"] for c in data["corpora"]],
                         systems=systems, command=data["command"], **data["settings"])
    result = BenchResult(config, records=data["records"], skipped=data["skipped"], corpora=data["corpora"],
                         seconds=data["seconds"])
    return result, data["machine"]


def _fixed(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _count(value) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def machine_line(machine: dict) -> str:
    memory = f", {machine['memory_gib']:.0f} GiB RAM" if machine.get("memory_gib") else ""
    device = f"; device {machine['gpu']}" if machine.get("gpu") else ""
    packages = ", ".join(f"{name} {v}" for name, v in machine["packages"].items())
    int8 = f", {machine['int8']}" if machine.get("int8") else ""
    commit = f"; commit {machine['commit']}" if machine.get("commit") else ""
    return (
        f"{machine['cpu']} ({machine['usable_cores']} of {machine['cores']} cores usable{memory}{int8}){device}; "
        f"{machine['os']}; Python {machine['python']}; {packages}; {machine['threads']} thread(s) per system; "
        f"{machine['date']}{commit}"
    )


def _commit() -> str:
    """The commit of the code that ran (`git describe --always --dirty`: "-dirty" for a tree with
    uncommitted changes), or "" outside a git checkout."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[2]), "describe", "--always",
                               "--dirty", "--exclude=*"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _bins(values, show) -> str:
    return " / ".join(show(v) for v in values)


def length_lines(records: list[dict]) -> list[str]:
    """The by-length table of one corpus: recall and precision per gold word length, and the
    output's word-length histogram against gold's (records without `by_length` are left out)."""
    records = [r for r in records if r.get("by_length")]
    if not records:
        return []
    bins = " / ".join(LENGTH_BINS)
    gold = [records[0]["by_length"][b]["gold"] for b in LENGTH_BINS]
    lines = ["", f"By word length ({bins} characters):", "",
             "| system | recall | precision | words output |", "|---|--:|--:|--:|",
             f"| gold | | | {_bins(gold, _count)} |"]
    for r in records:
        rows = [r["by_length"][b] for b in LENGTH_BINS]
        lines.append(f"| {r['label']} | {_bins([x['R'] for x in rows], lambda v: _fixed(v, 2))} "
                     f"| {_bins([x['P'] for x in rows], lambda v: _fixed(v, 2))} "
                     f"| {_bins([x['test'] for x in rows], _count)} |")
    return lines


def to_markdown(result: BenchResult, machine: dict) -> str:
    config = result.config
    lines = [
        "<!-- Generated by `segmenter bench` (segmenter/bench/report.py): do not edit by hand. -->",
        "",
        f"Command: `{config.command}`",
        "",
        f"Machine: {machine_line(machine)}",
    ]
    for corpus in result.corpora:
        subset = f"first {corpus['sentences']:,} sentences" if config.limit else f"{corpus['sentences']:,} sentences"
        lexicon = (f"OOV against `{Path(corpus['lexicon']).name}`" if corpus["lexicon"]
                   else "no training word list, so no OOV figures")
        lines += ["", f"**{corpus['name']}** ({subset}, {corpus['chars']:,} characters; {lexicon})", "",
                  "| system | P | R | F1 | OOV rate | OOV recall | IV recall | chars/s | peak MiB |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for r in (r for r in result.records if r["corpus"] == corpus["name"]):
            lines.append(
                f"| {r['label']} | {_fixed(r['P'])} | {_fixed(r['R'])} | **{_fixed(r['F1'])}** "
                f"| {_fixed(r['oov_rate'])} | {_fixed(r['oov_recall'])} | {_fixed(r['iv_recall'])} "
                f"| {_count(r['chars_per_s'])} | {_count(r['peak_mb'])} |"
            )
        lines += length_lines([r for r in result.records if r["corpus"] == corpus["name"]])
    lines += speed_table(result)
    # One line per (system, description), grouped by system in table order: a setting whose
    # description depends on the corpus (calibrated: which dev file) lists each under its name.
    abouts: dict[str, dict[str, None]] = {}
    for r in result.records:
        abouts.setdefault(r["label"], {})[r["about"]] = None
    if abouts:
        lines += ["", "Systems:"] + [f"- `{name}`: {about}" for name, texts in abouts.items() for about in texts]
    if result.skipped:
        lines += ["", "Not run:"]
        for s in result.skipped:
            where = f" on {s['corpus']}" if s["corpus"] else ""
            lines.append(f"- `{label(s['system'], s['setting'])}`{where}: {s['reason']}")
    bases = [r["base_mb"] for r in result.records if r["base_mb"] is not None and r["peak_mb"] is not None]
    memory_note = (
        f"peak MiB is the maximum resident memory of the process that ran that system alone, interpreter included "
        f"(~{min(bases):.0f} MiB before the system loaded)" if bases
        else "peak MiB was not measured (runs shared one process: --in-process)"
    )
    lines += [
        "",
        f"P, R, F1, OOV/IV recall: the SIGHAN 2005 `score` figures (word spans). chars/s: characters of the gold text "
        f"(spaces removed) per second of segmentation, after loading and a warm-up on the first "
        f"{config.warmup_chars:,} characters; all cores: the mean of {PAIRED_ROUNDS} passes on all cores after a first "
        f"(a column of its own, which starts what the system needs for them: a Segmenter's helper processes). "
        f"× jieba: jieba's seconds over the system's on the same characters, timed in turns in the system's own "
        f"worker ({PAIRED_ROUNDS} passes each on one thread, {PAIRED_ROUNDS} more each with the system on all cores), "
        f"so that both see the same load of a shared machine; the chars/s columns are each system's own timed passes. "
        f"{memory_note}. The whole run took {_duration(result.seconds)}.",
        "",
    ]
    return "\n".join(lines)


def speed_table(result: BenchResult) -> list[str]:
    """Markdown lines: per system, over all corpora, chars/s on 1 thread and on all cores (and as a
    multiple of jieba's in this run), one-sentence latency (and as a multiple of jieba's in this
    run: issue 57 asks for at most 10) and command-line start-up."""
    rows = {}
    for r in result.records:
        rows.setdefault(r["label"], []).append(r)
    if not rows:
        return []

    def rate(records, key):  # all characters over all seconds, None if any run lacks the figure
        seconds = [r["chars"] / r[key] for r in records if r.get(key)]
        return sum(r["chars"] for r in records) / sum(seconds) if seconds and len(seconds) == len(records) else None

    def median(records, key):
        values = sorted(r[key] for r in records if r.get(key) is not None)
        return values[len(values) // 2] if values else None

    def paired(records, key, own_seconds):
        """jieba's seconds over the system's on the same characters, the two timed in turns in the
        same worker (measure.py: paired_seconds); None where a record lacks them (an older run's)."""
        if not all(r.get(key) for r in records):
            return None
        return sum(r[key][1] for r in records) / sum(map(own_seconds, records))

    jieba = rate(rows["jieba"], "chars_per_s") if "jieba" in rows else None
    jieba_latency = median(rows["jieba"], "latency_ms") if "jieba" in rows else None
    cores = max((r.get("cores_all") or 0 for r in result.records), default=0)
    lines = ["", ("**Speed** (all corpora together; start-up: a fresh process segmenting one sentence "
                  "from its command line)"), "",
             (f"| system | chars/s, 1 thread | × jieba | chars/s, all cores ({cores or '-'}) | × jieba "
              "| all cores, first pass × jieba | latency ms (1 short sentence) | latency × jieba's | CLI start-up s |"),
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for name, records in rows.items():
        one, every = rate(records, "chars_per_s"), rate(records, "chars_per_s_all")
        first = rate(records, "chars_per_s_all_first") or every  # runs before it had one pass only
        every, first = every or one, first or one  # a system without threads runs on one core whatever it is given
        # × jieba: timed side by side in the worker, else (an older run) against the jieba row's chars/s
        x_one = paired(records, "paired_seconds", lambda r: r["paired_seconds"][0])
        x_one = x_one if x_one is not None else (one / jieba if one and jieba else None)
        x_every = paired(records, "paired_seconds_all", lambda r: r["paired_seconds_all"][0])
        x_every = x_every if x_every is not None else (every / jieba if every and jieba and every != one else x_one)
        x_first = None
        if all(r.get("chars_per_s_all_first") for r in records):
            x_first = paired(records, "paired_seconds_all", lambda r: r["chars"] / r["chars_per_s_all_first"])
        x_first = x_first if x_first is not None else (first / jieba if first and jieba and first != one else x_every)
        ratio = (lambda v: f"{v:.3f}" if v else "–")
        latency, startup = median(records, "latency_ms"), median(records, "startup_s")
        x_latency = latency / jieba_latency if latency is not None and jieba_latency else None
        lines.append(f"| {name} | {_count(one)} | {ratio(x_one)} | {_count(every)} | {ratio(x_every)} "
                     f"| {ratio(x_first)} "
                     f"| {f'{latency:.3f}' if latency is not None else '–'} "
                     f"| {f'{x_latency:.1f}' if x_latency is not None else '–'} "
                     f"| {f'{startup:.2f}' if startup is not None else '–'} |")
    return lines


def plot(result: BenchResult, path: str | Path) -> None:
    """F1 against characters/second (log scale), one panel per corpus, one marker per system."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    corpora = [c["name"] for c in result.corpora]
    labels = list(dict.fromkeys(r["label"] for r in result.records))
    markers = "osD^v<>pP*Xh"
    colors = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, max(len(corpora), 1), figsize=(4.8 * max(len(corpora), 1), 4.2), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        for k, name in enumerate(labels):
            points = [r for r in result.records if r["corpus"] == corpus and r["label"] == name and r["chars_per_s"]]
            if points:
                ax.scatter([r["chars_per_s"] for r in points], [r["F1"] for r in points], s=55,
                           marker=markers[k % len(markers)], color=colors(k % 10), label=name)
        ax.set_xscale("log")
        ax.set_title(corpus)
        ax.set_xlabel("characters / second (log)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("F1")
    handles, names = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:  # a system absent from the first panel still belongs in the legend
        for handle, name in zip(*ax.get_legend_handles_labels()):
            if name not in names:
                handles.append(handle)
                names.append(name)
    if handles:
        fig.legend(handles, names, loc="lower center", ncol=min(len(names), 5), frameon=False)
    fig.tight_layout(rect=(0, 0.1 if handles else 0, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)

