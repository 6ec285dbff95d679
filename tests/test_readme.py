"""README.md is true as written: its Python blocks run, its `segmenter` command lines exit 0, its
import lines import, its install commands name this distribution, its benchmark tables are the
benchmark's own files, and its layout of segmenter/ names every module there is. Also: the
package data ships each large file once.

Each Python block runs as a script (`python block.py`, so `if __name__ == "__main__":` holds) in a
temporary folder holding the small input files the README names (input.txt, userdict.txt,
corpus/, ...). A block that imports a module of an absent extra is skipped with that reason; a
block marked `<!-- readme-test: skip (reason) -->` on the line before it is skipped with its
reason. Bash blocks: every line that runs `segmenter` runs, in order, in one temporary folder per
block, except the lines that train or build a model (and those that read what such a line writes),
and those that need a Ray cluster or a GPU; `pip install` steps are left out. Running blocks is
`slow` (subprocesses, the shipped models, Ray: about a minute and a half on 2 cores).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO

README = REPO / "README.md"
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>.+)\)\s*-->")
# Commands that train or build a model, or read the gold corpora: their lines are not run.
BUILDS = {"pretrain", "convert-e5", "heads", "selftrain", "distill", "refine", "ngrams", "bench", "export-onnx",
          "calibrate"}
NEEDS = {"--address": "needs a running Ray cluster", "--gpus-per-actor": "needs a GPU"}
OUTPUT_OPTIONS = ("--out", "-o", "--output")


@dataclass
class Block:
    language: str
    line: int  # 1-based line of the opening fence
    code: str
    skip: str | None  # reason from a readme-test marker

    @property
    def name(self) -> str:
        return f"{self.language}-line{self.line}"


def fenced_blocks(text: str) -> list[Block]:
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        start = i
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP_MARK.search(before)
        blocks.append(Block(fence.group(1), start + 1, "\n".join(lines[start + 1 : end]) + "\n",
                            marker.group("reason") if marker else None))
        i = end + 1
    return blocks


BLOCKS = fenced_blocks(README.read_text(encoding="utf-8"))


def strip_comment(line: str) -> str:
    """The line without its `# comment` (a # outside quotes, after a space or at the start)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def command_lines(code: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines dropped."""
    commands, pending = [], ""
    for raw in code.splitlines():
        line = strip_comment(raw)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            commands.append(line)
    return commands


def segmenter_calls(command: str) -> list[list[str]]:
    """The argv of each `segmenter …` stage of a command (stages split at && and |)."""
    calls = []
    for stage in re.split(r"&&|\|", command):
        words = shlex.split(stage)
        if words and words[0] == "segmenter":
            calls.append(words)
    return calls


def subcommand(argv: list[str]) -> str | None:
    from segmenter.cli import COMMANDS

    return argv[1] if len(argv) > 1 and argv[1] in COMMANDS else None


def outputs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word in OUTPUT_OPTIONS]


