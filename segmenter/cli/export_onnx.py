"""Export a model folder's reader graph to model.onnx, for Segmenter(engine="onnx")."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..train.onnx_static import CALIBRATION_LINES
from . import CLIError

CALIBRATION_CHARS = 100_000  # of raw text, in lines of 8-250 characters, sampled with seed 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, help="model folder (default: the embedded model)")
    parser.add_argument("-o", "--output", default=None, help="file to write (default: MODEL/model.onnx)")
    parser.add_argument("--int8", nargs="?", const="dynamic", choices=("dynamic", "static"), default=None,
                        help="int8 weights, faster on CPUs with VNNI. dynamic (--int8 alone): scores depend on which "
                             "windows share a batch (words change with threads and batch size); static: activation "
                             "scales fixed from --calibration raw text, words the same for any batch")
    parser.add_argument("--calibration", nargs="+", metavar="RAW", default=None,
                        help="with --int8 static: raw text files (one text a line); the first "
                             f"{CALIBRATION_LINES:,} lines of a seeded sample of {CALIBRATION_CHARS:,} characters "
                             "set the activation scales")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or log lines, warnings only")


def run(args: argparse.Namespace) -> int:
    from ..api import Segmenter
    from ..model.folders import ModelLoadError
    from ..model.onnx_engine import ONNX_FILE
    from ..train.onnx_export import export_onnx

    if (args.int8 == "static") != bool(args.calibration):
        raise CLIError("--int8 static needs --calibration RAW… (raw text files), and --calibration goes with it")
    for path in args.calibration or ():
        if not Path(path).is_file():
            raise CLIError(f"--calibration: no such file: {path}")
    try:
        segmenter = Segmenter(args.model, engine="torch")
    except (ModelLoadError, ValueError, TypeError) as err:
        raise CLIError(str(err)) from None
    calibration = None
    if args.calibration:
        from ..train.selftrain import sample_lines

        calibration = sample_lines(args.calibration, CALIBRATION_CHARS, 0, 8, 250)[:CALIBRATION_LINES]
        if not calibration:
            raise CLIError(f"--calibration: no lines of 8-250 characters in {', '.join(args.calibration)}")
    out = Path(args.output) if args.output else segmenter.folder / ONNX_FILE
    if not os.access(out.parent if out.parent.exists() else Path("."), os.W_OK):
        raise CLIError(f"cannot write {out}; pass -o FILE "
                       "(and copy the model folder beside it: Segmenter.save_pretrained)")
    source = ""
    if calibration:
        source = f"{len(calibration)} lines sampled (seed 0) from {', '.join(map(str, args.calibration))}"
    export_onnx(segmenter, out, int8=args.int8 or False, calibration=calibration, calibration_source=source)
    if out.parent.resolve() == segmenter.folder.resolve():  # its entry in the folder's checksums.json
        from ..model.integrity import update_manifest

        update_manifest(segmenter.folder, [out.name])
    if not args.quiet:
        print(f"wrote {out}" + ("" if out.parent == segmenter.folder
                                else f"; Segmenter(engine='onnx') reads {ONNX_FILE} in the model folder"))
    return 0
