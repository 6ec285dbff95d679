"""Find the heads that mark word boundaries, report them, and write the head profile.

  segmenter heads --model M --raw FILE…            unsupervised (co-training with n-grams)
  segmenter heads --model M --gold DEV --max-sentences 100   calibrated on dev sentences
  segmenter heads --model M --gold DEV --report    per-head boundary AUC / F1 table
  segmenter heads --model M --gold DEV --curve 0,20,100,500  F1 against calibration size
  segmenter heads --model M --show "句子" --png heads.png     a picture of the heads
"""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from . import CLIError
from .options import add_raw, model_folder, positive

MIN_RAW_HAN = 1_000  # Han characters of --raw: fewer give the n-gram statistics nothing to stand on


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", default=None, help="model folder or hub name (default: the embedded model)")
    add_raw(parser)
    parser.add_argument("--raw-lines", type=positive(int), default=2000, help="raw lines read (default: 2000)")
    parser.add_argument("--gold", metavar="FILE", help="a *dev* gold file (never a test file)")
    parser.add_argument("--max-sentences", type=positive(int), default=100,
                        help="gold sentences that calibrate (default: 100)")
    parser.add_argument("--eval-sentences", type=positive(int), default=1000,
                        help="gold sentences after those that evaluate (default: 1000)")
    parser.add_argument("--max-heads", type=positive(int), default=12, help="heads kept in the profile (default: 12)")
    parser.add_argument("--report", action="store_true", help="print every head's AUC/F1 on --gold; write nothing")
    parser.add_argument("--curve", metavar="N,N,…",
                        help="with --gold: F1 after calibrating on each N sentences (0 = unsupervised, needs --raw)")
    parser.add_argument("--out", metavar="PATH",
                        help="the profile file to write, or a folder to write segmenter_heads.json into "
                             "(default: MODEL/segmenter_heads.json)")
    parser.add_argument("--show", metavar="TEXT", help="draw the profile's heads on TEXT (needs --png)")
    parser.add_argument("--png", metavar="FILE", help="PNG file for --show")
    parser.add_argument("--font", metavar="FILE", help="a font file with CJK glyphs for --show")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars, warnings only")


def _segmenter(model, profile=None):
    from ..api import Segmenter
    from ..model.folders import ModelLoadError

    try:
        return Segmenter(model, profile=profile, engine="torch")  # head_picture reads the torch attention
    except (ModelLoadError, ValueError, TypeError) as err:
        raise CLIError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    from ..model.folders import ModelLoadError, load_encoder
    from ..run.files import write_text_atomic
    from ..text.runs import HAN_RE
    from ..train.corpus import iter_raw_lines, read_gold

    if args.show:
        if not args.png:
            raise CLIError("--show needs --png FILE")
        if importlib.util.find_spec("matplotlib") is None:
            raise CLIError("--show needs matplotlib, which is not installed: pip install 'segmenter-heads[plot]'")
        if not Path(args.png).resolve().parent.is_dir():
            raise CLIError(f"--png {args.png}: its folder does not exist")
        from ..bench.head_picture import draw_heads

        try:
            print(f"wrote {draw_heads(_segmenter(args.model), args.show, args.png, args.font)}")
        except (ValueError, RuntimeError, FileNotFoundError) as err:
            raise CLIError(str(err)) from None
        return 0
    for option, path in [("--raw", p) for p in args.raw or []] + ([("--gold", args.gold)] if args.gold else []):
        if not Path(path).is_file():
            raise CLIError(f"{option} {path}: no such file")
    if not args.raw and not args.gold:
        raise CLIError("give --raw FILE… (unsupervised) and/or --gold DEV_FILE (report, calibration)")
    for option in ("report", "curve"):  # both score heads against gold boundaries
        if getattr(args, option) and not args.gold:
            raise CLIError(f"--{option} reads the heads against --gold DEV_FILE; give one")
    folder = model_folder(args.model)
    out = None if args.report or args.curve else _profile_path(args.out, folder)  # refused before any work
    try:
        model, vocab, _ = load_encoder(folder)
    except ModelLoadError as err:
        raise CLIError(str(err)) from None
    raw = [line for _, line in zip(range(args.raw_lines), iter_raw_lines(args.raw))] if args.raw else None
    if raw is not None and sum(len(HAN_RE.findall(line)) for line in raw) < MIN_RAW_HAN:
        raise CLIError(f"--raw {' '.join(args.raw)}: fewer than {MIN_RAW_HAN:,} Han characters in its first "
                       f"{args.raw_lines} lines; the heads are found from n-gram statistics of raw Chinese text "
                       "(one text a line, UTF-8)")
    gold = read_gold(args.gold, args.max_sentences + args.eval_sentences) if args.gold else None

    if args.report:
        return _report(model, vocab, gold)
    if args.curve:
        return _curve(model, vocab, raw, gold, args)
    profile = _make_profile(model, vocab, raw, gold[: args.max_sentences] if gold else None, args)
    write_text_atomic(out, profile.to_json())
    print(f"{profile.source}: heads {profile.heads}")
    if gold and len(gold) > args.max_sentences:
        print(f"word F1 on {Path(args.gold).name} sentences {args.max_sentences + 1}-{len(gold)}: "
              f"{_f1(model, vocab, profile, gold[args.max_sentences:]):.4f}")
    print(f"wrote {out}")
    return 0