def plan_bash(code: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(commands to run in order, [(command, why it is not run)]) of a bash block."""
    run, skipped, unavailable = [], [], set()
    for command in command_lines(code):
        # `pip install …` steps are the user's; the rest of such a line runs.
        parts = [p.strip() for p in command.split("&&") if not p.strip().startswith("pip ")]
        command = " && ".join(parts)
        calls = segmenter_calls(command)
        if not calls:
            continue
        argv = [word for call in calls for word in call]
        reason = None
        if any(subcommand(call) in BUILDS for call in calls):
            reason = f"`segmenter {next(subcommand(c) for c in calls if subcommand(c) in BUILDS)}` trains or builds"
        elif any(word in unavailable for word in argv):
            reason = "reads what a line that is not run writes"
        else:
            reason = next((why for option, why in NEEDS.items() if option in argv), None)
        if reason is None and any(subcommand(call) == "ray" for call in calls) and not has_module("ray"):
            reason = "Ray Data is not installed (the ray extra)"
        if reason is None:
            run.append(command)
        else:
            skipped.append((command, reason))
            unavailable.update(out for call in calls for out in outputs(call))
    return run, skipped


def has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def missing_extra(code: str) -> str | None:
    """Why a Python block cannot run here: a module of an extra that is not installed."""
    from segmenter.cli import EXTRAS

    for name in re.findall(r"^\s*(?:import|from)\s+(\w+)", code, flags=re.MULTILINE):
        if name in EXTRAS and not has_module(name):
            return f"{name} is not installed (the {EXTRAS[name]} extra)"
    return None


def user_dictionary_sample() -> str:
    """The sample dictionary of README "User dictionaries" (the unlabelled block in that section)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### User dictionaries"):]
    return next(b.code for b in fenced_blocks(section) if b.language == "")


RAW = ["共同创造美好的新世纪。", "我爱北京天安门。", "他说明天下午三点开会，GPT-4模型和Python。",
       "中华人民共和国成立了。"]


def make_inputs(folder: Path) -> None:
    """The files README's blocks read, small."""
    lines = "\n".join(RAW) + "\n"
    for name in ("input.txt", "a.txt", "b.txt", "corpus/a.txt", "corpus/b.txt", "corpus/sub/c.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(lines, encoding="utf-8")
    # a domain term between varied neighbours: adapt adds it, so README's `adapt --refine` refines
    term = "".join(f"{a}龘靐齉{b}。\n" for a, b in zip("我你他她它们", "说看来去做想"))
    (folder / "my_domain.txt").write_text(lines * 5 + term, encoding="utf-8")
    sample = user_dictionary_sample()
    (folder / "userdict.txt").write_text(sample, encoding="utf-8")
    (folder / "dict.txt").write_text(sample, encoding="utf-8")


def run_env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "PYTHONPATH": str(REPO)}


PYTHON_BLOCKS = [b for b in BLOCKS if b.language == "python"]
BASH_BLOCKS = [b for b in BLOCKS if b.language == "bash"]


def test_readme_has_the_blocks_this_file_runs():
    assert len(PYTHON_BLOCKS) >= 4 and len(BASH_BLOCKS) >= 5
    assert len([b for b in BLOCKS if b.skip]) <= 2, "keep readme-test skips few"
    assert any(plan_bash(b.code)[0] for b in BASH_BLOCKS)


def test_bash_plan_runs_segmenter_lines_and_leaves_out_training_and_clusters():
    code = (
        'pip install . && echo "好" | segmenter   # install, then segment\n'
        "segmenter adapt --raw my.txt --out my_model\n"
        "segmenter refine -m my_model --raw my.txt \\\n    --out my_refined\n"
        "segmenter -m my_refined my.txt\n"
        "segmenter ray 'c/*.txt' out/ --address auto\n"
        "cat input.txt | segmenter -d \"#\"\n"
    )
    run, skipped = plan_bash(code)
    assert run == ['echo "好" | segmenter', "segmenter adapt --raw my.txt --out my_model",
                   'cat input.txt | segmenter -d "#"']
    assert [command.split()[:2] for command, _ in skipped] == [
        ["segmenter", "refine"], ["segmenter", "-m"], ["segmenter", "ray"]]


@pytest.mark.slow
@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.name)
def test_python_block_runs(block, tmp_path):
    if block.skip:
        pytest.skip(block.skip)
    if reason := missing_extra(block.code):
        pytest.skip(reason)
    make_inputs(tmp_path)
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=run_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"README line {block.line}:\n{block.code}\n{done.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("block", [b for b in BASH_BLOCKS if plan_bash(b.code)[0] or plan_bash(b.code)[1]],
                         ids=lambda b: b.name)
