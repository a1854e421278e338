"""How much scorecard the terminal shows by default: what needs attention, sweep tables
of ``rag_sweep`` tests, a summary line; at most a screenful (issue 27)."""

from __future__ import annotations

import pytest
from ragproject import WORD_GRID, scorecard_lines

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


# Seven chunkers of one 48-word document (chunks of 2 to 16 words), twelve questions each
# on a 4-word span: each recorded as a chunking, a retrieval and an augmentation report
# (about 40 metric and cost columns). The context holds the first chunk that overlaps the
# question's evidence, so chunks that cut the evidence lose context sufficiency.
CHUNKERS = WORD_GRID + """

@pytest.mark.rag_sweep(objective="augmentation.context_sufficient", cost="chunks",
                       shipped="words-8")
@pytest.mark.parametrize("size", [2, 3, 4, 6, 8, 12, 16], ids=lambda size: f"words-{size}")
def test_chunker(rag, size):
    chunks = [dict(zip(("start", "end"), span(first, size)), id=f"c{first}", doc_id="d")
              for first in range(0, len(WORDS), size)]
    gold = dict(documents=DOCS, chunks=chunks, queries=QUERIES, expected_evidence=EVIDENCE)
    ranked, context = {}, {}
    for i, q in enumerate(QUERIES):
        hit = [c["id"] for c in chunks if int(c["id"][1:]) < 4 * i + 4
               and int(c["id"][1:]) + size > 4 * i]
        other = [c["id"] for c in chunks if c["id"] not in hit]
        # a miss ranked first for some of the questions, not the same ones in each variant
        ranked[q["id"]] = other[:1] + hit + other[1:] if (i + size) % 3 else hit + other
        context[q["id"]] = hit[:1]
    rag.chunking(**gold)
    rag.retrieval(**gold, retrieved_ids={q: ids[:3] for q, ids in ranked.items()}, k=3)
    rag.augmentation(**gold, context_ids=context)
"""


def test_a_sweep_with_many_metrics_shows_its_verdict_columns_at_80_columns(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_chunkers=CHUNKERS)
    pytester.makeini("[pytest]\nrag_relevance_from_evidence = true\n")
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=7)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL and all(len(line) <= 80 for line in lines)
    # Every variant's row, with its knob, objective, difference to the best with its
    # interval, best / tied / worse, frontier and the rule's cost, in the first table ...
    start = lines.index("Sweep test_chunkers.py::test_chunker: 7 variants") + 3
    assert lines[start].split() == ["variant", "size", "sufficient", "vs", "best", "noise",
                                    "frontier", "chunks"]
    rows = [line.split() for line in lines[start + 2:start + 9]]
    assert [row[0] for row in rows] == [f"words-{size}" for size in (2, 3, 4, 6, 8, 12, 16)]
    assert rows[0][1:] == ["2", "0.000", "-1.000", "[-1.000,", "-1.000]", "worse", "-", "24"]
    assert rows[4][1:3] == ["8", "1.000"] and rows[4][-3:] == ["tied", "-", "6"]  # shipped
    assert rows[6][-4:] == ["+0.000", "best", "yes", "3"]
    # ... the other metric columns counted, then the verdict.
    more = [line for line in lines if "more metric columns" in line]
    assert len(more) == 1 and more[0].endswith(
        "more metric columns: -v or --rag-report-md lists them")
    assert int(more[0].split()[0]) >= 10
    text = "\n".join(lines)
    assert "\n  rule: the cheapest (chunks) " in text
    assert "\n  recommended: words-16 " in text
    assert "\n  shipped: words-8 " in text
    # -v: every column, nothing counted.
    full = scorecard_lines(pytester.runpytest(*RUN, "-v"))
    assert not any("more metric columns" in line for line in full)
    assert sum(line.startswith("  variant ") for line in full) > 5
