"""``--rag-report`` (JSON) and ``--rag-report-md`` (Markdown)."""

from __future__ import annotations

import json

import pytest
from ragproject import MEASURED, WORSE, set_inputs

RUN = ("-p", "no:cacheprovider")
NODE = "test_rag.py::test_retrieval"


def test_json_report(rag_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(rag_pytester.mkdir("out"))  # relative to the current folder
    result = rag_pytester.runpytest(*RUN, "--rag-report=reports/rag.json",
                                    "--rag-threshold", "retrieval.recall_at_k >= 0.5",
                                    str(rag_pytester.path))
    result.assert_outcomes(passed=1)
    path = rag_pytester.path / "out" / "reports" / "rag.json"
    result.stdout.fnmatch_lines([f"pytest-rag: wrote {path}"])
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["format"] == "pytest-rag-report"
    assert report["version"] == 1
    assert report["summary"] == {"stages": 1, "ok": 9, "not measured": 4}
    assert list(report["tests"]) == [NODE]
    entry = report["tests"][NODE]["retrieval"]
    assert entry["outcome"] == "passed"
    assert entry["settings"] == {"k": 2}
    assert entry["metrics"]["recall_at_k"] == {
        "value": pytest.approx(2 / 3), "threshold": ">= 0.5", "baseline": None, "delta": None,
        "status": "ok", "direction": "higher", "p_value": None, "ci95": None}
    assert entry["metrics"]["token_recall"] == {
        "value": None, "threshold": None, "baseline": None, "delta": None,
        "status": "not measured", "direction": "higher", "p_value": None, "ci95": None,
        "not_measured": "needs expected_evidence, chunks"}
    assert entry["metrics"]["p95_latency_ms"]["direction"] == "lower"
    assert set(MEASURED) <= set(entry["metrics"])
    assert entry["per_query"]["recall_at_k"] == pytest.approx(
        {"q1": 1.0, "q2": 2 / 3, "q3": 0.0, "q4": 1.0})


def test_json_report_against_a_baseline(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*RUN, "--rag-baseline", "--rag-report=rag.json")
    result.assert_outcomes(failed=1)
    report = json.loads((rag_pytester.path / "rag.json").read_text())
    assert report["summary"] == {"stages": 1, "REGRESSED": 5, "ok": 4, "not measured": 4}
    entry = report["tests"][NODE]["retrieval"]
    assert entry["outcome"] == "failed"
    recall = entry["metrics"]["recall_at_k"]
    assert recall["status"] == "REGRESSED"
    assert recall["baseline"] == pytest.approx(2 / 3)
    assert recall["delta"] == pytest.approx(-1 / 12)
    assert entry["metrics"]["hit_at_k"]["status"] == "ok"


def test_markdown_report(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*RUN, "--rag-report-md=summary.md",
                                    "--rag-threshold", "retrieval.hit_at_k >= 0.9")
    result.assert_outcomes(failed=1)
    text = (rag_pytester.path / "summary.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[:5] == ["## RAG scorecard", "", "1 stage report; metrics: 1 below threshold", "",
                         "### <code>test&#95;rag.py::test&#95;retrieval</code> — retrieval"]
    assert [cell.strip() for cell in lines[6].split("|")] == [
        "", "metric", "value", "threshold", "baseline", "delta", "p", "95% CI", "status", ""]
    assert [cell.strip() for cell in lines[8].split("|")] == [
        "", "`precision_at_k`", "0.500", "", "", "", "", "", "ok", ""]
    assert any(line.startswith("| `hit_at_k`") and "**FAIL**" in line and ">= 0.9" in line
               for line in lines)
    assert "not measured" in text


def test_markdown_report_appends_like_a_step_summary(rag_pytester: pytest.Pytester) -> None:
    path = rag_pytester.path / "summary.md"
    path.write_text("# Earlier step\n", encoding="utf-8")
    rag_pytester.runpytest(*RUN, f"--rag-report-md={path}").assert_outcomes(passed=1)
    rag_pytester.runpytest(*RUN, f"--rag-report-md={path}").assert_outcomes(passed=1)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Earlier step\n## RAG scorecard\n")
    assert text.count("## RAG scorecard") == 2


def test_reports_without_any_stage(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.runpytest(*RUN, "--rag-report=r.json", "--rag-report-md=r.md").assert_outcomes(
        passed=1)
    assert json.loads((pytester.path / "r.json").read_text()) == {
        "format": "pytest-rag-report", "version": 1, "summary": {"stages": 0}, "tests": {},
        "sweeps": {}}
    assert (pytester.path / "r.md").read_text() == "## RAG scorecard\n\nNo stage was evaluated.\n\n"


@pytest.mark.parametrize("option", ["--rag-report", "--rag-report-md", "--rag-html"])
def test_unwritable_report_is_reported(rag_pytester: pytest.Pytester, option: str) -> None:
    (rag_pytester.path / "taken").mkdir()
    result = rag_pytester.runpytest(*RUN, f"{option}=taken")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines([f"pytest-rag: could not write {rag_pytester.path / 'taken'}: "
                                 "Is a directory"])


HOSTILE = """
import pytest


@pytest.mark.parametrize("variant", ["a|b", "`x`<img src=x onerror=alert(1)>", "c"])
def test_sweep(rag, variant):
    rag.retrieval(queries=[{"id": "q\\x1b[2J\\u202e1"}], relevant={"q\\x1b[2J\\u202e1": ["a"]},
                  retrieved_ids={"q\\x1b[2J\\u202e1": ["a"] if variant == "c" else ["x"]}, k=1)
"""


def test_hostile_ids_are_escaped_for_markdown_and_the_terminal(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_hostile=HOSTILE)
    pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=3)
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-report-md", "summary.md",
                                "-o", "disable_test_id_escaping_and_forfeit_all_rights_to_"
                                "community_support=true")
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "<img" not in markdown and "`x`" not in markdown
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown
    # Every row of the sweep table has as many cells as the others: "a|b" split none.
    rows = [line for line in markdown.splitlines() if line.startswith("| <code>")]
    assert rows and all(row.count("|") == rows[0].count("|") for row in rows), rows
    # No raw ESC or bidi override reaches the terminal, from ids or from query ids.
    text = result.stdout.str()
    assert "\x1b" not in text and "\u202e" not in text
    # A regression names the query, escaped.
    pytester.makepyfile(test_hostile=HOSTILE.replace('["a"] if variant == "c"', '["x"] if True'))
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline")
    text = result.stdout.str()
    assert "queries worse in" in text and "q\\x1b[2J\\u202e1 1.000 -> 0.000" in text
    assert "\x1b" not in text and "\u202e" not in text


FULL_DISK = """
import errno
import os

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real = os.fsync
    os.fsync = no_space  # every write of the session's end finds the disk full
    try:
        return (yield)
    finally:
        os.fsync = real  # in-process runs share the os module with the outer session
"""


def test_a_full_disk_leaves_the_previous_reports_intact(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makeconftest(FULL_DISK)
    for name in ("report.json", "report.html"):
        (rag_pytester.path / name).write_text("previous run\n", encoding="utf-8")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-report", "report.json",
                                    "--rag-html", "report.html")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["pytest-rag: could not write *report.json: No space left on "
                                 "device", "pytest-rag: could not write *report.html: No space "
                                 "left on device"])
    assert "Traceback" not in result.stdout.str()
    for name in ("report.json", "report.html"):
        assert (rag_pytester.path / name).read_text(encoding="utf-8") == "previous run\n"
    assert sorted(p.name for p in rag_pytester.path.iterdir() if p.name.endswith(".tmp")) == []
