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
        start = lines.index("test_many.py::test_many [retrieval]: 4 variants (not a rag_sweep)")
        assert [line.split()[0] for line in lines[start + 3:start + 7]] == ["0", "1", "2", "3"]


def test_a_sweep_of_a_thousand_variants_is_cut_at_a_screenful(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=MANY.format(marker="@pytest.mark.rag_sweep", count=1000))
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=1000)
    lines = scorecard_lines(result)
    assert len(lines) == SCREENFUL
    assert lines[0] == "1000 stage reports with nothing to flag (-v lists them)"
    assert lines[1] == "test_many.py::test_many [retrieval]: 1000 variants (* best per column)"
    assert lines[-2:] == ["the last table cut (-v lists everything)", "1000 stage reports"]
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
