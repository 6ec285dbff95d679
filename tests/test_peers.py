"""The benchmark's peers (segmenter/bench/systems.py): each one installed segments a sentence whose words join back
into it; one that is absent, or installed without its model, is skipped with the reason the table prints."""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys

import pytest

from segmenter.bench import runner as benchmark
from segmenter.bench.report import machine_info, to_markdown
from segmenter.bench.runner import BenchConfig, CorpusRun, parse_systems, run_benchmark
from segmenter.bench.systems import RJIEBA_COMMAND, SHORT_SENTENCE, Unavailable

SENTENCE = "他说的确实在理，我爱北京天安门。１９９８年GDP增长了7.8%（据新华社电）"
HEAVY = pytest.mark.slow  # these load a model of 100+ MB: seconds each

PEERS = ["jieba", "jieba-nohmm", "rjieba", pytest.param("pkuseg", marks=HEAVY), pytest.param("thulac", marks=HEAVY)]


# A stand-in beside the skipped peer (no start-up command, no model): the run goes on and takes no time.
WHOLE = benchmark.System("whole", ("default",), "json", "-", lambda *_: ((lambda texts: [[t] for t in texts]), "lines"))


def _config(**kw) -> BenchConfig:
    return BenchConfig(gold=[], lexicons=[], systems=[], isolate=False, **kw)


def _build(name: str):
    system = benchmark.SYSTEMS[name]
    if importlib.util.find_spec(system.module) is None:
        pytest.skip(f"{name} is not installed ({system.install})")
    return system.build("default", _config(), CorpusRun("toy", "", None))


@pytest.mark.parametrize("name", PEERS)
def test_each_installed_peer_segments_and_its_words_join_back(name):
    segment, about = _build(name)
    words = segment([SENTENCE, SHORT_SENTENCE])
    assert ["".join(w) for w in words] == [SENTENCE, SHORT_SENTENCE]
    assert all(w and all(isinstance(x, str) and x for x in w) for w in words)
    assert "北京" in words[0] and len(words[0]) > 10  # words, not characters or the whole line
    assert about.startswith(name.split("-")[0])  # the table names the package and its version


@pytest.mark.slow  # starts a process (conftest: UnmarkedSlowTest)
def test_rjieba_keeps_jiebas_words_and_has_a_start_up_command():
    pytest.importorskip("rjieba")
    jieba = pytest.importorskip("jieba")
    segment, about = _build("rjieba")
    assert "HMM on" in about
    assert segment([SHORT_SENTENCE]) == [jieba.lcut(SHORT_SENTENCE)]  # the same dictionary and default
    done = subprocess.run([sys.executable, "-c", RJIEBA_COMMAND], input=SHORT_SENTENCE + "\n", capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.split() == jieba.lcut(SHORT_SENTENCE)


@pytest.mark.slow  # starts a process (conftest: UnmarkedSlowTest)
def test_a_peer_that_is_not_installed_is_skipped_with_its_install_line(tmp_path, monkeypatch):
    absent = dataclasses.replace(benchmark.SYSTEMS["thulac"], module="thulac_is_not_here_xyz")
    monkeypatch.setitem(benchmark.SYSTEMS, "thulac", absent)
    monkeypatch.setitem(benchmark.SYSTEMS, "whole", WHOLE)
    gold = tmp_path / "toy_test.txt"
    gold.write_text("我们 的 国家\n这 是 我 的 书\n", encoding="utf-8")
    result = run_benchmark(BenchConfig(gold=[str(gold)], lexicons=[None], systems=parse_systems("thulac,whole"),
                                       isolate=False))
    assert [r["label"] for r in result.records] == ["whole"]
    assert result.skipped == [{"system": "thulac", "setting": "default", "corpus": None,
                               "reason": "not installed (pip install thulac)"}]
    assert "- `thulac`: not installed (pip install thulac)" in to_markdown(result, machine_info(result))


def test_spacy_pkuseg_without_its_model_is_unavailable_with_the_exact_reason(tmp_path, monkeypatch):
    pytest.importorskip("spacy_pkuseg")
    from spacy_pkuseg.config import config as pkuseg_config

    monkeypatch.setattr(pkuseg_config, "pkuseg_home", str(tmp_path / "home"))
    monkeypatch.setitem(benchmark.SYSTEMS, "whole", WHOLE)
    with pytest.raises(Unavailable, match="its model files are not in the wheel .* and must be downloaded"):
        _build("spacy-pkuseg")
    assert not (tmp_path / "home").exists()  # nothing was downloaded, not even tried

    gold = tmp_path / "toy_test.txt"
    gold.write_text("我们 的 国家\n", encoding="utf-8")
    result = run_benchmark(BenchConfig(gold=[str(gold)], lexicons=[None], systems=parse_systems("spacy-pkuseg,whole"),
                                       isolate=False))
    assert [r["label"] for r in result.records] == ["whole"]
    (skip,) = result.skipped
    assert skip["corpus"] is None and skip["reason"].startswith("Unavailable: spacy-pkuseg ")
    assert os.path.join(str(tmp_path / "home"), "spacy_ontonotes") in skip["reason"]
    assert "- `spacy-pkuseg`: Unavailable: spacy-pkuseg " in to_markdown(result, machine_info(result))


@HEAVY
def test_spacy_pkuseg_loads_a_model_folder_from_its_home(tmp_path, monkeypatch):
    """The loading path, on the one pkuseg model there is offline: pkuseg's own (old format, which spacy-pkuseg
    reads) laid where spacy-pkuseg keeps its download."""
    pytest.importorskip("spacy_pkuseg")
    pkuseg = importlib.util.find_spec("pkuseg")
    if pkuseg is None:
        pytest.skip("pkuseg (whose shipped model this borrows) is not installed")
    from spacy_pkuseg.config import config as pkuseg_config

    (tmp_path / "home").mkdir()
    os.symlink(os.path.join(pkuseg.submodule_search_locations[0], "models", "default"),
               tmp_path / "home" / "spacy_ontonotes")
    monkeypatch.setattr(pkuseg_config, "pkuseg_home", str(tmp_path / "home"))
    segment, about = _build("spacy-pkuseg")
    assert "spacy_ontonotes" in about
    assert ["".join(w) for w in segment([SENTENCE])] == [SENTENCE]
