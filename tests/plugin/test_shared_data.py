"""The shared conformance datasets, evaluated through the ``rag`` fixture.

They live in ``../shared/conformance`` beside the checkout; without it these tests skip.
"""

from __future__ import annotations

import json

import pytest
from ragproject import SHARED

CONFORMANCE = SHARED / "conformance"
GRADED = CONFORMANCE / "retrieval_graded_duplicates.json"

needs_shared = pytest.mark.skipif(not GRADED.is_file(),
                                  reason=f"shared conformance data absent: {GRADED} not found")

EVERY_CASE = """
import math

import pytest

CASES = {cases!r}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.rag_dataset(p)) for p in CASES])
def test_expected_values(rag, path):
    assert rag.dataset.source.endswith(path.rsplit("/", 1)[-1])
    wrong = []
    for stage, expected in rag.dataset.expected.items():
        values = getattr(rag, stage)().values
        for key, value in expected.items():
            got = values[key]
            if (value is None) != (got is None) or (
                    value is not None and not math.isclose(got, value, abs_tol=1e-9)):
                wrong.append(f"{{stage}}.{{key}}: expected {{value}}, got {{got}}")
    assert not wrong
"""


@needs_shared
def test_every_conformance_case_through_the_fixture(pytester: pytest.Pytester) -> None:
    cases = sorted(str(path) for path in CONFORMANCE.glob("*.json")
                   if json.loads(path.read_text(encoding="utf-8")).get("expected"))
    assert len(cases) >= 10
    pytester.makepyfile(test_cases=EVERY_CASE.format(cases=cases))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(cases))


@needs_shared
def test_graded_retrieval_dataset_from_the_command_line(pytester: pytest.Pytester) -> None:
    expected = json.loads(GRADED.read_text(encoding="utf-8"))["expected"]["retrieval"]
    pytester.makepyfile(test_graded="""
def test_graded(rag):
    rag.retrieval()
""")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--rag-dataset={GRADED}",
                                "--rag-report=report.json")
    result.assert_outcomes(passed=1)
    report = json.loads((pytester.path / "report.json").read_text())
    metrics = report["tests"]["test_graded.py::test_graded"]["retrieval"]["metrics"]
    for key, value in expected.items():
        assert metrics[key]["value"] == pytest.approx(value, abs=1e-9), key
