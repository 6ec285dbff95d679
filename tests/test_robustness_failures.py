"""Failing well: bad arguments and broken model folders fail with one clear error, and the
command line fails cleanly (Ctrl-C, a bad line, a full disk) without a half-written output.
Any input, nothing lost (properties, threads): test_robustness.py.
"""
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from segmenter import HeadProfile, ModelLoadError, Segmenter

from test_robustness import one_torch_thread  # noqa: F401 (the module's autouse fixture)


# -- bad arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [b"bytes", 3, 2.5, None, ("tuple",)])
def test_batch_items_must_be_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match=rf"texts\[1\] must be a str, got {type(bad).__name__}"):
        tiny_segmenter.segment_batch(["好", bad])


@pytest.mark.parametrize("bad", [None, b"bytes", 3])
def test_tokenize_wants_a_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match="text must be a str"):
        tiny_segmenter.tokenize(bad)


@pytest.mark.parametrize("bad", [5, None, b"bytes"])
def test_batch_must_be_an_iterable_of_str(tiny_segmenter, bad):
    with pytest.raises(TypeError, match="texts must be"):
        tiny_segmenter.segment_batch(bad)


@pytest.mark.parametrize("bad", [0, -1, "8", 2.5, True])
def test_bad_batch_size_per_call(tiny_segmenter, bad):
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        tiny_segmenter.segment_batch(["中国人民"], batch_size=bad)


@pytest.mark.parametrize("granularity", [True, [0.5], b"fine"])
def test_granularity_of_a_wrong_type(tiny_segmenter, granularity):
    with pytest.raises(TypeError, match="granularity must be a str or a number"):
        tiny_segmenter.segment("你好", granularity=granularity)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"batch_size": 0}, ValueError, "batch_size must be a positive int"),
        ({"batch_size": "64"}, ValueError, "batch_size must be a positive int"),
        ({"num_threads": 0}, ValueError, "num_threads must be a positive int or None"),
        ({"window": 2, "overlap": 2}, ValueError, "window must be an int >= 3"),
        ({"window": True}, ValueError, "window must be an int"),
        ({"window": 30}, ValueError, r"overlap must be an int in \[2, window\) = \[2, 30\), got 64 \(the default"),
        ({"window": 30, "overlap": 1}, ValueError, "overlap must be an int in"),
        ({"window": 30, "overlap": 8.0}, ValueError, "overlap must be an int in"),
        ({"granularity": "medium"}, ValueError, r"granularity must be one of \['coarse', 'default', 'fine'\]"),
        ({"device": "gpu"}, ValueError, "device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got 'gpu'"),
        ({"device": 3.5}, ValueError, "device must be 'cpu', 'cuda', 'cuda:N' or 'mps'"),
        ({"profile": "segmenter_heads.json"}, TypeError, "profile must be a HeadProfile or None, got str"),
    ],
)
def test_bad_constructor_arguments(tiny_model_dir, kwargs, error, message):
    with pytest.raises(error, match=message):
        Segmenter(tiny_model_dir, **kwargs)


@pytest.mark.parametrize("model", [3, b"/tmp/model", ["folder"]])
def test_model_of_a_wrong_type(model):
    with pytest.raises(TypeError, match="model must be a folder path or a hub name"):
        Segmenter(model)


# -- models: each broken folder fails at load time, with one clear error --------------------
def broken_copy(tiny_model_dir, tmp_path, name, content):
    import shutil

    folder = shutil.copytree(tiny_model_dir, tmp_path / "m")
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(content(data) if callable(content) else content)
    return folder


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("model.safetensors", lambda data: data[: len(data) // 2], "corrupt|cannot load the weights"),  # cut short
        ("config.json", b"{not json", "not a valid model config"),
        ("vocab.txt", "的\n一\n".encode(), "lacks the special tokens"),
    ],
)
def test_broken_model_folder_fails_at_load(tiny_model_dir, tmp_path, name, content, message):
    folder = broken_copy(tiny_model_dir, tmp_path, name, content)
    with pytest.raises(ModelLoadError, match=message):
        Segmenter(folder, window=30, overlap=8)


