"""Export a model folder's reader graph to model.onnx, for Segmenter(engine="onnx")."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from . import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, help="model folder (default: the embedded model)")
    parser.add_argument("-o", "--output", default=None, help="file to write (default: MODEL/model.onnx)")
    parser.add_argument("--int8", action="store_true",
                        help="int8 weights (dynamic quantisation): faster on CPUs with VNNI, but scores move and "
                             "depend on which windows share a batch (words change with threads and batch size)")
    parser.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    from ..api import Segmenter
    from ..model import ModelLoadError
    from ..onnx_engine import ONNX_FILE, export_onnx

    try:
        segmenter = Segmenter(args.model, engine="torch")
    except (ModelLoadError, ValueError, TypeError) as err:
        raise CLIError(str(err)) from None
    out = Path(args.output) if args.output else segmenter.folder / ONNX_FILE
    if not os.access(out.parent if out.parent.exists() else Path("."), os.W_OK):
        raise CLIError(f"cannot write {out}; pass -o FILE "
                       "(and copy the model folder beside it: Segmenter.save_pretrained)")
    export_onnx(segmenter, out, int8=args.int8)
    if out.parent.resolve() == segmenter.folder.resolve():  # its entry in the folder's checksums.json
        from ..integrity import update_manifest

        update_manifest(segmenter.folder, [out.name])
    if not args.quiet:
        print(f"wrote {out}" + ("" if out.parent == segmenter.folder
                                else f"; Segmenter(engine='onnx') reads {ONNX_FILE} in the model folder"))
    return 0
