"""Edits of an exported reader graph (onnx_export.export_onnx) that leave its arithmetic alone.

    store_float16   float32 weights that float16 holds exactly, stored as float16: half the file
    finish_graph    no copy after the logits, and the graph ends with the boundary scores
                    themselves (score_tail), (B, K, T - 3), instead of the logits (B, K, T, T);
                    then slim_graph: the trace's shape bookkeeping taken out
    finish_file     finish_graph on a graph file, in place (a shipped graph gets the current edits)

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

A run on one short window costs per node more than per multiply-add: the shipped graphs had 150
nodes, ~80 of them shape bookkeeping of the trace, which slim_graph replaces by constants (86
nodes left, and the tail's 19 for rows near the floor only when there is one). The scores are bit for bit those of
the graph before: only where tensors come from (constants, a lookup, a slice) changes, no float
operation does.
"""
from __future__ import annotations

import numpy as np

from ..model.graph_bytes import LOGITS, TAIL_ROW_MAX
from ..model.onnx_engine import SCORES_OUTPUT

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
    """Drop the copies that end the logits (module doc), end the graph with the scores
    (score_tail) and take out the trace's shape bookkeeping (slim_graph). A graph finished already
    gets only what it lacks: one finished with each row's max beside the logits (ROW_MAX, before
    issue 57) gets the scores instead; one that ends with the scores, the current tail and the
    slimming. Finishing a finished graph changes nothing."""
    graph = model.graph
    if SCORES not in [output.name for output in graph.output]:
        _end_with_scores(model, heads)
    slim_graph(model)


def finish_file(path) -> int:
    """finish_graph on the graph file at `path`, in place (its metadata kept; the heads it was
    exported for from there): how an exported graph, a shipped one, gets the current edits. The
    number of nodes it has after."""
    import json

    import onnx

    from ..model.onnx_engine import HEADS_KEY
    from ..run.files import atomic_path

    model = onnx.load(str(path))
    heads = json.loads(next(entry.value for entry in model.metadata_props if entry.key == HEADS_KEY))
    finish_graph(model, len(heads))
    with atomic_path(path) as temporary:
        onnx.save(model, str(temporary))
    return len(model.graph.node)


