"""How much scorecard the terminal shows by default: what needs attention, sweep tables
of ``rag_sweep`` tests, a summary line; at most a screenful (issue 27)."""

from __future__ import annotations

import pytest
from ragproject import scorecard_lines

from pytest_rag.plugin.summary import SCREENFUL

RUN = ("-p", "no:cacheprovider")

# 1,000 passing tests of one parametrized function, each recording a retrieval stage
# whose recall depends on the variant (so a variant table has something to show).
MANY = """
import pytest

{marker}
@pytest.mark.parametrize("i", range({count}))
def test_many(rag, i):
    hits = ["a"] if i % 2 else ["x"]
    rag.retrieval(queries=[{{"id": "q1"}}], relevant={{"q1": ["a"]}},
                  retrieved_ids={{"q1": hits}}, k=1)
"""


def test_a_thousand_passing_parametrized_tests_print_a_few_lines(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=MANY.format(marker="", count=1000))
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=1000)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert lines == [
        "1000 stage reports with nothing to flag (-v lists them)",
        "1 parametrized test not a rag_sweep: variants side by side with -v",
        "1000 stage reports",
    ]


def test_variant_tables_of_a_test_that_is_not_a_sweep_come_on_request(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=MANY.format(marker="", count=4))
    for request in (("-v",), ("--rag-scorecard=full",)):
        result = pytester.runpytest(*RUN, *request)
        lines = scorecard_lines(result)
        start = lines.index("Sweep test_many.py::test_many: 4 variants (not a rag_sweep)")
        # the knobs and stage line, the column names, the rule, then one row per variant
        assert [line.split()[0] for line in lines[start + 4:start + 8]] == ["0", "1", "2", "3"]


def test_a_sweep_of_a_thousand_variants_is_cut_at_a_screenful(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=MANY.format(marker="@pytest.mark.rag_sweep", count=1000))
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=1000)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert lines[0] == "1000 stage reports with nothing to flag (-v lists them)"
    assert lines[1] == "Sweep test_many.py::test_many: 1000 variants"
    # The metric columns that do not fit in one table are left out, so that a row takes
    # one line; then variant rows are cut (20 listed), not the verdict under the table.
    assert lines[3].split() == ["variant", "i", "precision_at_k", "vs", "best", "noise",
                                "frontier", "recall_at_k", "f1_at_k"]
    assert any(line.startswith("  rule: ") for line in lines)
    assert any(line.startswith("  recommended: 1 ") for line in lines)
    assert ("  980 more variants and 5 more metric columns: -v or --rag-report-md lists "
            "them") in lines
    assert lines[-1] == "1000 stage reports"
    # On request, every variant.
    result = pytester.runpytest(*RUN, "-v")
    assert any(line.startswith("  999 ") for line in scorecard_lines(result))


REGRESSING = """
import pytest


@pytest.mark.parametrize("i", range(90))
def test_gate(rag, i):
    rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]},
                  retrieved_ids={"q1": ["a"]}, k=1)
"""


def test_a_screenful_of_attention_says_how_many_more(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=REGRESSING)
    # No baseline entry yet: every metric is new, every stage report needs attention.
    result = pytester.runpytest(*RUN, "--rag-baseline", "--rag-update-baseline")
    result.assert_outcomes(passed=90)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert lines[0] == "test_gate.py::test_gate[0] [retrieval] (k=1)"
    more = [line for line in lines if line.endswith("(-v lists everything)")]
    assert len(more) == 1 and more[0].split()[1:4] == ["more", "stage", "reports"]
    shown = sum(line.startswith("test_gate.py::") for line in lines)
    assert int(more[0].split()[0]) == 90 - shown


def _verdict(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines
            if line.strip().startswith(("rule: ", "recommended: ", "shipped: "))]


def test_a_long_sweep_keeps_its_verdict_and_cuts_variant_rows(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=MANY.format(
        marker='@pytest.mark.rag_sweep(objective="retrieval.recall_at_k", shipped="1")',
        count=1000))
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=1000)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert "Sweep test_many.py::test_many: 1000 variants" in lines
    verdict = _verdict(lines)
    assert [line.split(":")[0] for line in verdict] == ["rule", "recommended", "shipped"]
    more = [line for line in lines if "more variants" in line]
    assert len(more) == 1
    # each listed variant, once per part of the table (its columns do not fit in one)
    listed = {line.split()[0] for line in lines if line.startswith("  ")
              and line.split()[0].isdigit() and "more" not in line}
    assert int(more[0].split()[0]) == 1000 - len(listed)


def test_stage_reports_filling_the_screen_leave_room_for_the_sweep_verdict(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=REGRESSING, test_many=MANY.format(
        marker='@pytest.mark.rag_sweep(objective="retrieval.recall_at_k")', count=30))
    result = pytester.runpytest(*RUN, "--rag-baseline", "--rag-update-baseline")
    result.assert_outcomes(passed=120)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert "Sweep test_many.py::test_many: 30 variants" in lines
    assert [line.split(":")[0] for line in _verdict(lines)] == ["rule", "recommended"]
    assert not any("sweep table" in line for line in lines)
    more = [line for line in lines if line.endswith("(-v lists everything)")]
    assert len(more) == 1 and "more stage reports" in more[0]
    # -v still lists every variant and every stage report.
    full = scorecard_lines(pytester.runpytest(*RUN, "--rag-baseline", "-v"))
    assert sum(line.startswith("test_gate.py::") for line in full) == 90
    assert not any("more variants" in line for line in full)
