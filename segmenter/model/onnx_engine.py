"""The onnxruntime engine: a model's reader graph, `model.onnx`, run without torch.

The graph (made once by `segmenter export-onnx`: train/onnx_export.py) computes what the
attention reader computes (attention.py): from the masked attention logits of the selected heads,
in profile order, the boundary scores (B, K, T - 3) themselves, as numpy_ops.scores_from_logits
reads them (train/onnx_graph.py: score_tail). A graph exported before issue 57 returns the logits
(B, K, T, T), with the max of each of their rows, and is read through scores_from_logits.
Its metadata names the heads it was exported for, a fingerprint of the weights it was exported
from, and how its weights were quantised (INT8_KEY: dynamic int8, whose scores depend on the
windows batched together; STATIC_KEY: static int8, the shipped models' kind, whose do not).
`OnnxReader` runs the graph on onnxruntime's CPU provider.
"""
from __future__ import annotations

import importlib.util
import json
import math
import platform
import threading
import warnings
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from ..run.cores import SHARED_READ_CHARS, WorkerThreads, as_worker_task, in_worker_thread
from ..text.vocab import CharVocab
from ..text.windows import padded_length
from .graph_bytes import SCORES, without_score_tail
from .numpy_ops import LOG_FLOOR, scores_from_logits
from .reader import WindowReader, batch_ids
from .readout import batch_slices

ONNX_FILE = "model.onnx"
HEADS_KEY = "segmenter_heads"
WEIGHTS_KEY = "segmenter_weights_sha256"  # of the folder's model.safetensors: a stale export is not used
INT8_KEY = "segmenter_int8"  # present when the export quantised its weights dynamically (train/onnx_export.py)
SCORES_OUTPUT = SCORES  # the output of a graph that ends with the scores (train/onnx_graph.SCORES)
STATIC_KEY = "segmenter_int8_static"  # present (how it was calibrated) in a static int8 graph (onnx_static.py)
# "7" in an int8 graph (static or dynamic) whose weights take 7 bits (onnx_static.py: exact on every
# x86 CPU); absent in one exported before 2026-12-07's fifth stop of issue 57, whose 8-bit weights
# saturate onnxruntime's products on an x86 CPU without VNNI
WEIGHT_BITS_KEY = "segmenter_int8_weight_bits"


def weights_fingerprint(folder: Path) -> str:
    """sha256 of folder/model.safetensors (a few ms for the embedded model)."""
    import hashlib

    return hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()


# Fusions left out of every session. onnxruntime fuses a static int8 graph's residual Add and
# LayerNormalization into a SkipLayerNormalization that runs slower on one intra-op thread than
# the two nodes it replaces (benchmarks/fusions.py measures it); a float graph never gets the node.
UNFUSED = ("SkipLayerNormFusion",)

# A lone short window (read_one: one short sentence a call) is run by a session built for its
# shape, (1, T), of the graph without its score tail (graph_bytes.py): told the shape, onnxruntime
# folds the graph's shape arithmetic into constants, and on a window of a few characters the run's
# cost is mostly the nodes' own (~1 us each): 44 nodes for the shipped default against 77 with the
# tail in the general session; the scores are read from the logits (scores_of_one), the same to
# the bit (tests/test_small_path.py).
# FIXED_TOKENS: the longest padded length that gets such a session (texts of up to 14 characters;
# each session costs ~13 ms to build and 3-5 MB); FIXED_AFTER: the calls of a shape on the general
# session before it gets one, so that a process that segments one sentence never pays the build.
FIXED_TOKENS = 16
FIXED_AFTER = 8
# scores_of_one leaves to the graph's tail every window with a row whose smaller entry lies within
# this much above the floor's limit (the tail tests a float32 difference, scores_of_one one in
# Python floats): those are read again by the general session, exactly, so erring on their side
# costs only time.
NEAR_MARGIN = 1e-3


