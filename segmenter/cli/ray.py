"""Segment files on Ray (this machine's cores, or a cluster's): one output file per input file.

Examples:
  segmenter ray 'corpus/*.txt' out/                       # a local Ray on all cores
  segmenter ray 'corpus/**/*.txt' out/ --format jsonl     # {"line": n, "words": [...]} rows
  segmenter ray 's/*.txt' out/ --address auto             # the cluster this machine is in
  segmenter ray 's/*.txt' out/ --cpus-per-actor 0.5 --actors 2   # a 2-core laptop

Each output line holds the words of the input line of the same number, exactly as
`segmenter FILE` writes them. An actor that dies is restarted and its batches run again
(--max-restarts); each output is still written once, whole. On a cluster the inputs, the model
folder and OUT_DIR must be reachable at the same paths from every node (shared storage), and
segmenter installed there.
Needs the extra: pip install "segmenter-heads[ray]".
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
import threading

from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="IN",
                        help="input files or quoted glob patterns ('corpus/**/*.txt')")
    parser.add_argument("out_dir", metavar="OUT_DIR",
                        help="folder for the outputs: each input's path below the inputs' common folder")
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join ('auto': the one this machine is in; default: start Ray here)")
    parser.add_argument("--local-cpus", type=int, default=None,
                        help="CPUs of the Ray started here (default: all cores)")
    parser.add_argument("--format", choices=("text", "jsonl"), default="text",
                        help="text: words joined by -d (default); jsonl: line and words")
    parser.add_argument("-d", "--delimiter", default=" ",
                        help="string between words in text output (default: one space)")
    parser.add_argument("-m", "--model", default=None,
                        help="model folder, hub name, or a shipped model: default (the embedded one), fast")
    parser.add_argument("-g", "--granularity", default="default", help="fine, default, coarse, or a number in [0, 1]")
    parser.add_argument("--actors", type=int, default=None,
                        help="segmenting actors (default: as many as the CPUs or GPUs allow)")
    parser.add_argument("--cpus-per-actor", type=float, default=1.0,
                        help="CPUs each actor reserves; also its engine's threads (default: 1)")
    parser.add_argument("--gpus-per-actor", type=float, default=0.0,
                        help="GPUs each actor reserves; > 0 runs the model on CUDA (default: 0)")
    parser.add_argument("--lines-per-batch", type=int, default=256,
                        help="lines an actor segments at a time (default: 256)")
    parser.add_argument("--batch-size", type=int, default=64, help="windows per forward pass (default: 64)")
    parser.add_argument(
        "--encoding-errors", choices=("strict", "replace"), default="strict",
        help="undecodable bytes: stop with the file and line (strict), or write U+FFFD and go on (replace)",
    )
    parser.add_argument("--max-restarts", type=int, default=3,
                        help="times an actor that dies is restarted and its batches run again (default: 3; 0: none)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output from Ray")


# -q: what Ray itself prints to stderr when all goes well. Its Python loggers get an explicit
# level each before ray.init (which sets the "ray" logger's level, not theirs). The C++ core
# worker of this process writes its own lines to the descriptor 2 (an environment variable that
# lowers its level makes every Ray process print that it did): those are filtered out there.
QUIET_LOGGERS = (
    "ray._private.authentication.authentication_token_setup",  # "Token authentication is enabled ..."
    "ray.data._internal.progress",  # "Progress bars disabled ..."
)
# Ray Data's actors always have their constructor arguments in the object store, so every run
# with --max-restarts > 0 gets this line (ray-project/ray#53727: restarts can fail if those
# arguments are lost; a failed restart still ends the run with an error).
QUIET_LINES = re.compile(rb"core_worker\.cc:\d+: Actor with class name: .* has constructor arguments in the "
                         rb"object store and max_restarts > 0")


@contextlib.contextmanager
def quiet_ray(lines: re.Pattern = QUIET_LINES):
    """Silence Ray's own notices (-q): its loggers above, and the lines matching `lines` written
    to the descriptor 2 meanwhile (everything else written there goes through, in order)."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    sys.stderr.flush()
    original = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)

    def pump() -> None:
        with os.fdopen(read_end, "rb") as source:
            for line in source:
                if not lines.search(line):
                    os.write(original, line)

    # A daemon: Ray's processes hold the pipe too (inherited), and it ends when they are gone.
    thread = threading.Thread(target=pump, name="segmenter-quiet-ray", daemon=True)
    thread.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(original, 2)
        thread.join(timeout=2)


def run(args: argparse.Namespace) -> int:
    from .segment import parse_granularity

    try:
        from ..scale.ray import require_ray

        require_ray()
    except ImportError as err:
        raise CLIError(str(err)) from None
    from ..model.folders import ModelLoadError
    from ..scale.ray import check_model, run_job, user_error

    try:
        check_model(args.model, parse_granularity(args.granularity))
        with quiet_ray() if args.quiet else contextlib.nullcontext():
            report = run_job(
                args.inputs, args.out_dir, model=args.model, fmt=args.format, delimiter=args.delimiter,
                granularity=parse_granularity(args.granularity), address=args.address, local_cpus=args.local_cpus,
                actors=args.actors, cpus_per_actor=args.cpus_per_actor, gpus_per_actor=args.gpus_per_actor,
                lines_per_batch=args.lines_per_batch, batch_size=args.batch_size, errors=args.encoding_errors,
                quiet=args.quiet, max_restarts=args.max_restarts,
            )
    except Exception as err:
        message = user_error(err)  # a ModelLoadError raised in an actor
        ours = not type(err).__module__.startswith("ray")  # Ray's wrappers of task errors are bugs to show
        if message is None and ours and isinstance(err, (ModelLoadError, OSError, ValueError, TypeError)):
            message = str(err)
        if message is None:
            raise
        raise CLIError(message) from None
    logging.getLogger("segmenter").info(
        "%d files, %d lines, %d characters in %.1f s (%.0f chars/s, %d actors) -> %s%s",
        report.files, report.lines, report.characters, report.seconds, report.chars_per_second, report.actors,
        args.out_dir, f" ({report.duplicates} lines computed twice, written once)" if report.duplicates else "",
    )
    return 0
