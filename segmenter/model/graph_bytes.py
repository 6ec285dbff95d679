"""A finished reader graph without its score tail, edited in its serialized bytes.

onnx_engine.OnnxReader runs a short window (read_one) on a session built for its shape. On a
window of a few characters a run costs ~1 us a node, and the score tail (train/onnx_graph.py:
score_tail, ~25 nodes) is about a quarter of the run: there the scores are cheaper read from the
logits in Python (onnx_engine.scores_of_one), with the tail's first node kept, the max of each
row of the logits (TAIL_ROW_MAX). onnxruntime runs every node of a graph whatever outputs are asked
for, so that session needs a graph that ends there. Segmenting needs no `onnx` package, so the
graph is edited here in protobuf's wire format, which the ONNX schema fixes for good (field
numbers never change):

    ModelProto.graph = 7          GraphProto.node = 1, .initializer = 5, .output = 12, .value_info = 13
    NodeProto.input = 1, .output = 2     TensorProto.name = 8     ValueInfoProto.name = 1, .type = 2

The tail's nodes and constants are those whose outputs and names start with "scores/" (and the
last node, whose output is "scores"): score_tail names them so. What is left is the encoder as
exported, node for node (train/onnx_graph.strip_tail's graph, tested against it), and the row
max: two outputs, the logits (B, K, T, T) and TAIL_ROW_MAX (B, K, T, 1). The same bytes for
everything else.
"""
from __future__ import annotations

SCORES = "scores"  # onnx_graph.SCORES: the tail's output, and its nodes' and constants' prefix
LOGITS = "logits"  # onnx_graph.LOGITS: what the tail reads
TAIL_ROW_MAX = SCORES + "/top_all"  # the tail's first node: ReduceMax of the logits over the last axis, (B, K, T, 1)

_LENGTH_DELIMITED = 2
_FIELD_SIZES = {1: 8, 5: 4}  # wire types of a fixed size: 64-bit, 32-bit


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and where it ends."""
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("not a protobuf message: it ends inside a number")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(data: bytes):
    """(field number, the field's bytes whole, its payload) for each field of a message, in order;
    the payload is a length-delimited field's contents (b"" for the others: never read here)."""
    at = 0
    while at < len(data):
        key, body = _varint(data, at)
        wire = key & 7
        if wire == 0:
            _, end = _varint(data, body)
            payload = b""
        elif wire == _LENGTH_DELIMITED:
            size, start = _varint(data, body)
            end = start + size
            payload = data[start:end]
        elif wire in _FIELD_SIZES:
            end = body + _FIELD_SIZES[wire]
            payload = b""
        else:
            raise ValueError(f"not a protobuf message: wire type {wire} at byte {at}")
        if end > len(data):
            raise ValueError("not a protobuf message: a field runs past the end")
        yield key >> 3, data[at:end], payload
        at = end


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _varint_bytes(number << 3 | _LENGTH_DELIMITED) + _varint_bytes(len(payload)) + payload


def _strings(message: bytes, number: int) -> list[str]:
    return [payload.decode("utf-8") for field, _, payload in _fields(message) if field == number]


def _in_tail(name: str) -> bool:
    return name != TAIL_ROW_MAX and (name == SCORES or name.startswith(SCORES + "/"))


def _float_output(name: str, sizes: tuple) -> bytes:
    """ValueInfoProto of a float tensor `name` with dimensions `sizes` (names or 1s)."""
    # TensorShapeProto.dim = 1, each a Dimension: dim_value = 1 (a number), dim_param = 2 (a name)
    shape = b"".join(_field(1, _field(2, size.encode()) if isinstance(size, str) else _varint_bytes(1 << 3) + _varint_bytes(size))
                     for size in sizes)
    tensor = _varint_bytes(1 << 3) + _varint_bytes(1) + _field(2, shape)  # TypeProto.Tensor: elem_type FLOAT (1), shape
    return _field(1, name.encode()) + _field(2, _field(1, tensor))  # name; type.tensor_type


def without_score_tail(model: bytes) -> bytes:
    """The serialized graph `model` (one that ends with the scores) ending with the logits and
    their rows' max instead: the tail's other nodes, constants and value infos dropped.
    ValueError when it has no score tail to drop."""
    out, edited = [], False
    for number, whole, payload in _fields(model):
        if number == 7:  # ModelProto.graph
            whole = _field(7, _graph_without_tail(payload))
            edited = True
        out.append(whole)
    if not edited:
        raise ValueError("not an ONNX model: no graph")
    return b"".join(out)


def _graph_without_tail(graph: bytes) -> bytes:
    fields = list(_fields(graph))
    outputs = [_strings(payload, 1) for number, _, payload in fields if number == 12]
    if outputs != [[SCORES]]:
        raise ValueError(f"the graph's outputs are {outputs}, not the scores alone: no score tail to drop")
    kept, read, made = [], set(), set()
    for number, whole, payload in fields:
        if number == 1:  # NodeProto: a tail node makes only "scores/..." tensors (or "scores")
            outputs = _strings(payload, 2)
            if any(_in_tail(name) for name in outputs):
                continue
            read.update(_strings(payload, 1))
            made.update(outputs)
        kept.append((number, whole, payload))
    if not {LOGITS, TAIL_ROW_MAX} <= made:
        raise ValueError(f"no node of the graph makes {LOGITS!r} or {TAIL_ROW_MAX!r}: not a score tail of this version")
    out = []
    for number, whole, payload in kept:
        if number == 12:  # the one output, the scores: the logits and their rows' max instead
            whole = (_field(12, _float_output(LOGITS, ("batch", "heads", "tokens", "tokens")))
                     + _field(12, _float_output(TAIL_ROW_MAX, ("batch", "heads", "tokens", 1))))
        elif number in (5, 13):  # a tail constant (TensorProto.name = 8) or value info (.name = 1)
            name = _strings(payload, 8 if number == 5 else 1)[:1]
            if name and _in_tail(name[0]) and name[0] not in read:
                continue
        out.append(whole)
    return b"".join(out)
