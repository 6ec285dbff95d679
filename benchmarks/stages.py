"""From a boundary signal to a segmenter: word F1 on the test files at each stage, one table.

Reads benchmark JSON files (benchmarks/run.py --json) and prints a markdown table whose rows
are the stages named on the command line, `LABEL=FILE:SYSTEM`, in order; every figure comes
from those files.

    python benchmarks/stages.py "seed rule=benchmarks/results/history/single_head.json:segmenter:default" …

benchmarks/stages.sh runs it with the rows of benchmarks/results/stages.md.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def parse_stage(stage: str) -> tuple[str, Path, str]:
    """LABEL=FILE:SYSTEM -> (label, file, system); the system may hold colons (segmenter:default)."""
    label, _, rest = stage.rpartition("=")  # a label may hold "=", a file or system does not
    path, _, system = rest.partition(":")
    if not label or not path or not system:
        raise SystemExit(f"stage {stage!r}: expected LABEL=FILE:SYSTEM, e.g. "
                         "'seed rule=benchmarks/results/history/single_head.json:segmenter:default'")
    if not Path(path).is_file():
        raise SystemExit(f"stage {stage!r}: no benchmark JSON file {path}")
    return label, Path(path), system


def main(stages: list[str]) -> None:
    rows, corpora = [], []
    for stage in stages:
        label, path, system = parse_stage(stage)
        data = json.loads(path.read_text(encoding="utf-8"))
        scores = {}
        for record in data["records"]:
            if record["label"] == system and record.get("F1") is not None:
                scores[record["corpus"]] = record["F1"]
                if record["corpus"] not in corpora:
                    corpora.append(record["corpus"])
        if not scores:
            raise SystemExit(f"{path} has no records of {system}")
        rows.append((label, path, scores))
    print("| stage | " + " | ".join(corpora) + " | from |")
    print("|---|" + "--:|" * len(corpora) + "---|")
    for label, path, scores in rows:
        cells = " | ".join(f"{scores[c]:.3f}" if c in scores else "–" for c in corpora)
        print(f"| {label} | {cells} | `{Path(path).name}` |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stages", nargs="+", metavar="LABEL=FILE:SYSTEM",
                        help="one table row: its label, a benchmarks/run.py --json file, a system of it")
    main(parser.parse_args().stages)