def test_bash_block_segmenter_lines_run(block, tmp_path):
    if block.skip:
        pytest.skip(block.skip)
    run, skipped = plan_bash(block.code)
    if not run:
        pytest.skip("; ".join(sorted({why for _, why in skipped})))
    make_inputs(tmp_path)
    for command in run:
        done = subprocess.run(["bash", "-c", "set -o pipefail; " + command], cwd=tmp_path, env=run_env(),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"README line {block.line}: {command}\n{done.stderr[-3000:]}"


IMPORT_LINE = re.compile(
    r"(?:^|`)[ \t]*(from segmenter(?:\.\w+)* import \w+(?:, \w+)*|import segmenter(?:\.\w+)*(?: as \w+)?)",
    re.MULTILINE)


def test_readme_import_lines_work():
    lines = sorted(set(IMPORT_LINE.findall(README.read_text(encoding="utf-8"))))
    assert "from segmenter.scale.ray import SegmentBatch" in lines and "import segmenter as jieba" in lines
    for line in lines:
        exec(compile(line, "README.md", "exec"), {})


def test_the_old_ray_module_names_the_new_one():
    with pytest.raises(ImportError, match=re.escape("from segmenter.scale.ray import SegmentBatch")):
        import segmenter.ray  # noqa: F401


def pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def distribution() -> tuple[str, set[str]]:
    project = pyproject()["project"]
    return project["name"], set(project["optional-dependencies"])


def test_install_commands_name_this_distribution_and_its_extras():
    """README and every message in segmenter/ name this distribution (not `segmenter`, another
    project on the public index) and extras that pyproject.toml defines."""
    from segmenter.cli import EXTRAS

    name, extras = distribution()
    assert name != "segmenter" and set(EXTRAS.values()) <= extras
    texts = {"README.md": README.read_text(encoding="utf-8")}
    texts.update({str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in (REPO / "segmenter").rglob("*.py")})
    requirement = re.compile(r"pip install (?:-e )?\\?[\"']?([\w.-]+)\[([\w,{}]+)\]")
    found = 0
    for where, text in texts.items():
        assert not re.search(r"pip install \\?[\"']?segmenter(?![\w-])", text), f"{where} installs `segmenter`"
        for dist, wanted in requirement.findall(text):
            found += 1
            assert dist in (name, "."), f"{where}: pip install {dist}[{wanted}]"
            assert wanted == "{extra}" or set(wanted.split(",")) <= extras, f"{where}: unknown extra [{wanted}]"
    assert found >= 5


def test_readme_benchmark_tables_are_the_benchmark_files():
    """The README's figures are copied from benchmark output, never typed: its benchmark section
    is benchmarks/results/test.md and its stage table is benchmarks/results/stages.md."""
    readme = README.read_text(encoding="utf-8")
    for name in ("test.md", "stages.md"):
        table = (REPO / "benchmarks" / "results" / name).read_text(encoding="utf-8").strip()
        assert table in readme, f"README's copy of benchmarks/results/{name} differs from the file"


def test_package_data_holds_each_large_file_once():
    """The wheel takes package data as files: a symlink becomes a second copy (the 26 MiB word
    table was shipped twice that way). No symlinks, and no two large files alike."""
    import hashlib

    patterns = pyproject()["tool"]["setuptools"]["package-data"]["segmenter"]
    files = sorted({path for pattern in patterns for path in (REPO / "segmenter").glob(pattern)})
    assert any(path.name == "ngrams.npz" for path in files)
    assert not [str(path) for path in files if path.is_symlink()]
    seen: dict[str, Path] = {}
    for path in files:
        if path.is_file() and path.stat().st_size > 2**20:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest not in seen, f"{path} is a copy of {seen[digest]}"
            seen[digest] = path


def test_readme_layout_lists_every_module_and_no_other():
    """README's layout of segmenter/ names each module directly in the package (name.py) and each
    subpackage (name/), and nothing that is not there: a module split or moved shows in the
    listing, or this fails."""
    text = README.read_text(encoding="utf-8")
    start = text.index("```\nsegmenter/\n") + len("```\n")
    block = text[start : text.index("```", start)]
    listed = set(re.findall(r"(?<![/\w])([a-z_0-9]+\.py)\b", block))  # not integrations/wwm.py
    folders = set(re.findall(r"^  ([a-z_0-9]+)/", block, re.M))
    package = REPO / "segmenter"
    modules = {path.name for path in package.glob("*.py")}
    subpackages = {path.name for path in package.iterdir() if path.is_dir() and not path.name.startswith("__")}
    assert listed - {"__init__.py", "__main__.py"} <= modules, f"README lists modules that are not there: {sorted(listed - modules)}"
    assert modules - {"__main__.py"} <= listed, f"README's layout leaves out: {sorted(modules - listed - {'__main__.py'})}"
    assert folders == subpackages, f"README's folders {sorted(folders)} against the package's {sorted(subpackages)}"
