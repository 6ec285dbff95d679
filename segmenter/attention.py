"""Capture the attention weights of a few layers, without asking the model for all of them.

`output_attentions=True` makes a transformers encoder keep the (B, heads, T, T) weights of
*every* layer until the forward pass ends: for 12 layers and a batch of 64 windows of 256
tokens that is 2.4 GB, of which segmenter reads a handful of heads. Instead, a forward hook
on the self-attention module of each needed layer keeps that layer's weights (BERT-family
self-attention modules return `(context, weights)` in eager mode); the others are freed as
soon as their layer is done. Models whose layout we do not know fall back to
`output_attentions=True`. Captures are per thread (hooks run in the calling thread), so one
model can serve several threads, and a capture stores nothing outside its own `run`.
"""
from __future__ import annotations

import threading

import torch


def self_attention_modules(model: torch.nn.Module) -> list[torch.nn.Module] | None:
    """The per-layer self-attention modules of a BERT-family encoder, or None if unknown."""
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None:
        return None
    modules = [getattr(getattr(layer, "attention", None), "self", None) for layer in layers]
    return modules if all(m is not None for m in modules) else None


class AttentionCapture:
    """model(...) through `run` returns the attention weights of `layers`: {layer: (B, H, T, T)}."""

    def __init__(self, model: torch.nn.Module, layers: list[int]):
        self.model = model
        self.layers = sorted(set(layers))
        self._local = threading.local()  # .captured: the dict of the run in progress, if any
        modules = self_attention_modules(model)
        self._handles = [modules[layer].register_forward_hook(self._hook(layer)) for layer in self.layers] if modules else []

    def _hook(self, layer: int):
        def keep(module, inputs, output):
            captured = getattr(self._local, "captured", None)
            if captured is not None and isinstance(output, tuple) and len(output) > 1 and output[1] is not None:
                captured[layer] = output[1]

        return keep

    def _all_attentions(self, inputs) -> dict[int, torch.Tensor]:
        output = self.model(**inputs, output_attentions=True)
        return {layer: output.attentions[layer] for layer in self.layers}

    def run(self, **inputs) -> dict[int, torch.Tensor]:
        if not self._handles:
            return self._all_attentions(inputs)
        self._local.captured = captured = {}
        try:
            self.model(**inputs)
        finally:
            self._local.captured = None
        if set(captured) != set(self.layers):  # this model did not hand its weights out
            return self._all_attentions(inputs)
        return captured

    def close(self) -> None:
        """Remove the hooks (the model goes back to how it was)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
