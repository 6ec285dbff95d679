"""Refine (`segmenter refine`): a model's head learns the words its own full pipeline finds.

    raw lines (a seeded sample) ──► Segmenter(model) at the default level: head scores s, then
        word decoding, cohesive pairs and the conventions ──► a cut decision per junction
    target per junction = (1 - mix) * sigmoid(s) + mix * [the pipeline cuts here]
    ──► the head (one-head profiles: a distilled student) fine-tuned on those targets
    ──► a model folder: the same files, new weights (float16), model.onnx exported again

Why: the decoder and the conventions fix what the head gets wrong on the strings the word
table knows (联合|国 -> 联合国, 经营|者 -> 经营者); fine-tuned on their output, the head carries
the pattern to strings the table never saw, and the decoder then starts from a better score.
Half the target stays the head's own soft score, so a round moves it only where the pipeline
disagrees (about 4% of junctions); hard targets alone (mix 1) did worse on dev. Raw text
only: the pipeline labels, no segmented text is read. The embedded default had five such rounds,
each on 4 M characters of the shared raw text, the fifth with `agree` (pipeline_targets: the cut
counts only where the other standards' words cut alike; its model card has the commands and why);
on a domain's own text it is `segmenter adapt --refine` (the adapted table, then this).
"""
from __future__ import annotations

import logging
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..model.folders import read_profile, resolve_model_folder
from ..standards.levels import standard_named
from .derived import onnx_kind, write_derived_folder

logger = logging.getLogger(__name__)


@dataclass
class RefineConfig:
    model: str | None
    raw: list[str]
    out: str
    chars: int = 4_000_000  # raw characters labelled and trained on (one pass)
    mix: float = 0.5  # share of the pipeline's hard decision in each target
    lr: float = 5e-4
    epochs: float = 1.0
    batch_size: int = 64
    minutes: float = 30.0  # a cap; 4 M characters take about 2 minutes on 2 cores
    seed: int = 0
    min_line: int = 8
    max_line: int = 250
    command: str = field(default_factory=lambda: shlex.join(["segmenter", *sys.argv[1:]]))
    model_name: str | None = None  # how the record names the model (default: `model`; adapt's is a scratch folder)
    split_long: bool = False  # lines over max_line train as pieces, not left out (adapt --refine: a user's text)
    # Standards whose words must agree with the model's own at a junction for the pipeline's cut to
    # enter its target; elsewhere the head keeps its own score (see pipeline_targets). (): everywhere.
    agree: tuple[str, ...] = ()

    def __post_init__(self):
        if not 0.0 <= self.mix <= 1.0:
            raise ValueError(f"mix must be in [0, 1], got {self.mix}")
        for name in self.agree:
            standard_named(name)  # ValueError naming the standards there are
        self.agree = tuple(self.agree)
        for name in ("chars", "lr", "epochs", "minutes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")


def pipeline_targets(segmenter, texts: list[str], mix: float,
                     agree: tuple[str, ...] = ()) -> tuple[list, list[np.ndarray], float]:
    """Plans of `texts`, one target per model junction (NaN where the runtime never asks the
    head), and the share of Han junctions where the pipeline disagrees with s > threshold. Inside
    a word longer than the word decoder's max_len the target is the head's own soft score.

    agree: other standards (levels.STANDARDS) read from the same scores; where the words of any of
    them cut a junction differently from the model's own standard, the target there is the head's
    own soft score too. Where every standard writes alike (联合国 whole, 他|说 apart) no convention
    decides, so the head learns that and not one standard's conventions: refined on the general
    standard alone it learnt to join 北京市 and 广东省, which UD writes apart. (What all of them get
    wrong alike it learns too: the pipeline is its teacher, with or without `agree`.)"""
    plans = segmenter.score_texts(texts, show_progress=False)
    dictionary = segmenter.user_dictionary.snapshot()  # one for every standard's words
    tokens = segmenter.assemble(plans, "default", dictionary=dictionary)
    # The same scores, each standard's words: no second model or table loaded.
    others = [segmenter.assemble(plans, "default", dictionary=dictionary, standard=name) for name in agree]
    threshold = segmenter.profile.threshold("default")
    decoding = segmenter.level("default").decoding  # None: no word decoder, so no longest word
    max_len = decoding.max_len if decoding is not None else None
    targets, changed, total = [], 0, 0
    for index, (plan, words) in enumerate(zip(plans, tokens)):
        target = np.full(max(len(plan.positions) - 1, 0), np.nan, dtype=np.float32)
        if len(plan.junctions):
            score = segmenter.profile.combine(plan.scores) - threshold
            ends = plan.positions[plan.junctions] + 1
            cut = np.isin(ends, [end for _, _, end in words])
            soft = 1 / (1 + np.exp(-score))
            agreed = np.ones(len(ends), dtype=bool)
            for other in others:
                agreed &= np.isin(ends, [end for _, _, end in other[index]]) == cut
            target[plan.junctions] = np.where(agreed, (1 - mix) * soft + mix * cut, soft)
            # Inside a word longer than the decoder's (中华人民共和国: join_long makes it from
            # 中华人民|共和国), the head keeps its own score: taught no cut there, it leaves the
            # Viterbi a weak cut anywhere in it (中华|人民共和国), which no join mends.
            long = [(start, end) for _, start, end in words if max_len is not None and end - start > max_len]
            inside = np.zeros(len(ends), dtype=bool)
            for start, end in long:
                inside |= (ends > start) & (ends < end)
            target[plan.junctions[inside]] = soft[inside]
            changed, total = changed + int(((score > 0) != cut).sum()), total + len(cut)
        targets.append(target)
    return plans, targets, changed / max(total, 1)


