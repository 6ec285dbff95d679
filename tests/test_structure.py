"""The house rules: the runtime loads no training or benchmark code, one window layout, one
clamp rule, one atomic writer, and every command turns a bad model path into one line."""
import re
import subprocess
import sys

import numpy as np
import pytest

from segmenter.run.files import atomic_path, write_text_atomic
from segmenter.text.plan import score_texts
from segmenter.text.windows import OVERLAP, WINDOW, clamp_window, collate, collate_flat, padded_length

from conftest import REPO, tiny_vocab
from import_graph import find_cycles, import_graph, imported_names, module_names

TEXTS = ["我们的国家是一个大国。", "他说，中国人民很高兴！" * 8, "abc 123"]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny", "embedded"])
def test_segment_loads_no_training_or_benchmark_code(tiny_model_dir, model):
    """Neither a tiny model (threshold, numpy engine) nor the embedded default (word decoding,
    onnx engine) loads code of segmenter.train, .bench or .cli."""
    folder = str(tiny_model_dir) if model == "tiny" else None
    code = (
        "import sys, segmenter\n"
        f"seg = segmenter.Segmenter({folder!r})\n"
        f"seg.segment_batch({TEXTS!r}); seg.tokenize('我们的国家'); seg.segment_levels('我们的国家')\n"
        "loaded = [m for m in sys.modules if m.startswith(('segmenter.train', 'segmenter.bench', 'segmenter.cli'))]\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"the runtime imported {done.stdout.strip()}"


@pytest.mark.slow
def test_module_segment_loads_no_build_time_code():
    """`segmenter.segment` (the default model, its word table and standard) imports nothing of
    segmenter.train, .bench or .cli: building a table or a model is not a runtime step."""
    code = (
        "import sys, segmenter\n"
        "words = segmenter.segment('我爱北京天安门。')\n"
        "loaded = [m for m in sys.modules if m.startswith(('segmenter.train', 'segmenter.bench', 'segmenter.cli'))]\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"segment() imported {done.stdout.strip()}"


# Packages the runtime (the modules directly in segmenter/ and its stages: text, model, words,
# standards, run) must never import, even lazily: what builds a model or measures one.
NOT_RUNTIME = ("segmenter.train", "segmenter.bench", "segmenter.scale", "segmenter.cli")
RUNTIME_STAGES = ("text", "model", "words", "standards", "run")
# Entry points that are not runtime: __init__ is the package itself, __main__ runs the command line.
NOT_RUNTIME_FILES = ("__init__.py", "__main__.py")


def test_no_import_cycles():
    """No module of segmenter/ reaches itself through its imports (lazy ones included)."""
    cycles = find_cycles(import_graph(REPO / "segmenter"))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_runtime_modules_import_no_training_benchmark_scale_or_cli_code():
    modules = module_names(REPO / "segmenter")
    runtime = {name: path for name, path in modules.items()
               if (path.parent == REPO / "segmenter" and path.name not in NOT_RUNTIME_FILES)
               or path.parent.relative_to(REPO / "segmenter").parts[:1] in [(stage,) for stage in RUNTIME_STAGES]}
    assert "segmenter.api" in runtime and "segmenter.run.parallel" in runtime and "segmenter.words.table" in runtime
    bad = [f"{path.relative_to(REPO)}:{line} imports {name}" for module, path in runtime.items()
           for name, line in imported_names(module, path)
           if any(name == banned or name.startswith(banned + ".") for banned in NOT_RUNTIME)]
    assert not bad, "the runtime imports code it must not:\n" + "\n".join(bad)


def test_the_import_graph_sees_lazy_and_relative_imports(tmp_path):
    """The checker itself: a lazy relative import closes a cycle, and so does a TYPE_CHECKING one."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (package / "d.py").write_text("import pkg.c\n")
    (package / "e.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .f import g\n")
    (package / "f.py").write_text("from . import e\ng = 1\n")
    graph = import_graph(package)
    assert find_cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"], ["pkg.e", "pkg.f", "pkg.e"]]
    assert graph["pkg.c"] == {"pkg": 3, "pkg.a": 3} and graph["pkg.d"] == {"pkg.c": 1}


def test_the_package_shows_its_stages():
    """`ls segmenter/` shows the data flow: a few modules, the rest in stage subpackages."""
    package = REPO / "segmenter"
    modules = sorted(p.name for p in package.glob("*.py"))
    assert len(modules) <= 12, modules
    assert all((package / stage / "__init__.py").is_file() for stage in RUNTIME_STAGES)


def test_no_module_shares_the_package_name():
    package = REPO / "segmenter"
    assert not [p for p in package.rglob("segmenter.py")]


def test_collate_lays_windows_out_as_cls_ids_sep_pad():
    vocab = tiny_vocab()
    windows = [np.array([7, 8, 9]), np.array([10]), np.array([11, 12, 13, 14, 15, 16, 17])]
    ids, mask = collate(windows, vocab)
    assert ids.shape == mask.shape == (3, 16) and ids.shape[1] == padded_length(7)
    for row, window in enumerate(windows):
        n = len(window)
        assert ids[row].tolist() == [vocab.cls_id, *window.tolist(), vocab.sep_id] + [vocab.pad_id] * (16 - n - 2)
        assert mask[row].tolist() == [1] * (n + 2) + [0] * (16 - n - 2)
    ids1, mask1 = collate(windows[:1], vocab, pad_multiple=1)
    assert ids1.shape == (1, 5) and mask1.all()
    # The flat form (pretraining's store) gives the same rows; max_tokens caps T at the positions.
    flat = np.concatenate(windows)
    same, _ = collate_flat(flat, np.array([0, 3, 4]), np.array([3, 1, 7]), vocab)
    assert np.array_equal(same, ids)
    capped, _ = collate_flat(flat, np.array([4]), np.array([7]), vocab, max_tokens=9)
    assert capped.shape == (1, 9)


def test_one_clamp_rule_and_the_segmenter_reports_what_it_uses(tiny_model_dir, tiny_segmenter):
    from segmenter import Segmenter

    assert clamp_window(WINDOW, OVERLAP, 512) == (254, 64)
    assert clamp_window(254, 64, 64) == (62, 31) and clamp_window(10, 8, 512) == (10, 5) and clamp_window(3, 2, 512) == (3, 2)
    assert clamp_window(*clamp_window(254, 200, 64), 64) == clamp_window(254, 200, 64)
    seg = Segmenter(tiny_model_dir)  # the defaults (254, 64) on a model of 64 positions
    assert (seg.window, seg.overlap) == (62, 31)
    assert (tiny_segmenter.window, tiny_segmenter.overlap) == (30, 8)
    # Reading with the values it reports gives the very scores it reads.
    mine = seg.score_texts(TEXTS)
    again = score_texts(seg.reader, TEXTS, seg.window, seg.overlap)
    assert all(np.array_equal(a.scores, b.scores) for a, b in zip(mine, again))


def test_atomic_writer_leaves_the_old_file_on_failure(tmp_path):
    target = tmp_path / "x.txt"
    write_text_atomic(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as temporary:
            temporary.write_text("half", encoding="utf-8")
            raise RuntimeError("killed mid-write")
    assert target.read_text(encoding="utf-8") == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]
    write_text_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


@pytest.fixture
def inputs(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("我们的国家是一个大国。\n", encoding="utf-8")
    gold = tmp_path / "gold_test.txt"
    gold.write_text("我们 的 国家\n", encoding="utf-8")
    return raw, gold


@pytest.mark.parametrize("command", ["segment", "heads", "heads --show", "selftrain", "distill", "bench", "ray", "adapt", "refine",
                                     "calibrate", "wwm-ref"])
@pytest.mark.parametrize("model", ["missing", "empty", "file"])
def test_every_command_turns_a_bad_model_into_one_line(command, model, inputs, tmp_path, capsys):
    """A missing folder, a folder that is no model, a file: one line `segmenter …: error: …`, exit 2."""
    from segmenter.cli import main

    raw, gold = inputs
    path = {"missing": tmp_path / "no-model", "empty": tmp_path / "empty", "file": raw}[model]
    (tmp_path / "empty").mkdir(exist_ok=True)
    argv = {
        "segment": ["-m", path, raw],
        "heads": ["heads", "-m", path, "--raw", raw, "--out", tmp_path / "p.json"],
        "heads --show": ["heads", "-m", path, "--show", "我们的国家", "--png", tmp_path / "h.png"],
        "selftrain": ["selftrain", "-m", path, "--raw", raw, "--out", tmp_path / "st"],
        "distill": ["distill", "-m", path, "--raw", raw, "--out", tmp_path / "ds"],
        "bench": ["bench", "-m", path, "--gold", gold, "--systems", "segmenter:default", "--in-process"],
        "ray": ["ray", "-m", path, raw, tmp_path / "ray-out"],
        "adapt": ["adapt", "-m", path, "--raw", raw, "--out", tmp_path / "adapted"],
        "refine": ["refine", "-m", path, "--raw", raw, "--out", tmp_path / "refined"],
        "calibrate": ["calibrate", "-m", path, "--gold", gold, "--out", tmp_path / "calibrated"],
        "wwm-ref": ["wwm-ref", "-m", path, "--tokenizer", tmp_path / "no-tokenizer", raw, tmp_path / "ref.txt"],
    }[command]
    if command == "ray":
        pytest.importorskip("ray")
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("segmenter") and ": error: " in err and str(path) in err, err


def test_commands_without_a_model_refuse_bad_inputs_early(tmp_path, capsys):
    from segmenter.cli import main

    assert main(["convert-e5", "--out", str(tmp_path / "e5"), "--source", str(tmp_path / "none.bin")]) == 2
    assert "--source" in capsys.readouterr().err and not (tmp_path / "e5").exists()
    assert main(["pretrain", "--out", str(tmp_path / "run"), "--resume"]) == 2
    assert "no checkpoint" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command, new, old, dest",
    [
        ("pretrain", ["--raw", "r.txt", "--gold", "g.txt", "--gold-sentences", "5"],
         ["--corpus", "r.txt", "--eval-gold", "g.txt", "--eval-gold-limit", "5"], ("corpus", "eval_gold", "eval_gold_limit")),
        ("selftrain", ["--raw", "r.txt", "--gold", "g.txt", "--gold-sentences", "5"],
         ["--raw", "r.txt", "--dev", "g.txt", "--dev-sentences", "5"], ("raw", "dev", "dev_sentences")),
    ],
)
def test_old_option_names_still_parse_and_stay_out_of_help(command, new, old, dest):
    from segmenter.cli import _parser_for

    parser, _ = _parser_for(command)
    required = ["--out", "o", "-m", "m"] if command == "selftrain" else ["--out", "o"]
    parsed = [parser.parse_args(required + argv) for argv in (new, old)]
    assert [[getattr(p, name) for name in dest] for p in parsed] == [[["r.txt"], "g.txt", 5]] * 2
    help_text = parser.format_help()
    hidden = [flag for flag in old if flag.startswith("--") and flag not in new]
    assert "--gold-sentences" in help_text and not [f for f in hidden if re.search(re.escape(f) + r"(?![\w-])", help_text)]


def test_distill_takes_the_shared_option_names():
    """distill: -m the teacher (old --teacher), --gold FILE… / --gold-sentences (old --dev /
    --dev-sentences), hidden from --help like every old name."""
    from segmenter.cli import _parser_for

    parser, _ = _parser_for("distill")
    new = parser.parse_args(["--out", "o", "--raw", "r.txt", "-m", "t", "--gold", "a.txt", "b.txt", "--gold-sentences", "5"])
    old = parser.parse_args(["--out", "o", "--raw", "r.txt", "--teacher", "t", "--dev", "a.txt", "b.txt", "--dev-sentences", "5"])
    assert [(p.teacher, p.dev, p.dev_sentences) for p in (new, old)] == [("t", ["a.txt", "b.txt"], 5)] * 2
    assert parser.parse_args(["--out", "o", "--raw", "r.txt"]).teacher == "default"
    help_text = parser.format_help()
    assert "--gold-sentences" in help_text and not re.search(r"--(dev|teacher)(?![\w-])", help_text)


def _top_level_names(path) -> set[str] | None:
    """The names a module's source binds at its top level (defs, classes, assignments, imports,
    inside top-level if/try blocks too); None when it has a module __getattr__ (names made lazily)."""
    import ast

    names: set[str] = set()
    pending = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return None
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            pending += node.body + node.orelse + getattr(node, "finalbody", [])
            pending += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
    return names


def test_every_import_of_a_segmenter_name_finds_it():
    """Every `from segmenter… import name` in the package, the tests and the benchmark scripts
    names a module of the package or something its module binds (read from the source, nothing
    imported): a function moved to another module leaves no caller behind, not even a lazy import
    in a benchmark that no test runs (two did, when wordstats.py was split)."""
    import ast

    modules = module_names(REPO / "segmenter")
    bound = {name: _top_level_names(path) for name, path in modules.items()}
    files = sorted((REPO / "segmenter").rglob("*.py")) + sorted((REPO / "tests").glob("*.py")) + sorted(
        (REPO / "benchmarks").glob("*.py"))
    missing = []
    for path in files:
        module = next((name for name, p in modules.items() if p == path), None)
        package = (module if path.name == "__init__.py" else module.rpartition(".")[0]) if module else ""
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            if base != "segmenter" and not base.startswith("segmenter."):
                continue
            if base not in modules:
                missing.append(f"{path.relative_to(REPO)}:{node.lineno}: no module {base}")
                continue
            for alias in node.names:
                known = bound[base]
                if alias.name != "*" and f"{base}.{alias.name}" not in modules and known is not None \
                        and alias.name not in known:
                    missing.append(f"{path.relative_to(REPO)}:{node.lineno}: {base} has no {alias.name}")
    assert not missing, "imports of names that are not there:\n" + "\n".join(missing)


def test_the_jieba_mixin_reads_only_what_a_segmenter_has(tiny_segmenter):
    """jieba_calls.JiebaCalls is a mixin of api.Segmenter: every `self.NAME` it reads is a
    method of its own or an attribute a Segmenter has (its docstring names them), so renaming one
    in api.py cannot leave the jieba calls reading a name that is gone."""
    import ast

    from segmenter import jieba_calls

    tree = ast.parse((REPO / "segmenter" / "jieba_calls.py").read_text(encoding="utf-8"))
    read = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"}
    own = set(vars(jieba_calls.JiebaCalls))
    assert read - own, "the mixin reads nothing of its class: it needs no mixin"
    missing = {name for name in read - own if not hasattr(tiny_segmenter, name)}
    assert not missing, f"JiebaCalls reads {sorted(missing)}, which a Segmenter lacks"
    documented = set(re.findall(r"`(\w+)`", jieba_calls.__doc__))
    assert read - own <= documented, f"undocumented in jieba_calls' docstring: {sorted(read - own - documented)}"
