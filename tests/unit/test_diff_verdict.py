"""``pytest-rag diff`` and ``--rag-baseline`` give the same verdict on the same data.

``diff`` judges each metric by the tolerance stored with it in OLD, which is
what the project had configured when ``--rag-update-baseline`` wrote it; it
ignored them and used the defaults, so a stored 500 % latency tolerance passed
``--rag-baseline`` and failed ``diff``.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.cli import main
from pytest_rag.compare.baseline import Baseline
from pytest_rag.compare.comparison import compare_record
from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.registry import REGISTRY

NODEID = "test_rag.py::test_retrieval"
QUERIES = ("q1", "q2", "q3")
RATIOS = ("recall_at_k", "precision_at_k", "mrr_at_k")
LATENCIES = ("p50_latency_ms", "p95_latency_ms")

ratio = st.floats(0.0, 1.0, allow_nan=False)
latency = st.floats(0.0, 1000.0, allow_nan=False)
amount = st.one_of(st.just(0.0), st.floats(0.0, 0.5, allow_nan=False))
fraction = st.one_of(st.just(0.0), st.floats(0.0, 5.0, allow_nan=False))


@st.composite
def records(draw: st.DrawFn) -> StageRecord:
    per_query = {key: {q: draw(ratio) for q in QUERIES} for key in RATIOS}
    values: dict[str, float | None] = {key: sum(v.values()) / len(v) for key, v in
                                       per_query.items()}
    values.update({key: draw(latency) for key in LATENCIES})
    return StageRecord(NODEID, "retrieval", values, per_query)


@st.composite
def tolerance_configs(draw: st.DrawFn) -> Tolerances:
    names = [f"retrieval.{key}" for key in (*RATIOS, *LATENCIES)]
    overrides = {name: (draw(fraction), True) if draw(st.booleans()) else (draw(amount), False)
                 for name in draw(st.lists(st.sampled_from(names), unique=True, max_size=3))}
    return Tolerances(draw(amount), draw(fraction), overrides)


def cli_verdict(old: Baseline, new: Baseline, alpha: float | None) -> int:
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, scores in (("old.json", old), ("new.json", new)):
            path = Path(folder) / name
            path.write_text(json.dumps(scores.to_json()), encoding="utf-8")
            paths.append(str(path))
        argv = ["diff", *paths, *(["--significance", str(alpha)] if alpha else [])]
        out, err = io.StringIO(), io.StringIO()
        status = main(argv, out=out, err=err)
    assert status in (0, 1), err.getvalue()
    return status


@settings(max_examples=budget(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records(), records(), tolerance_configs(), tolerance_configs(),
       st.sampled_from([None, 0.05, 0.5]))
def test_diff_and_the_plugin_agree(before: StageRecord, after: StageRecord,
                                   configured: Tolerances, later: Tolerances,
                                   alpha: float | None) -> None:
    # The baseline as --rag-update-baseline writes it with the project's tolerances,
    # and a later run (written with other tolerances, which must not matter).
    old = Baseline().updated([before], REGISTRY, configured)
    new = Baseline().updated([after], REGISTRY, later)
    plugin_fails = any(diff.failed for diff in compare_record(after, old, REGISTRY, configured,
                                                              alpha=alpha))
    assert cli_verdict(old, new, alpha) == (1 if plugin_fails else 0)


def test_a_stored_tolerance_decides_and_a_flag_replaces_it(tmp_path: Path) -> None:
    before = StageRecord(NODEID, "retrieval", {"p95_latency_ms": 2.5})
    after = StageRecord(NODEID, "retrieval", {"p95_latency_ms": 5.9})
    generous = Tolerances(overrides={"retrieval.p95_latency_ms": (5.0, True)})  # 500 %
    old = Baseline().updated([before], REGISTRY, generous)
    new = Baseline().updated([after], REGISTRY, Tolerances())
    assert cli_verdict(old, new, None) == 0  # 5.9 is within 2.5 + 500 %
    for name, scores in (("old.json", old), ("new.json", new)):
        (tmp_path / name).write_text(json.dumps(scores.to_json()), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    argv = ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]
    assert main([*argv, "--relative-tolerance", "0.1"], out=out, err=err) == 0  # not latency
    assert main([*argv, "--latency-tolerance", "10%"], out=out, err=err) == 1


@pytest.mark.parametrize("field, value, problem", [
    ("tolerance", -1, "expected a finite number >= 0, got -1"),
    ("tolerance", "1%", "expected a finite number >= 0, got '1%'"),
    ("relative", "yes", "expected true or false, got 'yes'"),
])
def test_a_bad_stored_tolerance_is_refused_with_its_place(tmp_path: Path, field: str,
                                                          value: object, problem: str) -> None:
    metric = {"value": 0.5, "direction": "higher", "tolerance": 0.01, "relative": False,
              field: value}
    data = {"format": "pytest-rag-baseline", "version": 1,
            "tests": {NODEID: {"retrieval": {"metrics": {"recall_at_k": metric}}}}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["diff", str(path), str(path)], out=out, err=err) == 2
    assert err.getvalue() == (
        f"pytest-rag: error: baseline file {str(path)!r}: tests[{NODEID!r}]['retrieval']"
        f".metrics.recall_at_k.{field}: {problem}\n")
