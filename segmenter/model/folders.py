"""Model folders: find them (embedded, local, hub), check them, and load the encoder.

A segmenter model is a Hugging Face folder: `config.json`, `model.safetensors` (or
`pytorch_model.bin`), `vocab.txt`, optionally `tokenizer_config.json`, and the head profile
`segmenter_heads.json`. Every check happens here, when the model is loaded, so that a broken
folder fails with one clear message instead of a torch traceback on first use.
"""
from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
from pathlib import Path

from ..errors import ModelLoadError
from ..run.cores import available_cores
from ..text.vocab import CharVocab
from .integrity import verify_folder
from .profile import PROFILE_FILE, HeadProfile

EMBEDDED_MODEL = "embedded"
# Models shipped in segmenter/model/shipped, loadable by name when no folder of that name exists.
SHIPPED_MODELS = ("default", "fast")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
BERT_FAMILY = ("bert", "roberta", "xlm-roberta", "electra", "camembert", "ernie")


def embedded_model_path(name: str = "default") -> Path:
    """A model shipped inside the package (package data): the default one unless named."""
    return Path(str(importlib.resources.files("segmenter.model") / "shipped" / name))


def resolve_model_folder(name_or_path: str | os.PathLike | None) -> Path:
    """None or "embedded" -> the shipped default model; "fast" -> the shipped small student (unless
    a folder of that name exists); an existing folder -> itself; else a hub name."""
    shipped = isinstance(name_or_path, str) and name_or_path in SHIPPED_MODELS and not Path(name_or_path).exists()
    if name_or_path is None or str(name_or_path) == EMBEDDED_MODEL or shipped:
        folder = embedded_model_path(name_or_path if shipped else "default")
        if not (folder / "config.json").is_file():
            raise ModelLoadError(
                f"the embedded model is missing from {folder}: reinstall segmenter, or pass --model/model= a folder"
            )
        verify_folder(folder)  # its checksums.json (integrity.py)
        return folder
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"model must be a folder path or a hub name (str), got {type(name_or_path).__name__}")
    if not str(name_or_path).strip():  # Path("") is ".": the current folder, never what was meant
        raise ModelLoadError(f"model is empty ({str(name_or_path)!r}); leave it out (None) for the embedded default, "
                             f"or give a shipped name ({', '.join(sorted(SHIPPED_MODELS))}), "
                             "a model folder or a hub name")
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"model path {path} is a file; "
                                 "expected a model folder (config.json, weights, vocab.txt)")
        verify_folder(path)
        return path
    folder = _download_from_hub(str(name_or_path))
    verify_folder(folder)
    return folder


