"""Benchmark segmenters on gold corpora: SIGHAN scores, characters/second and peak memory.

Quick run (first 200 sentences of each file; the table is printed, and the JSON, table and
plot go to a scratch folder whose path is printed):
  segmenter bench --gold ../shared/corpora/gold/pku_test.txt ../shared/corpora/gold/msr_test.txt --limit 200

Nothing tracked changes unless you say where: --out-dir DIR writes DIR/bench.json, bench.md and
bench.png; --json, --markdown and --plot name single files (e.g. benchmarks/results/test.*).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
import tempfile
from pathlib import Path

from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..bench.systems import DEFAULT_SYSTEMS, SYSTEMS

    known = "; ".join(f"{name} ({', '.join(s.settings)})" if len(s.settings) > 1 else name
                      for name, s in SYSTEMS.items())
    parser.add_argument("--gold", nargs="+", metavar="FILE",
                        help="gold files: one sentence a line, words separated by spaces (required unless --from-json)")
    parser.add_argument("--lexicon", nargs="+", metavar="FILE",
                        help="the training word list of each gold file, in order ('none': no OOV figures for it); "
                             "default: ../lexicon/PREFIX_training_words.txt beside a gold folder, when there is one")
    parser.add_argument("--systems", default=DEFAULT_SYSTEMS,
                        help="comma-separated systems, or system:setting for one setting (default: %(default)s). "
                             f"Known: {known}")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="only the first N sentences of each gold file (smoke run: 50)")
    parser.add_argument("-m", "--model", default=None, help="segmenter's model folder (default: the embedded model)")
    parser.add_argument("--device", default="cpu", help="segmenter's device: cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch/BLAS threads of each system (default: 1, as jieba has: like against like)")
    parser.add_argument("--batch-size", type=int, default=64,
                        help="windows per batch (segmenter's forward pass; default: 64)")
    parser.add_argument("--warmup-chars", type=int, default=2000,
                        help="characters segmented once before timing (default: 2000)")
    parser.add_argument("--out-dir", metavar="DIR",
                        help="folder for bench.json, bench.md and bench.png (default: a new scratch folder under the "
                             "system's temporary folder, printed, unless --json/--markdown/--plot name files)")
    parser.add_argument("--json", metavar="FILE",
                        help="write one record per (system, setting, corpus) to this .json file")
    parser.add_argument("--markdown", metavar="FILE",
                        help="write the table to this .md file (the table is printed either way)")
    parser.add_argument("--plot", metavar="FILE",
                        help="plot F1 against characters/second, a panel per corpus, to this .png file "
                             "(needs matplotlib)")
    parser.add_argument("--in-process", action="store_true",
                        help="run every system in this process: quicker to start, but no peak memory figures")
    parser.add_argument("--from-json", metavar="RUN.json",
                        help="run nothing: write --markdown/--plot again from a run's --json "
                             "(its command and machine kept)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or per-run lines (bars are drawn only when stderr is a terminal)")


def command_line(args: argparse.Namespace) -> str:
    """The command as it reads best in a report: given options, defaults left out (but --systems)."""
    parts = ["--gold", *args.gold]
    if args.lexicon:
        parts += ["--lexicon", *args.lexicon]
    parts += ["--systems", args.systems]
    options = [("--limit", args.limit, None), ("--model", args.model, None), ("--device", args.device, "cpu"),
               ("--threads", args.threads, 1), ("--batch-size", args.batch_size, 64),
               ("--warmup-chars", args.warmup_chars, 2000), ("--out-dir", args.out_dir, None),
               ("--json", args.json, None), ("--markdown", args.markdown, None), ("--plot", args.plot, None)]
    parts += [str(x) for option, value, default in options if value != default for x in (option, value)]
    parts += ["--in-process"] if args.in_process else []
    return f"{getattr(args, 'command_prefix', 'segmenter bench')} {shlex.join(parts)}"


def _lexicons(args: argparse.Namespace) -> list[str | None]:
    from ..bench.runner import default_lexicon

    if args.lexicon is None:
        return [str(p) if (p := default_lexicon(g)) else None for g in args.gold]
    if len(args.lexicon) != len(args.gold):
        raise CLIError(f"--lexicon names {len(args.lexicon)} files for {len(args.gold)} gold files; "
                       "give one per gold file, in order ('none' where there is none)")
    for path in args.lexicon:
        if path != "none" and not os.path.isfile(path):
            raise CLIError(f"--lexicon {path}: no such file")
    return [None if path == "none" else path for path in args.lexicon]


def _check(args: argparse.Namespace) -> None:
    """Everything that can fail before a long run, checked before it."""
    if args.from_json:
        if args.gold or args.json:
            raise CLIError("--from-json renders a finished run: give it without --gold or --json")
        if not os.path.isfile(args.from_json):
            raise CLIError(f"--from-json {args.from_json}: no such file")
    elif not args.gold:
        raise CLIError("--gold is required: the gold files to score (or --from-json RUN.json to render a run again)")
    for path in args.gold or []:
        if not os.path.isfile(path):
            raise CLIError(f"--gold {path}: {'a directory' if os.path.isdir(path) else 'no such file'}")
    for name in ("limit", "threads", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CLIError(f"--{name.replace('_', '-')} must be a positive number, got {value}")
    if args.warmup_chars < 0:
        raise CLIError(f"--warmup-chars must be 0 or more, got {args.warmup_chars}")
    if args.out_dir and args.from_json:
        raise CLIError("--from-json renders a finished run: name the files with --markdown/--plot, not --out-dir")
    if args.out_dir and Path(args.out_dir).exists() and not Path(args.out_dir).is_dir():
        raise CLIError(f"--out-dir {args.out_dir} is a file; give a folder")
    for option in ("json", "markdown", "plot"):
        path = getattr(args, option)
        if path and Path(path).is_dir():
            raise CLIError(f"--{option} {path} is a folder; give a file name (or use --out-dir)")
        if path and not Path(path).resolve().parent.is_dir():
            raise CLIError(f"--{option} {path}: its folder does not exist")


def _outputs(args: argparse.Namespace) -> dict[str, Path | None]:
    """Where the JSON, the table and the plot go: the files named, else --out-dir, else (a run,
    not a rendering) a scratch folder, so that tracked results change only when asked to."""
    named = {kind: getattr(args, kind) for kind in ("json", "markdown", "plot")}
    if any(named.values()) and not args.out_dir:
        return {kind: Path(path) if path else None for kind, path in named.items()}
    if args.from_json and not args.out_dir:
        return dict.fromkeys(named)
    if args.out_dir:
        folder = Path(args.out_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CLIError(f"--out-dir {args.out_dir}: cannot create it ({err.strerror})") from None
    else:
        folder = Path(tempfile.mkdtemp(prefix="segmenter-bench-"))
    defaults = {"json": folder / "bench.json", "markdown": folder / "bench.md", "plot": folder / "bench.png"}
    return {kind: Path(named[kind]) if named[kind] else defaults[kind] for kind in named}


def run(args: argparse.Namespace) -> int:
    from ..bench.report import machine_info, read_json, write_json
    from ..bench.runner import BenchConfig, BenchmarkError, parse_systems, run_benchmark

    _check(args)
    if args.from_json:
        try:
            result, machine = read_json(args.from_json)
        except (ValueError, KeyError, TypeError) as err:
            raise CLIError(f"--from-json {args.from_json}: not a benchmark JSON "
                           f"({type(err).__name__}: {err})") from None
        _write_reports(_outputs(args), result, machine)
        return 0
    outputs = _outputs(args)
    try:
        config = BenchConfig(
            gold=list(args.gold), lexicons=_lexicons(args), systems=parse_systems(args.systems), limit=args.limit,
            model=args.model, device=args.device, threads=args.threads, batch_size=args.batch_size,
            warmup_chars=args.warmup_chars, isolate=not args.in_process,
            show_progress=not args.quiet and sys.stderr.isatty(),  # no \r bars in logs
            command=command_line(args),
        )
        result = run_benchmark(config)
    except BenchmarkError as err:
        raise CLIError(str(err)) from None
    if not result.records:
        reasons = "; ".join(f"{s['system']}: {s['reason']}" for s in result.skipped)
        raise CLIError(f"no system ran ({reasons})")

    machine = machine_info(result)
    if outputs["json"]:
        write_json(result, machine, outputs["json"])
    _write_reports(outputs, result, machine)
    return 0


def _write_reports(outputs: dict[str, Path | None], result, machine: dict) -> None:
    """Print the table; write it, and the plot, where `outputs` says; name every file written."""
    from ..bench.report import plot, to_markdown
    from ..run.files import write_text_atomic

    markdown = to_markdown(result, machine)
    sys.stdout.write(markdown)
    sys.stdout.flush()
    if outputs["markdown"]:
        write_text_atomic(outputs["markdown"], markdown)
    if outputs["plot"]:
        if importlib.util.find_spec("matplotlib") is None:
            print(f"segmenter bench: no plot ({outputs['plot']}): matplotlib is not installed "
                  "(pip install 'segmenter-heads[plot]')", file=sys.stderr)
            outputs = {**outputs, "plot": None}
        else:
            plot(result, outputs["plot"])
    written = [str(path) for path in outputs.values() if path is not None]
    if written:
        print(f"segmenter bench: wrote {', '.join(written)}", file=sys.stderr)
