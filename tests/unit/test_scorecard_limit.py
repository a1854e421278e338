"""The default terminal scorecard stays within its line limit and counts what it leaves out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.compare.records import StageRecord
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.scorecard import build_scorecard


def card(failed: int, passed: int):  # type: ignore[no-untyped-def]
    records = [StageRecord(f"t.py::test_{i}", "retrieval",
                           {"recall_at_k": 0.5, "hit_at_k": 1.0})
               for i in range(failed + passed)]
    outcomes = {f"t.py::test_{i}": "failed" if i < failed else "passed"
                for i in range(failed + passed)}
    return build_scorecard(records, {}, {}, REGISTRY, outcomes)


@settings(max_examples=60, deadline=None)
@given(failed=st.integers(0, 40), passed=st.integers(0, 3), limit=st.integers(6, 40))
def test_the_lines_fit_the_limit_and_count_the_rest(failed: int, passed: int,
                                                    limit: int) -> None:
    scorecard = card(failed, passed)
    lines = scorecard.lines(limit=limit)
    assert len(lines) <= limit
    shown = sum(line.startswith("t.py::") for line in lines)
    more = [line for line in lines if line.endswith("(-v lists everything)")]
    left = int(more[0].split()[0]) if more and "stage report" in more[0] else 0
    assert shown + left == failed
    assert lines[-1:] == ([scorecard.summary_line()] if failed + passed else [])
    # Without a limit, or in full, nothing is left out.
    assert sum(line.startswith("t.py::") for line in scorecard.lines()) == failed
    assert sum(line.startswith("t.py::") for line in scorecard.lines(full=True,
                                                                     limit=limit)) == (
        failed + passed)