def _end_with_scores(model, heads: int) -> None:
    """finish_graph on a graph that ends with the logits (with or without ROW_MAX)."""
    graph = model.graph
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
    after character j reads row i = j + 1's entry at [SEP] (column sum(mask) - 1, GatherElements)
    and at i + 1 (a strided Slice of the flattened logits: entry i * (T + 1) + 1), their
    difference; the rows where the smaller of the two lies within LOG_FLOOR + log T of the row's
    max (compared in float64, as numpy does) are gathered (NonZero, GatherND), get the floored
    log-softmax difference with their exact log-sum-exp, and are scattered back (ScatterND): no
    exp over the other rows, and none of those nodes runs when no row is near (If). Rows past a window's last junction (token i + 1 not a character:
    mask[i + 2] is 0) are never floored; nothing reads their scores. The nodes are appended: the
    encoder and its int8 weights and scales stay as they were. A graph that ends with the scores
    already is left as it is. Every node and constant of the tail is named "scores/..." (the last
    one's output "scores"): model/graph_bytes.py takes the tail off by those names, all but the row
    max (TAIL_ROW_MAX), for the short windows' sessions."""
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
        "one": [1], "minus_two": [-2], "axis1": [1], "axis2": [2], "axis3": [3], "axes_last": [-1],
        "axes12": [1, 2], "axes13": [1, 3], "first_next": [3], "to_end": [np.iinfo(np.int64).max],
        "row_offset": [0, 0, 1],  # a row index among rows 1 .. T - 3 -> its row in the logits
        "entries": [0, 0, -1, 1],  # (B, K, T * T, 1): the logits row after row
        "junctions": [0, 0, -1],  # (B, K, T - 3, 1) -> (B, K, T - 3)
    }
    for key, values in constants.items():
        graph.initializer.append(helper.make_tensor(name(key), TensorProto.INT64, [len(values)], values))
    graph.initializer.append(helper.make_tensor(name("log_floor"), TensorProto.DOUBLE, [], [float(LOG_FLOOR)]))
    graph.initializer.append(helper.make_tensor(name("floor"), TensorProto.FLOAT, [], [float(LOG_FLOOR)]))

    def reduce(op: str, data: str, out: str, axes: str = "axes_last") -> "object":
        if op == "ReduceSum" or opset >= 18:  # axes an input (ReduceSum since 13, the others since 18)
            return helper.make_node(op, [data, name(axes)], [out], keepdims=1)
        values = {"axes_last": [-1], "axis1": [1]}[axes]
        return helper.make_node(op, [data], [out], axes=values, keepdims=1)

    def rows(data: str, out: str) -> "object":  # rows 1 .. T - 3 of (B, K, T, 1)
        return helper.make_node("Slice", [data, name("one"), name("minus_two"), name("axis2")], [out])

    node = helper.make_node
    nodes = [
        # entry (i, i + 1) of rows 1 .. T - 3: flat entries T + 2, 2T + 3, … before -(T + 1), step T + 1
        node("Shape", [LOGITS], [name("tokens")], start=3, end=4),  # (1,): T
        node("Add", [name("tokens"), name("one")], [name("stride")]),
        node("Add", [name("stride"), name("one")], [name("first")]),
        node("Neg", [name("stride")], [name("stop")]),
        node("Reshape", [LOGITS, name("entries")], [name("flat")]),
        node("Slice", [name("flat"), name("first"), name("stop"), name("axis2"), name("stride")], [name("to_next")]),
        # column of [SEP]: sum(mask) - 1, one per window, read on every row, rows 1 .. T - 3 kept
        reduce("ReduceMax", LOGITS, TAIL_ROW_MAX),  # (B, K, T, 1); graph_bytes keeps it for the short sessions
        reduce("ReduceSum", "attention_mask", name("kept"), axes="axis1"),  # (B, 1)
        node("Sub", [name("kept"), name("one")], [name("sep")]),
        node("Unsqueeze", [name("sep"), name("axes12")], [name("sep4")]),  # (B, 1, 1, 1)
        node("Shape", [TAIL_ROW_MAX], [name("index_shape")]),
        node("Expand", [name("sep4"), name("index_shape")], [name("sep_index")]),
        node("GatherElements", [LOGITS, name("sep_index")], [name("to_sep_all")], axis=3),
        rows(name("to_sep_all"), name("to_sep")),  # (B, K, T - 3, 1)
        rows(TAIL_ROW_MAX, name("top")),
        node("Sub", [name("to_sep"), name("to_next")], [name("difference")]),
        # rows that may be floored: min(to_sep, to_next) - max(row) < LOG_FLOOR + log T, in float64
        node("Min", [name("to_sep"), name("to_next")], [name("smaller")]),
        node("Sub", [name("smaller"), name("top")], [name("below")]),
        node("Cast", [name("below")], [name("below64")], to=TensorProto.DOUBLE),
        node("Cast", [name("tokens")], [name("tokens64")], to=TensorProto.DOUBLE),
        node("Log", [name("tokens64")], [name("log_tokens")]),
        node("Add", [name("log_floor"), name("log_tokens")], [name("limit")]),
        node("Less", [name("below64"), name("limit")], [name("low")]),
        # … and read: row i's junction is one when token i + 1 is a character, mask[i + 2] = 1
        node("Slice", ["attention_mask", name("first_next"), name("to_end"), name("axis1")], [name("read_mask")]),
        node("Cast", [name("read_mask")], [name("read")], to=TensorProto.BOOL),  # (B, T - 3)
        node("Unsqueeze", [name("read"), name("axes13")], [name("read4")]),  # (B, 1, T - 3, 1)
        node("And", [name("low"), name("read4")], [name("near")]),
        node("Cast", [name("near")], [name("near_bytes")], to=TensorProto.UINT8),
        node("ReduceMax", [name("near_bytes")], [name("any_byte")], keepdims=0),  # over every axis
        node("Cast", [name("any_byte")], [name("any_near")], to=TensorProto.BOOL),
    ]
    exact = [  # the rows near the floor alone, as numpy: their exact log-sum-exp, log(sum(exp(row - max))) + max
        node("Squeeze", [name("near"), name("axis3")], [name("near3")]),  # (B, K, T - 3)
        node("NonZero", [name("near3")], [name("near_at")]),  # (3, N)
        node("Transpose", [name("near_at")], [name("near_index")], perm=[1, 0]),  # (N, 3)
        node("Add", [name("near_index"), name("row_offset")], [name("near_row_index")]),
        node("GatherND", [LOGITS, name("near_row_index")], [name("near_rows")]),  # (N, T)
        reduce("ReduceMax", name("near_rows"), name("peak")),  # (N, 1)
        node("Sub", [name("near_rows"), name("peak")], [name("shifted")]),
        node("Exp", [name("shifted")], [name("exp")]),
        reduce("ReduceSum", name("exp"), name("total")),
        node("Log", [name("total")], [name("log_total0")]),
        node("Add", [name("log_total0"), name("peak")], [name("log_total")]),  # (N, 1)
        node("GatherND", [name("to_sep"), name("near_index")], [name("near_sep")]),  # (N, 1)
        node("GatherND", [name("to_next"), name("near_index")], [name("near_next")]),
        node("Sub", [name("near_sep"), name("log_total")], [name("log_sep")]),
        node("Sub", [name("near_next"), name("log_total")], [name("log_next")]),
        node("Max", [name("log_sep"), name("floor")], [name("floored_sep")]),
        node("Max", [name("log_next"), name("floor")], [name("floored_next")]),
        node("Sub", [name("floored_sep"), name("floored_next")], [name("exact")]),
        node("ScatterND", [name("difference"), name("near_index"), name("exact")], [name("floored_rows")]),
    ]
    # Most windows have no row near the floor: the exact rows' nodes then do not run at all.
    def branch(nodes: list, out: str, label: str):
        return helper.make_graph(nodes, label, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])

    plain = [node("Identity", [name("difference")], [name("plain_rows")])]
    nodes += [
        node("If", [name("any_near")], [name("all_rows")], then_branch=branch(exact, name("floored_rows"), "floored"),
             else_branch=branch(plain, name("plain_rows"), "plain")),
        node("Reshape", [name("all_rows"), name("junctions")], [SCORES]),
    ]
    graph.node.extend(nodes)
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(SCORES, TensorProto.FLOAT, ["batch", "heads", "junctions"]))


