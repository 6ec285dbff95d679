"""The numpy engine: a BERT model folder read and run with numpy alone (no torch, no transformers).

It computes what attention.py computes with torch, for the BERT layout only:
  embeddings   word[id] + position[t] + token_type[0], LayerNorm                  (B, T, H)
  layers below the deepest selected head, exactly as BERT: self-attention with the padding
               mask, dense + residual + LayerNorm, intermediate with exact (erf) GELU,
               output dense + residual + LayerNorm
  at a layer with selected heads: only those heads' query/key rows, and from the logits the
               boundary score s = log a[i, SEP] - log a[i, i+1] (scores.py, same 1e-9 floor)
All in float32, whatever the weights' dtype (float16, bfloat16 or float32 safetensors).

Every matmul is a stacked (B, T, ·) @ (·, ·) product: numpy runs one BLAS call per window
of T rows, so a window's scores are bit-identical alone or in any batch (reader.py's promise).
The kernels (erf, GELU, LayerNorm, softmax, the scores from the logits) are numpy_ops.py's: the
onnxruntime engine reads its scores with the same function.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from ..run.cores import WorkerThreads
from ..text.vocab import CharVocab
from .numpy_ops import gelu, layer_norm, scores_from_logits, softmax
from .reader import WindowReader, batch_ids
from .readout import batch_slices, heads_by_layer, profile_order

WEIGHTS_FILE = "model.safetensors"
DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "F64": np.float64}
MASKED = np.finfo(np.float32).min  # added to the logits of padding keys, as torch does


# -- weights ---------------------------------------------------------------------------------
def read_safetensors(path: Path, keep=lambda name: True) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file whose names pass `keep`, as float32 arrays.

    Format: 8 bytes little-endian header size N, N bytes of JSON {name: {dtype, shape,
    data_offsets: [begin, end]}} (offsets into the data after the header), then the data.
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        try:
            length = int.from_bytes(handle.read(8), "little")
            if not 2 <= length <= size - 8:
                raise ValueError(f"header size {length} does not fit a file of {size} bytes")
            header = json.loads(handle.read(length))
            tensors = {}
            for name, info in header.items():  # every tensor checked, the kept ones read
                if name == "__metadata__":
                    continue
                dtype = DTYPES.get(info["dtype"])
                if dtype is None:
                    raise ValueError(f"tensor {name} has dtype {info['dtype']}; expected one of {', '.join(DTYPES)}")
                begin, end = info["data_offsets"]
                count = math.prod(info["shape"])
                if end - begin != count * np.dtype(dtype).itemsize or 8 + length + end > size:
                    raise ValueError(f"tensor {name} is cut short or its offsets do not match its shape")
                if not keep(name):
                    continue
                handle.seek(8 + length + begin)
                raw = np.frombuffer(handle.read(end - begin), dtype=dtype).reshape(info["shape"])
                if info["dtype"] == "BF16":  # bfloat16 is the upper half of a float32
                    raw = (raw.astype(np.uint32) << 16).view(np.float32)
                tensors[name] = raw.astype(np.float32)
            return tensors
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            raise ModelLoadError(f"weights file {path} is unreadable or corrupt: {err}") from None


def numpy_problem(folder: Path, config: dict) -> str | None:
    """Why this folder cannot run on the numpy engine (None: it can)."""
    if not (folder / WEIGHTS_FILE).is_file():
        return f"it has no {WEIGHTS_FILE}"
    checks = [
        ("model_type", "bert"), ("hidden_act", "gelu"), ("position_embedding_type", "absolute"),
    ]
    for key, expected in checks:
        if config.get(key, expected) != expected:
            return f"its config has {key}={config.get(key)!r} (the numpy engine runs {key}={expected!r})"
    return None


class NumpyBert:
    """The layers of a BERT folder up to the deepest layer a profile reads, as float32 arrays.

    Weights are stored transposed, (in, out), so that a dense layer is `x @ w + b`.
    """

    def __init__(self, folder: Path, config: dict, heads: list[tuple[int, int]]):
        self.hidden = int(config["hidden_size"])
        self.num_heads = int(config["num_attention_heads"])
        self.head_size = self.hidden // self.num_heads
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_positions = int(config["max_position_embeddings"])
        self.heads_by_layer = heads_by_layer(heads)
        self.deepest = max(self.heads_by_layer)
        wanted = ("embeddings.",) + tuple(f"encoder.layer.{i}." for i in range(self.deepest + 1))
        tensors = read_safetensors(folder / WEIGHTS_FILE, lambda name: name.removeprefix("bert.").startswith(wanted))
        tensors = {name.removeprefix("bert."): array for name, array in tensors.items()}

        def get(name: str) -> np.ndarray:
            if name not in tensors:
                raise ModelLoadError(f"cannot load the weights in {folder}: {WEIGHTS_FILE} has no tensor {name}")
            return tensors[name]

        self.word = get("embeddings.word_embeddings.weight")
        # config.json against the weights, as torch's loader checks (a mismatch would otherwise
        # surface as a reshape error at the first text)
        position_rows = get("embeddings.position_embeddings.weight").shape[0]
        if self.word.shape[1] != self.hidden or self.hidden % self.num_heads or position_rows < self.max_positions:
            raise ModelLoadError(
                f"cannot load the weights in {folder}: config.json has hidden_size {self.hidden}, "
                f"num_attention_heads {self.num_heads}, max_position_embeddings {self.max_positions}; "
                f"{WEIGHTS_FILE} has {self.word.shape[1]}-wide embeddings and {position_rows} positions")
        # Token type 0 for every token: its row folds into the position rows once, here.
        self.position = get("embeddings.position_embeddings.weight") + get("embeddings.token_type_embeddings.weight")[0]
        self.embedding_norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers = []  # full layers below the deepest: dicts of (in, out) weights
        for i in range(self.deepest):
            p = f"encoder.layer.{i}."
            qkv = [get(f"{p}attention.self.{n}.weight").T for n in ("query", "key", "value")]
            self.layers.append({
                "qkv_w": np.ascontiguousarray(np.concatenate(qkv, axis=1)),
                "qkv_b": np.concatenate([get(f"{p}attention.self.{n}.bias") for n in ("query", "key", "value")]),
                "out_w": np.ascontiguousarray(get(f"{p}attention.output.dense.weight").T),
                "out_b": get(f"{p}attention.output.dense.bias"),
                "norm1": (get(f"{p}attention.output.LayerNorm.weight"), get(f"{p}attention.output.LayerNorm.bias")),
                "in_w": np.ascontiguousarray(get(f"{p}intermediate.dense.weight").T),
                "in_b": get(f"{p}intermediate.dense.bias"),
                "ffn_w": np.ascontiguousarray(get(f"{p}output.dense.weight").T),
                "ffn_b": get(f"{p}output.dense.bias"),
                "norm2": (get(f"{p}output.LayerNorm.weight"), get(f"{p}output.LayerNorm.bias")),
            })
        self.readers = {}  # layer -> query/key weights of its selected heads only, (H, K_l * d)
        for layer, selected in self.heads_by_layer.items():
            rows = np.concatenate([np.arange(h * self.head_size, (h + 1) * self.head_size) for h in selected])
            p = f"encoder.layer.{layer}.attention.self."
            self.readers[layer] = {
                n: (np.ascontiguousarray(get(f"{p}{n}.weight")[rows].T), get(f"{p}{n}.bias")[rows])
                for n in ("query", "key")
            }

    def split_heads(self, x: np.ndarray, heads: int) -> np.ndarray:
        """(B, T, heads * d) -> (B, heads, T, d), a view."""
        batch, tokens, _ = x.shape
        return x.reshape(batch, tokens, heads, self.head_size).transpose(0, 2, 1, 3)

    def layer(self, p: dict, x: np.ndarray, additive: np.ndarray) -> np.ndarray:
        """One BERT layer: (B, T, H) -> (B, T, H)."""
        batch, tokens, hidden = x.shape
        qkv = (x @ p["qkv_w"] + p["qkv_b"]).reshape(batch, tokens, 3, self.num_heads, self.head_size)
        query, key, value = qkv.transpose(2, 0, 3, 1, 4)  # each (B, heads, T, d)
        logits = query @ key.transpose(0, 1, 3, 2)
        logits *= np.float32(self.head_size**-0.5)
        logits += additive
        context = (softmax(logits) @ value).transpose(0, 2, 1, 3).reshape(batch, tokens, hidden)
        h = context @ p["out_w"]
        h += p["out_b"]
        h += x
        h = layer_norm(h, *p["norm1"], self.eps)
        inner = h @ p["in_w"]
        inner += p["in_b"]
        out = gelu(inner) @ p["ffn_w"]
        out += p["ffn_b"]
        out += h
        return layer_norm(out, *p["norm2"], self.eps)

    def head_scores(self, layer: int, x: np.ndarray, additive: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Boundary scores of this layer's selected heads (scores.py): (B, K_l, T - 3)."""
        weights = self.readers[layer]
        heads = len(self.heads_by_layer[layer])
        query = self.split_heads(x @ weights["query"][0] + weights["query"][1], heads)
        key = self.split_heads(x @ weights["key"][0] + weights["key"][1], heads)
        logits = query @ key.transpose(0, 1, 3, 2)
        logits *= np.float32(self.head_size**-0.5)
        logits += additive
        return scores_from_logits(logits, lengths)

    def scores(self, ids: np.ndarray, mask: np.ndarray, lengths: np.ndarray) -> dict[int, np.ndarray]:
        """ids, mask (B, T) -> {layer: (B, K_l, T - 3)} for every layer with selected heads."""
        tokens = ids.shape[1]
        x = layer_norm(self.word[ids] + self.position[:tokens], *self.embedding_norm, self.eps)
        additive = np.where(mask, np.float32(0), MASKED).astype(np.float32)[:, None, None, :]  # (B, 1, 1, T)
        found = {}
        for index in range(self.deepest + 1):
            if index in self.readers:
                found[index] = self.head_scores(index, x, additive, lengths)
            if index < self.deepest:
                x = self.layer(self.layers[index], x, additive)
        return found


