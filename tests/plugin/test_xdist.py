"""pytest-xdist: ``-n 2`` gives the same report, junit properties, scorecard and baseline as
``-n 0``.
"""

from __future__ import annotations

import json

import pytest
from ragproject import (
    FEWER_PLUGINS,
    WORSE,
    junit_cases,
    junit_properties,
    scorecard_lines,
    set_inputs,
)

pytest.importorskip("xdist")

TESTS = """
import json
import pathlib

import pytest
from pytest_rag import assert_metric

HERE = pathlib.Path(__file__).parent


def inputs():
    path = HERE / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_retrieval(rag, k):
    report = rag.retrieval(k=k, **inputs())
    assert_metric(report.hit_at_k >= 0.5)


@pytest.mark.rag_threshold("retrieval.recall_at_k >= 0.6")
def test_marked(rag):
    rag.retrieval(**inputs())


def test_two_stages(rag):
    rag.retrieval(**inputs())
    rag.end_to_end(latency_ms={"q1": 10, "q2": 20})


def test_plain():
    pass
"""
# Counts the baseline writes of every process, controller and workers.
CONFTEST = """
import pytest_rag.compare.baseline

_save = pytest_rag.compare.baseline.Baseline.save
ROLE = []


def pytest_configure(config):
    ROLE.append(config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller")


def counting_save(self, path, **options):
    with open("saves.log", "a") as log:
        log.write(ROLE[0] + "\\n")
    _save(self, path, **options)


pytest_rag.compare.baseline.Baseline.save = counting_save
"""


#: Every test here starts pytest-xdist workers in an inner run: slow (CI runs them).
pytestmark = pytest.mark.slow


@pytest.fixture
def project(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    rag_pytester.makepyfile(test_rag=TESTS, test_more=TESTS.replace("def test_", "def test_more_"))
    rag_pytester.makeconftest(CONFTEST)
    return rag_pytester


def run(pytester: pytest.Pytester, workers: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *FEWER_PLUGINS, "-n", workers,
                                         *args)


def test_same_results_with_and_without_workers(project: pytest.Pytester) -> None:
    results = {}
    for workers in ("0", "2"):
        result = run(project, workers, "--rag-update-baseline",
                     f"--rag-baseline=base{workers}.json")
        result.assert_outcomes(passed=12)
        result.stdout.fnmatch_lines(["pytest-rag: baseline written to *"])
    assert (project.path / "saves.log").read_text().splitlines() == ["controller"] * 2
    assert (project.path / "base0.json").read_bytes() == (project.path / "base2.json").read_bytes()
    assert len(json.loads((project.path / "base2.json").read_text())["tests"]) == 10

    set_inputs(project, retrieved_ids=WORSE)
    for workers in ("0", "2"):
        results[workers] = run(project, workers, f"--rag-baseline=base{workers}.json",
                               f"--rag-report=report{workers}.json",
                               f"--junitxml=junit{workers}.xml")
        results[workers].assert_outcomes(passed=4, failed=8)  # k=1 is unchanged
    assert (project.path / "report0.json").read_text() == (
        project.path / "report2.json").read_text()
    scorecard = scorecard_lines(results["0"])
    assert scorecard == scorecard_lines(results["2"])
    assert "1 stage report" not in scorecard and scorecard[-1].startswith("12 stage reports")
    junit = {workers: junit_cases(project.path / f"junit{workers}.xml") for workers in ("0", "2")}
    assert sorted(junit["0"]) == sorted(junit["2"])
    for name, case in junit["0"].items():
        assert junit_properties(case) == junit_properties(junit["2"][name]), name
        assert (case.find("failure") is None) == (junit["2"][name].find("failure") is None)
    assert float(junit_properties(junit["2"]["test_rag::test_marked"])[
        "rag.retrieval.recall_at_k.delta"]) == pytest.approx(-1 / 12)
    assert (project.path / "saves.log").read_text().splitlines() == ["controller"] * 2


def test_deselected_tests_are_not_stale_on_workers(project: pytest.Pytester) -> None:
    run(project, "2", "--rag-update-baseline").assert_outcomes(passed=12)
    before = json.loads((project.path / "rag-baseline.json").read_text())["tests"]
    result = run(project, "2", "--rag-update-baseline", "--rag-prune-baseline",
                 "--deselect", "test_rag.py::test_marked")
    result.assert_outcomes(passed=11)
    result.stdout.no_fnmatch_line("*pruned*")
    result.stdout.fnmatch_lines(["pytest-rag: --rag-prune-baseline refused: "
                                 "this run did not collect every test*"])
    assert json.loads((project.path / "rag-baseline.json").read_text())["tests"] == before


# Logs which process reads the baseline file.
LOADS = """
import pytest_rag.compare.baseline

_load = pytest_rag.compare.baseline.Baseline.load.__func__
ROLE = []


def pytest_configure(config):
    ROLE.append(config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller")


@classmethod
def logged_load(cls, path):
    with open("loads.log", "a") as log:
        log.write((ROLE[0] if ROLE else "controller") + "\\n")
    return _load(cls, path)


pytest_rag.compare.baseline.Baseline.load = logged_load
"""


def test_workers_compare_with_the_baseline_the_controller_read(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller reads and checks the file once; its workers load the entries of
    their own tests from its copy, which is gone at the end of the run."""
    run(project, "0", "--rag-update-baseline").assert_outcomes(passed=12)
    project.makeconftest(LOADS)
    temporary = project.mkdir("tmp")
    monkeypatch.setenv("TMPDIR", str(temporary))
    set_inputs(project, retrieved_ids=WORSE)
    one = run(project, "0", "--rag-baseline")
    one.assert_outcomes(passed=4, failed=8)
    (project.path / "loads.log").unlink()
    two = run(project, "2", "--rag-baseline")
    two.assert_outcomes(passed=4, failed=8)
    assert (project.path / "loads.log").read_text().splitlines() == ["controller"]
    assert scorecard_lines(one) == scorecard_lines(two)
    assert sorted(line for line in one.outlines if "worse than the baseline" in line) == sorted(
        line for line in two.outlines if "worse than the baseline" in line)
    assert not [path for path in temporary.iterdir() if "rag" in path.name]
