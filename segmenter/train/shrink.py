"""Shrink a model's feed-forward layers (`segmenter distill --ffn K`): a cheaper model that reads like its teacher.

A distilled student starts from scratch; this one starts from the teacher itself. In each
layer the feed-forward block h -> gelu(h W_in + b_in) W_out holds I hidden neurons (768 in the
embedded default before it was shrunk to 384), and most of the FLOPs per character: 2 * hidden * I of a layer's ~3.3x that.
A neuron's share of the output is its activation times the norm of its row of W_out, so each
layer keeps the K neurons whose mean |activation| * ||W_out row|| over the training windows is
largest: the rest are cut from W_in's columns and W_out's rows, which leaves a model of the
same layout with intermediate_size = K (any BERT loader reads it). Cut alone, to 384 of 768,
the default moved word F1 on the six dev files by -0.004 at most; then a pass over the teacher's
scores on raw text (the distillation's targets) brings it back: the embedded default, cut to 384
and trained one pass on 16 M characters, lost 0.0006 at most on a dev file against its teacher
(pku_dev gained 0.0015; benchmarks/results/students_dev.md).

Shapes: W_in is stored (I, hidden) (torch Linear: out x in), W_out (hidden, I).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from .student import Example, collate


def ffn_importance(model, vocab, examples: list[Example], sample: int = 2000, batch_size: int = 64,
                   seed: int = 0) -> list[torch.Tensor]:
    """Per layer, (I,) mean |activation| * ||W_out row|| of each feed-forward neuron over a
    seeded sample of the windows."""
    layers = model.encoder.layer
    sums = [torch.zeros(layer.intermediate.dense.out_features) for layer in layers]
    tokens = 0

    def hook(index):
        def add(module, inputs, output):  # output: (B, T, I) after the activation
            sums[index].add_(output.detach().abs().sum(dim=(0, 1)))
        return add

    handles = [layer.intermediate.register_forward_hook(hook(i)) for i, layer in enumerate(layers)]
    picked = np.random.default_rng(seed).permutation(len(examples))[:sample]
    try:
        model.eval()
        with torch.no_grad():
            for start in range(0, len(picked), batch_size):
                batch = [examples[i] for i in picked[start : start + batch_size]]
                ids, mask, _, _ = collate(batch, vocab, torch.device("cpu"))
                model(input_ids=ids, attention_mask=mask)
                tokens += int(mask.sum())  # padding adds 0 + gelu(b_in) alike to every neuron: it barely ranks
    finally:
        for handle in handles:
            handle.remove()
    return [total / max(tokens, 1) * layer.output.dense.weight.detach().norm(dim=0)
            for total, layer in zip(sums, layers)]


def prune_ffn(model, keep: int, importance: list[torch.Tensor]):
    """A new BertModel like `model` with `keep` feed-forward neurons per layer, the most
    important ones (in their original order), weights copied; the rest of the model unchanged."""
    from transformers import BertConfig, BertModel

    width = model.config.intermediate_size
    if not 0 < keep <= width:
        raise ValueError(f"ffn must be in [1, {width}] (the model's feed-forward width), got {keep}")
    kept = [torch.argsort(scores, descending=True)[:keep].sort().values for scores in importance]
    config = BertConfig.from_dict({**model.config.to_dict(), "intermediate_size": keep})
    small = BertModel(config, add_pooling_layer=False)
    state = dict(model.state_dict())
    for index, rows in enumerate(kept):
        prefix = f"encoder.layer.{index}."
        for name in ("intermediate.dense.weight", "intermediate.dense.bias"):
            state[prefix + name] = state[prefix + name][rows]
        state[prefix + "output.dense.weight"] = state[prefix + "output.dense.weight"][:, rows]
    small.load_state_dict({k: v for k, v in state.items() if k in small.state_dict()}, strict=True)
    return small.eval()


def train_shrunk(config, plans, teacher_profile) -> tuple[Path, dict]:
    """distill --ffn: the teacher, its feed-forward layers cut to config.ffn neurons, trained on
    the teacher's scores of `plans` (the distillation's targets), written as a copy of the
    teacher's folder (profile, word table, card) with the new weights, model.onnx exported as
    the teacher's was (or int8 with config.int8)."""
    from transformers import BertModel

    from ..text.vocab import CharVocab
    from .derived import onnx_kind, write_derived_folder
    from .student import make_examples, soft_targets, train_boundary_head

    teacher = Path(config.teacher)
    if len(teacher_profile.heads) != 1 or teacher_profile.weights != [1.0] or teacher_profile.bias != 0.0:
        raise ValueError(f"{teacher}: --ffn shrinks a model whose profile reads one head alone (a distilled "
                         "student's); this profile combines heads")
    vocab = CharVocab.from_folder(teacher)
    targets = soft_targets(plans, teacher_profile.threshold("default"), config.temperature, config.hard)
    examples = make_examples(vocab, [p.text for p in plans], [p.positions for p in plans], targets,
                             config.window, config.overlap)
    model = BertModel.from_pretrained(str(teacher), add_pooling_layer=False, torch_dtype=torch.float32)
    width = model.config.intermediate_size
    model = prune_ffn(model, config.ffn, ffn_importance(model, vocab, examples, seed=config.training_seed))
    stats = train_boundary_head(model, vocab, examples, teacher_profile.heads[0], torch.device("cpu"),
                                config.minutes, config.epochs, config.lr, config.batch_size, config.training_seed)
    label_chars = sum(len(p.text) for p in plans)
    record = {"ffn": config.ffn, "from_ffn": width, "label_chars": label_chars, "lr": config.lr,
              "epochs": config.epochs, "training": stats, "command": config.command}
    out = Path(config.out) / config.name
    onnx = "int8" if config.int8 else onnx_kind(teacher)
    section = (f"## Feed-forward layers shrunk to {config.ffn} of {width} neurons\n"
               f"`segmenter distill --ffn {config.ffn}` kept each layer's {config.ffn} feed-forward neurons with the "
               "largest mean |activation| x output norm (segmenter/train/shrink.py), then trained the model on "
               f"this model's own boundary scores of {label_chars:,} raw characters (lr {config.lr}, "
               f"{config.epochs} pass; final loss {stats['final_loss']:.4f}). No segmented text. model.onnx: "
               f"{onnx or 'none'} weights. Command: `{config.command}`\n")
    write_derived_folder(teacher, out, model, "shrink", record,
                         f"feed-forward layers shrunk to {config.ffn} neurons, trained on its scores", section, onnx,
                         raw=[p.text for p in plans])
    return out, {**stats, "label_chars": label_chars}
