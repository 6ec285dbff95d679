"""Read the attention weights of a few heads, computing no more of the encoder than needed.

segmenter reads a handful of heads, and nothing above the deepest of them. For BERT-family
encoders (embeddings + encoder.layer[i].attention.self.query/key) the fast path runs the layers
itself: every layer below the deepest needed one runs as the model would (with the model's own
attention kernel, SDPA by default), and at a layer that holds needed heads only those heads'
query/key rows are projected and softmaxed. The deepest layer stops there: its attention output
and feed-forward, which nobody reads, are never computed. Gradients flow, so self-training
uses the same path.

Other layouts fall back to the model's own forward with `output_attentions=True` (slower:
every layer's weights are kept).

Shapes: input_ids, attention_mask (B, T); the result maps each needed layer to (B, K_l, T, T),
its needed heads in ascending order.
"""
from __future__ import annotations

import torch

from .readout import heads_by_layer


def bert_layout(model: torch.nn.Module) -> bool:
    """True when the model has the BERT module layout the fast path relies on."""
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None or not hasattr(model, "embeddings"):
        return False
    return all(hasattr(getattr(getattr(l, "attention", None), "self", None), "query") for l in layers)


class AttentionReader:
    """reader.run(input_ids=…, attention_mask=…) -> {layer: (B, K_l, T, T)} for the given heads."""

    def __init__(self, model: torch.nn.Module, heads: list[tuple[int, int]]):
        self.model = model
        self.heads_by_layer = heads_by_layer(heads)
        self.deepest = max(self.heads_by_layer)
        self.fast = bert_layout(model)

    def run(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[int, torch.Tensor]:
        if not self.fast:
            output = self.model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
            return {layer: output.attentions[layer][:, heads] for layer, heads in self.heads_by_layer.items()}
        return {layer: logits.softmax(dim=-1) for layer, logits in self.logits(input_ids, attention_mask).items()}

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[int, torch.Tensor]:
        """The fast path stopped before the softmax: {layer: q k^T / sqrt(d) + mask, (B, K_l, T, T)}.
        Also what the ONNX export traces (train/onnx_export.py), so that graph computes these heads
        as this reader does."""
        if not self.fast:
            raise ValueError("the attention logits need a BERT layout (embeddings, encoder.layer[i].attention.self)")
        hidden = self.model.embeddings(input_ids=input_ids)
        # Additive mask (B, 1, 1, T): 0 where a token may be attended, the dtype's minimum at
        # padding. Eager and SDPA attention both take this form.
        additive = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        captured = {}
        for index, layer in enumerate(self.model.encoder.layer[: self.deepest + 1]):
            if index in self.heads_by_layer:
                captured[index] = self._logits(layer.attention.self, hidden, additive, self.heads_by_layer[index])
            if index == self.deepest:
                break
            output = layer(hidden, attention_mask=additive)
            hidden = output[0] if isinstance(output, tuple) else output
        return captured

    @staticmethod
    def _logits(attention, hidden: torch.Tensor, additive: torch.Tensor, heads: list[int]) -> torch.Tensor:
        """q k^T / sqrt(d) + mask for the listed heads only: (B, K, T, T)."""
        size = attention.attention_head_size
        rows = torch.cat([torch.arange(h * size, (h + 1) * size) for h in heads]).to(hidden.device)
        batch, tokens, _ = hidden.shape

        def project(linear):  # (B, T, hidden) -> (B, K, T, d), only the rows of the needed heads
            out = torch.nn.functional.linear(hidden, linear.weight[rows],
                                             linear.bias[rows] if linear.bias is not None else None)
            return out.view(batch, tokens, len(heads), size).transpose(1, 2)

        return project(attention.query) @ project(attention.key).transpose(-1, -2) * size**-0.5 + additive