def test_model_path_that_is_a_file(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="is a file; expected a model folder"):
        Segmenter(tmp_path / "model.bin")


def test_profile_given_in_code_naming_a_missing_head(tiny_model_dir):
    with pytest.raises(ValueError, match=r"names heads \[\(1, 7\)\]"):
        Segmenter(tiny_model_dir, profile=HeadProfile(heads=[(1, 7)], weights=[1.0]))


# -- command line -----------------------------------------------------------------------------
def cli_command(model, *args):
    return [sys.executable, "-m", "segmenter", "-q", "--threads", "1", "-m", str(model), *map(str, args)]


def cli(model, *args, stdin=b"", env=None, stdout=subprocess.PIPE):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run(cli_command(model, *args), input=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env, timeout=300)


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


@pytest.mark.slow
def test_ctrl_c_leaves_the_old_output_untouched(tiny_model_dir, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("我们都是中国人民的好朋友。\n" * 100_000, encoding="utf-8")
    out = tmp_path / "out.txt"
    out.write_text("old\n", encoding="utf-8")
    # SIGINT as a terminal sends it, even when this run's shell ignores it (a job started with &)
    process = subprocess.Popen(cli_command(tiny_model_dir, "-o", out, big), stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not leftovers(tmp_path) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the temporary output appears once the model is loaded
    time.sleep(0.5)  # well into writing
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err.decode()
    assert b"interrupted" in err and b"Traceback" not in err
    assert out.read_text(encoding="utf-8") == "old\n"
    assert not leftovers(tmp_path)


@pytest.mark.slow
def test_failure_after_many_lines_leaves_no_half_written_output(tiny_model_dir, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("好朋友。\n".encode() * 2000 + b"\xff\n")  # several chunks are written first
    out = tmp_path / "out.txt"
    result = cli(tiny_model_dir, "-o", out, bad)
    assert result.returncode == 2 and b"line 2001" in result.stderr and b"Traceback" not in result.stderr
    assert not out.exists() and not leftovers(tmp_path)


@pytest.mark.slow
def test_output_file_modes_and_links(tiny_model_dir, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("中国\n", encoding="utf-8")
    new, old, link, linked = (tmp_path / name for name in ("new.txt", "old.txt", "link.txt", "linked.txt"))
    for path in (old, linked):
        path.write_text("old\n")
        path.chmod(0o640)
    link.symlink_to(linked)
    for out in (new, old, link):
        assert cli(tiny_model_dir, "-o", out, text).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    assert stat.S_IMODE(old.stat().st_mode) == stat.S_IMODE(linked.stat().st_mode) == 0o640
    assert link.is_symlink()  # the file behind the link is replaced, not the link
    assert old.read_text(encoding="utf-8").replace(" ", "") == linked.read_text(encoding="utf-8").replace(" ", "") == "中国\n"


@pytest.mark.slow
def test_output_to_a_fifo_is_written_in_place(tiny_model_dir, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = cli(tiny_model_dir, "-o", fifo, stdin="我们\n".encode())
    reader.join(timeout=30)
    assert result.returncode == 0, result.stderr.decode()
    assert received and received[0].decode().replace(" ", "") == "我们\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a regular file


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.slow
def test_full_disk_on_stdout(tiny_model_dir):
    with open("/dev/full", "wb") as full:
        result = cli(tiny_model_dir, stdin="我们\n".encode() * 10, stdout=full)
    assert result.returncode == 2
    assert b"cannot write standard output" in result.stderr and b"Traceback" not in result.stderr
    assert b"Exception ignored" not in result.stderr


@pytest.mark.slow
def test_output_is_utf8_whatever_the_locale(tiny_model_dir):
    result = cli(tiny_model_dir, stdin="中国，café\n".encode(), env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8").replace(" ", "") == "中国，café\n"


@pytest.mark.slow
def test_encoding_errors_replace_never_yields_a_surrogate(tiny_model_dir, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xed\xa0\x80\xff" + "中国\n".encode() + b"\xc3\n")  # an encoded surrogate, junk, a cut sequence
    result = cli(tiny_model_dir, "--encoding-errors", "replace", bad)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8").replace(" ", "").splitlines() == ["\ufffd" * 4 + "中国", "\ufffd"]
