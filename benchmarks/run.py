"""Benchmark segmenter against jieba (and pkuseg, THULAC where installed) on gold corpora.

    python benchmarks/run.py --gold ../shared/corpora/gold/pku_test.txt --limit 50

The same as `segmenter bench` (segmenter/cli/bench.py, segmenter/bench/runner.py); see README.md here.
"""
import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's segmenter, installed or not

from segmenter.cli import CLIError  # noqa: E402
from segmenter.cli import bench  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/run.py", description=bench.__doc__.strip())
    bench.add_arguments(parser)
    parser.set_defaults(command_prefix="python benchmarks/run.py")  # for the command the report names
    args = parser.parse_args(argv)
    logging.basicConfig(format="%(message)s", level=logging.WARNING if args.quiet else logging.INFO)
    try:
        return bench.run(args)
    except CLIError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
