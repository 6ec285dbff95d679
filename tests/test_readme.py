"""README.md and docs/ are true as written: their Python blocks run, their `segmenter` command
lines exit 0, their import lines import, their install commands name this distribution, their
links resolve, the README's headline table is the benchmark files' own figures, and
docs/development.md names each part of the package. Also: the README stays short (<= 300 lines)
with the rest in docs/ (>= 5 pages), and the package data ships each large file once.

Each Python block runs as a script (`python block.py`, so `if __name__ == "__main__":` holds) in
a temporary folder holding the small input files the pages name (input.txt, userdict.txt,
corpus/, ...), with the interpreter that runs the tests. A block that imports a module of an
absent extra is skipped with that reason; a block marked `<!-- readme-test: skip (reason) -->`
on the line before it is skipped with its reason. Bash blocks: every line that runs `segmenter`
runs, in order, in one temporary folder per block, except the lines that train or build a model
(and those that read what such a line writes), those that need a Ray cluster or a GPU, and
those that follow a file until stopped (`tail -f`); `pip install` steps are left out. Each `segmenter` (and `python`) there runs as `sys.executable -m
segmenter` (`sys.executable`), so an unactivated virtual environment tests itself, not whatever
is on PATH. Running blocks is `slow` (subprocesses, the shipped models, Ray).
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
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
RESULTS = REPO / "benchmarks" / "results"
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>.+)\)\s*-->")
# Commands that train or build a model, or read the gold corpora: their lines are not run.
BUILDS = {"pretrain", "convert-e5", "heads", "selftrain", "distill", "refine", "ngrams", "bench", "export-onnx",
          "calibrate"}
NEEDS = {"--address": "needs a running Ray cluster", "--gpus-per-actor": "needs a GPU"}
SERVERS = {"serve"}  # commands that run until stopped: not run
FOLLOWS = re.compile(r"(^|&&|\|)\s*tail\s+(-\w*[fF]|--follow)")  # `tail -f FILE | segmenter`: runs until stopped
OUTPUT_OPTIONS = ("--out", "-o", "--output")


@dataclass
class Block:
    page: str  # the file's path from the repository root
    language: str
    line: int  # 1-based line of the opening fence
    code: str
    skip: str | None  # reason from a readme-test marker

    @property
    def name(self) -> str:
        return f"{Path(self.page).stem}-{self.language}-line{self.line}"


def fenced_blocks(text: str, page: str = "README.md") -> list[Block]:
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
        blocks.append(Block(page, fence.group(1), start + 1, "\n".join(lines[start + 1 : end]) + "\n",
                            marker.group("reason") if marker else None))
        i = end + 1
    return blocks


def page_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


BLOCKS = [b for page in PAGES for b in fenced_blocks(page_text(page), str(page.relative_to(REPO)))]


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


STAGE_SPLIT = re.compile(r"&&|\|")


def segmenter_calls(command: str) -> list[list[str]]:
    """The argv of each `segmenter …` stage of a command (stages split at && and |)."""
    calls = []
    for stage in STAGE_SPLIT.split(command):
        words = shlex.split(stage)
        if words and words[0] == "segmenter":
            calls.append(words)
    return calls


# A stage's first word: at the start of the command or after && or |, spaces kept.
STAGE_COMMAND = re.compile(r"(^|&&|\|)(\s*)(segmenter|python)(?=\s|$)")


def through_this_interpreter(command: str, python: str = sys.executable) -> str:
    """The command with each stage's `segmenter` run as `PYTHON -m segmenter` and `python` as
    PYTHON: the interpreter that runs the tests, whatever is on PATH."""
    def replace(match: re.Match) -> str:
        program = shlex.quote(python) + (" -m segmenter" if match.group(3) == "segmenter" else "")
        return f"{match.group(1)}{match.group(2)}{program}"

    return STAGE_COMMAND.sub(replace, command)


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
        elif any(subcommand(call) in SERVERS for call in calls):
            reason = "runs a server until it is stopped"
        elif FOLLOWS.search(command):
            reason = "follows a file until it is stopped"
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
    """The sample dictionary of README's "User dictionaries" (the unlabelled block in that section)."""
    text = page_text(README)
    section = text[text.index("## User dictionaries"):]
    return next(b.code for b in fenced_blocks(section) if b.language == "")


