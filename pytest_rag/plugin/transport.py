"""Per-test results from where a test ran to where the run's files are written.

The gate (:mod:`.gate`) attaches a test's results to its call-phase report as
a plain-JSON payload; pytest-xdist serializes test reports, so a worker's
results reach the controller the same way a local test's reach this process.
:class:`TransportPlugin` merges every payload into the session's
:class:`RunResults` in ``pytest_runtest_logreport``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..compare.comparison import MetricDiff
    from ..compare.records import CheckRecord, StageRecord

__all__ = ["PAYLOAD", "RunResults", "TransportPlugin", "make_payload"]

#: The attribute of a call-phase ``TestReport`` that carries the payload.
PAYLOAD = "rag_payload"


class RunResults:
    """What the run's tests recorded, merged on the controller.

    Merging a test's payload costs time in proportion to that payload, never to
    what was merged before: records are kept by ``(node id, stage)``, so that a
    rerun of a test replaces its records in place of a scan of the whole run.
    """

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], StageRecord] = {}
        self.checks: dict[tuple[str, str], list[CheckRecord]] = {}
        self.diffs: dict[tuple[str, str], list[MetricDiff]] = {}
        #: The call-phase outcome of each test ("passed", "failed", "skipped"); "skipped"
        #: also for a test skipped in its setup (a ``skip``/``skipif`` marker).
        self.outcomes: dict[str, str] = {}
        #: Tests with a failed report in any phase: failed, or an error in setup or teardown.
        self.failed: set[str] = set()
        #: Tests whose call failed as their ``xfail`` marker expected.
        self.xfailed: set[str] = set()
        #: Test functions (node ids without parameters) marked ``rag_sweep``.
        self.sweep_tests: set[str] = set()
        #: Per parametrized test: its knobs, costs and sweep rule (``.sweeps``).
        self.variants: dict[str, dict[str, Any]] = {}
        #: Notes the tests left for the end of the run (said once each, in order).
        self._notes: dict[str, None] = {}

    def passed(self, nodeid: str) -> bool:
        """Whether the test ran to the end and passed, setup and teardown included."""
        return self.outcomes.get(nodeid) == "passed" and nodeid not in self.failed

    @property
    def notes(self) -> list[str]:
        """The notes the tests' gates left for the end of the run, each once."""
        return list(self._notes)

    @property
    def records(self) -> list[StageRecord]:
        """Every stage record, in the order the tests delivered them (a rerun's last)."""
        return list(self._records.values())

    def add(self, nodeid: str, payload: Mapping[str, Any]) -> None:
        """Merge one test's payload (:func:`make_payload`)."""
        from ..compare.records import CheckRecord, StageRecord
        from ..compare.sweeps import split_nodeid

        if payload.get("sweep"):
            self.sweep_tests.add(split_nodeid(nodeid)[0])
        if payload.get("variant"):
            self.variants[nodeid] = payload["variant"]
        for data in payload["records"]:
            record = StageRecord.from_json(data)
            ident = (record.nodeid, record.entry_key)
            self._records.pop(ident, None)  # a rerun's record goes last, as it arrived
            self._records[ident] = record
        for data in payload["checks"]:
            check = CheckRecord.from_json(data)
            self.checks.setdefault((nodeid, check.entry_key), []).append(check)
        for data in payload["diffs"]:
            diff = _diff_from_json(data)
            self.diffs.setdefault((nodeid, diff.entry_key), []).append(diff)
        self._notes.update(dict.fromkeys(payload.get("notes", ())))


def make_payload(*, sweep: bool, records: Iterable[StageRecord],
                 checks: Iterable[CheckRecord], diffs: Iterable[MetricDiff],
                 variant: Mapping[str, Any] | None = None,
                 notes: Iterable[str] = ()) -> dict[str, Any]:
    """One test's results as plain JSON (what crosses the xdist process boundary).

    A record's fingerprints of whole gold are sent only with its per-stage gold
    fingerprints: they are read only beside those (:func:`~pytest_rag.compare.gold.
    gold_change`), and a compare run's records leave the gold out while it did not
    change, so sending them would cost a string per query per test for nothing.
    """
    return {"sweep": sweep, "variant": variant,
            "records": [_record_json(record) for record in records],
            "checks": [check.to_json() for check in checks],
            "diffs": [_diff_json(diff) for diff in diffs],
            **({"notes": list(notes)} if notes else {})}


class TransportPlugin:
    """Merges each test's payload into the run's results (controller and local runs)."""

    def __init__(self, results: RunResults) -> None:
        self.results = results

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        results = self.results
        if report.failed:
            results.failed.add(report.nodeid)
        if report.when == "call":
            results.outcomes[report.nodeid] = report.outcome
            if report.skipped and hasattr(report, "wasxfail"):
                results.xfailed.add(report.nodeid)
        elif report.when == "setup" and report.skipped:
            results.outcomes[report.nodeid] = "skipped"
        payload = getattr(report, PAYLOAD, None)
        if report.when != "call" or not payload:
            return
        results.add(report.nodeid, payload)


def _record_json(record: StageRecord) -> dict[str, Any]:
    """``record.to_json()``, without its ``whole_gold`` when it has no ``gold``."""
    data = record.to_json()
    if not record.gold:
        data.pop("whole_gold", None)
    return data


def _diff_json(diff: MetricDiff) -> dict[str, Any]:
    return {"stage": diff.stage, "key": diff.key, "current": diff.current,
            "baseline": diff.baseline, "allowed": diff.allowed, "direction": diff.direction,
            "status": diff.status, "worse_queries": [list(q) for q in diff.worse_queries],
            "p_value": diff.p_value, "ci_low": diff.ci_low, "ci_high": diff.ci_high,
            "note": diff.note, "rule": diff.rule, "name": diff.name}


def _diff_from_json(data: Mapping[str, Any]) -> MetricDiff:
    from ..compare.comparison import MetricDiff

    return MetricDiff(data["stage"], data["key"], data["current"], data["baseline"],
                      float(data["allowed"]), data["direction"], data["status"],
                      tuple((q, a, b) for q, a, b in data["worse_queries"]),
                      data["p_value"], data["ci_low"], data["ci_high"], data.get("note", ""),
                      data.get("rule", ""), data.get("name"))