def _download_from_hub(name: str) -> Path:
    looks_like_path = name.startswith((".", "/", "~")) or os.sep + os.sep in name or name.count("/") > 1
    if looks_like_path:
        raise ModelLoadError(f"model folder {name} does not exist")
    try:
        from huggingface_hub import snapshot_download

        patterns = ["*.json", "*.txt", "*.safetensors", "*.md", "*.npz", "model.onnx", "pytorch_model.bin"]
        folder = snapshot_download(name, allow_patterns=patterns)
    except Exception as err:  # not installed, offline, unknown repo, auth: all mean "cannot get it"
        reason = ("huggingface_hub is not installed" if isinstance(err, ImportError)
                  else f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        raise ModelLoadError(
            f"no model {name!r}: not a folder, not a shipped model ({', '.join(SHIPPED_MODELS)}), "
            f"and not on the Hugging Face hub here ({reason}); pass a model folder or a shipped name, "
            "or leave the model out for the default"
        ) from None
    return Path(folder)


def check_folder(folder: Path) -> Path:
    """Raise ModelLoadError unless the folder has a config, weights and a vocabulary, and its
    files are those its checksums.json lists (when it has one: integrity.py)."""
    verify_folder(folder)
    if not (folder / "config.json").is_file():
        raise ModelLoadError(f"{folder} has no config.json: not a Hugging Face model folder")
    weights = next((folder / name for name in WEIGHT_FILES if (folder / name).is_file()), None)
    if weights is None:
        raise ModelLoadError(f"{folder} has no weights: expected one of {', '.join(WEIGHT_FILES)}")
    if not (folder / "vocab.txt").is_file():
        raise ModelLoadError(f"{folder} has no vocab.txt: segmenter needs a character vocabulary (BERT style)")
    if weights.suffix == ".safetensors":
        from .numpy_engine import read_safetensors

        read_safetensors(weights, keep=lambda name: False)  # the header and every offset, no data
    return weights


@contextlib.contextmanager
def _quiet_transformers():
    """Silence "some weights were not used" while we deliberately load only the lower layers."""
    from transformers.utils import logging as hf_logging

    previous, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(previous)
        if bars:
            hf_logging.enable_progress_bar()


def attention_implementation(config) -> str:
    """SDPA for BERT-family encoders: segmenter computes the few attention rows it reads itself
    (attention.py). Other architectures hand their weights out only with eager attention."""
    return "sdpa" if getattr(config, "model_type", "") in BERT_FAMILY else "eager"


def load_encoder(folder: Path, num_layers: int | None = None, device="cpu"):
    """Load the torch encoder from `folder`, keeping only its first `num_layers` layers, in eval mode.

    Returns (model, vocab, total layers of the folder's model). Self-training fine-tunes this
    same model (model.train()): its attention dropout is off, because the attention weights
    *are* the output here, and dropout would zero entries of the very rows s is read from.
    """
    import torch
    from transformers import AutoConfig, AutoModel

    check_folder(folder)
    try:
        config = AutoConfig.from_pretrained(folder)
    except Exception as err:
        raise ModelLoadError(f"{folder}/config.json is not a valid model config: {err}") from None
    total_layers = config.num_hidden_layers
    if num_layers is not None:
        if num_layers > total_layers:
            raise ModelLoadError(f"{folder}: asked for {num_layers} layers but the model has {total_layers}")
        config.num_hidden_layers = num_layers
    config.attention_probs_dropout_prob = 0.0
    vocab = read_vocab(folder, config.vocab_size)
    try:
        with _quiet_transformers():
            model = AutoModel.from_pretrained(
                folder, config=config, attn_implementation=attention_implementation(config), dtype=torch.float32,
                add_pooling_layer=False
            )
    except Exception as err:
        raise ModelLoadError(f"cannot load the weights in {folder}: {type(err).__name__}: {err}") from None
    rows = model.get_input_embeddings().weight.shape[0]
    if rows != len(vocab):
        raise ModelLoadError(
            f"{folder}: vocab.txt has {len(vocab)} tokens but the embeddings have {rows} rows; "
            "the vocabulary does not belong to these weights"
        )
    model.eval().to(device)
    return model, vocab, total_layers


def read_profile(folder: Path) -> HeadProfile | None:
    """The folder's head profile, or None when it has none."""
    if not (folder / PROFILE_FILE).is_file():
        return None
    try:
        return HeadProfile.load(folder)
    except ValueError as err:
        raise ModelLoadError(str(err)) from None


def read_config(folder: Path) -> dict:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelLoadError(f"{folder}/config.json is not a valid model config: {err}") from None
    if not isinstance(config, dict):
        raise ModelLoadError(f"{folder}/config.json is not a valid model config: not a JSON object")
    return config


def read_vocab(folder: Path, size=None) -> CharVocab:
    """The folder's vocabulary; `size`: the config's vocab_size, which it must have (a truncated
    vocab.txt would otherwise read, and give other ids)."""
    try:
        vocab = CharVocab.from_folder(folder)
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ModelLoadError(f"{folder}: {err}") from None
    if isinstance(size, int) and not isinstance(size, bool) and size != len(vocab):
        raise ModelLoadError(f"{folder / 'vocab.txt'} has {len(vocab):,} tokens but config.json says vocab_size "
                             f"{size:,}: truncated, or not this model's vocabulary")
    return vocab


def load_reader(folder: Path, profile: HeadProfile, engine: str, device: str, num_threads: int | None):
    """(engine name, reader) of a model folder for a profile's heads: on the CPU its ONNX export
    when it is current, else the numpy engine, else torch (api.Segmenter's doc says when)."""
    from .numpy_engine import load_numpy_reader, numpy_problem

    check_folder(folder)
    config = read_config(folder)
    problem = numpy_problem(folder, config)
    if engine == "auto" and (device != "cpu" or problem is not None):
        engine = "torch"
    if engine == "torch":
        from ..arguments import require_torch
        from .reader import HeadReader

        torch = require_torch(f"device={device!r}" if device != "cpu" else f"model {folder} ({problem})"
                              if problem is not None else "engine='torch'")

        if num_threads is not None:
            torch.set_num_threads(num_threads)
        model, vocab, num_layers = load_encoder(folder, profile.deepest_layer + 1, device)
        profile.check_model(num_layers, model.config.num_attention_heads, where=str(folder))
        return engine, HeadReader(model, vocab, profile.heads, device)
    if device != "cpu":
        raise ValueError(f"engine={engine!r} runs on the CPU; for device={device!r} use engine='torch' (or 'auto')")
    if problem is not None and engine == "numpy":
        raise ModelLoadError(f"{folder} cannot run on the numpy engine: {problem}; use engine='torch' (or 'auto')")
    vocab = read_vocab(folder, config.get("vocab_size"))
    try:
        layers, heads = int(config["num_hidden_layers"]), int(config["num_attention_heads"])
        int(config["hidden_size"]), int(config["max_position_embeddings"])
    except (KeyError, TypeError, ValueError) as err:
        raise ModelLoadError(f"{folder}/config.json is not a valid model config: "
                             f"{err!r} missing or not a number") from None
    if profile.deepest_layer >= layers:
        raise ModelLoadError(f"{folder}: asked for {profile.deepest_layer + 1} layers but the model has {layers}")
    profile.check_model(layers, heads, where=str(folder))
    if engine == "onnx":
        from .onnx_engine import load_onnx_reader

        return engine, load_onnx_reader(folder, config, vocab, profile.heads, num_threads or available_cores())
    if engine == "auto":  # the CPU, a BERT folder: its ONNX export when there is a current one
        from .onnx_engine import load_onnx_reader, onnx_available

        if onnx_available(folder):
            try:
                threads = num_threads or available_cores()
                return "onnx", load_onnx_reader(folder, config, vocab, profile.heads, threads, same_weights=True)
            except ModelLoadError:  # another profile's heads, or stale: numpy reads the weights themselves
                pass
    return "numpy", load_numpy_reader(folder, config, vocab, profile.heads, num_threads or available_cores())
