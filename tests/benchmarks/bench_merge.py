"""The xdist controller's merge of per-test results (issue 27): linear in the tests.

Payloads of ``TESTS`` tests (at scale 1: 10,000 tests, one retrieval stage of
100 queries each, as :func:`pytest_rag.plugin.transport.make_payload` builds
them) are built untimed, then merged into one
:class:`~pytest_rag.plugin.transport.RunResults`, timed, at the full size and
at half of it: once as a compare run sends them (no per-query values), once
as an update sends them (with them).  The goal: a compare run's merge under
1 s at 10,000 tests, and both costing about twice at the full size what they
cost at half (a quadratic merge costs four times).

Workload ``merge`` of ``run.py`` (at 1/10 of the size with ``--quick``; alone:
``python tests/benchmarks/bench_merge.py [--quick]``).  The output is checked:
the merged records are the ones the payloads carried, in their order.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_harness import Row  # noqa: E402

NAME = "merge"
TESTS = 10_000
QUERIES = 100
BUDGET = 1.0
METRICS = ("recall_at_k", "precision_at_k", "mrr_at_k", "ndcg_at_k", "hit_at_k")


def _payloads(tests: int, per_query_sent: bool) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for t in range(tests):
        nodeid = f"tests/test_suite.py::test_case[{t}]"
        per_query = {key: {f"q{q}": ((t + q + j) % 7) / 7 for q in range(QUERIES)}
                     for j, key in enumerate(METRICS)}
        values = {key: sum(v.values()) / QUERIES for key, v in per_query.items()}
        record = {"nodeid": nodeid, "stage": "retrieval", "values": values,
                  "per_query": per_query if per_query_sent else {}, "settings": {"k": 5},
                  "missing": {}}
        out.append((nodeid, {"sweep": False, "records": [record], "checks": [], "diffs": []}))
    return out


def _merge_seconds(payloads: list[tuple[str, dict[str, Any]]], repeat: int
                   ) -> tuple[float, bool]:
    """The best time of merging ``payloads``, and whether the merged records are the
    ones they carried."""
    from pytest_rag.plugin.transport import RunResults

    best = float("inf")
    for _ in range(max(repeat, 3)):  # the best of 3 at least: the machine may be busy
        results = RunResults()
        start = time.perf_counter()
        for nodeid, payload in payloads:
            results.add(nodeid, payload)
        best = min(best, time.perf_counter() - start)
    sent = [record for _, payload in payloads for record in payload["records"]]
    return best, [record.to_json() for record in results.records] == sent


def rows(scale: float, repeat: int) -> list[Row]:
    """A compare run's merge (per-query values stay with the workers: the budget) and an
    update's (they are sent: linear only)."""
    tests = max(int(TESTS * scale), 100)
    out = []
    for label, sent in (("compare run", False), ("update run", True)):
        payloads = _payloads(tests, sent)
        _merge_seconds(payloads[:10], 1)  # imports and first-call costs out of the timings
        full, same = _merge_seconds(payloads, repeat)
        half = _merge_seconds(payloads[:tests // 2], repeat)[0]
        budget = BUDGET * tests / TESTS
        row = Row(f"{NAME}: xdist controller, {label}", f"{tests:,} tests x {QUERIES} queries",
                  full, "budget", budget if not sent else None,
                  goal=f"< {budget:g} s, linear" if not sent else "linear",
                  agreement=(f"agree (the merged records are the {tests:,} sent)" if same
                             else "MISMATCH: the merged records differ from the sent ones"))
        # The ratio is shown, not judged: at small sizes one collection of the garbage
        # collector moves it (tests/plugin/test_transport.py counts the operations).
        row.notes.append(f"{label} at {tests:,} tests: full / half = {full / half:.2f} "
                         "(linear: 2, quadratic: 4)")
        row.status = ("disagrees" if not same else "" if sent
                      else "met" if full < budget else "not met")
        out.append(row)
        del payloads
    return out


if __name__ == "__main__":
    for row in rows(0.1 if "--quick" in sys.argv else 1.0, 1 if "--quick" in sys.argv else 3):
        print(f"{row.workload}: {row.size}: {row.rag_seconds:.3f} s ({row.goal}: "
              f"{row.status}; {row.agreement})")
