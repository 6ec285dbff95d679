"""The onnxruntime engine: the reader graph exported once to `model.onnx`, run without torch.

`export_onnx` (needs torch + transformers: the train extra, and onnx) traces what
attention.py's fast path computes, stopped before the softmax: embeddings, the layers below
the deepest selected head, that layer's query/key rows of the selected heads ->
masked attention logits (B, K, T, T), heads in profile order, and the max of each of their
rows (onnx_graph.py: edits of the exported graph that leave its arithmetic alone). The heads
are baked into the graph and written in its metadata; a profile that reads other heads needs
a new export.
`OnnxReader` (onnxruntime, a required dependency) runs the graph and turns the logits into
boundary scores exactly as the numpy engine does (numpy_ops.scores_from_logits).

Float weights give the numpy engine's scores (to ~1e-5) and words, whatever windows share a
batch. int8 weights (`export_onnx(int8=True)`, `segmenter export-onnx --int8`: dynamic
quantisation, one scale per output channel; the metadata says so, and `refine` exports a
refined copy the same way) move scores by up to ~0.4 and, worse, quantise each batch's
activations with one scale for the whole batch: a window's scores then depend on the windows
batched with it, so the words change with the batch size and the number of threads
(tests/test_cores_default.py caught it). No shipped model uses them. On this machine's CPU
(AVX-512 VNNI) they made the whole pipeline of the previous, 768-wide default 1.35x faster and
of a 256-wide one 1.13x (benchmarks/results/students_dev.md; runtimes.md: the shipped default),
F1 within 0.0008 on six dev files; issue 25 saw a CPU without VNNI run int8 no faster. (With the 6-layer model of v0.1,
int8 moved scores by ~5 and lost 0.013 F1.) Static int8 (`export_onnx(int8="static")`,
`segmenter export-onnx --int8 static --calibration RAW…`: onnx_static.py) fixes the activation
scales beforehand from raw text, so a window's scores no longer depend on its batch: the
embedded default ships that graph; its numpy and torch engines still compute in float.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import warnings
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from ..run.cores import WorkerThreads, in_worker_thread
from ..run.files import atomic_path
from ..text.vocab import CharVocab
from .numpy_ops import scores_from_logits
from .reader import WindowReader, batch_ids
from .readout import batch_slices

ONNX_FILE = "model.onnx"
HEADS_KEY = "segmenter_heads"
WEIGHTS_KEY = "segmenter_weights_sha256"  # of the folder's model.safetensors: a stale export is not used
INT8_KEY = "segmenter_int8"  # present when the export quantised its weights dynamically (export_onnx(int8=True))
STATIC_KEY = "segmenter_int8_static"  # present (how it was calibrated) in a static int8 graph (onnx_static.py)


def weights_fingerprint(folder: Path) -> str:
    """sha256 of folder/model.safetensors (a few ms for the embedded model)."""
    import hashlib

    return hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()


# Fusions left out of every session. onnxruntime 1.32 fuses the static graph's residual Add and
# LayerNormalization into a SkipLayerNormalization that takes 16-17% of the graph's time on one
# thread; unfused, the static graphs of default and fast run 1.09-1.26x faster at batches of 64
# windows of 32-128 tokens (benchmarks/results/fusions.md); a float graph never gets the node.
UNFUSED = ("SkipLayerNormFusion",)


def exported_kind(path: Path) -> str:
    """How the graph at `path` was exported: "float", "int8" (dynamic) or "static" (static int8,
    onnx_static.py); a refined copy exports the same kind."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    metadata = session.get_modelmeta().custom_metadata_map
    return "static" if STATIC_KEY in metadata else "int8" if INT8_KEY in metadata else "float"


def onnx_available(folder: Path) -> bool:
    """Whether engine="auto" should try folder/model.onnx: it exists and onnxruntime is installed
    (load_onnx_reader(..., same_weights=True) then checks that it was made from these weights)."""
    return (Path(folder) / ONNX_FILE).is_file() and importlib.util.find_spec("onnxruntime") is not None


