"""The rules as data: rules.toml holds every list, threshold and standard's setting, each with
its origin; Rules and Conventions are its rows and params; no Han character is left inline in
the runtime's code but in messages and descriptions."""
import ast
import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import segmenter
from segmenter.standards import data
from segmenter.standards.conventions import Conventions, apply_conventions
from segmenter.standards.levels import DEFAULT_STANDARD, STANDARDS, Rules
from segmenter.standards.rules import TABLE
from segmenter.text.runs import split_runs
from segmenter.words.assembly import split_words

PACKAGE = Path(segmenter.__file__).parent
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
BUILD_TIME = {"train", "bench", "cli", "analyse", "integrations", "scale"}  # not the runtime
MAX_HAN = 100


def runtime_han_literals() -> dict[str, int]:
    """Han characters in the string constants of each runtime module, docstrings left out."""
    counts = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in BUILD_TIME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        count = sum(len(HAN.findall(node.value)) for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings)
        if count:
            counts[str(relative)] = count
    return counts


def test_runtime_code_holds_few_han_literals():
    counts = runtime_han_literals()
    assert sum(counts.values()) <= MAX_HAN, counts
    # the rule code takes every Han character from the data
    assert not {name for name in counts if name.startswith("standards/")}, counts


def test_the_data_file_ships_with_the_package():
    assert data.DATA_FILE == PACKAGE / "standards" / "rules.toml" and data.DATA_FILE.is_file()


def test_rules_and_conventions_are_the_data_files_rows_and_params():
    assert [row.name for row in data.ROWS] == [row.name for row in TABLE] == [f.name for f in fields(Rules)]
    assert [f.name for f in fields(Conventions)] == [name for row in data.ROWS for name in row.params]
    for f in fields(Conventions):  # defaults from the data file, typed as their values
        assert f.default == data.PARAMS[f.name] and type(f.default).__name__ == f.type, f.name
    for f in fields(Rules):
        assert f.default == next(row.at[DEFAULT_STANDARD] for row in TABLE if row.name == f.name), f.name
    for name, standard in STANDARDS.items():
        assert standard.about == data.STANDARD_DATA[name]["about"]
        assert standard.rules == Rules(**{row.name: row.at[name] for row in data.ROWS})


def test_every_list_threshold_and_setting_says_where_it_came_from():
    for row in data.ROWS:
        assert set(row.origins) == {"at", *row.params}, row.name
        assert all(isinstance(origin, str) and len(origin) > 20 for origin in row.origins.values()), row.name
    assert all(len(entry["origin"]) > 20 for entry in data.STANDARD_DATA.values())
    coarse = next(row for row in data.ROWS if row.name == "coarse_suffixes")
    assert "pku_train_pd199801" in coarse.origins["at"] and "supervision" in coarse.origins["at"]


def test_measure_chars_are_the_classifiers_and_the_measure_units():
    c = Conventions()
    assert c.measure_chars == c.classifiers + c.measure_units
    assert not set(c.classifiers) & set(c.measure_units)
    assert Conventions(classifiers="", measure_units="").measure_chars == ""


def words_after(words: list[str], conventions: Conventions, rules=0.5) -> list[str]:
    text = "".join(words)
    ends = np.cumsum([len(w) for w in words])
    return split_words(text, apply_conventions(text, split_runs(text), ends, conventions, rules))


def test_the_lists_alone_decide_no_han_character_in_the_code():
    assert words_after(["第", "十", "五", "次"], Conventions()) == ["第十五", "次"]
    # the ordinal mark is data: without it 第 stays a word of its own, digits or numerals after it
    assert words_after(["第", "十", "五", "次"], Conventions(ordinal_marks="")) == ["第", "十五", "次"]
    assert words_after(["第", "6"], Conventions(ordinal_marks="")) == ["第", "6"]
    assert words_after(["百分之", "四十二", "点", "八"], Conventions(decimal_marks="")) == ["百分之四十二", "点", "八"]
    assert words_after(["万", "一"], Conventions()) == ["万", "一"]  # 万一: no number
    assert words_after(["万", "一"], Conventions(unleading_powers="")) == ["万一"]
    # 一 is the counts' one_numeral: 这|一 splits at every level, 一个 stays at the default (PKU)
    assert words_after(["这一", "一个", "一年"], Conventions()) == ["这", "一", "一个", "一", "年"]
    assert words_after(["这一", "一个", "一年"], Conventions(one_numeral="")) == ["这一", "一个", "一年"]


def test_a_misspelt_or_missing_key_of_the_data_file_is_refused(tmp_path):
    text = data.DATA_FILE.read_text(encoding="utf-8")
    for old, new, message in (('search = []\n', 'serach = []\n', "unknown keys"),
                              ('at = { pku = true, msr = false, ud = true, general = false }',
                               'at = { pku = true, msr = false, general = false }', "a setting for each"),
                              ('needs = "join_suffixes"', 'needs = "join_dates"', "no row before it")):
        assert old in text
        path = tmp_path / "rules.toml"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            data.load(path)
    path.write_text(text, encoding="utf-8")
    assert data.load(path)[2] == data.ROWS
