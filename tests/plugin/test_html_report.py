"""``--rag-html``: the self-contained HTML report written by the plugin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from htmlcheck import Page, mismatches, svgs
from ragproject import FEWER_PLUGINS, QUICKSTART, set_inputs

from pytest_rag.reports.html import SECTIONS

RUN = ("-p", "no:cacheprovider")
SCRIPT = "<script>alert('pwned')</script>"
QUESTION = f"How long do I have to return an item? {SCRIPT}"
#: Every stage of the quickstart dataset, and a sweep of retrieval over K.
TESTS = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def inputs():
    path = HERE / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.parametrize("k", [1, 2])
def test_retrieval(rag, k):
    rag.retrieval(k=k, **inputs())


def test_pipeline(rag):
    rag.evaluate()
"""
#: q1 loses refunds#0 from its top 2 (recall@2 0.5 -> 0); K = 1 is unchanged.
WORSE = {"q1": ["shipping#0"], "q2": ["shipping#0", "refunds#1"],
         "q3": ["refunds#1", "shipping#0"]}
#: Writes, per test report, whether the payload's records carry details.
PAYLOAD_LOG = """
def pytest_runtest_logreport(report):
    payload = getattr(report, "rag_payload", None)
    if report.when == "call" and payload:
        with open("payload.log", "a") as log:
            log.write(" ".join(str("details" in r) for r in payload["records"]) + "\\n")
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    gold = QUICKSTART.read_text(encoding="utf-8")
    original = "question: How long do I have to return an item?"
    assert original in gold
    pytester.makefile(".yaml", gold=gold.replace(original, f"question: {json.dumps(QUESTION)}"))
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_rag=TESTS)
    return pytester


def _read(pytester: pytest.Pytester, name: str) -> tuple[str, Page, dict[str, Any]]:
    text = (pytester.path / name).read_text(encoding="utf-8")
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return text, Page(text), report


def test_the_page_has_every_section_and_the_numbers_of_the_json_report(
        project: pytest.Pytester) -> None:
    result = project.runpytest(*RUN, "--rag-html=out/report.html", "--rag-report=report.json")
    result.assert_outcomes(passed=3)
    path = project.path / "out" / "report.html"
    result.stdout.fnmatch_lines([f"pytest-rag: wrote {path}"])
    text, page, report = _read(project, "out/report.html")
    assert page.mismatched == []
    assert [section for section, _ in SECTIONS if page.ids.count(section) != 1] == []
    assert mismatches(report, page) == []
    fields = {number.get("data-field", "value") for number in page.numbers}
    assert {"value", "per_query", "sweep", "summary", "outcomes"} <= fields
    stages = {number.get("data-stage") for number in page.numbers}
    assert {"chunking", "embedding", "retrieval", "reranking", "augmentation", "generation",
            "end_to_end"} <= stages
    # Every per-query value of the report is in the drill-down (3 queries, under the cap).
    per_query = sum(len(values) for stages in report["tests"].values()
                    for entry in stages.values() for values in entry["per_query"].values())
    assert sum(1 for n in page.numbers if n.get("data-field") == "per_query") == per_query
    # The question is text, not a script.
    assert "<script" not in text.lower()
    assert QUESTION in page.text
    assert "http:" not in text and "https:" not in text
    assert len(svgs(text)) > 50
    chunk_section = text[text.index('id="chunk-sizes"'):text.index('id="drill-down"')]
    assert "3 chunks" in chunk_section and "min 5" in chunk_section and "max 15" in chunk_section
    assert "test_rag.py::test_retrieval" in text[text.index('id="sweeps"'):
                                                 text.index('id="metrics"')]
    assert "No baseline was compared" in page.text
    assert "details" not in json.dumps(report)  # the JSON report carries no drill-down


def test_a_regression_shows_its_distribution_and_its_queries_first(
        project: pytest.Pytester) -> None:
    result = project.runpytest(*RUN, "--rag-update-baseline", "--rag-html=first.html")
    result.assert_outcomes(passed=3)
    baseline = (project.path / "rag-baseline.json").read_text(encoding="utf-8")
    assert "details" not in baseline and "question" not in baseline
    assert "details" not in json.loads(baseline)["tests"]["test_rag.py::test_pipeline"]["retrieval"]

    set_inputs(project, retrieved_ids=WORSE)
    result = project.runpytest(*RUN, "--rag-baseline", "--rag-html=report.html",
                               "--rag-report=report.json")
    result.assert_outcomes(passed=2, failed=1)
    text, page, report = _read(project, "report.html")
    assert mismatches(report, page) == []
    assert report["tests"]["test_rag.py::test_retrieval[2]"]["retrieval"]["metrics"][
        "recall_at_k"]["status"] == "REGRESSED"
    section = text[text.index('id="distributions"'):text.index('id="chunk-sizes"')]
    assert ('<figure data-test="test_rag.py::test_retrieval[2]" data-stage="retrieval" '
            'data-key="recall_at_k">') in section
    assert "baseline (2)" in section and "current (2)" in section
    assert "test_retrieval[1]" not in section  # K = 1 did not change
    drill = [n for n in page.numbers if n.get("data-test") == "test_rag.py::test_retrieval[2]"
             and n.get("data-field") == "per_query"]
    assert drill[0]["data-query"] == "q1"
    worse = [(n["data-key"], n["data-value"], n["data-baseline"]) for n in drill
             if "data-baseline" in n]
    assert ("recall_at_k", "0.0", "0.5") in worse


def test_details_are_built_only_for_the_html_report(project: pytest.Pytester) -> None:
    project.makeconftest(PAYLOAD_LOG)
    project.runpytest(*RUN).assert_outcomes(passed=3)
    log = project.path / "payload.log"
    assert set(log.read_text().split()) == {"False"}
    log.unlink()
    project.runpytest(*RUN, "--rag-html=report.html").assert_outcomes(passed=3)
    assert set(log.read_text().split()) == {"True"}


@pytest.mark.slow  # starts pytest-xdist workers
def test_same_page_with_and_without_xdist(project: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    project.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=3)
    set_inputs(project, retrieved_ids=WORSE)
    for workers in ("0", "2"):
        result = project.runpytest_subprocess(*RUN, *FEWER_PLUGINS, "-n", workers,
                                              "--rag-baseline", f"--rag-html=page{workers}.html")
        result.assert_outcomes(passed=2, failed=1)
    first = (project.path / "page0.html").read_bytes()
    assert first == (project.path / "page2.html").read_bytes()
    assert b'class="query worse"' in first and b"REGRESSED" in first


# -- in a real browser ---------------------------------------------------------------
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


@pytest.fixture
def browser() -> str:
    import shutil

    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("the page is not rendered in a browser: none of "
                f"{', '.join(BROWSERS)} is on PATH")


def _headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr",
               "--v=0", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def _console_errors(stderr: str) -> list[str]:
    """Console messages (the page has no script, so it should print none) and script errors."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_the_page_renders_in_headless_chromium(project: pytest.Pytester, browser: str,
                                               tmp_path: Path) -> None:
    project.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=3)
    set_inputs(project, retrieved_ids=WORSE)
    project.runpytest(*RUN, "--rag-baseline", "--rag-html=report.html").assert_outcomes(
        passed=2, failed=1)
    url = (project.path / "report.html").as_uri()
    dumped = _headless(browser, tmp_path / "profile", "--dump-dom", url)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    assert [s for s, _ in SECTIONS if f'id="{s}"' not in dumped.stdout] == []
    assert 'class="query worse"' in dumped.stdout
    assert _console_errors(dumped.stderr) == []
    picture = tmp_path / "page.png"
    shot = _headless(browser, tmp_path / "profile", f"--screenshot={picture}",
                     "--window-size=1366,900", "--hide-scrollbars", url)
    assert shot.returncode == 0, shot.stderr[-2000:]
    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    # The console check itself catches a failing script.
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><script>missingFunction()</script>", encoding="utf-8")
    failing = _headless(browser, tmp_path / "profile", "--dump-dom", broken.as_uri())
    assert any("Uncaught" in line for line in _console_errors(failing.stderr))