def strip_tail(model) -> bool:
    """Take score_tail's nodes and constants off a finished graph, which then ends with the
    logits again; False (and nothing changed) for a graph that does not end with the scores."""
    from onnx import TensorProto, helper

    graph = model.graph
    if [output.name for output in graph.output] != [SCORES]:
        return False
    tail = [node for node in graph.node if any(o == SCORES or o.startswith(SCORES + "/") for o in node.output)]
    for node in tail:
        graph.node.remove(node)
    for tensor in [t for t in graph.initializer if t.name.startswith(SCORES + "/")]:
        graph.initializer.remove(tensor)
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["batch", "heads", "tokens", "tokens"]))
    return True


# Input shapes (batch, tokens) the traced graph is run on to learn its shape bookkeeping: the
# tokens differ from each other and from every batch size, and fit any model's positions.
PROBES = ((2, 9), (3, 12), (1, 7))


def slim_graph(model) -> None:
    """Take the trace's shape bookkeeping out of a reader graph, leaving its arithmetic alone:
    every score is the same, bit for bit, and so are the words. One run of the shipped graphs on a
    short text costs per node more than per multiply; the trace computes each Reshape's target
    from the input's shape (Shape, Gather, Unsqueeze, Concat), the token types (all 0) and the
    position ids from the input's shape too, and onnxruntime folds none of it. Here

      * a Reshape whose target was computed gets it as a constant (0: the input's dimension, -1:
        the rest), learnt by running the graph on the PROBES shapes;
      * a lookup of a constant table at indices that are all 0 for every input shape (the token
        type embeddings) is the table's row 0, added by broadcasting;
      * a lookup at 0 … T - 1 (the position embeddings) is a Slice of the table's first T rows;
      * the additive attention mask, elementwise steps from `attention_mask` (Unsqueeze, Cast,
        Sub, Mul), is a lookup of its two values, those steps' own results for 0 and 1;
      * the score tail (score_tail) is rebuilt in its current form;
      * nodes nothing reads, and constants no node reads, go.

    A graph slimmed already comes out the same."""
    graph = model.graph
    _constants_to_initializers(graph)
    _skip_identities(graph)
    tail = strip_tail(model)
    _drop_dead(graph)
    probed = _probe(model)
    if probed is not None:
        _constant_reshapes(graph, *probed)
        _constant_lookups(graph, *probed)
    _mask_lookup(model)
    _drop_dead(graph)
    if tail:
        score_tail(model)