def _profile_path(out: str | None, folder: Path) -> Path:
    """Where the profile goes; refuses (CLIError) what cannot or must not be written."""
    from ..model.folders import embedded_model_path
    from ..model.profile import PROFILE_FILE

    if out is None:
        if folder.resolve() == embedded_model_path().resolve():
            raise CLIError("will not overwrite the embedded model's profile: pass --out FILE")
        return folder / PROFILE_FILE
    path = Path(out)
    if path.is_dir():
        path = path / PROFILE_FILE
    if not path.resolve().parent.is_dir():
        raise CLIError(f"--out {out}: its folder does not exist")
    return path


def _make_profile(model, vocab, raw, calibration, args):
    from ..train.head_discovery import calibrate, discover_unsupervised

    if calibration:
        return calibrate(model, vocab, calibration,
                         f"calibrated on {Path(args.gold).name} ({len(calibration)} sentences)", args.max_heads)
    return discover_unsupervised(model, vocab, raw, args.max_heads)


def _f1(model, vocab, profile, sentences) -> float:
    from ..train.head_measures import gold_junctions, word_f1

    sample = gold_junctions(model, vocab, sentences, heads=profile.heads)
    return word_f1(sample, profile.combine(sample.scores), sentences, profile.threshold())


def _report(model, vocab, gold) -> int:
    from ..train.head_measures import gold_junctions, head_table

    rows = head_table(gold_junctions(model, vocab, gold))
    print(f"{'layer':>5} {'head':>4} {'AUC':>6} {'F1(s>0)':>8} {'cut rate':>8}")
    for row in rows:
        print(f"{row['layer']:>5} {row['head']:>4} {row['auc']:>6.3f} {row['f1']:>8.3f} {row['rate']:>8.3f}")
    return 0


def _curve(model, vocab, raw, gold, args) -> int:
    sizes = [int(n) for n in args.curve.split(",")]
    held_out = gold[max(sizes) :] if max(sizes) < len(gold) else None
    if not held_out:
        raise CLIError(f"--curve needs more than {max(sizes)} gold sentences (raise --eval-sentences)")
    rows = []
    for n in sizes:
        if n == 0 and not raw:
            continue
        profile = _make_profile(model, vocab, raw, gold[:n] if n else None, args)
        rows.append({"sentences": n, "source": profile.source, "f1": _f1(model, vocab, profile, held_out)})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    return 0
