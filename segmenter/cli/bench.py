"""Benchmark segmenters on gold corpora: SIGHAN scores, characters/second and peak memory."""
from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shlex
import sys
from pathlib import Path

from . import CLIError

logger = logging.getLogger("segmenter.benchmark")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..bench.systems import DEFAULT_SYSTEMS, SYSTEMS

    known = "; ".join(f"{name} ({', '.join(s.settings)})" if len(s.settings) > 1 else name for name, s in SYSTEMS.items())
    parser.add_argument("--gold", nargs="+", metavar="FILE",
                        help="gold files: one sentence a line, words separated by spaces (required unless --from-json)")
    parser.add_argument("--lexicon", nargs="+", metavar="FILE",
                        help="the training word list of each gold file, in order ('none': no OOV figures for it); "
                             "default: ../lexicon/PREFIX_training_words.txt beside a gold folder, when there is one")
    parser.add_argument("--systems", default=DEFAULT_SYSTEMS,
                        help=f"comma-separated systems, or system:setting for one setting (default: %(default)s). Known: {known}")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N sentences of each gold file (smoke run: 50)")
    parser.add_argument("-m", "--model", default=None, help="segmenter's model folder (default: the embedded model)")
    parser.add_argument("--device", default="cpu", help="segmenter's device: cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch/BLAS threads of each system (default: 1, as jieba has: like against like)")
    parser.add_argument("--batch-size", type=int, default=64, help="segmenter's windows per forward pass (default: 64)")
    parser.add_argument("--warmup-chars", type=int, default=2000,
                        help="characters segmented once before timing (default: 2000)")
    parser.add_argument("--json", metavar="OUT.json", help="write one record per (system, setting, corpus) here")
    parser.add_argument("--markdown", metavar="OUT.md", help="write the table here (default: print it)")
    parser.add_argument("--plot", metavar="OUT.png", help="plot F1 against characters/second, a panel per corpus")
    parser.add_argument("--in-process", action="store_true",
                        help="run every system in this process: quicker to start, but no peak memory figures")
    parser.add_argument("--from-json", metavar="RUN.json",
                        help="run nothing: write --markdown/--plot again from a run's --json (its command and machine kept)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or per-run lines")


def command_line(args: argparse.Namespace) -> str:
    """The command as it reads best in a report: given options, defaults left out (but --systems)."""
    parts = ["--gold", *args.gold]
    if args.lexicon:
        parts += ["--lexicon", *args.lexicon]
    parts += ["--systems", args.systems]
    options = [("--limit", args.limit, None), ("--model", args.model, None), ("--device", args.device, "cpu"),
               ("--threads", args.threads, 1), ("--batch-size", args.batch_size, 64),
               ("--warmup-chars", args.warmup_chars, 2000), ("--json", args.json, None),
               ("--markdown", args.markdown, None), ("--plot", args.plot, None)]
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
    for option in ("json", "markdown", "plot"):
        path = getattr(args, option)
        if path and not Path(path).resolve().parent.is_dir():
            raise CLIError(f"--{option} {path}: its folder does not exist")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise CLIError("--plot needs matplotlib: pip install matplotlib (or segmenter[bench])")


def run(args: argparse.Namespace) -> int:
    from ..bench.runner import BenchConfig, BenchmarkError, parse_systems, run_benchmark
    from ..bench.report import machine_info, read_json, write_json

    _check(args)
    if args.from_json:
        try:
            result, machine = read_json(args.from_json)
        except (ValueError, KeyError, TypeError) as err:
            raise CLIError(f"--from-json {args.from_json}: not a benchmark JSON ({type(err).__name__}: {err})") from None
        _write_reports(args, result, machine)
        return 0
    try:
        config = BenchConfig(
            gold=list(args.gold), lexicons=_lexicons(args), systems=parse_systems(args.systems), limit=args.limit,
            model=args.model, device=args.device, threads=args.threads, batch_size=args.batch_size,
            warmup_chars=args.warmup_chars, isolate=not args.in_process, show_progress=not args.quiet,
            command=command_line(args),
        )
        result = run_benchmark(config)
    except BenchmarkError as err:
        raise CLIError(str(err)) from None
    if not result.records:
        reasons = "; ".join(f"{s['system']}: {s['reason']}" for s in result.skipped)
        raise CLIError(f"no system ran ({reasons})")

    machine = machine_info(result)
    if args.json:
        write_json(result, machine, args.json)
        logger.info("wrote %s", args.json)
    _write_reports(args, result, machine)
    return 0


def _write_reports(args: argparse.Namespace, result, machine: dict) -> None:
    from ..bench.report import plot, to_markdown

    markdown = to_markdown(result, machine)
    if args.plot:
        plot(result, args.plot)
        logger.info("wrote %s", args.plot)
    if args.markdown:
        Path(args.markdown).write_text(markdown, encoding="utf-8")
        logger.info("wrote %s", args.markdown)
    else:
        sys.stdout.write(markdown)
