"""Grouping parametrized variants into sweep tables."""

from __future__ import annotations

from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.sweeps import split_nodeid
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.scorecard import build_scorecard


def _record(variant: str, recall: float, precision: float, p95: float) -> StageRecord:
    return StageRecord(f"t.py::test_sweep[{variant}]", "retrieval",
                       {"recall_at_k": recall, "precision_at_k": precision,
                        "p95_latency_ms": p95, "hit_at_k": 1.0, "token_recall": None})


def scorecard():
    records = [_record("small", 0.7, 0.5, 10.0), _record("large", 0.9, 0.4, 20.0),
               _record("mid", 0.9, 0.45, 15.0), StageRecord("t.py::test_other", "retrieval",
                                                              {"recall_at_k": 0.1})]
    return build_scorecard(records, {}, {}, REGISTRY)


def test_split_nodeid() -> None:
    assert split_nodeid("a.py::C::test[x-1]") == ("a.py::C::test", "x-1")
    assert split_nodeid("a.py::test") == ("a.py::test", None)


def test_variants_form_one_sweep_with_the_best_marked_by_direction() -> None:
    sweeps = scorecard().sweeps()
    assert len(sweeps) == 1
    sweep = sweeps[0]
    assert (sweep.test, sweep.stage) == ("t.py::test_sweep", "retrieval")
    assert sweep.variants == ("large", "mid", "small")  # entries are sorted by node id
    assert sweep.metrics == ("recall_at_k", "precision_at_k", "p95_latency_ms")
    assert sweep.same == 2  # hit_at_k equal, token_recall never measured
    best = {m: [sweep.variants[i] for i in sweep.best[j]] for j, m in enumerate(sweep.metrics)}
    assert best == {"recall_at_k": ["large", "mid"], "precision_at_k": ["small"],
                    "p95_latency_ms": ["small"]}  # lower latency is better


def test_terminal_markdown_and_json_carry_the_sweep() -> None:
    card = scorecard()
    lines = card.lines()
    start = lines.index("t.py::test_sweep [retrieval]: 3 variants (* best per column)")
    assert lines[start + 1].split() == ["variant", "recall_at_k", "precision_at_k",
                                        "p95_latency_ms"]
    assert lines[start + 3].split() == ["large", "0.900*", "0.400", "20.000"]
    assert lines[start + 5].split() == ["small", "0.700", "0.500*", "10.000*"]
    assert all(len(line) <= 80 for line in lines)
    assert "| <code>small</code> | 0.700 | **0.500** | **10.000** |" in card.markdown()
    sweep = card.to_json()["sweeps"]["t.py::test_sweep"]["retrieval"]
    assert sweep["metrics"]["recall_at_k"] == {
        "values": {"large": 0.9, "mid": 0.9, "small": 0.7}, "best": ["large", "mid"]}


def test_many_metrics_split_into_tables_within_80_columns() -> None:
    keys = [spec.key for spec in REGISTRY.values() if spec.stage == "chunking"]
    records = [StageRecord(f"t.py::test[v{i}]", "chunking", {k: i / 10 for k in keys})
               for i in range(3)]
    lines = build_scorecard(records, {}, {}, REGISTRY).lines()
    assert sum(line.startswith("  variant") for line in lines) >= 4
    assert all(len(line) <= 80 for line in lines)


def test_every_metric_key_fits_a_sweep_header_without_being_cut() -> None:
    from pytest_rag.compare.sweeps import HEADER_LIMIT, header_lines
    from pytest_rag.registry import REGISTRY

    for spec in REGISTRY.values():
        top, bottom = header_lines(spec.key)
        assert top + bottom == spec.key, spec.key
        assert max(len(top), len(bottom)) <= HEADER_LIMIT, spec.key
    assert header_lines("average_precision_at_k") == ("average_", "precision_at_k")
    assert header_lines("recall_at_k") == ("", "recall_at_k")