def _constants_to_initializers(graph) -> None:
    """Constant nodes (the trace's) as initializers: one place to read a constant from."""
    from onnx import helper, numpy_helper

    for node in [n for n in graph.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]:
        attribute = node.attribute[0]
        if attribute.name == "value":
            tensor = attribute.t  # append below copies it
        elif attribute.name in ("value_float", "value_floats", "value_int", "value_ints"):
            dtype = np.float32 if attribute.name.startswith("value_float") else np.int64
            tensor = numpy_helper.from_array(np.asarray(helper.get_attribute_value(attribute), dtype=dtype))
        else:  # strings, sparse tensors: left as nodes
            continue
        tensor.name = node.output[0]
        graph.initializer.append(tensor)
        graph.node.remove(node)


def _skip_identities(graph) -> None:
    """Nodes read an initializer itself rather than an Identity of it (the trace's name for a
    tensor it stores once under another name)."""
    constants = {tensor.name for tensor in graph.initializer}
    outputs = {output.name for output in graph.output}
    same = {node.output[0]: node.input[0] for node in graph.node
            if node.op_type == "Identity" and node.input[0] in constants and node.output[0] not in outputs}
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name in same:
                node.input[index] = same[name]


def _drop_dead(graph) -> None:
    """Remove the nodes whose outputs nothing reads and the initializers no node reads."""
    wanted = {output.name for output in graph.output}
    kept = []
    for node in reversed(list(graph.node)):
        if any(name in wanted for name in node.output):
            kept.append(node)
            wanted.update(name for name in node.input if name)
            for attribute in node.attribute:  # a subgraph's reads of outer names
                for sub in ([attribute.g] if attribute.g.node else []) + list(attribute.graphs):
                    wanted.update(name for inner in sub.node for name in inner.input)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    for tensor in [t for t in graph.initializer if t.name not in wanted]:
        graph.initializer.remove(tensor)
    for info in [v for v in graph.value_info if v.name not in wanted]:
        graph.value_info.remove(info)


def _probe(model) -> tuple[list[dict[str, tuple]], list[dict[str, np.ndarray]]] | None:
    """For each PROBES shape: every tensor's shape, and the value of every tensor that does not
    depend on the inputs' values (only on their shapes: the trace's bookkeeping). None for a
    graph that does not run on them (fewer positions than a probe's tokens): nothing is learnt."""
    import onnxruntime
    from onnx import helper

    graph = model.graph
    names = [name for node in graph.node for name in node.output if name]
    probing = type(model)()
    probing.CopyFrom(model)
    del probing.graph.output[:]
    probing.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names)
    del probing.graph.value_info[:]
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4  # a probe the graph refuses is an answer, not an error
    session = onnxruntime.InferenceSession(probing.SerializeToString(), options, providers=["CPUExecutionProvider"])
    shape_only = _shape_only(graph)
    shapes, values = [], []
    for batch, tokens in PROBES:
        feed = {}
        for graph_input in session.get_inputs():
            feed[graph_input.name] = np.ones((batch, tokens), dtype=np.int64)  # [CLS] … ids, a full mask
        try:
            results = dict(zip(names, session.run(names, feed)))
        except Exception:  # onnxruntime raises its own exception types
            return None
        results.update(feed)
        shapes.append({name: tuple(np.shape(value)) for name, value in results.items()})
        values.append({name: results[name] for name in shape_only if name in results})
    return shapes, values


