"""engine="onnx": the exported reader graph gives the numpy engine's scores and words."""
from __future__ import annotations

import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

from segmenter.api import Segmenter
from segmenter.errors import ModelLoadError
from segmenter.model.profile import HeadProfile
from segmenter.text.windows import padded_length

from conftest import REPO, make_tiny_model
from test_engine import TEXTS, junction_scores

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tiny model (heads in two layers, out of order) with model.onnx made by the command."""
    profile = HeadProfile(heads=[(2, 3), (0, 1), (2, 0)], weights=[0.5, 0.2, 0.3], source="test")
    folder = make_tiny_model(tmp_path_factory.mktemp("onnx") / "m", layers=3, profile=profile)
    done = subprocess.run([sys.executable, "-m", "segmenter", "export-onnx", "-m", str(folder), "-q"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "TracerWarning" not in done.stderr  # the trace's note on transformers' attention is not the user's
    return folder


def test_onnx_scores_match_numpy(exported):
    onnx = Segmenter(exported, window=30, overlap=8, engine="onnx", num_threads=1)
    numpy_engine = Segmenter(exported, window=30, overlap=8, engine="numpy")
    assert onnx.engine == "onnx" and Segmenter(exported).engine == "onnx"  # auto takes a current export
    assert np.abs(junction_scores(onnx, TEXTS) - junction_scores(numpy_engine, TEXTS)).max() < 1e-4
    assert onnx.segment_batch(TEXTS) == numpy_engine.segment_batch(TEXTS)


def test_onnx_errors_say_what_to_do(exported, tiny_model_dir, tmp_path):
    with pytest.raises(ModelLoadError, match="no model.onnx: make it with `segmenter export-onnx"):
        Segmenter(tiny_model_dir, engine="onnx")
    with pytest.raises(ModelLoadError, match=r"exported for heads \[\(2, 3\), \(0, 1\), \(2, 0\)\] but the profile reads \[\(1, 0\)\]"):
        Segmenter(exported, engine="onnx", profile=HeadProfile(heads=[(1, 0)], weights=[1.0]))
    folder = shutil.copytree(exported, tmp_path / "m")
    (folder / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(ModelLoadError, match="unreadable or corrupt"):
        Segmenter(folder, engine="onnx")


def test_auto_skips_a_stale_or_foreign_export(exported, tmp_path):
    """engine="auto" takes model.onnx only when it was exported from the folder's own weights
    and reads the profile's heads; otherwise the numpy engine reads the weights themselves."""
    import shutil

    from segmenter.model.numpy_engine import read_safetensors

    stale = shutil.copytree(exported, tmp_path / "stale")
    tensors = read_safetensors(stale / "model.safetensors")
    name = next(n for n in tensors if n.endswith("query.weight"))
    from safetensors.numpy import save_file

    save_file({**tensors, name: tensors[name] * 2}, str(stale / "model.safetensors"))
    assert Segmenter(stale).engine == "numpy"
    with pytest.raises(ModelLoadError, match="heads"):
        Segmenter(exported, engine="onnx", profile=HeadProfile(heads=[(1, 0)], weights=[1.0]))
    assert Segmenter(exported, profile=HeadProfile(heads=[(1, 0)], weights=[1.0])).engine == "numpy"


def test_onnx_reader_changes_threads_and_pickles(exported):
    """The benchmark's all-cores pass rebuilds the session on more threads; a copy (pickle, as
    Ray or a worker process makes one) builds its own session: the same words either way."""
    import pickle

    seg = Segmenter(exported, window=30, overlap=8, engine="onnx", num_threads=1)
    before, scores = seg.segment_batch(TEXTS), seg.score_texts(TEXTS)[0].scores
    seg.reader.set_threads(2)
    assert seg.reader.threads == 2 and seg.segment_batch(TEXTS) == before
    copy = pickle.loads(pickle.dumps(seg.reader))
    assert copy.session is not seg.reader.session and copy.threads == 2
    seg.reader = copy  # the copy's own session reads the same scores
    assert seg.segment_batch(TEXTS) == before
    assert all(np.array_equal(a, b) for a, b in zip(seg.score_texts(TEXTS)[0].scores, scores))


