"""Edits of an exported reader graph (onnx_export.export_onnx) that leave its arithmetic alone.

    store_float16   float32 weights that float16 holds exactly, stored as float16: half the file
    finish_graph    no copy after the logits, and the graph ends with the boundary scores
                    themselves (score_tail), (B, K, T - 3), instead of the logits (B, K, T, T)

The traced graph's output is the masked attention logits of the selected heads, (B, K, T, T).
The trace ends them with a Concat of the layers' heads and a Gather into the profile's order;
with one layer and heads already in order (both shipped models: one head) those are two copies
of the whole tensor, 4 MiB for 64 windows of 128 tokens, that change nothing. score_tail then
appends the nodes that read the scores from the logits, as numpy_ops.scores_from_logits does
(the same float32 operations; the log-sum-exp, read only on rows near the floor, may differ from
numpy's in its last bit: onnxruntime sums in another order): onnx_engine.OnnxReader gets the scores from the session
with no numpy work after it, and nothing of (B, K, T, T) is copied out of onnxruntime. On the
shipped graphs the scores of every real junction of 1,000 pku_dev sentences are those of the
logits read in numpy, bit for bit (all within 2e-6), the words the same; the graph and its
reading cost the same CPU time as before to within 2% (issue 57), with nothing left for numpy. Graphs finished before (logits, or logits and each row's max:
ROW_MAX) still read, through numpy_ops.scores_from_logits.
"""
from __future__ import annotations

import numpy as np

from ..model.onnx_engine import SCORES_OUTPUT

LOGITS = "logits"
SCORES = SCORES_OUTPUT  # (B, K, T - 3): the boundary scores themselves, the graph's only output (score_tail)
ROW_MAX = "row_max"  # (B, K, T): the max of each row of the logits, beside them in graphs finished before issue 57


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
    """Drop the copies that end the logits (module doc) and end the graph with the scores
    (score_tail). A graph finished already is left as it is; one finished with each row's max
    beside the logits (ROW_MAX, before issue 57) gets the scores instead."""
    graph = model.graph
    if SCORES in [output.name for output in graph.output]:
        return
    while _drop_copy(graph, heads):
        pass
    row_max = next((node for node in graph.node if ROW_MAX in node.output), None)
    if row_max is not None:
        graph.node.remove(row_max)
        graph.output.remove(next(output for output in graph.output if output.name == ROW_MAX))
        for name in row_max.input[1:]:  # the axes of an opset-18 ReduceMax
            tensor = next((t for t in graph.initializer if t.name == name), None)
            if tensor is not None and not any(name in node.input for node in graph.node):
                graph.initializer.remove(tensor)
    score_tail(model)


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


