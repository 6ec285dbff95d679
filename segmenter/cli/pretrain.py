"""Pretrain a character-level BERT from scratch with masked-LM on raw text.

Example (CPU, one hour a sitting; `--out runs/char-bert --resume --minutes 60` continues):
  segmenter pretrain --raw ../shared/corpora/raw/pretrain_raw.txt ../shared/corpora/raw/extra_raw.txt \\
      --out runs/char-bert --minutes 60 --precision bf16 --gold ../shared/corpora/gold/pku_dev.txt

--out DIR becomes a segmenter model folder (weights, vocab.txt, MODEL_CARD.md, learning curve,
and a head profile: with --gold the best head on those dev sentences, else one found without
supervision at the end of the sitting); DIR/checkpoints holds the resumable checkpoints.
Never pass gold (segmented) files as --raw. (--corpus, --eval-gold and --eval-gold-limit are
the old names of --raw, --gold and --gold-sentences.)
"""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from . import CLIError
from .options import add_gold, add_raw, check_raw

logger = logging.getLogger(__name__)

# Options that define the run (PretrainConfig fields). Their defaults are None here so that a
# resumed run can tell the options given again from those left out.
MODEL_OPTIONS = (
    ("--layers", int, "encoder layers (default: 4)"),
    ("--hidden", int, "hidden size (default: 256)"),
    ("--heads", int, "attention heads per layer (default: 8)"),
    ("--intermediate", int, "feed-forward size (default: 1024)"),
    ("--max-length", int, "positions per window, [CLS] and [SEP] included (default: 128)"),
    ("--dropout", float, "dropout of hidden states and attention (default: 0)"),
    ("--vocab-size", int, "vocabulary size at most, 5 specials included (default: 8000)"),
    ("--min-count", int, "characters seen fewer times become [UNK] (default: 5)"),
    ("--min-chars", int, "skip lines with fewer characters (default: 2)"),
    ("--eval-lines", int, "corpus lines held out for the MLM evaluation (default: 1000)"),
)
TRAINING_OPTIONS = (
    ("--mask-rate", float, "share of characters to predict (default: 0.3)"),
    ("--span-mean", float, "mask whole spans of this mean length; 1 = single characters (default: 1)"),
    ("--max-span", int, "longest masked span (default: 5)"),
    ("--batch-tokens", int, "padded tokens per batch (default: 4096)"),
    ("--pad-multiple", int, "pad windows to a multiple of this (default: 8)"),
    ("--lr", float, "peak learning rate of AdamW (default: 5e-4)"),
    ("--weight-decay", float, "AdamW weight decay (default: 0.01)"),
    ("--warmup-steps", int, "linear warmup steps (default: 1000)"),
    ("--max-steps", int, "total steps of the run, the horizon of the cosine decay (default: 20000)"),
    ("--final-lr-ratio", float, "learning rate at --max-steps, relative to --lr (default: 0.1)"),
    ("--clip-norm", float, "gradient clipping norm (default: 1.0)"),
    ("--seed", int, "seed of initialization, data order and masks (default: 0)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_raw(parser, dest="corpus", old="--corpus")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder: the model, checkpoints inside")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its latest checkpoint")
    sitting = parser.add_argument_group("this sitting")
    sitting.add_argument("--minutes", type=float, default=None, help="stop taking steps after this many minutes")
    sitting.add_argument("--stop-after", type=int, default=None, metavar="N", help="stop this sitting after N steps")
    sitting.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    sitting.add_argument("--precision", default=None, choices=("auto", "fp32", "bf16", "fp16"),
                         help="autocast dtype; auto (default): bf16 (or fp16) on CUDA, fp32 on CPU. On CPUs with "
                              "AVX512-BF16 or AMX, bf16 trains 30-70%% faster (measured)")
    sitting.add_argument("--threads", type=int, default=None,
                         help="torch CPU threads (default: torch's choice); on a machine shared with other jobs, "
                              "1 can be several times faster than oversubscribed cores")
    sitting.add_argument("--eval-every", type=int, default=None, metavar="N",
                         help="evaluate every N steps (default: 500)")
    sitting.add_argument("--save-every", type=int, default=None, metavar="N",
                         help="checkpoint every N steps (default: 1000)")
    add_gold(sitting, "eval_gold", "eval_gold_limit", "report the best head's boundary AUC, write its profile", 200,
             old="--eval-gold", old_sentences="--eval-gold-limit")
    sitting.add_argument("--no-discover-heads", dest="discover_heads", action="store_false",
                         help="without --gold, do not run unsupervised head discovery at the end")
    sitting.add_argument("--keep-checkpoints", type=int, default=None, metavar="N",
                         help="checkpoints kept (default: 2)")
    sitting.add_argument("-q", "--quiet", action="store_true", help="no progress bar, warnings only")
    model = parser.add_argument_group("model and data (fixed once a run started)")
    for flag, kind, text in MODEL_OPTIONS:
        model.add_argument(flag, type=kind, default=None, help=text)
    training = parser.add_argument_group("objective and optimization (fixed once a run started, except --max-steps)")
    for flag, kind, text in TRAINING_OPTIONS:
        training.add_argument(flag, type=kind, default=None, help=text)
    training.add_argument("--objective", choices=("mlm", "electra"), default=None,
                          help="mlm (default), or electra: replaced-token detection with a small generator")
    training.add_argument("--generator-hidden", type=int, default=None,
                          help="electra: the generator's width (default: 64)")
    training.add_argument("--rtd-weight", type=float, default=None,
                          help="electra: weight of the detection loss (default: 50)")
    training.add_argument("--no-bucketing", dest="bucketing", action="store_const", const=False, default=None,
                          help="random batches padded to their longest window (slower; for measuring)")
    training.add_argument("--full-logits", action="store_const", const=True, default=None,
                          help="compute logits at every position, not only the masked ones (slower; for measuring)")


def _given_config(args: argparse.Namespace) -> dict:
    names = [flag[2:].replace("-", "_") for flag, _, _ in MODEL_OPTIONS + TRAINING_OPTIONS]
    given = {name: getattr(args, name)
             for name in names + ["bucketing", "full_logits", "objective", "generator_hidden", "rtd_weight"]}
    given["corpus"] = args.corpus
    return {k: v for k, v in given.items() if v is not None}


def _sitting_options(args: argparse.Namespace) -> dict:
    """The carried sitting options given on this command line; with --resume, the previous
    sitting's values fill in those left out (so a resumed bf16 run stays bf16)."""
    from ..train.pretrain import CARRIED_OPTIONS, previous_sitting_options

    given = {name: getattr(args, name) for name in CARRIED_OPTIONS if getattr(args, name) is not None}
    if not args.resume:
        return given
    previous = previous_sitting_options(Path(args.out))
    carried = {name: value for name, value in previous.items() if name in CARRIED_OPTIONS and name not in given}
    if carried:
        flags = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in carried.items() if value is not None)
        logger.info("resuming with the previous sitting's %s (give an option again to change it)", flags)
    return {**carried, **given}