RAW = ["共同创造美好的新世纪。", "我爱北京天安门。", "他说明天下午三点开会，GPT-4模型和Python。",
       "中华人民共和国成立了。"]


def make_inputs(folder: Path) -> None:
    """The files the pages' blocks read, small."""
    lines = "\n".join(RAW) + "\n"
    for name in ("input.txt", "a.txt", "b.txt", "corpus/a.txt", "corpus/b.txt", "corpus/sub/c.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(lines, encoding="utf-8")
    # a domain term between varied neighbours: adapt adds it, so `adapt --refine` refines
    term = "".join(f"{a}龘靐齉{b}。\n" for a, b in zip("我你他她它们", "说看来去做想"))
    (folder / "my_domain.txt").write_text(lines * 5 + term, encoding="utf-8")
    sample = user_dictionary_sample()
    (folder / "userdict.txt").write_text(sample, encoding="utf-8")
    (folder / "dict.txt").write_text(sample, encoding="utf-8")
    (folder / "old.txt").write_text(lines, encoding="gb18030")  # `segmenter --encoding gb18030 old.txt`


def run_env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "PYTHONPATH": str(REPO)}


PYTHON_BLOCKS = [b for b in BLOCKS if b.language == "python"]
BASH_BLOCKS = [b for b in BLOCKS if b.language == "bash"]


def test_readme_is_short_and_the_rest_is_in_docs():
    readme = page_text(README)
    assert len(readme.splitlines()) <= 300, f"README.md has {len(readme.splitlines())} lines (at most 300)"
    pages = sorted(DOCS.glob("*.md"))
    assert len(pages) >= 5, f"docs/ has {len(pages)} pages (at least 5)"
    for page in pages:
        assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"


def test_readme_keeps_the_set_up_commands_of_a_fresh_machine():
    """The two commands that work on a fresh machine: install and segment on the embedded
    model; run the tests exactly as .ci/run does."""
    readme = page_text(README)
    assert 'pip install . && echo "共同创造美好的新世纪" | segmenter' in readme
    ci = page_text(REPO / ".ci" / "run")
    test_command = next(line for line in ci.splitlines() if line.startswith("pip install"))
    assert test_command == 'pip install torch==2.13.0 && pip install -e ".[test]" && python -m pytest'
    assert test_command in readme


def test_readme_names_only_the_models_that_ship():
    """`accurate` was retired from the wheel: the README offers no `-m accurate` or
    Segmenter("accurate")."""
    readme = page_text(README)
    assert not re.search(r"-m accurate|Segmenter\(\s*[\"']accurate", readme)
    assert "Segmenter(\"fast\")" in readme or "-m fast" in readme


def test_the_pages_have_the_blocks_this_file_runs():
    in_readme = [b for b in BLOCKS if b.page == "README.md"]
    assert len([b for b in in_readme if b.language == "python"]) >= 3
    assert len([b for b in in_readme if b.language == "bash"]) >= 3
    assert len(PYTHON_BLOCKS) >= 6 and len(BASH_BLOCKS) >= 8
    assert len([b for b in BLOCKS if b.skip]) <= 2, "keep readme-test skips few"
    assert any(plan_bash(b.code)[0] for b in in_readme if b.language == "bash")


def test_bash_plan_runs_segmenter_lines_and_leaves_out_training_and_clusters():
    code = (
        'pip install . && echo "好" | segmenter   # install, then segment\n'
        "segmenter adapt --raw my.txt --out my_model\n"
        "segmenter refine -m my_model --raw my.txt \\\n    --out my_refined\n"
        "segmenter -m my_refined my.txt\n"
        "segmenter ray 'c/*.txt' out/ --address auto\n"
        "cat input.txt | segmenter -d \"#\"\n"
        "segmenter serve --port 8000\n"
        "tail -f app.log | segmenter   # follows the file\n"
        "segmenter --encoding gb18030 old.txt | tail -n 2\n"
    )
    run, skipped = plan_bash(code)
    assert run == ['echo "好" | segmenter', "segmenter adapt --raw my.txt --out my_model",
                   'cat input.txt | segmenter -d "#"', "segmenter --encoding gb18030 old.txt | tail -n 2"]
    assert [command.split()[:2] for command, _ in skipped] == [
        ["segmenter", "refine"], ["segmenter", "-m"], ["segmenter", "ray"], ["segmenter", "serve"], ["tail", "-f"]]


