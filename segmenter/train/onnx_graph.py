"""Edits of an exported reader graph (onnx_export.export_onnx) that leave its arithmetic alone.

    store_float16   float32 weights that float16 holds exactly, stored as float16: half the file
    finish_graph    no copy after the logits, and each row's max as a second output, `row_max`

The graph's output is the masked attention logits of the selected heads, (B, K, T, T). The
trace ends them with a Concat of the layers' heads and a Gather into the profile's order; with
one layer and heads already in order (both shipped models: one head) those are two copies of
the whole tensor, 4 MiB for 64 windows of 128 tokens, that change nothing. Reading the scores
needs each row's max (numpy_ops.scores_from_logits); onnxruntime's ReduceMax takes ~0.07 ms for a
(64, 1, 64, 64) batch where numpy's max over the last axis took ~0.45 ms. Both are exact (no
rounding): the scores, and so the words, are those of the graph without these edits.
"""
from __future__ import annotations

import numpy as np

LOGITS = "logits"
ROW_MAX = "row_max"  # (B, K, T): the max of each row of the logits


def store_float16(model) -> None:
    """Store the float32 weights that float16 holds exactly (those of a float16 checkpoint: the
    embedded models') as float16, each behind a Cast back to float32 that onnxruntime folds
    when it loads the graph: the file halves, the arithmetic and the scores do not change."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    casts = []
    for index, tensor in enumerate(list(graph.initializer)):
        if tensor.data_type != TensorProto.FLOAT or np.prod(tensor.dims) < 1024:
            continue
        values = numpy_helper.to_array(tensor)
        half = values.astype(np.float16)
        if not np.array_equal(half.astype(np.float32), values):
            continue  # float16 would round it: keep it as it is
        name = tensor.name  # `tensor` is the graph's own message: CopyFrom renames it
        stored = numpy_helper.from_array(half, name + "_float16")
        graph.initializer[index].CopyFrom(stored)
        casts.append(helper.make_node("Cast", [stored.name], [name], to=TensorProto.FLOAT))
    nodes = list(graph.node)  # the casts go first, before every node that reads them
    del graph.node[:]
    graph.node.extend(casts + nodes)


def finish_graph(model, heads: int) -> None:
    """Drop the copies that end the logits (module doc) and add the `row_max` output. A graph
    finished already is left as it is."""
    graph = model.graph
    while _drop_copy(graph, heads):
        pass
    if ROW_MAX in [output.name for output in graph.output]:
        return
    from onnx import TensorProto, helper

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    if opset >= 18:  # ReduceMax's axes became an input in opset 18
        axes = helper.make_tensor(f"{ROW_MAX}_axes", TensorProto.INT64, [1], [-1])
        graph.initializer.append(axes)
        node = helper.make_node("ReduceMax", [LOGITS, axes.name], [ROW_MAX], keepdims=0)
    else:
        node = helper.make_node("ReduceMax", [LOGITS], [ROW_MAX], axes=[-1], keepdims=0)
    graph.node.append(node)
    graph.output.append(helper.make_tensor_value_info(ROW_MAX, TensorProto.FLOAT, ["batch", "heads", "tokens"]))


def _drop_copy(graph, heads: int) -> bool:
    """Remove the node that makes the logits when it only copies its input (a Concat of one
    input; a Gather of all `heads` along axis 1, in order) and nothing else reads that input."""
    from onnx import helper

    maker = next((node for node in graph.node if LOGITS in node.output), None)
    if maker is None or not maker.input:
        return False
    attributes = {a.name: helper.get_attribute_value(a) for a in maker.attribute}
    if maker.op_type == "Concat":
        copies = len(maker.input) == 1
    elif maker.op_type == "Gather" and attributes.get("axis", 0) == 1 and len(maker.input) == 2:
        indices = _constant(graph, maker.input[1])
        copies = indices is not None and np.array_equal(indices.reshape(-1), np.arange(heads))
    else:
        copies = False
    source = maker.input[0]
    readers = [node for node in graph.node if source in node.input]
    if not copies or len(readers) != 1 or source in [output.name for output in graph.output]:
        return False
    producer = next((node for node in graph.node if source in node.output), None)
    if producer is None:  # the logits would be a graph input
        return False
    producer.output[list(producer.output).index(source)] = LOGITS
    graph.node.remove(maker)
    for name in maker.input[1:]:  # a Constant node that only the Gather read goes with it
        constant = next((node for node in graph.node if node.op_type == "Constant" and name in node.output), None)
        if constant is not None and not any(name in node.input for node in graph.node):
            graph.node.remove(constant)
    return True


def _constant(graph, name: str):
    """The value of `name` when an initializer or a Constant node holds it, else None."""
    from onnx import numpy_helper

    for tensor in graph.initializer:
        if tensor.name == name:
            return numpy_helper.to_array(tensor)
    for node in graph.node:
        if node.op_type == "Constant" and name in node.output:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            return None if value is None else numpy_helper.to_array(value)
    return None
