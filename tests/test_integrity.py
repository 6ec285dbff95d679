"""Every file of a model folder is checked on load (integrity.py): a truncated, corrupt or
mismatched file ends in one line naming it, never a traceback, never silently other words."""
from __future__ import annotations

import json
import shutil

import pytest

from conftest import run_cli, tiny_vocab
from segmenter import Segmenter
from segmenter.errors import ModelLoadError
from segmenter.model.integrity import MANIFEST_FILE, read_manifest, verify_folder, write_manifest
from segmenter.model.folders import SHIPPED_MODELS, embedded_model_path, resolve_model_folder
from segmenter.words.table import WordTable

TEXT = "今天天气很好，我们去北京大学。"


def copy_default(tmp_path, manifest: bool = True):
    folder = tmp_path / "model"
    shutil.copytree(embedded_model_path("default"), folder)
    if not manifest:
        (folder / MANIFEST_FILE).unlink()
    return folder


def truncate(path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def flip_byte(path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0xFF
    path.write_bytes(bytes(data))


def check_cli_line(folder, name: str) -> str:
    result = run_cli("-m", folder, stdin=(TEXT + "\n").encode(), text=False)
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("segmenter: error: ") and name in stderr, stderr
    return stderr


def test_shipped_folders_have_a_manifest_that_verifies():
    for name in SHIPPED_MODELS:
        folder = embedded_model_path(name)
        files = read_manifest(folder)
        assert files is not None and {"config.json", "vocab.txt", "model.safetensors"} <= set(files)
        verify_folder(folder)
    assert "ngrams.npz" in read_manifest(embedded_model_path("default"))


def test_manifest_lists_sizes_and_hashes_of_model_files_only(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    tiny_vocab().save(folder)
    (folder / "MODEL_CARD.md").write_text("card\n", encoding="utf-8")
    (folder / "segmenter_heads.json").write_text("{}\n", encoding="utf-8")
    write_manifest(folder)
    data = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert data["format"] == "segmenter checksums 1"
    assert set(data["files"]) == {"vocab.txt", "tokenizer_config.json"}
    assert data["files"]["vocab.txt"]["size"] == (folder / "vocab.txt").stat().st_size
    assert len(data["files"]["vocab.txt"]["sha256"]) == 64
    (folder / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"vocab.txt is truncated or changed: .* bytes, expected .*re-copy"):
        verify_folder(folder)
    (folder / MANIFEST_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="checksums.json is not a valid checksum list"):
        verify_folder(folder)


def test_same_size_corruption_is_caught_by_the_hash(tmp_path):
    folder = copy_default(tmp_path)
    flip_byte(folder / "model.safetensors", 0.9)
    with pytest.raises(ModelLoadError, match=r"model.safetensors is corrupt or changed: sha256 .* expected"):
        Segmenter(folder)


@pytest.mark.slow
@pytest.mark.parametrize("name, damage", [
    ("ngrams.npz", truncate), ("vocab.txt", truncate), ("model.onnx", truncate),
    ("config.json", lambda path: path.write_text("{garbage", encoding="utf-8")),
    ("tokenizer_config.json", lambda path: path.write_text("[1]", encoding="utf-8")),
])
def test_damaged_file_with_manifest_is_one_clear_error(tmp_path, name, damage):
    folder = copy_default(tmp_path)
    damage(folder / name)
    with pytest.raises(ModelLoadError, match=rf"{name} is (truncated|corrupt) or changed.*re-copy the folder"):
        Segmenter(folder)
    check_cli_line(folder, name)


@pytest.mark.slow
@pytest.mark.parametrize("name, damage, error", [
    ("ngrams.npz", truncate, ValueError),
    ("ngrams.npz", flip_byte, ValueError),  # same size: the zip's CRC-32 of the member
    ("vocab.txt", truncate, ModelLoadError),
    ("config.json", lambda path: path.write_text("{garbage", encoding="utf-8"), ModelLoadError),
    ("tokenizer_config.json", truncate, ModelLoadError),
])
def test_damaged_file_without_manifest_is_one_clear_error(tmp_path, name, damage, error):
    folder = copy_default(tmp_path, manifest=False)
    damage(folder / name)
    with pytest.raises(error, match=name):
        Segmenter(folder)
    check_cli_line(folder, name)


@pytest.mark.slow
def test_truncated_onnx_without_manifest_falls_back_to_the_same_words(tmp_path):
    pytest.importorskip("onnxruntime")
    folder = copy_default(tmp_path, manifest=False)
    truncate(folder / "model.onnx")
    seg = Segmenter(folder)
    assert seg.engine == "numpy"  # engine="auto" reads the weights themselves (model.load_reader)
    assert seg.segment(TEXT) == Segmenter(engine="numpy").segment(TEXT)
    with pytest.raises(ModelLoadError, match="model.onnx"):
        Segmenter(folder, engine="onnx")


def test_word_table_checked_against_its_own_folders_manifest(tmp_path):
    folder = copy_default(tmp_path)
    (folder / "ngrams.npz").write_bytes(b"PK")
    with pytest.raises(ModelLoadError, match=r"ngrams.npz is truncated or changed: 2 bytes, expected"):
        WordTable.load(folder)


@pytest.mark.slow
def test_save_pretrained_writes_a_manifest_that_verifies(tmp_path):
    out = Segmenter("fast").save_pretrained(tmp_path / "saved")
    files = read_manifest(out)
    assert {"ngrams.npz", "model.safetensors", "vocab.txt", "config.json"} <= set(files)
    verify_folder(out)
    assert Segmenter(out).segment(TEXT) == Segmenter("fast").segment(TEXT)


@pytest.mark.slow
def test_adapt_writes_a_manifest_that_verifies(tmp_path):
    from segmenter.train.adapt import adapt

    raw = tmp_path / "raw.txt"
    raw.write_text("".join(f"前面龘靐齉麤{i}后面。\n" for i in range(200)), encoding="utf-8")
    out = adapt(None, [raw], tmp_path / "adapted", command="test").folder
    files = read_manifest(out)
    assert files is not None and files["ngrams.npz"]["size"] == (out / "ngrams.npz").stat().st_size
    verify_folder(out)


def test_typo_of_a_shipped_name_names_the_shipped_models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelLoadError, match=r"no model 'acurate': not a folder, not a shipped model "
                                             r"\(default, fast\), and not on the Hugging Face hub here"):
        resolve_model_folder("acurate")


@pytest.mark.slow
def test_typo_of_a_shipped_name_cli(tmp_path):
    result = run_cli("-m", "acurate", stdin=(TEXT + "\n").encode(), cwd=tmp_path, env={"HF_HUB_OFFLINE": "1"})
    stderr = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1
    assert "no model 'acurate'" in stderr and "(default, fast)" in stderr


def test_writing_into_a_folder_refreshes_its_list_only_when_it_has_one(tmp_path):
    from segmenter.model.integrity import update_manifest

    folder = tmp_path / "f"
    folder.mkdir()
    tiny_vocab().save(folder)
    assert update_manifest(folder, ["vocab.txt"]) is None and not (folder / MANIFEST_FILE).exists()
    write_manifest(folder)
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="vocab.txt"):
        verify_folder(folder)
    update_manifest(folder, ["vocab.txt"])
    verify_folder(folder)


def test_a_local_folder_named_like_a_shipped_model_is_named_in_the_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fast").mkdir()  # a user's own scratch folder: it wins over the shipped `fast`
    with pytest.raises(ModelLoadError, match="a folder named 'fast' here hides the shipped model"):
        Segmenter("fast")


def run_integrity_main(monkeypatch, *args: str) -> None:
    """`python -m segmenter.model.integrity ARGS…`, run in this process."""
    import runpy
    import warnings

    monkeypatch.setattr("sys.argv", ["integrity", *args])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the module is imported already
        runpy.run_module("segmenter.model.integrity", run_name="__main__")


def test_integrity_main_has_help_and_usage_errors(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_integrity_main(monkeypatch, "--help")
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "usage: python -m segmenter.model.integrity" in out and MANIFEST_FILE in out
    assert not (tmp_path / "--help").exists()
    for args, message in (((), "required: FOLDER"), ((str(tmp_path / "missing"),), "missing: not a folder")):
        with pytest.raises(SystemExit) as exit_:
            run_integrity_main(monkeypatch, *args)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and message in err and "Traceback" not in err


def test_integrity_main_writes_each_folders_list(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "f"
    folder.mkdir()
    tiny_vocab().save(folder)
    run_integrity_main(monkeypatch, str(folder))
    assert capsys.readouterr().out.strip() == f"wrote {folder / MANIFEST_FILE}"
    assert set(read_manifest(folder)) == {item.name for item in folder.iterdir()} - {MANIFEST_FILE}
    verify_folder(folder)
