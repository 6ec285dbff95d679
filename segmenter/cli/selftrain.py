"""Self-train a segmenter on raw text from its own confident boundaries.

Example (the retired 6-layer `accurate` model's recipe; docs/models.md has the exact commands):
  segmenter convert-e5 --out runs/e5char
  segmenter selftrain --model runs/e5char --raw ../shared/corpora/raw/pretrain_raw.txt \\
      ../shared/corpora/raw/extra_raw.txt --out runs/selftrained --gold ../shared/corpora/gold/pku_dev.txt

Run the same command again to resume: finished rounds and labelled chunks are kept in --out.
--gold (a dev file) only chooses when to stop (reported); --calibrate fits the teacher to a few
dev sentences (reported as calibrated). Never pass test files. (--dev and --dev-sentences are
the old names of --gold and --gold-sentences.)
"""
from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from . import CLIError
from .options import add_gold, add_raw, model_folder, non_negative_int, positive

NUMERIC = {
    "rounds": (positive(int), "self-training rounds at most (default: 2)"),
    "chars": (positive(int), "raw characters sampled and labelled per round (default: 600000)"),
    "teacher_layers": (positive(int), "round 1 reads every head of this many lower layers of --model (default: 9)"),
    "student_layers": (positive(int), "the student keeps this many lower layers of --model (default: 6)"),
    "boundary_head": (non_negative_int, "head of the student's last layer that learns the boundaries (default: 0)"),
    "confidence": (float, "keep pseudo-labels whose teacher probability is at least this (default: 0.8)"),
    "quantile": (float, "unsupervised teacher: share of junctions the n-grams label on each side (default: 0.3)"),
    "alpha": (float, "word decoding: weight of n-gram autonomy against the boundary logits (default: 1.0)"),
    "minutes": (positive(float), "training minutes per round at most (default: 30)"),
    "epochs": (positive(float), "passes over a round's labels (default: 1)"),
    "lr": (positive(float), "peak learning rate (default: 5e-5)"),
    "batch_size": (positive(int), "windows per batch (a training step; default: 32)"),
    "calibrate_sentences": (positive(int), "sentences of --calibrate used (default: 100)"),
    "seed": (int, "seed of sampling and training (default: 0)"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", required=True,
                        help="base model folder or hub name (e.g. from `segmenter convert-e5`)")
    add_raw(parser, required=True)
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder: the model, rounds inside (resumable)")
    add_gold(parser, "dev", "dev_sentences", "report F1 per round, stop when it stops rising", 1000,
             old="--dev", old_sentences="--dev-sentences")
    parser.add_argument("--calibrate", metavar="FILE",
                        help="a *dev* gold file whose first sentences calibrate the teacher")
    parser.add_argument("--decode", choices=("words", "none"), default=None,
                        help="pseudo-labels from word-level decoding with n-gram autonomy (words, default) "
                             "or from thresholds alone (none)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--threads", type=positive(int), default=None, help="torch CPU threads")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    for name, (kind, text) in NUMERIC.items():
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=text)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..arguments import resolve_device
    from ..train.selftrain import SelftrainConfig, selftrain

    files = [("--raw", p) for p in args.raw] + [
        (o, p) for o, p in (("--gold", args.dev), ("--calibrate", args.calibrate)) if p]
    for option, path in files:
        if not Path(path).is_file():
            raise CLIError(f"{option} {path}: no such file")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise CLIError(f"--out {args.out} is a file; give a folder")
    model = model_folder(args.model)
    try:
        resolve_device(args.device)  # one line for a device that does not exist, before any work
    except ValueError as err:
        raise CLIError(str(err)) from None
    if args.threads:
        torch.set_num_threads(args.threads)
    given = {name: getattr(args, name) for name in (*NUMERIC, "decode", "dev_sentences")
             if getattr(args, name) is not None}
    known = {f.name for f in fields(SelftrainConfig)}
    config = SelftrainConfig(model=str(model), raw=args.raw, out=args.out, dev=args.dev, calibrate=args.calibrate,
                             device=args.device, **{k: v for k, v in given.items() if k in known})
    if not 0.5 <= config.confidence < 1:
        raise CLIError(f"--confidence must be in [0.5, 1), got {config.confidence}")
    heads = json.loads((model / "config.json").read_text(encoding="utf-8")).get("num_attention_heads")
    if heads is not None and config.boundary_head >= heads:
        raise CLIError(f"--boundary-head must be below the model's {heads} heads a layer, got {config.boundary_head}")
    out = selftrain(config)
    print(f"wrote {out}")
    return 0