class NumpyReader(WindowReader):
    """HeadReader's contract (reader.py) on the numpy engine, on `threads` cores.

    Parallel over windows, not inside BLAS: each of `threads` Python threads runs a slice of
    the batch (numpy releases the GIL in BLAS and in ufuncs over large arrays) with BLAS on one
    thread. OpenBLAS's own threading splits every small per-window matmul and, on a busy
    machine, spins: many times slower than one thread.
    """

    def __init__(self, model: NumpyBert, vocab: CharVocab, heads: list[tuple[int, int]], threads: int = 1):
        self.model = model
        self.vocab = vocab
        self.heads = list(heads)
        self.max_positions = model.max_positions
        self._order = profile_order(self.heads)  # the model's layer order -> the profile's
        self._pool: WorkerThreads | None = None
        self.set_threads(threads)

    def set_threads(self, threads: int) -> None:
        """Compute on `threads` cores: the threads that share a batch's slices (cores.py; started
        on the first batch that needs them), none on one core."""
        if self._pool is not None:
            self._pool.close()
        self.threads = threads
        self._pool = WorkerThreads(threads, "segmenter-numpy") if threads > 1 else None

    def _scores(self, ids: np.ndarray, mask: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        found = self.model.scores(ids, mask, lengths)
        return np.concatenate(list(found.values()), axis=1)[:, self._order].astype(np.float32, copy=False)

    def _forward(self, batch: list[np.ndarray], tokens: int) -> np.ndarray:
        ids, mask, lengths = batch_ids(batch, tokens, self.vocab)
        # At least one slice per thread; the activations of a slice, (rows, T, 4H) and
        # (rows, heads, T, T), stay a few tens of MB whatever the batch.
        slices = batch_slices(len(batch), tokens, self.threads)
        if len(slices) == 1 or self._pool is None:
            results = [self._scores(ids[s], mask[s], lengths[s]) for s in slices]
        else:
            results = list(self._pool.map(lambda s: self._scores(ids[s], mask[s], lengths[s]), slices))
        return np.concatenate(results, axis=0)


def load_numpy_reader(folder: Path, config: dict, vocab: CharVocab, heads: list[tuple[int, int]],
                      threads: int) -> NumpyReader:
    """The reader of a folder that numpy_problem() accepts; ModelLoadError for a broken one.
    Sets numpy's BLAS to one thread for the whole process (NumpyReader's doc says why)."""
    model = NumpyBert(folder, config, heads)
    if model.word.shape[0] != len(vocab):
        raise ModelLoadError(
            f"{folder}: vocab.txt has {len(vocab)} tokens but the embeddings have {model.word.shape[0]} rows; "
            "the vocabulary does not belong to these weights"
        )
    set_blas_threads(1)
    return NumpyReader(model, vocab, heads, threads)


def set_blas_threads(count: int) -> bool:
    """Limit numpy's BLAS to `count` threads; False when no known BLAS was found.

    numpy's wheels bundle OpenBLAS (numpy.libs/libscipy_openblas*.so); its thread count is set
    through the library itself, since OPENBLAS_NUM_THREADS only counts before numpy loads.
    threadpoolctl, when installed, knows more BLAS builds and is used first.
    """
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(count, user_api="blas")
        return True
    except ImportError:
        pass
    import ctypes

    libraries = Path(np.__file__).parent.parent / "numpy.libs"
    for path in sorted(libraries.glob("*openblas*")) if libraries.is_dir() else []:
        library = ctypes.CDLL(str(path))
        for symbol in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            function = getattr(library, symbol, None)
            if function is not None:
                function(int(count))
                return True
    return False
