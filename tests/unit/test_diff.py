"""``pytest-rag diff OLD NEW`` on baseline and report files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_rag.cli import main


def _baseline(path: Path, values: dict[str, float], per_query: dict[str, dict[str, float]],
              kind: str = "baseline") -> Path:
    entry = {"metrics": {k: {"value": v} for k, v in values.items()}, "per_query": per_query}
    tests = {"test_x.py::test_retrieval": {"retrieval": entry}}
    if kind == "baseline":
        data = {"format": "pytest-rag-baseline", "version": 1, "tests": tests}
    else:
        data = {"format": "pytest-rag-report", "version": 1, "summary": {}, "tests": tests}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    queries = [f"q{i}" for i in range(40)]
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 0.8, "p95_latency_ms": 100.0},
                    {"recall_at_k": dict.fromkeys(queries, 0.8)})
    new = _baseline(tmp_path / "new.json", {"recall_at_k": 0.7, "p95_latency_ms": 105.0},
                    {"recall_at_k": dict.fromkeys(queries, 0.7)}, kind="report")
    return old, new


def test_regression_exits_1_with_a_table(files: tuple[Path, Path]) -> None:
    status, out, _ = run("diff", str(files[0]), str(files[1]))
    assert status == 1
    assert "test_x.py::test_retrieval [retrieval]" in out
    line = next(line for line in out.splitlines() if "recall_at_k" in line)
    assert line.split()[:4] == ["recall_at_k", "0.800", "0.700", "-0.100"]
    assert line.split()[-1] == "regressed"
    assert "p95_latency_ms" not in out  # +5% is within the 10% relative tolerance
    assert out.strip().endswith("1 regressed, 0 improved")


def test_the_summary_counts_like_the_scorecard(tmp_path: Path) -> None:
    # A metric no longer measured is "no longer measured" (not "regressed"), a new one
    # "new": the words and counts of the scorecard's summary line.
    from pytest_rag.compare.diff import diff_files, load_scores
    from pytest_rag.compare.records import StageRecord
    from pytest_rag.registry import REGISTRY
    from pytest_rag.reports.scorecard import build_scorecard

    queries = {f"q{i}": 0.5 for i in range(4)}
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 0.8, "mrr_at_k": 0.5},
                    {"recall_at_k": dict.fromkeys(queries, 0.8)})
    new = _baseline(tmp_path / "new.json", {"recall_at_k": 0.5, "mrr_at_k": None,
                                            "hit_at_k": 1.0},
                    {"recall_at_k": queries}, kind="report")
    status, out, _ = run("diff", str(old), str(new), "--all")
    assert status == 1
    assert out.splitlines()[-1] == "1 regressed, 1 no longer measured, 0 improved, 1 new"
    node = "test_x.py::test_retrieval"
    record = StageRecord(node, "retrieval",
                         {"recall_at_k": 0.5, "mrr_at_k": None, "hit_at_k": 1.0},
                         {"recall_at_k": queries})
    diffs = [row.diff for row in diff_files(load_scores(old), load_scores(new))]
    card = build_scorecard([record], {}, {(node, "retrieval"): diffs}, REGISTRY)
    assert card.summary_line() == ("1 stage report; metrics: 1 regressed, 1 no longer "
                                   "measured, 1 new")


def test_consistent_regression_is_significant(files: tuple[Path, Path]) -> None:
    status, out, _ = run("diff", str(files[0]), str(files[1]), "--significance", "0.05")
    assert status == 1 and "within noise" not in out


def test_noisy_regression_is_within_noise(tmp_path: Path) -> None:
    old_q = {f"q{i}": (1.0 if i % 2 else 0.0) for i in range(6)}
    new_q = dict(old_q, q1=0.0)
    old = _baseline(tmp_path / "a.json", {"recall_at_k": 0.5}, {"recall_at_k": old_q})
    new = _baseline(tmp_path / "b.json", {"recall_at_k": 2 / 6}, {"recall_at_k": new_q})
    assert run("diff", str(old), str(new))[0] == 1
    status, out, _ = run("diff", str(old), str(new), "--significance", "0.05")
    assert status == 0 and "within noise" in out


def test_identical_files_exit_0(files: tuple[Path, Path]) -> None:
    status, out, _ = run("diff", str(files[0]), str(files[0]))
    assert status == 0 and out.strip() == "no differences; 0 regressed, 0 improved"


def test_bad_files_exit_2(tmp_path: Path, files: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    status, _, err = run("diff", str(bad), str(files[1]))
    assert status == 2 and "not valid JSON" in err
    other = tmp_path / "other.json"
    other.write_text('{"format": "something"}', encoding="utf-8")
    status, _, err = run("diff", str(other), str(files[1]))
    assert status == 2 and err == (f"pytest-rag: error: baseline or report file {str(other)!r}: "
                                   "format: expected 'pytest-rag-baseline' or "
                                   "'pytest-rag-report', got 'something'\n")
    assert run("diff", str(files[0]), str(files[1]), "--significance", "2")[0] == 2
