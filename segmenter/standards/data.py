"""rules.toml, the standards' data, read once: the rows of the rule table, each with its lists and
thresholds (`params`) and its setting in each named standard (`at`); the named standards; the
levels' constants. rules.py, conventions.py and levels.py build their tables from these; the
file's header says what each key means.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DATA_FILE = Path(__file__).with_name("rules.toml")
DEFAULT_SEARCH = (False, True)
ROW_KEYS = {"name", "about", "at", "choices", "search", "needs", "decoder", "value", "origin", "params"}
PARAM_KEYS = {"value", "origin"}


@dataclass(frozen=True)
class RowData:
    """One [[rules]] entry of the data file, its values as Python reads them (a `value` row's
    true and false in `at` and `search` become its value and None)."""

    name: str
    about: str
    at: dict  # {standard name: setting}
    params: dict  # {Conventions field: default}, in file order
    origins: dict  # {"at" or a field: where it came from}
    decoder: bool
    choices: tuple | None  # None: any number
    search: tuple
    needs: str | None


def _setting(value, number):
    """A setting as written in the file -> as the rules read it: a row with a `value` reads true
    as that number and false as None (off)."""
    if number is None or not isinstance(value, bool):
        return value
    return number if value else None


def _check_keys(entry: dict, allowed: set, required: set, what: str) -> None:
    """A misspelt key would be a setting silently left at its default: refused."""
    unknown, missing = set(entry) - allowed, required - set(entry)
    if unknown or missing:
        raise ValueError(f"{DATA_FILE.name}: {what}: " + "; ".join(
            part for part in (f"unknown keys {sorted(unknown)}" if unknown else "",
                              f"missing keys {sorted(missing)}" if missing else "") if part))


def _row(entry: dict, standards: tuple[str, ...]) -> RowData:
    name = entry.get("name", "?")
    _check_keys(entry, ROW_KEYS, {"name", "about", "at", "origin"}, f"rule {name!r}")
    for field, param in entry.get("params", {}).items():
        _check_keys(param, PARAM_KEYS, PARAM_KEYS, f"rule {name!r}, parameter {field!r}")
    number = entry.get("value")
    at = {standard: _setting(value, number) for standard, value in entry["at"].items()}
    if set(at) != set(standards):
        raise ValueError(f"{DATA_FILE.name}: rule {name!r} needs a setting for each of {standards}, got {sorted(at)}")
    params = entry.get("params", {})
    return RowData(
        name=name, about=entry["about"], at={standard: at[standard] for standard in standards},
        params={field: param["value"] for field, param in params.items()},
        origins={"at": entry["origin"], **{field: param["origin"] for field, param in params.items()}},
        decoder=entry.get("decoder", False),
        choices=None if number is not None else tuple(entry.get("choices", DEFAULT_SEARCH)),
        search=tuple(_setting(value, number) for value in entry.get("search", DEFAULT_SEARCH)),
        needs=entry.get("needs"))


def load(path: Path = DATA_FILE) -> tuple[dict, dict, tuple[RowData, ...]]:
    """(standards {name: its table}, levels {name: value}, rows in table order) of a data file."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    standards = data["standards"]
    for name, entry in standards.items():
        _check_keys(entry, {"about", "profile_level", "origin"}, {"about", "profile_level", "origin"},
                    f"standard {name!r}")
    for name, entry in data["levels"].items():
        _check_keys(entry, PARAM_KEYS, PARAM_KEYS, f"levels.{name}")
    levels = {name: entry["value"] for name, entry in data["levels"].items()}
    rows = tuple(_row(entry, tuple(standards)) for entry in data["rules"])
    names = [row.name for row in rows]
    for row in rows:
        if row.needs is not None and row.needs not in names[: names.index(row.name)]:
            raise ValueError(f"{DATA_FILE.name}: rule {row.name!r} needs {row.needs!r}, which is no row before it")
    return standards, levels, rows


STANDARD_DATA, LEVELS, ROWS = load()
PARAMS = {field: value for row in ROWS for field, value in row.params.items()}  # Conventions' defaults
