"""The benchmark: a smoke run on a tiny random model and jieba, in-process and through the CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from segmenter.bench import runner as benchmark
from segmenter.bench.runner import BenchConfig, BenchmarkError, System, parse_systems, run_benchmark
from segmenter.bench.report import machine_info, plot, read_json, speed_table, to_markdown, write_json
from segmenter.bench.runner import BenchResult
from segmenter.cli import main

from conftest import GOLD, REPO, require_shared

FIGURES = ("P", "R", "F1", "oov_rate", "oov_recall", "iv_recall", "chars_per_s", "peak_mb")
SENTENCES = ["我们 的 国家 是 一个 大 国", "他 说 ， 中国 人民 很 高兴", "发展 经济 要 有 新 的 思想 。", "这 是 我 的 书"]


@pytest.fixture(autouse=True)
def _one_startup_run(monkeypatch):
    """One start-up run per system instead of the report's median of three: each is a process of
    its own (the in-process test ran 33 of them), and the figure's code path is the same."""
    from segmenter.bench import measure

    monkeypatch.setattr(measure, "STARTUP_RUNS", 1)


@pytest.fixture
def gold_file(tmp_path) -> Path:
    (tmp_path / "lexicon").mkdir()
    (tmp_path / "lexicon" / "toy_training_words.txt").write_text("我们\n的\n国家\n是\n中国\n人民\n", encoding="utf-8")
    (tmp_path / "gold").mkdir()
    path = tmp_path / "gold" / "toy_test.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def test_parse_systems():
    assert parse_systems("segmenter:fine,jieba") == [("segmenter", "fine"), ("jieba", "default")]
    assert parse_systems("segmenter, jieba,segmenter:fine")[:3] == [("segmenter", s) for s in ("default", "fine", "coarse")]
    with pytest.raises(BenchmarkError, match="unknown system 'hanlp'"):
        parse_systems("hanlp")
    with pytest.raises(BenchmarkError, match="no setting 'huge'"):
        parse_systems("segmenter:huge")


def test_default_lexicon_follows_the_shared_layout(gold_file, tmp_path):
    assert benchmark.default_lexicon(gold_file) == tmp_path / "lexicon" / "toy_training_words.txt"
    assert benchmark.default_lexicon(tmp_path / "gold" / "ud_test.txt") is None


