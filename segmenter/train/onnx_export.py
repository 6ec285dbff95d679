"""Export a model's reader graph to `model.onnx` for engine="onnx" (model/onnx_engine.py runs it).

Build-time code: it needs torch + transformers (the train extra) and onnx. The graph is what the
attention reader computes (model/attention.py, AttentionReader.logits), traced: embeddings,
the layers below the deepest selected head, that layer's query/key rows of the selected heads
-> masked attention logits (B, K, T, T), heads in profile order; then (onnx_graph.finish_graph:
edits of the traced graph that leave its arithmetic alone) the boundary scores (B, K, T - 3) read
from those logits by the graph's own last nodes, as the numpy engine reads them
(numpy_ops.scores_from_logits): the graph's one output. The heads are baked into the graph and
written in its metadata; a profile that reads other heads needs a new export.
onnx_engine.OnnxReader returns the graph's scores as they come.

Kinds of weights (`int8`):
  * False: float weights (those float16 holds exactly stored as float16: onnx_graph.store_float16).
    Scores are the numpy engine's to ~1e-5, and so are the words, whatever windows share a batch.
  * True / "dynamic": int8 weights, one scale per output channel (onnxruntime's dynamic
    quantisation). The activations of each batch are quantised with one scale for the whole
    batch, so a window's scores, and the words, depend on the windows batched with it (the batch
    size, the number of threads). No shipped model uses it.
  * "static": int8 with activation scales fixed beforehand from raw lines (`calibration`:
    onnx_static.py), so a window's scores do not depend on its batch. The shipped models' graphs
    are of this kind; their numpy and torch engines still compute in float.
"""
from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path

from ..model.onnx_engine import HEADS_KEY, INT8_KEY, STATIC_KEY, WEIGHT_BITS_KEY, WEIGHTS_KEY, weights_fingerprint
from ..run.files import atomic_path

KINDS = (False, True, "dynamic", "static")


def export_onnx(segmenter, path: str | Path, int8: bool | str = False, calibration: list[str] | None = None,
                calibration_source: str = "") -> Path:
    """Write the reader graph of a Segmenter(engine="torch") to `path`. int8: False (float
    weights), True or "dynamic" (int8 weights, per-batch activation scales) or "static" (int8 with
    activation scales measured on `calibration`, raw lines: onnx_static.py); see the module doc."""
    import onnx
    import torch

    if int8 not in KINDS:
        raise ValueError(f"int8 must be False, True, 'dynamic' or 'static', got {int8!r}")
    kind = "dynamic" if int8 is True else int8
    if kind == "static" and not calibration:
        raise ValueError("int8='static' needs calibration: raw lines whose windows set the activation scales")
    reader, path = segmenter.reader, Path(path)
    if not reader.attention.fast:
        raise ValueError("export_onnx needs a BERT-layout encoder (embeddings, encoder.layer[i].attention.self)")

    # The graph is written beside `path` first and moved onto it complete, with its metadata:
    # a killed export never leaves a model.onnx that engine="auto" could take.
    exported = path.with_name(f".{path.name}.export")
    ids = torch.full((2, 16), segmenter.vocab.cls_id, dtype=torch.long)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            # transformers' sdpa attention asks `attention_mask is None` in Python while tracing; the
            # trace keeps its answer, False, which is right for every input: each layer gets the
            # additive mask. The TracerWarning it raises says nothing a user can act on.
            warnings.filterwarnings("ignore", category=torch.jit.TracerWarning, module=r"transformers\.")
            torch.onnx.export(
                _Logits(reader).eval(), (ids, torch.ones_like(ids)), str(exported), dynamo=False, opset_version=17,
                input_names=["input_ids", "attention_mask"], output_names=["logits"],
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                              "logits": {0: "batch", 2: "tokens", 3: "tokens"}},
            )
        if kind == "static":
            from .onnx_static import calibration_feeds, quantize_static

            quantized = path.with_name(f".{path.name}.int8")
            quantize_static(exported, quantized, calibration_feeds(segmenter, calibration))
            os.replace(quantized, exported)
        elif kind == "dynamic":
            quantized = path.with_name(f".{path.name}.int8")
            _quantize_dynamic(exported, quantized)
            os.replace(quantized, exported)
        graph = onnx.load(str(exported))
    finally:
        exported.unlink(missing_ok=True)
    from .onnx_graph import finish_graph, store_float16

    if kind != "dynamic":
        store_float16(graph)  # float weights (and a static graph's embeddings): half the file
    finish_graph(graph, len(reader.heads))  # no copy after the logits; the scores read from them
    metadata = {HEADS_KEY: json.dumps([list(h) for h in reader.heads])}
    if kind == "dynamic":
        metadata[INT8_KEY] = "dynamic, per channel"
        metadata[WEIGHT_BITS_KEY] = "7"  # _quantize_dynamic's reduce_range
    elif kind == "static":
        from .onnx_static import calibration_record

        metadata[STATIC_KEY] = calibration_record(calibration, calibration_source)
        metadata[WEIGHT_BITS_KEY] = "7"  # onnx_static.quantize_static's reduce_range
    if (segmenter.folder / "model.safetensors").is_file():
        metadata[WEIGHTS_KEY] = weights_fingerprint(segmenter.folder)
    for key, value in metadata.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    with atomic_path(path) as temporary:
        onnx.save(graph, str(temporary))
    return path


def _Logits(reader):
    """The module torch traces: the attention reader's logits of the profile's heads, concatenated
    and put in the profile's order, (B, K, T, T). The encoder is its submodule `bert`, so that its
    weights become the graph's initializers (and keep their names)."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = reader.attention.model.requires_grad_(False)

        def forward(self, input_ids, attention_mask):
            parts = reader.attention.logits(input_ids, attention_mask)  # {layer: (B, K_l, T, T)}, layers ascending
            return torch.cat(list(parts.values()), dim=1)[:, reader._order]

    return Logits()


def _quantize_dynamic(source: Path, target: Path) -> None:
    """onnxruntime's dynamic quantisation: int8 weights of 7 bits, one scale per output channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()  # the quantiser logs a pre-processing hint there on every call
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        # 7-bit weights: no uint8 x int8 pair saturates on a CPU without VNNI (onnx_static.py)
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
    finally:
        root.setLevel(level)
