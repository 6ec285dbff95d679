"""The model being pretrained: a transformers BertModel (what we save) plus a masked-LM head,
or, with objective "electra", plus a small generator and a replaced-token detector.

Only the encoder is exported: segmenter reads attention, not predictions. The MLM head is
BERT's (dense -> GELU -> LayerNorm -> logits through the input embeddings, tied, plus a bias);
it and the other training-only parts live in the checkpoint so that a resumed run continues.

Efficiency: the logits are computed only at the M masked positions, (M, V), never the full
(B, T, V) tensor. With V ~ 7-8k characters and a 256-wide model the full projection costs
about as much as the encoder itself; at a 30% mask rate the gathered one costs a third of it.
"""
from __future__ import annotations

import contextlib
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..model.profile import HeadProfile


def bert_config(
    vocab_size: int, layers: int, hidden: int, heads: int, intermediate: int, max_length: int, dropout: float,
    pad_id: int
):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=max_length,
        type_vocab_size=1,  # one segment: segmenter never feeds sentence pairs
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        pad_token_id=pad_id,
        architectures=["BertModel"],
    )


def new_encoder(config, attention: str = "sdpa"):
    """A freshly initialized BertModel without pooler, with fused attention (sdpa) by default:
    segmenter computes the weights of the heads it reads itself (attention.py)."""
    from transformers import BertModel

    config._attn_implementation = attention
    return BertModel(config, add_pooling_layer=False)


class MLMHead(nn.Module):
    def __init__(self, hidden: int, vocab_size: int, eps: float = 1e-12):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)
        self.bias = nn.Parameter(torch.zeros(vocab_size))
        nn.init.normal_(self.dense.weight, std=0.02)
        nn.init.zeros_(self.dense.bias)

    def forward(self, hidden: torch.Tensor, embeddings: torch.Tensor) -> torch.Tensor:
        """hidden (..., H), embeddings (V, H) -> logits (..., V)."""
        return F.linear(self.norm(F.gelu(self.dense(hidden))), embeddings, self.bias)


class MaskedLM(nn.Module):
    """encoder + MLM head; forward returns (mean loss, number of correct predictions)."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        config = encoder.config
        self.encoder = encoder
        self.head = MLMHead(config.hidden_size, config.vocab_size, config.layer_norm_eps)

    def logits(self, input_ids, attention_mask, positions, full_logits: bool = False) -> torch.Tensor:
        """(M, V) fp32 logits at the M masked positions."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        embeddings = self.encoder.embeddings.word_embeddings.weight  # (V, H), tied output projection
        if full_logits:  # the textbook way, kept only to measure what gathering saves
            logits = self.head(hidden, embeddings).flatten(0, 1)[positions]  # (B*T, V) -> (M, V)
        else:
            logits = self.head(hidden.flatten(0, 1)[positions], embeddings)  # (M, H) -> (M, V)
        return logits.float()  # softmax in fp32 under autocast

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        attention_mask: torch.Tensor,  # (B, T), 1 on real tokens
        positions: torch.Tensor,  # (M,) flat indices into B*T of the masked characters
        targets: torch.Tensor,  # (M,) their original ids
        full_logits: bool = False,
        mlm_only: bool = False,  # (for the common interface with ReplacedTokenDetection)
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.logits(input_ids, attention_mask, positions, full_logits)
        return F.cross_entropy(logits, targets), (logits.argmax(-1) == targets).sum()