def test_every_session_leaves_out_the_slow_fusions(exported, monkeypatch):
    """onnx_engine.UNFUSED (SkipLayerNormFusion: 19% of the static default's graph time) reaches
    each session the reader builds: the first, one on other threads, a pickled copy's."""
    import pickle

    import onnxruntime

    from segmenter.model.onnx_engine import UNFUSED

    asked = []
    real = onnxruntime.InferenceSession

    def session(*args, **kwargs):
        asked.append(kwargs.get("disabled_optimizers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    seg = Segmenter(exported, engine="onnx", num_threads=1)
    seg.reader.set_threads(2)
    pickle.loads(pickle.dumps(seg.reader))
    assert "SkipLayerNormFusion" in UNFUSED and asked == [list(UNFUSED)] * 3


def test_export_stores_float16_weights_exactly(exported, tmp_path):
    """Weights that float16 holds exactly (a float16 checkpoint's, like the embedded models') are
    stored as float16 behind a Cast: the file is about half, and the scores do not move."""
    import shutil

    import onnx
    from onnx import TensorProto
    from safetensors.numpy import save_file

    from segmenter.model.numpy_engine import read_safetensors

    half = shutil.copytree(exported, tmp_path / "half")
    (half / "model.onnx").unlink()
    save_file({k: v.astype(np.float16) for k, v in read_safetensors(half / "model.safetensors").items()}, str(half / "model.safetensors"))
    done = subprocess.run([sys.executable, "-m", "segmenter", "export-onnx", "-m", str(half), "-q"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    graph = onnx.load(str(half / "model.onnx")).graph
    halves = [t for t in graph.initializer if t.data_type == TensorProto.FLOAT16]
    assert halves and all(t.name.endswith("_float16") for t in halves)
    assert {t.name for t in halves} <= {n.input[0] for n in graph.node if n.op_type == "Cast"}
    assert not [t for t in onnx.load(str(exported / "model.onnx")).graph.initializer if t.data_type == TensorProto.FLOAT16]
    onnx_seg = Segmenter(half, window=30, overlap=8, num_threads=1)
    numpy_seg = Segmenter(half, window=30, overlap=8, engine="numpy")
    assert onnx_seg.engine == "onnx"
    assert np.abs(junction_scores(onnx_seg, TEXTS) - junction_scores(numpy_seg, TEXTS)).max() < 1e-4


def _logits_graph(model):
    """`model` (a finished graph) cut back to the traced one's output: the logits alone."""
    from segmenter.train.onnx_graph import strip_tail

    assert strip_tail(model), "the graph does not end with the scores"
    return model


def test_a_graph_without_its_score_tail_reads_the_scores_to_the_bit(exported, monkeypatch):
    """graph_bytes.without_score_tail (the short windows' sessions, edited without the onnx
    package): strip_tail's graph plus the tail's row max, whose two outputs onnx_engine.scores_of_one
    reads into the scores the full graph gives, bit for bit, with three heads; a window with a row
    it cannot be sure of (NEAR_MARGIN huge: every one) is left to the full graph (None). A graph
    that has no score tail, or bytes that are no model, are refused with ValueError."""
    import onnx
    import onnxruntime

    from segmenter.model import onnx_engine
    from segmenter.model.graph_bytes import LOGITS, TAIL_ROW_MAX, without_score_tail
    from segmenter.model.reader import batch_ids

    data = (exported / "model.onnx").read_bytes()
    edited = onnx.load_from_string(without_score_tail(data))
    onnx.checker.check_model(edited)
    stripped = _logits_graph(onnx.load(str(exported / "model.onnx")))
    assert [n for n in edited.graph.node if TAIL_ROW_MAX not in n.output] == list(stripped.graph.node)
    assert [n.op_type for n in edited.graph.node if TAIL_ROW_MAX in n.output] == ["ReduceMax"]
    assert [o.name for o in edited.graph.output] == [LOGITS, TAIL_ROW_MAX]
    full = onnxruntime.InferenceSession(str(exported / "model.onnx"), providers=["CPUExecutionProvider"])
    short = onnxruntime.InferenceSession(edited.SerializeToString(), providers=["CPUExecutionProvider"])
    vocab = Segmenter(exported, num_threads=1).reader.vocab
    for n in (0, 1, 2, 5, 9, 14):
        ids, mask, _ = batch_ids([np.arange(5, 5 + n)], int(padded_length(n)), vocab)
        feeds = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
        expected = full.run(None, feeds)[0][0, :, : max(n - 1, 0)]
        scores = onnx_engine.scores_of_one(*short.run(None, feeds), n)
        assert scores is not None and scores.dtype == np.float32 and scores.shape == (3, max(n - 1, 0))
        np.testing.assert_array_equal(scores, expected)
        with monkeypatch.context() as patch:
            patch.setattr(onnx_engine, "NEAR_MARGIN", 1e9)
            assert (onnx_engine.scores_of_one(*short.run(None, feeds), n) is None) == (n >= 2)
    with pytest.raises(ValueError, match="not the scores alone"):
        without_score_tail(stripped.SerializeToString())
    with pytest.raises(ValueError, match="not a protobuf message|not an ONNX model"):
        without_score_tail(b"\xff\xff\xff")


def test_the_graph_ends_with_the_scores_and_graphs_exported_before_still_read(exported, tmp_path):
    """onnx_graph.finish_graph: the logits are not copied when the heads are in order already (one
    head), and the graph ends with the scores (score_tail), those numpy_ops.scores_from_logits reads
    from its logits, with or without each row's max; graphs exported before (logits alone; logits
    and each row's max) still read, with the same scores and words, and finish_graph turns them
    into the new form. Rows near the floor (a weight of 1e-12 read) come out the same too."""
    import onnx
    import onnxruntime
    from onnx import helper

    from segmenter.model.numpy_ops import scores_from_logits
    from segmenter.model.reader import batch_ids
    from segmenter.train.onnx_export import export_onnx
    from segmenter.train.onnx_graph import LOGITS, ROW_MAX, SCORES, finish_graph

    one = make_tiny_model(tmp_path / "one", profile=HeadProfile(heads=[(1, 0)], weights=[1.0], source="test"))
    export_onnx(Segmenter(one, engine="torch"), one / "model.onnx")
    windows = [np.arange(5, 5 + n) for n in (3, 9, 14, 0, 1)]
    for folder, heads in ((one, 1), (exported, 3)):  # three heads out of order: reordered
        model = onnx.load(str(folder / "model.onnx"))
        assert [output.name for output in model.graph.output] == [SCORES]
        nodes = len(model.graph.node)
        finish_graph(model, heads)
        assert len(model.graph.node) == nodes  # finished once is finished
        logits_model = _logits_graph(onnx.load(str(folder / "model.onnx")))
        if heads == 1:  # no Concat or Gather copies the logits
            assert next(n for n in logits_model.graph.node if LOGITS in n.output).op_type == "Add"
        ids, mask, lengths = batch_ids(windows, 16, Segmenter(folder, engine="onnx").vocab)
        feed = {"input_ids": ids, "attention_mask": mask}
        scores, = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"]).run(None, feed)
        logits, = onnxruntime.InferenceSession(logits_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)
        assert scores.shape == (5, heads, 13) and scores.dtype == np.float32
        for row, n in enumerate(lengths):  # the junctions read: the same, bit for bit (the rows past them are read by no one)
            np.testing.assert_array_equal(scores[row, :, : max(n - 1, 0)], scores_from_logits(logits, lengths)[row, :, : max(n - 1, 0)])
        # rows near the floor: one entry 30 below the row's max, a weight of ~1e-13
        floored = logits.copy()
        floored[:, :, 2, 3] = floored[:, :, 2].max(axis=-1) - 30
        expected = scores_from_logits(floored, lengths)
        only_tail = _tail_alone(onnx.load(str(folder / "model.onnx")))
        got, = onnxruntime.InferenceSession(only_tail.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {LOGITS: floored, "attention_mask": mask})
        for row, n in enumerate(lengths):
            read = slice(0, max(n - 1, 0))
            np.testing.assert_allclose(got[row, :, read], expected[row, :, read], rtol=0, atol=1e-5)
        assert lengths[0] > 2 and np.abs(expected[0]).max() < 25  # the floor keeps the scores finite
        full = np.ones_like(mask)  # no padding and small logits: no row near the floor
        small = np.random.default_rng(0).normal(size=logits.shape).astype(np.float32)
        got, = onnxruntime.InferenceSession(only_tail.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {LOGITS: small, "attention_mask": full})
        np.testing.assert_array_equal(got, scores_from_logits(small, full.sum(axis=1) - 2))
    # the forms exported before: logits alone, and logits with each row's max
    before, with_max = (shutil.copytree(one, tmp_path / name) for name in ("before", "with_max"))
    onnx.save(_logits_graph(onnx.load(str(one / "model.onnx"))), str(before / "model.onnx"))
    model = _logits_graph(onnx.load(str(one / "model.onnx")))
    model.graph.node.append(helper.make_node("ReduceMax", [LOGITS], [ROW_MAX], axes=[-1], keepdims=0))
    model.graph.output.append(helper.make_tensor_value_info(ROW_MAX, onnx.TensorProto.FLOAT, ["batch", "heads", "tokens"]))
    onnx.save(model, str(with_max / "model.onnx"))
    reads = [Segmenter(folder, window=30, overlap=8, num_threads=1) for folder in (one, before, with_max)]
    assert all(seg.engine == "onnx" for seg in reads)
    assert [seg.reader.scores_out for seg in reads] == [True, False, False]
    for seg in reads[1:]:
        np.testing.assert_allclose(junction_scores(seg, TEXTS), junction_scores(reads[0], TEXTS), rtol=0, atol=1e-5)
        assert seg.segment_batch(TEXTS) == reads[0].segment_batch(TEXTS)
    finish_graph(model, 1)  # an old graph finished again ends with the scores
    assert [output.name for output in model.graph.output] == [SCORES]
    assert not [node for node in model.graph.node if ROW_MAX in node.output]


def _unslimmed_export(folder, monkeypatch, **kwargs):
    """The export of `folder`'s model as finish_graph would write it without slim_graph."""
    import onnx

    from segmenter.train import onnx_graph
    from segmenter.train.onnx_export import export_onnx

    with monkeypatch.context() as patch:
        patch.setattr(onnx_graph, "slim_graph", lambda model: None)
        export_onnx(Segmenter(folder, engine="torch"), folder / "unslimmed.onnx", **kwargs)
    return onnx.load(str(folder / "unslimmed.onnx"))


# The trace's shape bookkeeping (onnx_graph.slim_graph): none of it is left in a slimmed graph.
BOOKKEEPING = {"Equal", "Where", "ConstantOfShape", "Range", "Constant", "Identity"}


def test_slim_graph_takes_out_the_bookkeeping_and_not_a_bit_of_the_scores(exported, tmp_path, monkeypatch):
    """slim_graph (which finish_graph applies: every export) leaves the trace's arithmetic alone:
    the slimmed graph's scores are the unslimmed one's bit for bit, rows past the junctions too,
    for one short window, padded batches and batches of other lengths; it has fewer nodes, no
    Reshape with a computed target and no shape bookkeeping (the tail's own Shape nodes aside),
    and slimming it again changes nothing. The one-head graph, the three-head one (heads
    reordered after the trace) and a dynamic int8 one."""
    import onnx
    import onnxruntime

    from segmenter.model.reader import batch_ids
    from segmenter.train.onnx_graph import finish_graph, slim_graph

    one = make_tiny_model(tmp_path / "one", profile=HeadProfile(heads=[(1, 0)], weights=[1.0], source="test"))
    three = shutil.copytree(exported, tmp_path / "three")
    vocab = Segmenter(one, engine="numpy").vocab
    rng = np.random.default_rng(1)
    batches = [[3], [9], [0], [3, 9, 14, 0, 1], [20] * 4, [17, 22, 5], [61], [30, 61]]  # positions: 64
    for folder, heads, kind in ((one, 1, False), (three, 3, False), (one, 1, "dynamic")):
        unslimmed = _unslimmed_export(folder, monkeypatch, int8=kind)
        slim = onnx.load(str(folder / "unslimmed.onnx"))
        slim_graph(slim)
        ops = [node.op_type for node in slim.graph.node]
        assert len(ops) < len(unslimmed.graph.node) - 20, (len(ops), len(unslimmed.graph.node))
        assert not BOOKKEEPING & set(ops), BOOKKEEPING & set(ops)
        if not kind:  # (dynamic int8 looks positions up in an int8 table: that lookup stays)
            assert ops.count("Shape") == 3 and ops.count("Expand") == 1  # the positions' T; the tail's T, [SEP]'s index
        else:  # 7-bit weights, dynamic too (onnx_static.py), and the metadata says so
            from segmenter.model.onnx_engine import WEIGHT_BITS_KEY

            assert seven_bit_weights(folder / "unslimmed.onnx")
            assert {entry.key: entry.value for entry in unslimmed.metadata_props}[WEIGHT_BITS_KEY] == "7"
        assert ops.count("Concat") == (heads > 1)  # the logits of two layers' heads, not a shape
        constants = {tensor.name for tensor in slim.graph.initializer}
        assert all(node.input[1] in constants for node in slim.graph.node if node.op_type == "Reshape")
        again = onnx.load(str(folder / "unslimmed.onnx"))
        finish_graph(again, heads)
        finish_graph(again, heads)
        assert again.SerializeToString() == slim.SerializeToString()
        sessions = [onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
                    for model in (unslimmed, slim)]
        for lengths in batches:
            windows = [rng.integers(5, len(vocab), size=n) for n in lengths]
            ids, mask, _ = batch_ids(windows, max(padded_length(np.array(lengths))), vocab)
            before, after = (s.run(None, {"input_ids": ids, "attention_mask": mask})[0] for s in sessions)
            assert after.shape == (len(lengths), heads, ids.shape[1] - 3)
            np.testing.assert_array_equal(after, before)
        if heads == 1 and not kind:  # probes past the model's positions: the bookkeeping stays, the graph works
            from segmenter.train import onnx_graph

            with monkeypatch.context() as patch:
                patch.setattr(onnx_graph, "PROBES", ((1, 70),))
                kept = onnx.load(str(folder / "unslimmed.onnx"))
                slim_graph(kept)
            assert "Concat" in [node.op_type for node in kept.graph.node]
            windows = [rng.integers(5, len(vocab), size=n) for n in (3, 9)]
            ids, mask, _ = batch_ids(windows, 16, vocab)
            kept_scores, = onnxruntime.InferenceSession(kept.SerializeToString(), providers=["CPUExecutionProvider"]).run(
                None, {"input_ids": ids, "attention_mask": mask})
            np.testing.assert_array_equal(kept_scores, sessions[0].run(None, {"input_ids": ids, "attention_mask": mask})[0])
        too_long = np.ones((1, 72), dtype=np.int64)  # past the model's 64 positions: an error, as before
        for session in sessions:
            with pytest.raises(Exception):
                session.run(None, {"input_ids": too_long, "attention_mask": too_long})


def _tail_alone(model):
    """The nodes score_tail appended, as a graph of their own: inputs the logits and the mask."""
    from onnx import TensorProto, helper

    from segmenter.train.onnx_graph import LOGITS, SCORES

    tail = [n for n in model.graph.node if any(o == SCORES or o.startswith(SCORES + "/") for o in n.output)]
    constants = [t for t in model.graph.initializer if t.name.startswith(SCORES + "/")]
    graph = helper.make_graph(
        tail, "tail",
        [helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["b", "k", "t", "t"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"])],
        list(model.graph.output), constants)
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)


def test_static_int8_scores_do_not_depend_on_the_batch(exported, tmp_path, monkeypatch):
    """A static int8 graph (activation scales from raw lines, onnx_static.py) gives each window the
    same scores whatever shares its batch, and the words of one thread and of two; the command
    needs its calibration text; refine / shrink would export their copies the same kind."""
    import random

    from segmenter.model import onnx_engine
    from segmenter.model.onnx_engine import STATIC_KEY, WEIGHT_BITS_KEY, exported_kind
    from segmenter.train.derived import onnx_kind

    folder = shutil.copytree(exported, tmp_path / "static")
    raw = tmp_path / "raw.txt"
    rng = random.Random(3)
    raw.write_text("\n".join("".join(rng.choice(TEXTS[-1]) for _ in range(rng.randint(10, 120))) for _ in range(300)) + "\n",
                   encoding="utf-8")
    command = [sys.executable, "-m", "segmenter", "export-onnx", "-m", str(folder), "-q"]
    refused = subprocess.run(command + ["--int8", "static"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "--calibration" in refused.stderr and refused.stderr.count("\n") == 1
    done = subprocess.run(command + ["--int8", "static", "--calibration", str(raw)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert exported_kind(folder / "model.onnx") == "static" == onnx_kind(folder) and onnx_kind(exported) == "float"
    import onnx

    from segmenter.train.onnx_static import attention_products

    graph = onnx.load(str(folder / "model.onnx")).graph  # weights' products int8, attention products float
    ops = [n.op_type for n in graph.node]  # int8 products straight to float, bias included (products_to_float)
    assert "MatMulIntegerToFloat" in ops and not {"QLinearMatMul", "DequantizeLinear"} & set(ops)
    assert [n.name for n in graph.node if n.op_type == "MatMul"] == attention_products(graph) != []
    assert not BOOKKEEPING & set(ops)  # slimmed after quantising (finish_graph)
    assert seven_bit_weights(folder / "model.onnx")  # no uint8 x int8 pair can saturate (onnx_static.py)
    one = Segmenter(folder, window=30, overlap=8, num_threads=1, processes=False)
    metadata = one.reader.session.get_modelmeta().custom_metadata_map
    assert one.engine == "onnx" and STATIC_KEY in metadata and metadata[WEIGHT_BITS_KEY] == "7"
    # A static graph of 8-bit weights (exported before them) warns where its products saturate, and only there.
    old = onnx.load(str(folder / "model.onnx"))
    kept = [entry for entry in old.metadata_props if entry.key != WEIGHT_BITS_KEY]
    del old.metadata_props[:]
    old.metadata_props.extend(kept)
    eight = shutil.copytree(folder, tmp_path / "eight")
    onnx.save(old, str(eight / "model.onnx"))
    for saturates in (True, False):
        monkeypatch.setattr(onnx_engine, "products_saturate", lambda saturates=saturates: saturates)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Segmenter(eight, engine="onnx", num_threads=1)
            Segmenter(folder, engine="onnx", num_threads=1)
        assert [str(w.message).split(" has ")[0] for w in caught] == ([str(eight / "model.onnx")] if saturates else [])
    texts = TEXTS * 3
    together = junction_scores(one, texts)
    alone = np.concatenate([junction_scores(one, [text]) for text in texts])
    np.testing.assert_array_equal(together, alone)
    float_scores = junction_scores(Segmenter(exported, window=30, overlap=8, num_threads=1), texts)
    assert 0 < np.abs(together - float_scores).max() < 1.0  # quantised: near the float graph, not equal
    two = Segmenter(folder, window=30, overlap=8, num_threads=2, processes=False)
    assert two.segment_batch(texts) == one.segment_batch(texts) == [one.segment(t) for t in texts]
    with pytest.raises(ValueError, match="needs calibration"):
        from segmenter.train.onnx_export import export_onnx

        export_onnx(Segmenter(folder, engine="torch"), tmp_path / "x.onnx", int8="static")


@pytest.mark.slow
def test_the_shipped_models_have_static_int8_graphs():
    import onnx

    from segmenter.model.folders import embedded_model_path
    from segmenter.model.onnx_engine import exported_kind

    for name in ("default", "fast"):
        path = embedded_model_path(name) / "model.onnx"
        ops = {node.op_type for node in onnx.load(str(path)).graph.node}
        assert exported_kind(path) == "static" and "MatMulIntegerToFloat" in ops and "QLinearMatMul" not in ops, name
        assert not BOOKKEEPING & ops, name  # slimmed (onnx_graph.slim_graph)
        assert seven_bit_weights(path), name  # the same words on every x86 CPU (onnx_static.py)


def seven_bit_weights(path) -> bool:
    """Whether every int8 weight of the graph at `path` lies in -64 .. 64, and it has some."""
    import onnx
    from onnx import numpy_helper

    weights = [numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer
               if t.data_type == onnx.TensorProto.INT8 and t.name.endswith("_quantized")]
    return bool(weights) and all(int(np.abs(w.astype(np.int16)).max()) <= 64 for w in weights)


def test_products_saturate_only_on_x86_without_vnni(monkeypatch, tmp_path):
    from segmenter.model import onnx_engine

    monkeypatch.setattr(onnx_engine.platform, "machine", lambda: "arm64")
    assert onnx_engine.products_saturate() is False  # another kernel: no 16-bit pairs
    monkeypatch.setattr(onnx_engine.platform, "machine", lambda: "x86_64")
    assert isinstance(onnx_engine.products_saturate(), bool)  # this machine's flags, or False without /proc
