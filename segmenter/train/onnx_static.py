"""Static int8: the reader graph with int8 weights and activation scales fixed once, from raw text.

Dynamic quantisation (onnx_export.export_onnx(int8="dynamic")) takes each batch's activation
scale from that batch, so a window's scores depend on the windows batched with it and the words
change with the number of threads and the batch size. Static quantisation measures the scales
once, on the batches the pipeline itself makes from raw text (`calibration_feeds`), and writes
them into the graph: every window then gets the same arithmetic whatever shares its batch, and
the words are the same for any threads, batch size or helper processes.

onnxruntime's quantize_static, QOperator format (QLinearMatMul: uint8 activations, int8 weights
with one scale per output channel), MinMax ranges with a moving average, the products of an
activation and a weight matrix only: embeddings, layer norms and the attention products (query x
key, the logits the boundary is read from, and probabilities x values) stay float. Quantising
those too gave the same speed and a mean dev F1 0.0003 lower. Then `products_to_float` turns each
QLinearMatMul and the DequantizeLinear and bias Add after it into one MatMulIntegerToFloat: no
uint8 rounding of the products, two passes fewer. On the embedded default (issue 25; this
machine's CPU has AVX-512 VNNI), against the float graph: with QLinearMatMul the whole pipeline
ran 1.13x as fast on one thread in 9 alternating runs (benchmarks/results/static_int8_dev.md),
F1 within 0.0010 on each of the six dev files, the mean equal; MatMulIntegerToFloat made it 1.11x
faster again (products_to_float_dev.md), F1 within 0.0009 of the QLinearMatMul graph on each
file, the mean 0.0003 lower. Words are the same for 1 or 2 threads and any batch size. The QDQ
format with int8 activations was tried and ran slower than the float graph (0.76x). The numpy
and torch engines compute in float: their words differ from this graph's on a few sentences in
a hundred.

The weights take 7 bits (-64 .. 64, quantize_static's reduce_range), not 8. On an x86 CPU
without VNNI (AVX2 alone: AMD before Zen 4, most Intel desktops), onnxruntime's uint8 x int8
kernel adds two products in 16 bits (vpmaddubsw), which saturates past 32,767; two products of
255 and |w| <= 64 reach 32,640 at most. With 8-bit weights the shipped default's products came
out wrong there, and its mean F1 over the six dev files fell from 0.854 to 0.845
(tools/quick_f1.py, first 300 sentences, on an AMD EPYC with AVX2 only; the numpy engine's float
words gave 0.854 on the same machine). With 7-bit weights no pair can saturate: every x86 CPU
computes the same integer sums, so the words no longer depend on its instruction set (issue
57's fifth stop).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from ..model.reader import batch_ids

CALIBRATION_LINES = 800  # raw lines whose windows set the activation ranges (the shipped graphs: default 34,578 characters, fast 31,594)


def calibration_feeds(segmenter, texts: list[str]) -> list[dict[str, np.ndarray]]:
    """The inputs the pipeline gives the graph for `texts`: one {input_ids, attention_mask} per
    batch of windows (the reader's own batching), recorded while `segmenter` scores them."""
    reader, feeds = segmenter.reader, []
    forward = type(reader)._forward

    def recording(batch: list[np.ndarray], tokens: int) -> np.ndarray:
        ids, mask, _ = batch_ids(batch, tokens, reader.vocab)
        feeds.append({"input_ids": ids, "attention_mask": mask.astype(np.int64)})
        return forward(reader, batch, tokens)

    reader._forward = recording  # this reader only, for this call
    try:
        segmenter.score_texts(texts, show_progress=False)
    finally:
        del reader._forward
    return feeds


def quantize_static(float_graph: Path, out: Path, feeds: list[dict[str, np.ndarray]]) -> None:
    """Write `out`: `float_graph` with int8 matrix products whose activation scales come from `feeds`."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
    )
    from onnxruntime.quantization import quantize_static as ort_quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not feeds:
        raise ValueError("static int8 needs calibration text with Han characters; none was given")

    class Feeds(CalibrationDataReader):
        def __init__(self):
            self.remaining = iter(feeds)

        def get_next(self):
            return next(self.remaining, None)

    import onnx

    prepared = out.with_name(f".{out.name}.pre")
    root = logging.getLogger()  # the quantiser logs hints there on every call
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        # The graph's shapes depend on the batch: symbolic inference cannot finish, the rest can.
        quant_pre_process(str(float_graph), str(prepared), skip_symbolic_shape=True)
        ort_quantize_static(str(prepared), str(out), Feeds(), quant_format=QuantFormat.QOperator,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                            reduce_range=True,  # 7-bit weights: exact on every x86 CPU (the module's docstring)
                            op_types_to_quantize=["MatMul", "Gemm"], calibrate_method=CalibrationMethod.MinMax,
                            nodes_to_exclude=attention_products(onnx.load(str(prepared)).graph),
                            extra_options={"CalibMovingAverage": True})
        model = onnx.load(str(out))
        products_to_float(model.graph)
        if not any(entry.domain == "com.microsoft" for entry in model.opset_import):
            model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
        onnx.save(model, str(out))
    finally:
        root.setLevel(level)
        prepared.unlink(missing_ok=True)
        for leftover in out.parent.glob(f".{out.name}.pre*"):  # external data the pre-processing may write
            leftover.unlink()


def products_to_float(graph) -> int:
    """Rewrite each QLinearMatMul -> DequantizeLinear (-> Add of a constant bias) of `graph` into one
    MatMulIntegerToFloat (onnxruntime's com.microsoft op, bias included); returns how many.

    Why: QLinearMatMul rounds its int32 products to uint8 with one more static scale, and the
    DequantizeLinear and bias Add after it are two more passes over the output. MatMulIntegerToFloat
    scales the int32 products straight to float and adds the bias: on the embedded default the graph
    ran 1.15-1.30x as fast on one thread (batches of 32-128 tokens) and its scores moved closer to the
    float graph's (mean |difference| 0.06 instead of 0.10). A product whose uint8 output feeds another
    quantised node is left as it is."""
    from onnx.helper import make_node

    weights = {tensor.name for tensor in graph.initializer}
    users: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    replaced, dropped = {}, set()
    for node in graph.node:
        after = users.get(node.output[0], [])
        if node.op_type != "QLinearMatMul" or len(after) != 1 or after[0].op_type != "DequantizeLinear":
            continue
        dequantize = after[0]
        then = users.get(dequantize.output[0], [])
        add = then[0] if len(then) == 1 and then[0].op_type == "Add" else None
        bias = [name for name in add.input if name in weights] if add is not None else []
        last = add if len(bias) == 1 else dequantize  # the node whose output the rewrite gives
        a, a_scale, a_zero, b, b_scale, b_zero = node.input[:6]
        replaced[id(node)] = make_node("MatMulIntegerToFloat", [a, b, a_scale, b_scale, a_zero, b_zero, *bias[:1]],
                                      [last.output[0]], name=f"{node.name}_to_float", domain="com.microsoft")
        dropped |= {id(dequantize), id(last)}
    nodes = [replaced.get(id(node), node) for node in graph.node if id(node) not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}  # the output scales of the rewritten products go
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return len(replaced)


def attention_products(graph) -> list[str]:
    """The names of the MatMul nodes that multiply two activations (no weight among their
    inputs, a float16-stored weight's Cast included): the attention products."""
    weights = {tensor.name for tensor in graph.initializer}
    weights |= {node.output[0] for node in graph.node if node.op_type == "Cast" and node.input[0] in weights}
    return [node.name for node in graph.node
            if node.op_type == "MatMul" and not any(name in weights for name in node.input)]


def calibration_record(texts: list[str], source: str) -> str:
    """What calibrated the graph: the value of its metadata entry model.onnx_engine.STATIC_KEY (JSON)."""
    return json.dumps({"lines": len(texts), "chars": sum(map(len, texts)), "source": source,
                       "format": "QOperator, uint8 activations, int8 weights of 7 bits per channel, MinMax; "
                                 "products to float with their bias (MatMulIntegerToFloat); "
                                 "attention products float"}, ensure_ascii=False)