def test_commands_run_through_the_interpreter_that_runs_the_tests():
    python = "/venv/bin/python3"
    assert through_this_interpreter('echo "好" | segmenter -d "/"', python) == \
        'echo "好" | /venv/bin/python3 -m segmenter -d "/"'
    assert through_this_interpreter("segmenter a.txt && python -c 'print(1)'", python) == \
        "/venv/bin/python3 -m segmenter a.txt && /venv/bin/python3 -c 'print(1)'"
    # a word that merely starts with the name, or an argument, is left alone
    assert through_this_interpreter("segmenter-heads x | cat segmenter.txt", python) == \
        "segmenter-heads x | cat segmenter.txt"
    assert through_this_interpreter("segmenter x", "/a b/python") == "'/a b/python' -m segmenter x"


def printed(code: str) -> list[str] | None:
    """What a Python block says it prints: the `# output` line under each `print(...)` line, or
    None where some print has no such line (then only its running is checked)."""
    lines = code.splitlines()
    prints = [i for i, line in enumerate(lines) if line.startswith("print(")]
    said = [lines[i + 1][2:] for i in prints if i + 1 < len(lines) and lines[i + 1].startswith("# ")]
    return said if prints and len(said) == len(prints) else None


def console(code: str) -> list[tuple[str, list[str]]]:
    """The `$ command` lines of an unlabelled block, each with the output lines under it."""
    sessions = []
    for line in code.splitlines():
        if line.startswith("$ "):
            sessions.append((line[2:], []))
        elif sessions:
            sessions[-1][1].append(line)
    return sessions


CONSOLE_BLOCKS = [b for b in BLOCKS if b.language == "" and console(b.code)]


def test_printed_output_is_read_under_each_print():
    assert printed('print(1)\n# 1\nx = 2\nprint(x)\n# 2\n') == ["1", "2"]
    assert printed("print(1)\nprint(2)\n# 2\n") is None
    assert console("$ echo a\na\n$ true\n") == [("echo a", ["a"]), ("true", [])]
    assert any(printed(b.code) for b in PYTHON_BLOCKS if b.page == "README.md")
    assert len([b for b in CONSOLE_BLOCKS if b.page == "README.md"]) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.name)
def test_python_block_runs(block, tmp_path):
    """It exits 0, and where each print has its output written under it, prints just that."""
    if block.skip:
        pytest.skip(block.skip)
    if reason := missing_extra(block.code):
        pytest.skip(reason)
    make_inputs(tmp_path)
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=run_env(), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{block.page} line {block.line}:\n{block.code}\n{done.stderr[-3000:]}"
    if (said := printed(block.code)) is not None:
        assert done.stdout.splitlines() == said, f"{block.page} line {block.line} prints other output"