def check_refinable(folder: Path, profile) -> None:
    """Refine trains one head read alone: a profile that combines heads is refused."""
    if profile is None or len(profile.heads) != 1 or profile.weights != [1.0] or profile.bias != 0.0:
        raise ValueError(f"{folder}: refine trains one head read alone (a distilled student's profile); "
                         "this profile combines heads")


def refine(config: RefineConfig, threads: int | None = None) -> dict:
    """Label, fine-tune, write config.out; returns the record kept in the profile's extra."""
    import torch
    from transformers import BertModel

    from ..api import Segmenter
    from ..text.vocab import CharVocab
    from .selftrain import sample_lines
    from .student import make_examples, train_boundary_head

    started = time.monotonic()
    folder, out = resolve_model_folder(config.model), Path(config.out)
    if out.resolve() == folder.resolve():
        raise ValueError(f"--out {out} is the model folder itself; write the refined model elsewhere")
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"--out {out} exists and is not empty")
    profile = read_profile(folder)
    check_refinable(folder, profile)
    if threads:
        torch.set_num_threads(threads)
    segmenter = Segmenter(folder, num_threads=threads)
    texts = sample_lines(config.raw, config.chars, config.seed, config.min_line, config.max_line, config.split_long)
    if not texts:
        raise ValueError(f"no raw lines of {config.min_line}-{config.max_line} characters in {', '.join(config.raw)}")
    plans, targets, changed = pipeline_targets(segmenter, texts, config.mix, config.agree)
    logger.info("labelled %d lines; the pipeline moves %.1f%% of the head's cuts", len(texts), 100 * changed)
    model = BertModel.from_pretrained(str(folder), add_pooling_layer=False, torch_dtype=torch.float32)
    vocab = CharVocab.from_folder(folder)
    examples = make_examples(vocab, texts, [p.positions for p in plans], targets, segmenter.window, segmenter.overlap)
    stats = train_boundary_head(model, vocab, examples, profile.heads[0], torch.device("cpu"), config.minutes,
                                config.epochs, config.lr, config.batch_size, config.seed)
    record = {**{k: v for k, v in asdict(config).items() if k not in ("out", "model_name")},
              "model": config.model_name or config.model,
              "label_chars": sum(map(len, texts)), "pipeline_changed": round(changed, 4), "training": stats}
    # a refined model refined again keeps every round's record (write_derived_folder)
    record["round"] = len(profile.extra.get("refine_earlier", [])) + ("refine" in profile.extra) + 1
    again = "" if record["round"] == 1 else f"again (round {record['round']}) "
    write_derived_folder(folder, out, model, "refine", record,
                         f"refined {again}on its own pipeline's words ({record['label_chars']:,} raw characters)",
                         card_note(record), onnx=onnx_kind(folder), raw=texts)
    record["minutes"] = (time.monotonic() - started) / 60
    return record


def card_note(record: dict) -> str:
    return (
        f"## Refined on its own words{'' if record.get('round', 1) == 1 else ', round ' + str(record['round'])}\n"
        f"`segmenter refine` fine-tuned the head on {record['label_chars']:,} raw characters labelled by this\n"
        "model's own pipeline (word decoding, cohesive pairs, conventions; "
        f"targets {1 - record['mix']:.2f} x its soft\n"
        f"score + {record['mix']:.2f} x the pipeline's cut"
        + (f"\nwhere the words of the {', '.join(record['agree'])} standards cut as its own standard's do, its\n"
           "own score elsewhere" if record.get("agree") else "")
        + f"; lr {record['lr']}, {record['epochs']} pass; "
        "the pipeline moved\n"
        f"{100 * record['pipeline_changed']:.1f}% of the head's cuts). No segmented text. "
        f"Command: `{record['command']}`\n"
    )