def export_onnx(segmenter, path: str | Path, int8: bool | str = False, calibration: list[str] | None = None,
                calibration_source: str = "") -> Path:
    """Write the reader graph of a Segmenter(engine="torch") to `path`. int8: False (float
    weights), True or "dynamic" (int8 weights, per-batch activation scales: see above) or "static"
    (int8 with activation scales measured on `calibration`, raw lines: onnx_static.py)."""
    import torch

    if int8 not in (False, True, "dynamic", "static"):
        raise ValueError(f"int8 must be False, True, 'dynamic' or 'static', got {int8!r}")
    kind = "dynamic" if int8 is True else int8
    if kind == "static" and not calibration:
        raise ValueError("int8='static' needs calibration: raw lines whose windows set the activation scales")
    reader, path = segmenter.reader, Path(path)
    attention = reader.attention

    class Logits(torch.nn.Module):  # attention.py's fast path, stopped before the softmax
        def __init__(self):
            super().__init__()
            self.bert = segmenter.model.requires_grad_(False)  # a submodule: weights become initializers

        def forward(self, input_ids, attention_mask):
            hidden = self.bert.embeddings(input_ids=input_ids)
            additive = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
            parts = []
            for index, layer in enumerate(self.bert.encoder.layer[: attention.deepest + 1]):
                if index in attention.heads_by_layer:
                    parts.append(logits(layer.attention.self, hidden, additive, attention.heads_by_layer[index]))
                if index == attention.deepest:
                    break
                output = layer(hidden, attention_mask=additive)
                hidden = output[0] if isinstance(output, tuple) else output
            return torch.cat(parts, dim=1)[:, reader._order]

    def logits(self_attention, hidden, additive, heads):
        size = self_attention.attention_head_size
        rows = torch.cat([torch.arange(h * size, (h + 1) * size) for h in heads])
        batch, tokens, _ = hidden.shape

        def project(linear):  # (B, T, hidden) -> (B, K, T, d)
            out = torch.nn.functional.linear(hidden, linear.weight[rows], linear.bias[rows])
            return out.view(batch, tokens, len(heads), size).transpose(1, 2)

        return project(self_attention.query) @ project(self_attention.key).transpose(-1, -2) * size**-0.5 + additive

    import onnx

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
                Logits().eval(), (ids, torch.ones_like(ids)), str(exported), dynamo=False, opset_version=17,
                input_names=["input_ids", "attention_mask"], output_names=["logits"],
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                              "logits": {0: "batch", 2: "tokens", 3: "tokens"}},
            )
        if kind == "static":
            from ..train.onnx_static import calibration_feeds, quantize_static

            quantized = path.with_name(f".{path.name}.int8")
            quantize_static(exported, quantized, calibration_feeds(segmenter, calibration))
            os.replace(quantized, exported)
        elif kind == "dynamic":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized = path.with_name(f".{path.name}.int8")
            # One scale per output channel: on the embedded default it moves F1 on the six dev
            # files by -0.0006 at most, where one scale per matrix moved it by -0.0010.
            root = logging.getLogger()  # the quantiser logs a pre-processing hint there on every call
            level = root.level
            root.setLevel(logging.ERROR)
            try:
                quantize_dynamic(str(exported), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
            finally:
                root.setLevel(level)
            os.replace(quantized, exported)
        graph = onnx.load(str(exported))
    finally:
        exported.unlink(missing_ok=True)
    from ..train.onnx_graph import finish_graph, store_float16

    if kind != "dynamic":
        store_float16(graph)  # float weights (and a static graph's embeddings): half the file
    finish_graph(graph, len(reader.heads))  # no copy after the logits; each row's max beside them
    entry = graph.metadata_props.add()
    entry.key, entry.value = HEADS_KEY, json.dumps([list(h) for h in reader.heads])
    if kind == "dynamic":
        entry = graph.metadata_props.add()
        entry.key, entry.value = INT8_KEY, "dynamic, per channel"
    elif kind == "static":
        from ..train.onnx_static import calibration_record

        entry = graph.metadata_props.add()
        entry.key, entry.value = STATIC_KEY, calibration_record(calibration, calibration_source)
    if (segmenter.folder / "model.safetensors").is_file():
        entry = graph.metadata_props.add()
        entry.key, entry.value = WEIGHTS_KEY, weights_fingerprint(segmenter.folder)
    with atomic_path(path) as temporary:
        onnx.save(graph, str(temporary))
    return path


class OnnxReader(WindowReader):
    """HeadReader's contract (reader.py) on onnxruntime's CPU provider, on `threads` cores.

    On one thread the session runs on the calling thread, nothing else. On N > 1 the session
    still has one intra-op thread (onnxruntime's own threads barely speed up the small matrices
    of a window batch), and the cores are used by running N batches at once: api.Segmenter
    hands N chunks of a batch of texts to `workers` (cores.py), and a read from outside those
    threads runs the slices of each batch on them. Sessions are safe to run from several
    threads, and a window's scores do not depend on the rows it is batched with."""

    def __init__(self, path: Path, vocab: CharVocab, heads: list[tuple[int, int]], max_positions: int, threads: int,
                 providers: tuple[str, ...] = ("CPUExecutionProvider",)):
        self.path, self.vocab, self.heads, self.max_positions = Path(path), vocab, list(heads), max_positions
        self.model = None
        # onnxruntime's providers, in order of preference; a GPU one (CUDAExecutionProvider, from
        # the separate onnxruntime-gpu package) is asked for only by benchmarks/gpu_speed.py.
        self.providers = list(providers)
        self.workers: WorkerThreads | None = None
        self.set_threads(threads)

    def set_threads(self, threads: int) -> None:
        """A session for `threads` cores (onnxruntime fixes its threads when it builds one)."""
        import onnxruntime

        options = onnxruntime.SessionOptions()
        cpu = self.providers[:1] == ["CPUExecutionProvider"]
        options.intra_op_num_threads = 1 if cpu else threads
        options.inter_op_num_threads = 1
        # A memory pattern plans the buffers of one input shape and keeps the plan; every batch
        # here has its own (rows, padded length), so the plans only pile up: off, a worker holds
        # ~20 MiB less after 6,000 lines, at the same speed (benchmarks/big_input.py).
        options.enable_mem_pattern = False
        try:
            self.session = onnxruntime.InferenceSession(
                str(self.path), options, providers=self.providers, disabled_optimizers=list(UNFUSED)
            )
        except Exception as err:  # onnxruntime raises its own exception types
            raise ModelLoadError(f"{self.path} is unreadable or corrupt: {err}") from None
        self.threads = threads
        if self.workers is not None:
            self.workers.close()
        # The threads that share the cores (started on first use): none on one core or off the CPU.
        self.workers = WorkerThreads(threads, "segmenter-onnx") if cpu and threads > 1 else None

    def __getstate__(self):  # a session and threads do not pickle; a copy makes its own
        state = dict(self.__dict__)
        del state["session"]
        state["workers"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.set_threads(self.threads)

    def _forward(self, batch: list[np.ndarray], tokens: int) -> np.ndarray:
        ids, mask, lengths = batch_ids(batch, tokens, self.vocab)
        mask = mask.astype(np.int64)

        def run(part: slice) -> np.ndarray:
            # logits (B, K, T, T), and their rows' max where the graph has it (onnx_graph.py)
            logits, *row_max = self.session.run(None, {"input_ids": ids[part], "attention_mask": mask[part]})
            return scores_from_logits(logits, lengths[part], *row_max).astype(np.float32, copy=False)

        # In slices, as the numpy engine: onnxruntime keeps what a run allocated, so the largest
        # slice sets the process's memory (PKU test through the CLI, batches of 64 windows of
        # 128: ~300 MB peak; in slices: under 200 MB). Outside the worker threads (a read of one
        # long text, score_texts), the slices of a batch run on them at once.
        share = self.workers is not None and not in_worker_thread()
        slices = batch_slices(len(batch), tokens, self.threads if share else 1)
        if share and len(slices) > 1:
            return np.concatenate(list(self.workers.map(run, slices)), axis=0)
        return np.concatenate([run(part) for part in slices], axis=0)


def load_onnx_reader(
    folder: Path, config: dict, vocab: CharVocab, heads: list[tuple[int, int]], threads: int, same_weights: bool = False
) -> OnnxReader:
    """The reader of folder/model.onnx; ModelLoadError when it is missing or reads other heads,
    or (same_weights) when it was not exported from the folder's model.safetensors."""
    path = folder / ONNX_FILE
    if not path.is_file():
        raise ModelLoadError(f"{folder} has no {ONNX_FILE}: make it with `segmenter export-onnx --model {folder}`")
    if importlib.util.find_spec("onnxruntime") is None:
        raise ModelLoadError("engine='onnx' needs onnxruntime: pip install onnxruntime")
    reader = OnnxReader(path, vocab, heads, int(config["max_position_embeddings"]), threads)
    meta = reader.session.get_modelmeta().custom_metadata_map
    exported = json.loads(meta.get(HEADS_KEY, "[]"))
    if [tuple(h) for h in exported] != list(heads):
        raise ModelLoadError(
            f"{path} was exported for heads {[tuple(h) for h in exported]} but the profile reads {list(heads)}; "
            f"export it again: `segmenter export-onnx --model {folder}`"
        )
    if same_weights and meta.get(WEIGHTS_KEY) != weights_fingerprint(folder):
        raise ModelLoadError(f"{path} was not exported from {folder}/model.safetensors: export it again")
    return reader
