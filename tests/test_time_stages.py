"""benchmarks/time_stages.py: every stage timed, the stages adding up to the pass, jieba beside it."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT.parent / "shared" / "corpora" / "gold" / "pku_dev.txt"


@pytest.mark.slow
def test_time_stages_prints_every_stage_and_they_add_up():
    if not GOLD.exists():
        pytest.skip(f"shared corpus {GOLD} not present")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "time_stages.py"), "--gold", str(GOLD),
                           "--limit", "60", "--repeats", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = dict(re.findall(r"^\| (\w+) \| ([\d.]+) \|", done.stdout, flags=re.M))
    assert set(rows) == {"plan", "graph", "windows", "lookups", "decoder", "words", "other"}
    total = float(re.search(r"\*\*segmenter, all\*\* \| \*\*([\d.]+)\*\*", done.stdout).group(1))
    assert float(rows["graph"]) > 0 and float(rows["lookups"]) > 0
    assert abs(sum(map(float, rows.values())) - total) <= 0.1 * len(rows)  # rounding of each row
    assert re.search(r"segmenter's time over jieba's: [\d.]+", done.stdout)