@pytest.mark.slow
def test_in_process_run_scores_every_system_setting_and_corpus(gold_file, tiny_model_dir, tmp_path):
    lexicon = str(benchmark.default_lexicon(gold_file))
    config = BenchConfig(gold=[str(gold_file)], lexicons=[lexicon], systems=parse_systems("segmenter,jieba,jieba-nohmm"),
                         limit=3, model=str(tiny_model_dir), isolate=False, command="segmenter bench --gold toy_test.txt")
    result = run_benchmark(config)
    assert [(r["label"], r["corpus"]) for r in result.records] == [
        (name, "toy_test")
        for name in ("segmenter:default", "segmenter:fine", "segmenter:coarse", "segmenter:pku", "segmenter:msr",
                     "segmenter:ud", "segmenter:plain", "segmenter:fast", "segmenter:oracle", "jieba", "jieba-nohmm")
    ]
    # calibrated needs a dev file beside the test file; without one it is skipped, with the reason
    assert [(s["setting"], s["corpus"]) for s in result.skipped] == [("calibrated", "toy_test")]
    assert "no dev file beside toy_test.txt" in result.skipped[0]["reason"]
    oracle = next(r for r in result.records if r["label"] == "segmenter:oracle")
    # (fast reads the shipped fast model whatever --model says: another model, another oracle)
    assert all(oracle["F1"] >= r["F1"] for r in result.records if r["label"].startswith("segmenter:")
               and r["label"] != "segmenter:fast")
    assert "model fast" in next(r for r in result.records if r["label"] == "segmenter:fast")["about"]
    for record in result.records:
        assert set(FIGURES) <= set(record)
        assert record["sentences"] == 3 and record["chars"] == sum(len(s.replace(" ", "")) for s in SENTENCES[:3])
        assert 0 <= record["F1"] <= 1 and record["chars_per_s"] > 0 and 0 <= record["oov_rate"] <= 1
        assert record["peak_mb"] is None  # one shared process: no per-system peak
    assert all(r["startup_s"] > 0 for r in result.records if r["label"] in ("segmenter:default", "jieba"))
    jieba = next(r for r in result.records if r["label"] == "jieba")
    assert jieba["F1"] > 0.5  # jieba knows these everyday words
    assert all(len(r["paired_seconds"]) == 2 and min(r["paired_seconds"]) > 0 for r in result.records)

    machine = machine_info(result)
    markdown = to_markdown(result, machine)
    assert "Command: `segmenter bench --gold toy_test.txt`" in markdown
    assert machine["cpu"] in markdown and "jieba 0.42" in markdown
    assert "| system | P | R | F1 | OOV rate | OOV recall | IV recall | chars/s | peak MiB |" in markdown
    # one row per segmenter setting in the figures table and one in the by-length table, before the speed table
    before_speed, speed = markdown.split("**Speed**")
    assert before_speed.count("\n| segmenter:") == 2 * 9 and "OOV against `toy_training_words.txt`" in markdown
    assert "\n| segmenter:default | " in speed
    assert "| system | recall | precision | words output |" in markdown
    gold_row = next(line for line in markdown.splitlines() if line.startswith("| gold |"))
    assert gold_row.endswith("| 13 / 9 / 0 / 0 / 0 |")  # 4 + 4 + 5 one-char words (punctuation too), 3 + 3 + 3 two-char
    for record in result.records:
        by_length = record["by_length"]
        assert sum(by_length[b]["correct"] for b in by_length) == record["correct_words"]
        assert sum(by_length[b]["test"] for b in by_length) == record["test_words"]
    # A finished run renders again from its JSON (`segmenter bench --from-json`) to the same table.
    write_json(result, machine, tmp_path / "run.json")
    again, again_machine = read_json(tmp_path / "run.json")
    assert to_markdown(again, again_machine) == markdown
    assert main(["bench", "--from-json", str(tmp_path / "run.json"), "--markdown", str(tmp_path / "again.md"), "-q"]) == 0
    assert (tmp_path / "again.md").read_text(encoding="utf-8") == markdown
    # A description that depends on the corpus (calibrated: which dev file) is listed under its
    # system's name, not after every other system.
    again.corpora.append({**again.corpora[0], "name": "toy2"})
    again.records += [{**r, "corpus": "toy2", "about": r["about"] + " (toy2)"} for r in again.records]
    systems_part = to_markdown(again, again_machine).split("Systems:")[1].split("Not run:")[0]
    listed = [line.split("`")[1] for line in systems_part.splitlines() if line.startswith("- `")]
    assert len(listed) == 2 * len(result.records) and listed == sorted(listed, key=listed.index)
    pytest.importorskip("matplotlib")
    plot(result, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_systems_that_cannot_run_are_skipped_with_a_reason(gold_file, monkeypatch):
    monkeypatch.setitem(benchmark.SYSTEMS, "absent", System("absent", ("default",), "no_such_module_xyz", "pip install xyz", None))
    # A system that loses characters cannot be scored: reported, and the others still run.
    lossy = System("lossy", ("default",), "json", "-", lambda *_: ((lambda texts: [[t[:-1]] for t in texts]), "drops a char"))
    monkeypatch.setitem(benchmark.SYSTEMS, "lossy", lossy)
    config = BenchConfig(gold=[str(gold_file)], lexicons=[None], systems=parse_systems("absent,lossy,jieba"), isolate=False)
    result = run_benchmark(config)
    assert [r["label"] for r in result.records] == ["jieba"]
    reasons = {s["system"]: s["reason"] for s in result.skipped}
    assert "not installed (pip install xyz)" in reasons["absent"]
    assert "characters differ" in reasons["lossy"]
    assert result.records[0]["oov_rate"] is None  # no lexicon
    assert "Not run:" in to_markdown(result, machine_info(result))


def test_times_jieba_comes_from_the_passes_timed_side_by_side():
    """× jieba divides jieba's seconds by the system's from the same worker, not by the jieba row's own
    pass minutes earlier (here made twice as slow: a busier machine); a record without them (an older
    run's JSON) is divided by the jieba row. The latency's multiple is of the jieba row's latency."""
    def record(label, chars_per_s, paired=None, paired_all=None, first=None, latency=1.0):
        return {"label": label, "chars": 1000, "chars_per_s": chars_per_s,
                "chars_per_s_all": paired_all and 1000 / paired_all[0], "chars_per_s_all_first": first, "paired_seconds": paired, "paired_seconds_all": paired_all,
                "latency_ms": latency, "startup_s": None, "cores_all": 2 if paired_all else None}

    result = BenchResult(config=None, records=[
        record("segmenter:default", 100.0, paired=[4.0, 1.0], paired_all=[2.0, 1.0], first=250.0, latency=0.3125),
        record("jieba", 500.0, paired=[1.0, 1.0], latency=0.025), record("old", 250.0, latency=None)])
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in speed_table(result) if line.startswith("| ")}
    assert rows["segmenter:default"][2:6] == ["0.250", "500", "0.500", "0.250"]  # first pass: 4 s against jieba's 1 s
    assert rows["segmenter:default"][6:8] == ["0.312", "12.5"]  # latency and its multiple of jieba's
    assert rows["jieba"][2] == "1.000" and rows["jieba"][4] == "1.000"  # one core whatever it is given
    assert rows["jieba"][7] == "1.0" and rows["old"][6:8] == ["–", "–"]
    assert rows["old"][2] == "0.500"  # 250 / the jieba row's 500