class ReplacedTokenDetection(nn.Module):
    """ELECTRA: a small MLM generator fills the masked positions with plausible characters; the
    discriminator (`encoder`, the model we save) tells, at every character, whether it was
    replaced. Every character gives a training signal, not only the masked ones. Unlike ELECTRA
    the two do not share embeddings (their widths differ and BertModel has no projection).

    forward returns (generator MLM loss + weight * detection loss, generator's correct count);
    mlm_only=True returns the generator's MLM loss alone (the held-out evaluation).
    """

    def __init__(self, encoder: nn.Module, generator: nn.Module, weight: float = 50.0):
        super().__init__()
        hidden = encoder.config.hidden_size
        self.encoder = encoder
        self.generator = MaskedLM(generator)
        self.detector = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))
        self.weight = weight

    def forward(self, input_ids, attention_mask, positions, targets, full_logits: bool = False, mlm_only: bool = False):
        logits = self.generator.logits(input_ids, attention_mask, positions, full_logits)  # (M, V)
        mlm_loss = F.cross_entropy(logits, targets)
        correct = (logits.argmax(-1) == targets).sum()
        if mlm_only:
            return mlm_loss, correct
        with torch.no_grad():  # sampling is not differentiated (as in ELECTRA)
            sampled = torch.multinomial(torch.softmax(logits, -1), 1).squeeze(1)  # (M,)
        # Outside the masked positions the inputs are the original characters.
        corrupted = input_ids.flatten().index_put((positions,), sampled).view_as(input_ids)
        replaced = torch.zeros(input_ids.numel(), device=input_ids.device)
        replaced[positions] = (sampled != targets).float()  # 1 where the character was replaced
        hidden = self.encoder(input_ids=corrupted, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        scores = self.detector(hidden).squeeze(-1).float().flatten()  # (B*T,)
        column = torch.arange(input_ids.shape[1], device=input_ids.device)
        lengths = attention_mask.sum(1, keepdim=True) - 2  # characters, without [CLS] and [SEP]
        is_char = ((column >= 1) & (column <= lengths)).flatten()
        detection_loss = F.binary_cross_entropy_with_logits(scores[is_char], replaced[is_char])
        return mlm_loss + self.weight * detection_loss, correct


def build_model(config, vocab_size: int, pad_id: int) -> tuple[nn.Module, nn.Module]:
    """A fresh model of a PretrainConfig's shape -> (encoder, training model): the BertModel that
    is saved, and the module that trains it: MaskedLM, or with objective "electra",
    ReplacedTokenDetection with a generator generator_hidden wide (the model's layers)."""
    shape = (config.layers, config.hidden, config.heads, config.intermediate, config.max_length, config.dropout)
    encoder = new_encoder(bert_config(vocab_size, *shape, pad_id=pad_id))
    if config.objective == "electra":
        g = config.generator_hidden
        generator_shape = (config.layers, g, config.generator_heads, 4 * g, config.max_length, config.dropout)
        generator = new_encoder(bert_config(vocab_size, *generator_shape, pad_id=pad_id))
        return encoder, ReplacedTokenDetection(encoder, generator, config.rtd_weight)
    return encoder, MaskedLM(encoder)


def build_optimizer(model: nn.Module, lr: float, weight_decay: float, fused: bool = False) -> torch.optim.AdamW:
    """AdamW; no weight decay on biases and LayerNorm weights (the usual BERT recipe)."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if param.ndim < 2 else decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    kwargs = {"fused": True} if fused else {}
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98), eps=1e-6, **kwargs)


def lr_factor(step: int, warmup: int, total: int, final_ratio: float) -> float:
    """Linear warmup to 1, then cosine decay to final_ratio at `total` steps (flat after)."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return final_ratio + (1 - final_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def build_scheduler(optimizer, warmup: int, total: int, final_ratio: float) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(step, warmup, total, final_ratio))


# -- precision and evaluation -------------------------------------------------------------------
def resolve_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype (None: plain fp32). auto: bf16 on CUDA (fp16 where bf16 is missing)."""
    if precision not in ("auto", "fp32", "bf16", "fp16"):
        raise ValueError(f"--precision must be auto, fp32, bf16 or fp16, got {precision!r}")
    if precision == "auto":
        if device.type != "cuda":
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if precision == "fp16" and device.type != "cuda":
        raise ValueError("--precision fp16 needs CUDA (on CPU use fp32 or bf16)")
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def autocast(device: torch.device, dtype: torch.dtype | None):
    return torch.autocast(device.type, dtype=dtype) if dtype is not None else contextlib.nullcontext()


def to_device(ids, positions, targets, lengths, device) -> tuple[torch.Tensor, ...]:
    """numpy batch -> (input_ids, attention_mask, positions, targets) on the device."""
    attention = (np.arange(ids.shape[1]) < (lengths[:, None] + 2)).astype(np.int64)
    arrays = (ids, attention, positions, targets)
    return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(device, non_blocking=True) for a in arrays)


@torch.no_grad()
def evaluate_mlm(model: MaskedLM, eval_batches: list, device, dtype) -> tuple[float | None, float | None]:
    """Held-out MLM loss and accuracy (fixed 15% masks, all [MASK]), weighted by predictions."""
    if not eval_batches:
        return None, None
    was_training = model.training
    model.eval()
    total_loss, total_correct, total = 0.0, 0, 0
    for inputs, positions, targets, lengths in eval_batches:
        with autocast(device, dtype):
            loss, correct = model(*to_device(inputs, positions, targets, lengths, device), mlm_only=True)
        total_loss += float(loss) * len(targets)
        total_correct += int(correct)
        total += len(targets)
    model.train(was_training)
    return total_loss / total, total_correct / total


def evaluate_heads(encoder, vocab, sentences: list[list[str]]) -> list[dict]:
    """head_measures.head_table rows (best AUC first) of every head on gold sentences, read the
    way Segmenter reads them. The training encoder itself serves (attention.py computes the
    weights of the heads it reads, whatever the attention kernel), in eval mode: no dropout."""
    from .head_measures import gold_junctions, head_table

    was_training = encoder.training
    encoder.eval()
    try:
        return head_table(gold_junctions(encoder, vocab, sentences))
    finally:
        encoder.train(was_training)


def best_head_profile(rows: list[dict], gold: str, sentences: int) -> HeadProfile | None:
    """A one-head profile from the best row of evaluate_heads (None when no AUC could be had)."""
    if not rows or not np.isfinite(rows[0]["auc"]):
        return None
    best = rows[0]
    return HeadProfile(
        heads=[(best["layer"], best["head"])],
        weights=[1.0],
        thresholds=(-1.0, 0.0, 1.0),
        source=f"best head on {Path(gold).name} ({sentences} sentences)",
        extra={"auc": best["auc"], "f1": best["f1"]},
    )