def scores_of_one(logits: np.ndarray, row_max: np.ndarray, n: int) -> np.ndarray | None:
    """The scores (K, n - 1) of one window of n characters from its logits (1, K, T, T) and their
    rows' max (1, K, T, 1), as the graph's score tail computes them (onnx_graph.score_tail), to the
    bit: the junction after character j reads row i = j + 1, its entry at [SEP] (column n + 1)
    minus its entry at i + 1, in float32. None when a row may be floored (its smaller entry within
    LOG_FLOOR + log T of the row's max): only the tail's log-sum-exp gives that row's bits (~1
    window in 2,000 of the dev files' pieces). The test of each row is in Python floats: a numpy
    call costs more than the test of a short window's few rows."""
    heads, tokens = logits.shape[1], logits.shape[-1]
    flat = logits.reshape(heads, tokens * tokens)  # a view: rows one after the other
    to_sep = flat[:, tokens + n + 1 : n * tokens : tokens]  # entry (i, n + 1) of rows 1 .. n - 1
    to_next = flat[:, tokens + 2 : n * tokens : tokens + 1]  # entry (i, i + 1)
    tops = row_max.reshape(heads, tokens)[:, 1:n]
    limit = float(LOG_FLOOR) + NEAR_MARGIN + math.log(tokens)
    for seps, nexts, maxima in zip(to_sep.tolist(), to_next.tolist(), tops.tolist()):
        for sep, after, top in zip(seps, nexts, maxima):
            if min(sep, after) - top < limit:
                return None
    return to_sep - to_next