@pytest.mark.slow
@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=lambda b: b.name)
def test_console_output_is_what_the_command_prints(block, tmp_path):
    """A `$ command` shown with its output prints that output (run through this interpreter)."""
    make_inputs(tmp_path)
    for command, said in console(block.code):
        done = subprocess.run(["bash", "-c", "set -o pipefail; " + through_this_interpreter(command)], cwd=tmp_path,
                              env=run_env(), capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{block.page} line {block.line}: {command}\n{done.stderr[-3000:]}"
        assert done.stdout.splitlines() == said, f"{block.page} line {block.line}: {command} prints other output"


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
        done = subprocess.run(["bash", "-c", "set -o pipefail; " + through_this_interpreter(command)], cwd=tmp_path,
                              env=run_env(), capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{block.page} line {block.line}: {command}\n{done.stderr[-3000:]}"


STANDARDS_EXAMPLE = "江泽民在上海市签署了两个协议"


@pytest.mark.slow
def test_readme_standards_table_shows_each_standards_words():
    """The "e.g." column of README's table of standards is what each standard writes of one sentence."""
    import segmenter

    rows = table_rows(page_text(README), "| standard | writes | e.g. |")
    assert len(rows) == 4
    for first, cells in rows.items():
        standard = re.match(r"`(\w+)`", first).group(1)
        words = segmenter.Segmenter(standard=standard).segment(STANDARDS_EXAMPLE)
        assert cells[-1] == " ".join(words), f"README's {standard} row; the standard writes {' '.join(words)}"


IMPORT_LINE = re.compile(
    r"(?:^|`)[ \t]*(from segmenter(?:\.\w+)* import \w+(?:, \w+)*|import segmenter(?:\.\w+)*(?: as \w+)?)",
    re.MULTILINE)


def test_import_lines_work():
    lines = sorted({line for page in PAGES for line in IMPORT_LINE.findall(page_text(page))})
    assert "from segmenter.scale.ray import SegmentBatch" in lines and "import segmenter as jieba" in lines
    for line in lines:
        exec(compile(line, "README.md or docs/", "exec"), {})


def test_the_old_ray_module_names_the_new_one():
    with pytest.raises(ImportError, match=re.escape("from segmenter.scale.ray import SegmentBatch")):
        import segmenter.ray  # noqa: F401


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_relative_links_resolve():
    """Every relative link of README.md and docs/ names a file or folder that is there."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page_text(page)):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, broken


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
    """README, docs/ and every message in segmenter/ and tests/ name this distribution (not
    `segmenter`, another project on the public index) and extras that pyproject.toml defines."""
    from segmenter.cli import EXTRAS

    name, extras = distribution()
    assert name != "segmenter" and set(EXTRAS.values()) <= extras
    texts = {str(page.relative_to(REPO)): page_text(page) for page in PAGES}
    for folder in ("segmenter", "tests"):
        texts.update({str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in (REPO / folder).rglob("*.py")
                      if p.name != "test_readme.py"})
    requirement = re.compile(r"pip install (?:-e )?\\?[\"']?([\w.-]+)\[([\w,{}]+)\]")
    found = 0
    for where, text in texts.items():
        assert not re.search(r"pip install \\?[\"']?segmenter(?![\w-])", text), f"{where} installs `segmenter`"
        for dist, wanted in requirement.findall(text):
            found += 1
            assert dist in (name, "."), f"{where}: pip install {dist}[{wanted}]"
            assert wanted == "{extra}" or set(wanted.split(",")) <= extras, f"{where}: unknown extra [{wanted}]"
    assert found >= 5
    extras_line = next(line for line in page_text(README).splitlines() if line.startswith("Extras ("))
    assert set(re.findall(r"`(\w+)`", extras_line)) == extras, "README's list of extras is pyproject.toml's"


# --- the README's headline table: every figure read from a benchmark file -----------------------

HEADLINE_SYSTEMS = (("segmenter `default`", "segmenter:default"), ("segmenter `fast`", "segmenter:fast"),
                    ("jieba (HMM on)", "jieba"), ("pkuseg", "pkuseg"), ("THULAC", "thulac"))
TEST_FILES = ("pku_test", "msr_test", "ud_gsdsimp_test")


def table_rows(text: str, header: str) -> dict[str, list[str]]:
    """{first cell: the other cells} of the markdown table whose header row starts with `header`."""
    lines = text[text.index(header):].splitlines()
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def bare(cell: str) -> str:
    return cell.strip("*")


def headline_table() -> str:
    """F1 on the three test files (test.md), the six dev files' mean (standards_dev.md; fast's
    from default_fast_dev.md), one-thread speed and × jieba (test.md's Speed table), peak memory
    (test.md: the largest of the three runs)."""
    test = page_text(RESULTS / "test.md")
    per_file = {name: table_rows(test[test.index(f"**{name}**"):], "| system | P |") for name in TEST_FILES}
    speed = table_rows(test[test.index("**Speed**"):], "| system | chars/s, 1 thread |")
    standards = table_rows(page_text(RESULTS / "standards_dev.md"), "| rules | pku_dev |")
    students = table_rows(page_text(RESULTS / "default_fast_dev.md"), "| model | layers")
    dev_mean = {"segmenter:default": bare(standards["standard `general`"][6]),
                "segmenter:fast": bare(students["fast"][7]) + " ¹",
                "jieba": bare(standards["jieba"][6])}
    rows = [("| system | PKU test F1 | MSR test F1 | UD test F1 | six dev files' mean F1 | chars/s, 1 thread "
             "| × jieba | peak MiB |"),
            "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for label, system in HEADLINE_SYSTEMS:
        f1 = [bare(per_file[name][system][2]) for name in TEST_FILES]
        peak = max(int(per_file[name][system][7].replace(",", "")) for name in TEST_FILES)
        rows.append(f"| {label} | {' | '.join(f1)} | {dev_mean.get(system, '–')} | {speed[system][0]} "
                    f"| {speed[system][1]} | {peak} |")
    return "\n".join(rows)


def test_readme_headline_table_is_the_benchmark_files():
    """The README's figures are copied from benchmark output, never typed: its headline table is
    what headline_table() reads from benchmarks/results/test.md, standards_dev.md and
    default_fast_dev.md (print it to paste it after a rerun)."""
    assert headline_table() in page_text(README), "README's headline table differs from benchmarks/results/"


def test_docs_stage_table_is_the_benchmark_file():
    table = page_text(RESULTS / "stages.md").strip()
    assert table in page_text(DOCS / "benchmarks.md"), "docs/benchmarks.md's copy of stages.md differs from the file"


WORD_LISTS = {"keep_pairs", "coarse_pairs", "coverb_keeps"}  # two-character words, one after another


def rule_lists() -> dict[str, int]:
    """{list: its entries} of every character or word list in segmenter/standards/rules.toml: a
    character list counts characters, a list of two-character words its words, joined_words the
    words between its spaces."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    data = tomllib.loads((REPO / "segmenter" / "standards" / "rules.toml").read_text(encoding="utf-8"))
    lists = {}
    for row in data["rules"]:
        for field, param in row.get("params", {}).items():
            value = param["value"]
            if isinstance(value, str):
                lists[field] = (len(value.split()) if " " in value else len(value) // 2 if field in WORD_LISTS
                                else len(value))
    return lists


def test_the_count_of_hand_written_lists_is_the_data_files():
    """docs/standards.md's honest paragraph counts the lists and entries of rules.toml as they are."""
    lists = rule_lists()
    said = f"{len(lists)} lists holding {sum(lists.values())} entries"
    assert said in page_text(DOCS / "standards.md"), f"docs/standards.md should say: {said}"


def test_development_page_names_each_part_of_the_package():
    """docs/development.md's layout names each subpackage (`name/`) and each module directly in
    segmenter/ (`name.py`): a stage added, moved or renamed shows there, or this fails."""
    text = page_text(DOCS / "development.md")
    package = REPO / "segmenter"
    folders = {path.name for path in package.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    modules = {path.name for path in package.glob("*.py")}
    missing = sorted(f"{name}/" for name in folders if f"`{name}/`" not in text)
    missing += sorted(name for name in modules if f"`{name}`" not in text)
    assert not missing, f"docs/development.md leaves out: {missing}"
    named = set(re.findall(r"`([a-z_0-9]+)/`", text)) - {"segmenter", "benchmarks", "tests", "docs", "history"}
    assert named <= folders, f"docs/development.md names folders that are not packages: {sorted(named - folders)}"


def test_package_data_holds_each_large_file_once():
    """The wheel takes package data as files: a symlink becomes a second copy (the 26 MiB word
    table was shipped twice that way). No symlinks, and no two large files alike."""
    import hashlib

    package_data = pyproject()["tool"]["setuptools"]["package-data"]
    files = sorted({path for package, patterns in package_data.items() for pattern in patterns
                    for path in REPO.joinpath(*package.split(".")).glob(pattern)})
    assert any(path.name == "ngrams.npz" for path in files)
    assert not [str(path) for path in files if path.is_symlink()]
    seen: dict[str, Path] = {}
    for path in files:
        if path.is_file() and path.stat().st_size > 2**20:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest not in seen, f"{path} is a copy of {seen[digest]}"
            seen[digest] = path
