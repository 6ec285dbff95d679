"""Distil a small, fast student from a segmenter model, on raw text labelled by that model.

Example (how the 2 x 192 student behind the shipped default was first made from the self-trained
6-layer model in runs/selftrained; docs/models.md has the exact commands; without -m the teacher
is the shipped default):
  RAW="../shared/corpora/raw/pretrain_raw.txt ../shared/corpora/raw/extra_raw.txt"
  segmenter distill -m runs/selftrained --raw $RAW --out runs/distill --chars 12000000 --label-only
  segmenter distill -m runs/selftrained --raw $RAW --out runs/distill --chars 12000000 --no-label \
      --layers 2 --hidden 192 --epochs 3 --gold ../shared/corpora/gold/pku_dev.txt

Or shrink the teacher itself (how the embedded default was made from the one before it):
  segmenter distill -m default --raw $RAW --out runs/distill --chars 16000000 --ffn 384 --lr 1e-3

The teacher's scores are cached in OUT/labels per chunk of 500 lines: the same command again
skips finished chunks. --label-only labels and stops (run it in the background); --no-label
trains on the chunks already on disk. --gold files only report F1; never pass test files.
"""
from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from . import CLIError
from .options import add_gold, add_raw, model_folder, non_negative_int, positive

NUMERIC = {
    "chars": (positive(int), "raw characters to label (default: 2000000)"),
    "layers": (positive(int), "student layers; the boundary head is head 0 of the last (default: 2)"),
    "hidden": (positive(int), "student hidden size (default: 128)"),
    "ffn": (positive(int), "shrink the teacher instead of training a fresh student: keep this many neurons of each "
                 "feed-forward layer, then learn the teacher's scores (its folder's profile and word table "
                 "carry over)"),
    "head_size": (positive(int), "size of one attention head; heads = hidden / head_size (default: 32)"),
    "intermediate": (positive(int), "a fresh student's feed-forward width (default: 4 x hidden)"),
    "window": (positive(int), "characters per student window (default: 126)"),
    "overlap": (non_negative_int, "window overlap in training (default: 32)"),
    "temperature": (positive(float), "soft target sigmoid(s_teacher / T) (default: 1)"),
    "hard": (float, "share of the hard label mixed into the target (default: 0.1)"),
    "minutes": (positive(float), "training minutes at most (default: 10)"),
    "epochs": (positive(float), "passes over the labels; --minutes caps the run (default: 1)"),
    "max_label_chars": (positive(int), "train on at most this many labelled characters (default: all finished chunks)"),
    "lr": (positive(float), "peak learning rate (default: 2e-3)"),
    "batch_size": (positive(int), "windows per step (default: 64)"),
    "seed": (int, "seed of sampling and training (default: 0)"),
    "train_seed": (int, "seed of the student's initialisation and batch order only (default: --seed): "
                        "another student from the same labels"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", dest="teacher", default="default", metavar="MODEL",
                        help="the teacher: model folder, hub name or shipped model "
                             "(default: default, the embedded one)")
    parser.add_argument("--teacher", dest="teacher", help=argparse.SUPPRESS)
    add_raw(parser, required=True)
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder: OUT/labels and OUT/NAME (resumable)")
    parser.add_argument("--name", default="student", help="sub-folder of OUT for the student (default: student)")
    add_gold(parser, "dev", "dev_sentences", "report the student's and the teacher's F1", 500,
             old="--dev", old_sentences="--dev-sentences", many=True)
    parser.add_argument("--label-only", action="store_true", help="label the raw sample and stop")
    parser.add_argument("--no-label", action="store_true", help="train on the label chunks already in OUT/labels")
    parser.add_argument("--no-pca-init", action="store_true",
                        help="random word embeddings (default: PCA of the teacher's)")
    parser.add_argument("--int8", action="store_true",
                        help="with --ffn: export model.onnx with int8 weights (faster on CPUs with VNNI; words then "
                             "depend on batching: segmenter export-onnx --help)")
    parser.add_argument("--threads", type=positive(int), default=None, help="torch CPU threads")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    for name, (kind, text) in NUMERIC.items():
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=text)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..train.distill import DistillConfig, distill

    teacher = str(model_folder(args.teacher))
    for path in args.raw + args.dev:
        if not Path(path).is_file():
            raise CLIError(f"{path}: no such file")
    if args.label_only and args.no_label:
        raise CLIError("--label-only and --no-label exclude each other")
    if args.threads:
        torch.set_num_threads(args.threads)
    given = {name: getattr(args, name) for name in (*NUMERIC, "dev_sentences") if getattr(args, name) is not None}
    known = {f.name for f in fields(DistillConfig)}
    config = DistillConfig(
        teacher=teacher, raw=args.raw, out=args.out, name=args.name, dev=args.dev, label_only=args.label_only,
        pca_init=not args.no_pca_init, int8=args.int8, **{k: v for k, v in given.items() if k in known},
    )
    if args.int8 and config.ffn is None:
        raise CLIError("--int8 goes with --ffn (a fresh student folder has no model.onnx: "
                       "segmenter export-onnx --int8)")
    if not 0 <= config.hard <= 1:
        raise CLIError(f"--hard is a share of the target, in [0, 1]; got {config.hard}")
    if not 2 <= config.overlap < config.window:
        raise CLIError(f"--overlap must be in [2, --window) = [2, {config.window}), got {config.overlap}")
    out = distill(config, label=not args.no_label)
    print(f"wrote {out}" if out else f"labelled {config.out}/labels")
    return 0
