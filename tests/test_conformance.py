"""Every shared conformance case, through the public API, to 1e-9.

The cases live in ``../shared/conformance`` beside the checkout (and the
trec_eval cases in ``../shared/data/trec_eval/cases``, printed by trec_eval with
4 decimals, so compared to 1e-4).  Without ``../shared`` these tests skip.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import pytest_rag

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONFORMANCE = SHARED / "conformance"
TREC_CASES = SHARED / "data" / "trec_eval" / "cases"


def _cases(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _stage_params(folder: Path, reason: str) -> list[object]:
    params: list[object] = []
    for path in _cases(folder):
        stages = json.loads(path.read_text(encoding="utf-8")).get("expected", {})
        params.extend(pytest.param(path, stage, id=f"{path.stem}-{stage}") for stage in stages)
    return params or [pytest.param(None, None, marks=pytest.mark.skip(reason=reason))]


def _compare(path: Path, stage: str, tolerance: float) -> None:
    dataset = pytest_rag.load_dataset(path)
    assert dataset.expected is not None
    report = pytest_rag.EVALUATORS[stage]().evaluate(dataset)
    wrong = []
    for key, expected in dataset.expected[stage].items():
        got = report.values[key]
        if expected is None or got is None:
            if expected is not got:
                wrong.append(f"{key}: expected {expected!r}, got {got!r}")
        elif not math.isclose(got, expected, rel_tol=0.0, abs_tol=tolerance):
            wrong.append(f"{key}: expected {expected!r}, got {got!r}")
    assert not wrong, f"{path.name} {stage}:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize(
    ("path", "stage"),
    _stage_params(CONFORMANCE, f"no conformance cases: {CONFORMANCE} is absent"),
)
def test_conformance_case(path: Path, stage: str) -> None:
    _compare(path, stage, 1e-9)


@pytest.mark.parametrize(
    ("path", "stage"),
    _stage_params(TREC_CASES, f"no trec_eval cases: {TREC_CASES} is absent"),
)
def test_trec_eval_case(path: Path, stage: str) -> None:
    _compare(path, stage, 1e-4)


def test_every_case_checks_every_key_of_its_stages() -> None:
    """A case's expected section names exactly the registry's keys of each stage."""
    if not _cases(CONFORMANCE):
        pytest.skip(f"no conformance cases: {CONFORMANCE} is absent")
    for path in _cases(CONFORMANCE):
        expected = json.loads(path.read_text(encoding="utf-8"))["expected"]
        for stage, values in expected.items():
            keys = [spec.key for spec in pytest_rag.REGISTRY.values() if spec.stage == stage]
            assert sorted(values) == sorted(keys), f"{path.name} {stage}"