def _shape_only(graph) -> set[str]:
    """The tensors computed from the inputs' shapes alone (Shape, then anything from it and
    constants), not from their values."""
    constants = {tensor.name for tensor in graph.initializer}
    from_values = {graph_input.name for graph_input in graph.input} - constants
    shape_only = set()
    for node in graph.node:  # in order: the graph is sorted
        if node.op_type == "Shape":
            shape_only.update(node.output)
        elif not any(name in from_values for name in node.input) and any(name in shape_only for name in node.input):
            shape_only.update(node.output)
        elif any(name not in constants for name in node.input if name):
            from_values.update(node.output)
    return shape_only


def _constant_reshapes(graph, shapes, values) -> None:
    """A Reshape whose target the trace computes from shapes gets a constant one (0 / -1)."""
    from onnx import helper

    initializers = {tensor.name for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type != "Reshape" or node.input[1] in initializers or node.input[1] not in values[0]:
            continue
        if any(a.name == "allowzero" and helper.get_attribute_value(a) for a in node.attribute):
            continue
        ins = [probe[node.input[0]] for probe in shapes]
        outs = [probe[node.output[0]] for probe in shapes]
        if len({len(shape) for shape in outs}) != 1:
            continue
        target = []
        for axis in range(len(outs[0])):
            sizes = {out[axis] for out in outs}
            if len(sizes) == 1 and 0 not in sizes:
                target.append(sizes.pop())
            elif all(axis < len(shape) and shape[axis] == out[axis] for shape, out in zip(ins, outs)):
                target.append(0)
            else:
                target.append(-1)
        if target.count(-1) > 1 or not all(_reshaped(shape, target) == out for shape, out in zip(ins, outs)):
            continue
        name = f"{node.output[0]}/target"
        graph.initializer.append(helper.make_tensor(name, 7, [len(target)], target))  # int64
        node.input[1] = name


def _reshaped(shape: tuple, target: list[int]) -> tuple:
    """The shape Reshape gives `shape` with `target` (0 copies a dimension, -1 takes the rest)."""
    out = [shape[axis] if size == 0 else size for axis, size in enumerate(target)]
    if -1 in out:
        known = int(np.prod([size for size in out if size != -1]))
        out[out.index(-1)] = int(np.prod(shape)) // known if known else 0
    return tuple(out)


def _constant_lookups(graph, shapes, values) -> None:
    """Two tensors the trace computes from the inputs' shapes alone and adds to the word
    embeddings, each replaced only where every reader is an elementwise op that broadcasts it
    against a tensor of its result's shape (so that nothing else changes):

      * one that is a single vector at every position, for every input shape (the token type
        embeddings: all types are 0): that vector, a constant;
      * a Gather from a constant table at 0 … T - 1 (the position embeddings): a Slice of the
        table's first T rows."""
    from onnx import helper, numpy_helper

    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    outputs = {output.name for output in graph.output}
    tokens_from = next((i.name for i in graph.input if i.name == "input_ids"), graph.input[0].name)

    def broadcast_by_readers(out: str) -> bool:
        users = readers.get(out, [])
        return bool(users) and out not in outputs and all(
            user.op_type in ("Add", "Sub", "Mul") and len(user.input) == 2 and user.input[0] != user.input[1]
            and all(probe.get(other) == probe[user.output[0]] for probe in shapes for other in user.input if other != out)
            for user in users)

    for node in list(graph.node):
        out = node.output[0]
        if out not in values[0] or not broadcast_by_readers(out):
            continue
        found = [probe[out] for probe in values]
        vector = found[0].reshape(-1, found[0].shape[-1])[0] if found[0].ndim and found[0].size else None
        if vector is not None and vector.dtype.kind == "f" and all(
                np.array_equal(value, np.broadcast_to(vector, value.shape)) for value in found):
            constant = numpy_helper.from_array(vector, f"{out}/row")
            graph.initializer.append(constant)
            for user in readers[out]:
                user.input[list(user.input).index(out)] = constant.name
            continue
        if node.op_type != "Gather" or any(a.name == "axis" and a.i != 0 for a in node.attribute):
            continue
        if _table(graph, node.input[0]) is None or node.input[1] not in values[0]:
            continue
        indices = [probe[node.input[1]] for probe in values]
        if all(index.ndim >= 1 and np.prod(index.shape[:-1]) == 1 and index.shape[-1] == probe[tokens_from][1]
               and np.array_equal(index.reshape(-1), np.arange(index.shape[-1]))
               for index, probe in zip(indices, shapes)):
            count, rows, zero = f"{out}/count", f"{out}/rows", f"{out}/zero"
            graph.initializer.append(helper.make_tensor(zero, 7, [1], [0]))
            at = list(graph.node).index(node)
            graph.node.insert(at, helper.make_node("Slice", [node.input[0], zero, count, zero], [rows]))
            graph.node.insert(at, helper.make_node("Shape", [tokens_from], [count], start=1, end=2))
            for user in readers[out]:
                user.input[list(user.input).index(out)] = rows


def _table(graph, name: str):
    """The value of a constant table: an initializer, or a Cast of one (store_float16)."""
    from onnx import helper

    value = _constant(graph, name)
    if value is not None:
        return value
    cast = next((n for n in graph.node if n.op_type == "Cast" and name in n.output), None)
    if cast is None:
        return None
    stored = _constant(graph, cast.input[0])
    to = next(a.i for a in cast.attribute if a.name == "to")
    return None if stored is None else stored.astype(helper.tensor_dtype_to_np_dtype(to))


# Elementwise steps (with constants) that make the additive attention mask from attention_mask.
MASK_STEPS = ("Unsqueeze", "Cast", "Sub", "Mul", "Add", "Div")


def _mask_lookup(model) -> None:
    """The additive attention mask, (1 - mask) * min_float in a few steps from `attention_mask`
    (MASK_STEPS), as a lookup of the steps' results for mask 0 and mask 1 (computed by
    onnxruntime, through the same steps) and one Unsqueeze to the steps' rank."""
    import onnxruntime
    from onnx import helper, numpy_helper

    graph = model.graph
    constants = {tensor.name for tensor in graph.initializer}
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    steps, at = [], "attention_mask"
    while True:
        users = readers.get(at, [])
        chain = [u for u in users if u.op_type in MASK_STEPS
                 and all(name == at or name in constants for name in u.input)]
        if len(chain) != 1 or (steps and len(users) != 1):
            break
        steps.append(chain[0])
        at = chain[0].output[0]
    if not any(step.op_type == "Cast" for step in steps) or at in [o.name for o in graph.output]:
        return
    # the steps alone, run on the two mask values
    alone = helper.make_graph(
        steps, "mask", [helper.make_tensor_value_info("attention_mask", 7, [2, 3])],
        [helper.make_empty_tensor_value_info(at)],
        [t for t in graph.initializer if any(t.name in step.input for step in steps)])
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        helper.make_model(alone, opset_imports=list(model.opset_import), ir_version=model.ir_version).SerializeToString(),
        options, providers=["CPUExecutionProvider"])
    mask = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.int64)  # (B, T) of sizes no inserted axis has
    result = session.run(None, {"attention_mask": mask})[0]
    inserted = [axis for axis, size in enumerate(result.shape) if size == 1]
    kept = [size for size in result.shape if size != 1]
    values = result.reshape(mask.shape)[[0, 0], [0, 1]] if kept == [2, 3] else None
    if values is None or not np.array_equal(values[mask], result.reshape(mask.shape), equal_nan=True):
        return  # not a value per mask entry: leave the steps as they are
    table = numpy_helper.from_array(values, f"{at}/values")
    axes = helper.make_tensor(f"{at}/axes", 7, [len(inserted)], inserted)
    graph.initializer.extend([table, axes])
    looked_up = f"{at}/looked_up"
    first = list(graph.node).index(steps[0])
    for step in steps:
        graph.node.remove(step)
    graph.node.insert(first, helper.make_node("Unsqueeze", [looked_up, axes.name], [at]))
    graph.node.insert(first, helper.make_node("Gather", [table.name, "attention_mask"], [looked_up]))