@pytest.mark.slow
def test_isolated_run_measures_each_systems_own_peak_memory(gold_file):
    config = BenchConfig(gold=[str(gold_file)], lexicons=[None], systems=parse_systems("jieba"))
    record = run_benchmark(config).records[0]
    # The worker does not import torch (the parent has): its memory is jieba's, far below torch's ~220 MiB.
    assert 0 < record["base_mb"] < record["peak_mb"] < 200


def test_cli_errors_are_plain(gold_file, capsys):
    assert main(["bench", "--gold", "missing.txt"]) == 2
    assert "--gold missing.txt: no such file" in capsys.readouterr().err
    assert main(["bench", "--gold", str(gold_file), "--systems", "nope"]) == 2
    assert "unknown system 'nope'" in capsys.readouterr().err
    assert main(["bench", "--gold", str(gold_file), "--lexicon", "a.txt", "b.txt"]) == 2
    assert "give one per gold file" in capsys.readouterr().err
    assert main(["bench", "--gold", str(gold_file), "--model", str(gold_file.parent / "nomodel"), "--systems", "segmenter"]) == 2
    assert "segmenter cannot load its model" in capsys.readouterr().err
    assert main(["bench"]) == 2
    assert "--gold is required" in capsys.readouterr().err
    assert main(["bench", "--from-json", "missing.json"]) == 2
    assert "--from-json missing.json: no such file" in capsys.readouterr().err
    assert main(["bench", "--from-json", str(gold_file)]) == 2
    assert "not a benchmark JSON" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_smoke_on_pku_test(tiny_model_dir, tmp_path):
    """The smoke mode: `segmenter bench --limit 50` on the PKU test set, each system in its own worker."""
    gold = require_shared(GOLD / "pku_test.txt")
    out_json, out_md = tmp_path / "bench.json", tmp_path / "bench.md"
    command = [sys.executable, "-m", "segmenter", "bench", "--gold", str(gold), "--limit", "50",
               "--systems", "segmenter:default,jieba,jieba-nohmm", "--model", str(tiny_model_dir),
               "--json", str(out_json), "--markdown", str(out_md), "-q"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert [(r["label"], r["corpus"]) for r in report["records"]] == [
        ("segmenter:default", "pku_test"), ("jieba", "pku_test"), ("jieba-nohmm", "pku_test")]
    for record in report["records"]:
        assert all(record[name] is not None for name in FIGURES)  # PKU has a lexicon: every figure is there
        assert record["sentences"] == 50 and record["peak_mb"] > 0
    assert report["corpora"][0]["lexicon"].endswith("pku_training_words.txt")
    markdown = out_md.read_text(encoding="utf-8")
    assert markdown.startswith("<!-- Generated by `segmenter bench`")
    assert "Command: `segmenter bench --gold" in markdown and "--limit 50" in markdown
    assert "| jieba-nohmm |" in markdown


@pytest.mark.slow
def test_cli_writes_a_scratch_folder_unless_told_where(gold_file, tmp_path, capsys, monkeypatch):
    """Tracked results change only on purpose: no output path -> a new folder under the temp dir."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # let TMPDIR count in this process
    base = ["bench", "--gold", str(gold_file), "--systems", "jieba-nohmm", "--in-process", "-q"]
    assert main(base) == 0
    captured = capsys.readouterr()
    (scratch,) = (tmp_path / "tmp").glob("segmenter-bench-*")
    assert f"wrote {scratch / 'bench.json'}, {scratch / 'bench.md'}" in captured.err
    assert (scratch / "bench.md").read_text(encoding="utf-8") == captured.out  # the table is printed too
    # --out-dir names the folder (made if missing); named files go where they are named.
    assert main([*base, "--out-dir", str(tmp_path / "results")]) == 0
    assert {"bench.json", "bench.md"} <= {p.name for p in (tmp_path / "results").iterdir()}
    assert main([*base, "--markdown", str(tmp_path / "only.md")]) == 0
    assert (tmp_path / "only.md").is_file() and len(list((tmp_path / "tmp").glob("segmenter-bench-*"))) == 1


@pytest.mark.slow
def test_cli_skips_the_plot_without_matplotlib(gold_file, tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    argv = ["bench", "--gold", str(gold_file), "--systems", "jieba-nohmm", "--in-process", "-q",
            "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "no plot" in err and "matplotlib is not installed" in err and "segmenter-heads[plot]" in err
    assert (tmp_path / "r.json").is_file() and not (tmp_path / "r.png").exists()


@pytest.mark.slow
def test_cli_names_skipped_systems_on_the_console(gold_file, monkeypatch, caplog):
    monkeypatch.setitem(benchmark.SYSTEMS, "absent", System("absent", ("default",), "no_such_module_xyz", "pip install xyz", None))
    argv = ["bench", "--gold", str(gold_file), "--systems", "absent,jieba-nohmm", "--in-process", "-q",
            "--markdown", os.devnull]
    with caplog.at_level("WARNING", logger="segmenter.benchmark"):
        assert main(argv) == 0
    assert "absent: not run: not installed (pip install xyz)" in caplog.text