class BoundWindow:
    """One thread's runs of short windows of one padded length on that length's own session
    (OnnxReader._session_for: the graph without its score tail, for the shape (1, T)) through an
    onnxruntime IOBinding: the ids, the mask, the logits and their rows' max live in arrays bound
    once, filled and read in place, so a run makes no array and converts none (onnxruntime's run()
    makes an input value of each array and an array of each output a call: ~20 us of a short
    window's ~80). Not shared between threads: each fills its own."""

    def __init__(self, session, tokens: int, heads: int, vocab: CharVocab):
        import onnxruntime

        self.session, self.vocab = session, vocab
        self.ids = np.full((1, tokens), vocab.pad_id, dtype=np.int64)
        self.ids[0, 0] = vocab.cls_id
        self.mask = np.zeros((1, tokens), dtype=np.int64)
        self._mask_rows = np.tri(tokens + 1, tokens, -1, dtype=np.int64)  # row m: 1 on the first m tokens
        self.logits = np.empty((1, heads, tokens, tokens), dtype=np.float32)
        self.row_max = np.empty((1, heads, tokens, 1), dtype=np.float32)
        self.feeds = {"input_ids": self.ids, "attention_mask": self.mask}  # the same arrays, for session.run
        self.binding = session.io_binding()
        self._values = [onnxruntime.OrtValue.ortvalue_from_numpy(array) for array in (self.ids, self.mask)]  # views, kept alive
        for name, value in zip(self.feeds, self._values):
            self.binding.bind_ortvalue_input(name, value)
        outputs = session.get_outputs()
        if len(outputs) != 2:
            raise ValueError(f"a short window's session has the logits and their rows' max, not {len(outputs)} outputs")
        for output, array in zip(outputs, (self.logits, self.row_max)):
            self.binding.bind_output(output.name, "cpu", 0, np.float32, list(array.shape), array.ctypes.data)

    def read(self, window: np.ndarray) -> np.ndarray | None:
        """scores_of_one of `window` (n characters, n + 2 <= tokens): its scores (K, n - 1), a new
        array; None when a row is near the floor (the ids and mask stay in self.feeds)."""
        n = len(window)
        ids = self.ids[0]
        ids[1 : n + 1] = window
        ids[n + 1] = self.vocab.sep_id
        ids[n + 2 :] = self.vocab.pad_id
        self.mask[0] = self._mask_rows[n + 2]
        self.session.run_with_iobinding(self.binding)
        return scores_of_one(self.logits, self.row_max, n)


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
        cpu = self.providers[:1] == ["CPUExecutionProvider"]
        try:
            self.session = self._new_session(1 if cpu else threads)
        except Exception as err:  # onnxruntime raises its own exception types
            raise ModelLoadError(f"{self.path} is unreadable or corrupt: {err}") from None
        # whether the graph ends with the scores (onnx_graph.SCORES) or with the logits
        self.scores_out = self.session.get_outputs()[0].name == SCORES_OUTPUT
        self._output_names = [self.session.get_outputs()[0].name]  # read_one's one output
        self._masks: dict[int, np.ndarray] = {}  # read_one's masks, by window length
        # read_one's sessions built for one shape (FIXED_TOKENS), by padded length, and the calls
        # of each short length so far (-1: never one of its own). Only on the CPU provider, for a
        # graph whose input dimensions have names: the only way to tell onnxruntime their sizes.
        self._fixed: dict[int, object] = {}
        self._fixed_calls: dict[int, int] = {}
        self._bound = threading.local()  # each thread's BoundWindow of each length (_bound_window)
        self._fixes_shapes = cpu and all(isinstance(size, str) for size in self.session.get_inputs()[0].shape)
        self.threads = threads
        if self.workers is not None:
            self.workers.close()
        # The threads that share the cores (started on first use): none on one core or off the CPU.
        self.workers = WorkerThreads(threads, "segmenter-onnx") if cpu and threads > 1 else None

    def _new_session(self, intra_op_threads: int, fixed_tokens: int | None = None):
        """A session of the graph (fixed_tokens: for inputs of shape (1, fixed_tokens) alone)."""
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = 1
        # A memory pattern plans the buffers of one input shape and keeps the plan; every batch
        # here has its own (rows, padded length), so the plans would only pile up.
        options.enable_mem_pattern = False
        graph = str(self.path)
        if fixed_tokens is not None:
            batch, length = self.session.get_inputs()[0].shape  # the names of the graph's free dimensions
            options.add_free_dimension_override_by_name(batch, 1)
            options.add_free_dimension_override_by_name(length, fixed_tokens)
            graph = without_score_tail(self.path.read_bytes())  # ~10 ms once a shape
        return onnxruntime.InferenceSession(graph, options, providers=self.providers, disabled_optimizers=list(UNFUSED))

    def __getstate__(self):  # a session and threads do not pickle; a copy makes its own
        state = dict(self.__dict__)
        for name in ("session", "_fixed", "_bound"):
            del state[name]
        state["workers"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.set_threads(self.threads)

    def read_one(self, window: np.ndarray) -> np.ndarray:
        """read([window])[0] (a short sentence's lone window) with the row built directly: the same
        (1, T) ids and mask as windows.collate's, one run, and a view of its output (no copy); a
        short window on its length's own session (BoundWindow), once it has one."""
        if not self.scores_out:  # a graph that returns logits: the general path
            return super().read_one(window)
        n = len(window)
        tokens = int(padded_length(n))
        bound = self._bound_window(tokens)
        if bound is not None:
            scores = bound.read(window)
            if scores is not None:
                return scores
            # a row near the floor (1 window in ~2,000): the general session's tail reads the same ids
            return self.session.run(self._output_names, bound.feeds)[0][0, :, : max(n - 1, 0)]
        ids = np.full((1, tokens), self.vocab.pad_id, dtype=np.int64)
        ids[0, 0] = self.vocab.cls_id
        ids[0, 1 : n + 1] = window
        ids[0, n + 1] = self.vocab.sep_id
        mask = self._masks.get(n)
        if mask is None:  # read-only, shared by threads: 1 on [CLS] … [SEP], 0 on the padding
            mask = np.zeros((1, tokens), dtype=np.int64)
            mask[0, : n + 2] = 1
            mask.setflags(write=False)
            self._masks[n] = mask
        return self.session.run(self._output_names, {"input_ids": ids, "attention_mask": mask})[0][0, :, : max(n - 1, 0)]

    def _bound_window(self, tokens: int) -> "BoundWindow | None":
        """This thread's BoundWindow for windows of `tokens` padded tokens, once the length has its
        own session (_session_for); None before, or for a length that never gets one."""
        windows = getattr(self._bound, "windows", None)
        if windows is None:
            windows = self._bound.windows = {}
        bound = windows.get(tokens)
        if bound is None:
            session = self._fixed.get(tokens) or self._session_for(tokens)
            if session is self.session:
                return None
            try:
                bound = windows[tokens] = BoundWindow(session, tokens, len(self.heads), self.vocab)
            except Exception:  # onnxruntime's own types: a binding it refuses leaves the length to the general session
                self._keep_general(tokens)
                return None
        return bound

    def _keep_general(self, tokens: int) -> None:
        """Windows of `tokens` padded tokens stay on the general session from now on."""
        self._fixed_calls[tokens] = -1
        self._fixed.pop(tokens, None)

    def _session_for(self, tokens: int):
        """read_one's session for windows of `tokens` padded tokens: the general one, until the
        FIXED_AFTER-th call of a short shape builds one for it (FIXED_TOKENS). Two threads may both
        build it; either serves."""
        calls = self._fixed_calls.get(tokens, 0)
        if not self._fixes_shapes or tokens > FIXED_TOKENS or calls < 0:
            return self.session
        if calls < FIXED_AFTER:
            self._fixed_calls[tokens] = calls + 1
            return self.session
        try:
            session = self._fixed[tokens] = self._new_session(1, fixed_tokens=tokens)
        except Exception:  # onnxruntime raises its own types: a graph it cannot specialise keeps the general session
            self._keep_general(tokens)
            return self.session
        return session

    def read(self, windows: list[np.ndarray], batch_size: int = 64, progress=None) -> list[np.ndarray]:
        if self.workers is not None and not in_worker_thread() and sum(map(len, windows)) < SHARED_READ_CHARS:
            # few characters: every batch here, as a worker thread runs its chunk (cores.SHARED_READ_CHARS)
            return as_worker_task(lambda chunk: super(OnnxReader, self).read(chunk, batch_size, progress), windows)
        return super().read(windows, batch_size, progress)

    def _forward(self, batch: list[np.ndarray], tokens: int) -> np.ndarray:
        ids, mask, lengths = batch_ids(batch, tokens, self.vocab)
        mask = mask.astype(np.int64)

        def run(part: slice) -> np.ndarray:
            outputs = self.session.run(None, {"input_ids": ids[part], "attention_mask": mask[part]})
            if self.scores_out:  # the scores (B, K, T - 3), float32
                return outputs[0]
            # a graph exported before: logits (B, K, T, T), and their rows' max where it has it
            return scores_from_logits(outputs[0], lengths[part], *outputs[1:]).astype(np.float32, copy=False)

        # In slices, as the numpy engine: onnxruntime keeps what a run allocated, so the largest
        # slice, not the largest batch, sets the process's memory. Outside the worker threads (a
        # read of one long text, score_texts), the slices of a batch run on them at once.
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
    if (STATIC_KEY in meta or INT8_KEY in meta) and WEIGHT_BITS_KEY not in meta and products_saturate():
        warnings.warn(f"{path} has 8-bit int8 weights, whose products onnxruntime adds with saturation on this CPU "
                      "(x86 without VNNI): its words are worse here (the shipped default of 2026-12-07 lost 0.009 "
                      f"dev F1). Export it again: `segmenter export-onnx --model {folder} --int8 static "
                      "--calibration RAW.txt` (7-bit weights), or pass engine='numpy'", stacklevel=3)
    return reader


def products_saturate() -> bool:
    """Whether onnxruntime's uint8 x int8 products of 8-bit weights may saturate here: an x86 CPU
    whose flags name neither AVX-512 VNNI nor AVX-VNNI, so that its kernel adds two products in 16
    bits (onnx_static.py). False where it cannot tell (not x86, or no /proc/cpuinfo)."""
    flags = x86_flags()
    return flags is not None and "avx512_vnni" not in flags and "avx_vnni" not in flags


def x86_flags() -> set[str] | None:
    """The CPU's feature flags (Linux's /proc/cpuinfo) on an x86 machine; None elsewhere or unreadable."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return None
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    flags = (line.partition(":")[2].split() for line in cpuinfo.splitlines() if line.startswith("flags"))
    return next((set(found) for found in flags), None)


def int8_instructions() -> str:
    """What onnxruntime's int8 products run on here, for a benchmark's machine line: "AVX-512 VNNI",
    "AVX-VNNI", "AVX2 (no VNNI)", or "" where it cannot tell."""
    flags = x86_flags() or set()
    for flag, name in (("avx512_vnni", "AVX-512 VNNI"), ("avx_vnni", "AVX-VNNI"), ("avx2", "AVX2 (no VNNI)")):
        if flag in flags:
            return name
    return ""