def score_tail(model) -> None:
    """End the graph with the boundary scores (B, K, T - 3) that numpy_ops.scores_from_logits
    reads from the logits, op for op, instead of returning the (B, K, T, T) logits: the junction
    after character j reads row i = j + 1's entry at [SEP] (column sum(mask) - 1) and at i + 1
    (GatherElements), their difference; the rows where the smaller of the two lies within
    LOG_FLOOR + log T of the row's max (compared in float64, as numpy does) are gathered (NonZero,
    GatherND), get the floored log-softmax difference with their exact log-sum-exp, and are
    scattered back (ScatterND): no exp over the other rows. The nodes are appended: the encoder
    and its int8 weights and scales stay as they were. A graph that ends with the scores already
    is left as it is."""
    from onnx import TensorProto, helper

    graph = model.graph
    outputs = [output.name for output in graph.output]
    if SCORES in outputs:
        return
    if outputs != [LOGITS]:
        raise ValueError(f"score_tail needs a graph whose one output is the logits, not {outputs}")
    from ..model.numpy_ops import LOG_FLOOR

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)

    def name(suffix: str) -> str:
        return f"{SCORES}/{suffix}"

    constants = {
        "one": (TensorProto.INT64, [1]), "two": (TensorProto.INT64, [2]), "zero": (TensorProto.INT64, [0]),
        "axis1": (TensorProto.INT64, [1]), "axis2": (TensorProto.INT64, [2]), "axis3": (TensorProto.INT64, [3]),
        "axes12": (TensorProto.INT64, [1, 2]), "axes_last": (TensorProto.INT64, [-1]),
        "row_shape": (TensorProto.INT64, [1, 1, -1, 1]), "first3": (TensorProto.INT64, [3]),
    }
    for key, (kind, values) in constants.items():
        graph.initializer.append(helper.make_tensor(name(key), kind, [len(values)], values))
    graph.initializer.append(helper.make_tensor(name("log_floor"), TensorProto.DOUBLE, [], [float(LOG_FLOOR)]))
    graph.initializer.append(helper.make_tensor(name("floor"), TensorProto.FLOAT, [], [float(LOG_FLOOR)]))

    def reduce(op: str, data: str, out: str, keepdims: int = 1, axes: str = "axes_last") -> "object":
        if op == "ReduceSum" or opset >= 18:  # axes an input (ReduceSum since 13, the others since 18)
            return helper.make_node(op, [data, name(axes)], [out], keepdims=keepdims)
        values = {"axes_last": [-1], "axis1": [1]}[axes]
        return helper.make_node(op, [data], [out], axes=values, keepdims=keepdims)

    node = helper.make_node
    nodes = [
        # T, the padded length; every row is read, and rows 1 .. T - 3 kept at the end (junctions 0 .. T - 4)
        node("Shape", [LOGITS], [name("shape")]),
        node("Gather", [name("shape"), name("axis3")], [name("tokens")]),  # (1,)
        node("Sub", [name("tokens"), name("two")], [name("end")]),  # T - 2
        node("Slice", [name("shape"), name("zero"), name("first3"), name("zero")], [name("rows_shape")]),
        node("Concat", [name("rows_shape"), name("one")], [name("index_shape")], axis=0),  # (B, K, T, 1)
        # column of [SEP]: sum(mask) - 1, one per window
        reduce("ReduceSum", "attention_mask", name("kept"), keepdims=1, axes="axis1"),  # (B, 1)
        node("Sub", [name("kept"), name("one")], [name("sep")]),
        node("Unsqueeze", [name("sep"), name("axes12")], [name("sep4")]),  # (B, 1, 1, 1)
        node("Expand", [name("sep4"), name("index_shape")], [name("sep_index")]),
        node("GatherElements", [LOGITS, name("sep_index")], [name("to_sep")], axis=3),
        # column i + 1 of row i (the last row reads its own column: it is cut below)
        node("Squeeze", [name("tokens"), name("zero")], [name("tokens_scalar")]),
        node("Squeeze", [name("one"), name("zero")], [name("one_scalar")]),
        node("Range", [name("one_scalar"), name("tokens_scalar"), name("one_scalar")], [name("next0")]),
        node("Concat", [name("next0"), name("end")], [name("next")], axis=0),  # 1 .. T - 1, T - 2
        node("Reshape", [name("next"), name("row_shape")], [name("next4")]),  # (1, 1, T, 1)
        node("Expand", [name("next4"), name("index_shape")], [name("next_index")]),
        node("GatherElements", [LOGITS, name("next_index")], [name("to_next")], axis=3),
        node("Sub", [name("to_sep"), name("to_next")], [name("difference")]),
        # rows that may be floored: min(to_sep, to_next) - max(row) < LOG_FLOOR + log T, in float64
        reduce("ReduceMax", LOGITS, name("top")),  # (B, K, T, 1)
        node("Min", [name("to_sep"), name("to_next")], [name("smaller")]),
        node("Sub", [name("smaller"), name("top")], [name("below")]),
        node("Cast", [name("below")], [name("below64")], to=TensorProto.DOUBLE),
        node("Cast", [name("tokens")], [name("tokens64")], to=TensorProto.DOUBLE),
        node("Log", [name("tokens64")], [name("log_tokens")]),
        node("Add", [name("log_floor"), name("log_tokens")], [name("limit")]),
        node("Less", [name("below64"), name("limit")], [name("near")]),
        # the rows near the floor alone, as numpy: their exact log-sum-exp, log(sum(exp(row - max))) + max
        node("Squeeze", [name("near"), name("axis3")], [name("near3")]),  # (B, K, T)
        node("NonZero", [name("near3")], [name("near_at")]),  # (3, N)
        node("Transpose", [name("near_at")], [name("near_index")], perm=[1, 0]),  # (N, 3)
        node("GatherND", [LOGITS, name("near_index")], [name("near_rows")]),  # (N, T)
        reduce("ReduceMax", name("near_rows"), name("peak")),  # (N, 1)
        node("Sub", [name("near_rows"), name("peak")], [name("shifted")]),
        node("Exp", [name("shifted")], [name("exp")]),
        reduce("ReduceSum", name("exp"), name("total")),
        node("Log", [name("total")], [name("log_total0")]),
        node("Add", [name("log_total0"), name("peak")], [name("log_total1")]),
        node("Squeeze", [name("log_total1"), name("axes_last")], [name("log_total")]),  # (N,)
        node("Squeeze", [name("to_sep"), name("axis3")], [name("to_sep3")]),
        node("Squeeze", [name("to_next"), name("axis3")], [name("to_next3")]),
        node("GatherND", [name("to_sep3"), name("near_index")], [name("near_sep")]),
        node("GatherND", [name("to_next3"), name("near_index")], [name("near_next")]),
        node("Sub", [name("near_sep"), name("log_total")], [name("log_sep")]),
        node("Sub", [name("near_next"), name("log_total")], [name("log_next")]),
        node("Max", [name("log_sep"), name("floor")], [name("floored_sep")]),
        node("Max", [name("log_next"), name("floor")], [name("floored_next")]),
        node("Sub", [name("floored_sep"), name("floored_next")], [name("exact")]),
        node("Squeeze", [name("difference"), name("axis3")], [name("difference3")]),  # (B, K, T)
        node("ScatterND", [name("difference3"), name("near_index"), name("exact")], [name("all_rows")]),
        node("Slice", [name("all_rows"), name("one"), name("end"), name("axis2")], [SCORES]),  # rows 1 .. T - 3
    ]
    graph.node.extend(nodes)
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(SCORES, TensorProto.FLOAT, ["batch", "heads", "junctions"]))
