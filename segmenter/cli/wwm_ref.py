"""Write whole-word-masking references of a text file for Chinese BERT pretraining (run_mlm_wwm.py).

  segmenter wwm-ref --tokenizer bert-folder train.txt train_ref.txt
  python run_mlm_wwm.py --train_file train.txt --train_ref_file train_ref.txt ...

One JSON list a line, as transformers' run_chinese_ref.py writes them: the positions in the
tokenizer's input_ids ([CLS] is 0) of the Chinese characters that continue a word of the model.
Lines are split as run_mlm_wwm.py's text loader splits them (\\n, \\r\\n and \\r); a blank line
(empty or whitespace), which it drops, gives an empty line, which it drops too, so the two files
stay aligned. The file is streamed in batches of lines: memory stays flat.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import deque
from pathlib import Path

from . import CLIError
from .options import model_folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="UTF-8 text, one training text a line ('-': stdin)")
    parser.add_argument("output", metavar="OUT", help="the reference file, one JSON list a line ('-': stdout)")
    parser.add_argument("--tokenizer", required=True, metavar="DIR",
                        help="the folder of the BERT tokenizer the model is trained with (a local folder)")
    parser.add_argument("-m", "--model", default=None,
                        help="the segmenter model: folder, hub name, or a shipped model: default, fast")
    parser.add_argument("-g", "--granularity", default="default", help="fine, default, coarse, or a number in [0, 1]")
    parser.add_argument("--max-length", type=int, default=512,
                        help="the training script's max_seq_length: tokens past it are left out (default: 512; "
                        "0: no truncation)")
    parser.add_argument("--batch-lines", type=int, default=512, help="lines segmented and tokenized together "
                        "(default: 512)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default: cpu)")
    parser.add_argument("--encoding-errors", choices=("strict", "replace"), default="strict",
                        help="undecodable bytes: stop (strict), or read U+FFFD and go on (replace)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar and no summary (there is no bar unless stderr is a terminal)")


def read_lines(path: str, errors: str):
    """The lines of a file (or stdin) as run_mlm_wwm.py's `datasets` text loader reads them (open()
    in text mode: universal newlines, so \r\n and a lone \r end a line too), the break dropped.
    Read as bytes a line at a time, so that an undecodable line is named."""
    name = "<stdin>" if path == "-" else path
    with (contextlib.nullcontext(sys.stdin.buffer) if path == "-" else open(path, "rb")) as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8", errors=errors)
            except UnicodeDecodeError as err:
                raise CLIError(f"{name}, line {number}: bytes that are not UTF-8 at column {err.start + 1}; "
                               "convert the file to UTF-8 or pass --encoding-errors replace") from None
            line = line.removesuffix("\n").removesuffix("\r")
            yield from line.split("\r")


def run(args: argparse.Namespace) -> int:
    folder = model_folder(args.model)  # a bad -m first, in one line, before anything loads
    if args.input != "-" and not Path(args.input).is_file():
        raise CLIError(f"{args.input}: no such file")
    if not Path(args.tokenizer).is_dir():
        raise CLIError(f"--tokenizer {args.tokenizer}: no such folder (a tokenizer is read from a local folder)")
    if args.max_length < 0 or args.max_length == 1:
        raise CLIError(f"--max-length must be 0 (no truncation) or at least 2, got {args.max_length}")
    if args.batch_lines < 1:
        raise CLIError(f"--batch-lines must be at least 1, got {args.batch_lines}")
    if args.output != "-" and Path(args.output).is_dir():
        raise CLIError(f"{args.output} is a directory; give a file name")

    from ..api import Segmenter
    from ..integrations.wwm import iter_chinese_ref, load_tokenizer
    from ..run.files import atomic_path
    from .segment import parse_granularity

    try:
        tokenizer = load_tokenizer(args.tokenizer)
    except (OSError, ValueError) as err:
        raise CLIError(f"--tokenizer {args.tokenizer}: cannot load a tokenizer: {str(err).splitlines()[0]}") from None
    segmenter = Segmenter(folder, device=args.device, granularity=parse_granularity(args.granularity))
    blank: deque = deque()  # of each line in flight: is it blank?

    def texts():
        for line in read_lines(args.input, args.encoding_errors):
            blank.append(not line or line.isspace())
            yield line

    counts = {"lines": 0, "blank": 0, "positions": 0}

    def write(stream) -> None:
        refs = iter_chinese_ref(texts(), tokenizer, segmenter, batch_size=args.batch_lines,
                                max_length=args.max_length or None, show_progress=False if args.quiet else None)
        for ref in refs:
            is_blank = blank.popleft()
            stream.write("\n" if is_blank else json.dumps(ref) + "\n")
            counts["lines"] += 1
            counts["blank"] += is_blank
            counts["positions"] += 0 if is_blank else len(ref)

    if args.output == "-":
        write(sys.stdout)
    else:
        with atomic_path(args.output) as temporary, open(temporary, "w", encoding="utf-8", newline="\n") as stream:
            write(stream)
    if not args.quiet:
        print(f"wrote {args.output}: {counts['lines']:,} lines ({counts['blank']:,} blank), "
              f"{counts['positions']:,} positions that continue a word",
              file=sys.stderr if args.output == "-" else sys.stdout)
    return 0