def run(args: argparse.Namespace) -> int:
    from ..train.pretrain import PretrainConfig, Sitting, pretrain, resume_config

    check_raw(args.corpus or [])
    if args.eval_gold and not Path(args.eval_gold).is_file():
        raise CLIError(f"--gold {args.eval_gold}: no such file")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise CLIError(f"--out {args.out} is a file; give a folder")
    positive = {"--eval-every": args.eval_every, "--save-every": args.save_every,
                "--keep-checkpoints": args.keep_checkpoints, "--gold-sentences": args.eval_gold_limit,
                "--stop-after": args.stop_after, "--threads": args.threads, "--minutes": args.minutes}
    bad = [f"{flag} {value}" for flag, value in positive.items() if value is not None and value <= 0]
    if bad:
        raise CLIError(f"these must be positive: {', '.join(bad)}")
    given = _given_config(args)
    try:
        if args.resume:
            config = resume_config(Path(args.out), given)
        else:
            if not args.corpus:
                raise CLIError("--raw is required (raw text files) unless --resume")
            config = PretrainConfig(**given)
        sitting = Sitting(
            out=Path(args.out), resume=args.resume, minutes=args.minutes, stop_after=args.stop_after,
            device=args.device, discover_heads=args.discover_heads, progress=not args.quiet, **_sitting_options(args),
        )
        pretrain(config, sitting)
    except (ValueError, FileNotFoundError, FloatingPointError) as err:
        raise CLIError(str(err)) from None
    return 0
