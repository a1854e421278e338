"""The per-test results on their way to the end of the run (``plugin/transport.py``).

The controller's merge costs in proportion to what each test sends, never to
what it merged before; a test's reports (and the inputs they hold) are gone
once the test is over; and a payload carries the per-query values only when
the end of the run reads them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from ragproject import WORSE, set_inputs

from pytest_rag.plugin.session import item_state_key
from pytest_rag.plugin.transport import PAYLOAD, RunResults


class CountingId(str):
    """A node id that counts how often it is hashed or compared."""

    operations = 0

    def __eq__(self, other: object) -> bool:
        CountingId.operations += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        CountingId.operations += 1
        return str.__ne__(self, other)

    def __hash__(self) -> int:
        CountingId.operations += 1
        return str.__hash__(self)


def payload(nodeid: str, recall: float) -> dict[str, Any]:
    record = {"nodeid": nodeid, "stage": "retrieval", "values": {"recall_at_k": recall},
              "per_query": {}, "settings": {"k": 2}, "missing": {}}
    return {"sweep": False, "records": [record], "checks": [], "diffs": []}


def test_merging_costs_the_same_for_every_test_however_many_came_before() -> None:
    tests = 3000
    results = RunResults()
    CountingId.operations = 0
    for i in range(tests):
        nodeid = CountingId(f"test_many.py::test_one[{i}]")
        results.add(nodeid, payload(nodeid, i / tests))
    # A few hashes per test; comparing each record with every earlier one would be
    # tests * (tests - 1) / 2 = 4.5 million comparisons.
    assert CountingId.operations <= 4 * tests
    assert [record.values["recall_at_k"] for record in results.records] == [
        i / tests for i in range(tests)]


def test_a_rerun_replaces_the_test_s_record_and_goes_last() -> None:
    results = RunResults()
    for nodeid, recall in (("t.py::a", 0.1), ("t.py::b", 0.2), ("t.py::a", 0.3)):
        results.add(nodeid, payload(nodeid, recall))
    assert [(r.nodeid, r.values["recall_at_k"]) for r in results.records] == [
        ("t.py::b", 0.2), ("t.py::a", 0.3)]


MANY = """
import pytest


@pytest.mark.parametrize("i", range(5))
def test_many(rag, i):
    rag.retrieval()
"""


def test_a_test_s_reports_are_dropped_when_it_is_over(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=MANY)
    recorded = rag_pytester.inline_run("-p", "no:cacheprovider")
    recorded.assertoutcome(passed=5)
    [finished] = recorded.getcalls("pytest_collection_finish")
    items = finished.session.items
    assert len(items) == 5
    assert all(item_state_key not in item.stash for item in items)


def payloads(recorded: pytest.HookRecorder) -> list[dict[str, Any]]:
    return [getattr(report, PAYLOAD) for report in recorded.getreports("pytest_runtest_logreport")
            if report.when == "call"]


def test_payloads_carry_per_query_values_only_when_they_are_read(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest("--rag-update-baseline").assert_outcomes(passed=1)
    # Compared, nothing else written: the per-query values stay where the test ran.
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    recorded = rag_pytester.inline_run("-p", "no:cacheprovider", "--rag-baseline")
    recorded.assertoutcome(failed=1)
    [sent] = payloads(recorded)
    assert [record["per_query"] for record in sent["records"]] == [{}]
    # Nor the gold's fingerprints, per stage or whole (one string a query, read only beside
    # the per-stage ones when the gold changed).
    assert "gold" not in sent["records"][0] and "whole_gold" not in sent["records"][0]
    # The regression is still named by query, from the diff made where the test ran.
    [recall] = [d for d in sent["diffs"] if d["key"] == "recall_at_k"]
    assert recall["worse_queries"] == [["q2", pytest.approx(2 / 3), pytest.approx(1 / 3)]]
    # A report file reads them: they are sent, and the report holds them and the gold.
    recorded = rag_pytester.inline_run("-p", "no:cacheprovider", "--rag-baseline",
                                       "--rag-report=report.json")
    [sent] = payloads(recorded)
    assert sent["records"][0]["per_query"]["recall_at_k"]["q2"] == pytest.approx(1 / 3)
    assert sorted(sent["records"][0]["whole_gold"]) == ["q1", "q2", "q3", "q4"]
    report = json.loads((rag_pytester.path / "report.json").read_text(encoding="utf-8"))
    entry = report["tests"]["test_rag.py::test_retrieval"]["retrieval"]
    assert entry["per_query"]["recall_at_k"]["q2"] == pytest.approx(1 / 3)
    assert sorted(entry["gold"]["queries"]) == ["q1", "q2", "q3", "q4"]


def test_the_controller_s_baseline_copy_reads_back_entry_by_entry(tmp_path: Any) -> None:
    """What a worker loads from the copy is what the controller read; a file that is no
    copy (cut short, another writer's) is refused, and the worker reads the baseline."""
    from pytest_rag.compare.baseline import Baseline
    from pytest_rag.compare.records import StageRecord
    from pytest_rag.compare.thresholds import Tolerances
    from pytest_rag.plugin.transport import LazyStages, read_copy, write_copy
    from pytest_rag.registry import REGISTRY

    records = [StageRecord(f"t.py::test[{i}]", "retrieval", {"recall_at_k": i / 4},
                           {"recall_at_k": {"q1": i / 4, "q2": -0.0}},
                           gold={"q1": "88833245624b2fdb"}) for i in range(3)]
    baseline = Baseline().updated(records, REGISTRY, Tolerances())
    path = tmp_path / "copy"
    write_copy(baseline, path)
    copied = read_copy(path, 1)
    assert copied.version == 1 and list(copied.tests) == list(baseline.tests)
    assert all(isinstance(stages, LazyStages) for stages in copied.tests.values())
    assert {nodeid: dict(stages) for nodeid, stages in copied.tests.items()} == baseline.tests
    whole = path.read_bytes()
    for broken in (whole[:-3], b"", b"\x00" * 20, whole[:len(whole) // 2]):
        path.write_bytes(broken)
        with pytest.raises((ValueError, EOFError, TypeError)):
            read_copy(path, 2)
