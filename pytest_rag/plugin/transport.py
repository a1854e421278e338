"""Per-test results from where a test ran to where the run's files are written.

The gate (:mod:`.gate`) attaches a test's results to its call-phase report as
a plain-JSON payload; pytest-xdist serializes test reports, so a worker's
results reach the controller the same way a local test's reach this process.
:class:`TransportPlugin` merges every payload into the session's
:class:`RunResults` in ``pytest_runtest_logreport``.

The other way, the controller hands its workers the baseline it read
(:class:`BaselineCopyPlugin`).  Every process of a run reads the baseline:
the controller, to refuse a bad file before any test runs and to write the
baseline and the reports at the end, and each worker, to compare the tests
it runs.  A worker needs the entries of its own tests only, and the
controller has already checked the file.  So the controller writes what it
read, each entry as :mod:`marshal` bytes, into a private temporary folder
once, and names the file in each worker's ``workerinput``; a worker of the
same Python loads the entries it asks for, when it asks
(:class:`LazyStages`), instead of parsing and checking every entry of a file
that can hold millions of rows.  A worker that cannot read the copy (another
Python, another machine, the file gone) reads the baseline file as a single
process does.  The folder goes at the end of the session.
"""

from __future__ import annotations

import marshal
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..compare.baseline import Baseline
    from ..compare.comparison import MetricDiff
    from ..compare.records import CheckOutcome, StageRecord

__all__ = ["COPY_KEY", "PAYLOAD", "BaselineCopyPlugin", "LazyStages", "RunResults",
           "TransportPlugin", "copy_for_worker", "make_payload", "read_copy", "write_copy"]

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
        self.checks: dict[tuple[str, str], list[CheckOutcome]] = {}
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
        #: The dataset files ``--rag-export`` wrote (a rerun's once).
        self.exported: set[str] = set()

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
        from ..compare.records import CheckOutcome, StageRecord
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
            check = CheckOutcome.from_json(data)
            self.checks.setdefault((nodeid, check.entry_key), []).append(check)
        for data in payload["diffs"]:
            diff = _diff_from_json(data)
            self.diffs.setdefault((nodeid, diff.entry_key), []).append(diff)
        self._notes.update(dict.fromkeys(payload.get("notes", ())))
        self.exported.update(payload.get("exported", ()))


def make_payload(*, sweep: bool, records: Iterable[StageRecord],
                 checks: Iterable[CheckOutcome], diffs: Iterable[MetricDiff],
                 variant: Mapping[str, Any] | None = None,
                 notes: Iterable[str] = (), exported: Iterable[str] = ()) -> dict[str, Any]:
    """One test's results as plain JSON (what crosses the xdist process boundary);
    ``exported``: the paths of the dataset files ``--rag-export`` wrote.

    A record's fingerprints of whole gold are sent only with its per-stage gold
    fingerprints: they are read only beside those (:func:`~pytest_rag.compare.gold.
    gold_change`), and a compare run's records leave the gold out while it did not
    change, so sending them would cost a string per query per test for nothing.
    """
    return {"sweep": sweep, "variant": variant,
            "records": [_record_json(record) for record in records],
            "checks": [check.to_json() for check in checks],
            "diffs": [_diff_json(diff) for diff in diffs],
            **({"notes": list(notes)} if notes else {}),
            **({"exported": list(exported)} if exported else {})}


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
            "baseline": diff.baseline, "tolerance": diff.tolerance, "direction": diff.direction,
            "status": diff.status, "worse_queries": [list(q) for q in diff.worse_queries],
            "p_value": diff.p_value, "ci_low": diff.ci_low, "ci_high": diff.ci_high,
            "note": diff.note, "rule": diff.rule, "name": diff.name,
            "lost_share": diff.lost_share}


def _diff_from_json(data: Mapping[str, Any]) -> MetricDiff:
    from ..compare.comparison import MetricDiff

    return MetricDiff(data["stage"], data["key"], data["current"], data["baseline"],
                      float(data["tolerance"]), data["direction"], data["status"],
                      tuple((q, a, b) for q, a, b in data["worse_queries"]),
                      data["p_value"], data["ci_low"], data["ci_high"], data.get("note", ""),
                      data.get("rule", ""), data.get("name"), data.get("lost_share", 0.0))


#: The ``workerinput`` keys naming the baseline copy, the Python that wrote it and the
#: version of the file it was read from (:class:`BaselineCopyPlugin`).
COPY_KEY = "rag_baseline_copy"
PYTHON_KEY = "rag_baseline_python"
VERSION_KEY = "rag_baseline_version"


class LazyStages(Mapping[str, Mapping[str, Any]]):
    """One test's baseline entries, each unmarshalled on first use and then kept:
    ``spans[stage]`` is where the entry's bytes are in ``data``."""

    def __init__(self, data: memoryview, spans: Mapping[str, tuple[int, int]]) -> None:
        self._data = data
        self._spans = spans
        self._entries: dict[str, Mapping[str, Any]] = {}

    def __getitem__(self, stage: str) -> Mapping[str, Any]:
        entry = self._entries.get(stage)
        if entry is None:
            start, end = self._spans[stage]
            entry = self._entries[stage] = marshal.loads(self._data[start:end])
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


def write_copy(baseline: Baseline, path: Path) -> None:
    """Write ``baseline``'s entries to ``path`` for :func:`read_copy`: the entries one
    after the other, each as :mod:`marshal` bytes (one in memory at a time), then where
    each one is, then the length of that index (8 bytes).

    Raises
    ------
    ValueError
        When an entry holds something :mod:`marshal` cannot write (never for an
        entry read from a JSON file).
    """
    spans: dict[str, dict[str, tuple[int, int]]] = {}
    with path.open("wb") as out:
        at = 0
        for nodeid, stages in baseline.tests.items():
            spans[nodeid] = {}
            for stage, entry in stages.items():
                blob = marshal.dumps(dict(entry))
                out.write(blob)
                spans[nodeid][stage] = (at, at + len(blob))
                at += len(blob)
        index = marshal.dumps(spans)
        out.write(index)
        out.write(len(index).to_bytes(8, "little"))


def read_copy(path: Path, version: int) -> Baseline:
    """The baseline :func:`write_copy` wrote, its entries read when first used.

    Raises
    ------
    OSError, ValueError, EOFError, TypeError
        When the copy cannot be read (see :func:`marshal.loads`).
    """
    from ..compare.baseline import Baseline

    data = memoryview(path.read_bytes())
    size = int.from_bytes(data[-8:], "little") if len(data) >= 8 else -1
    if not 0 < size <= len(data) - 8:
        raise ValueError(f"{path}: not a baseline copy")
    spans = marshal.loads(data[len(data) - 8 - size:len(data) - 8])
    if not isinstance(spans, dict):
        raise ValueError(f"{path}: not a baseline copy")
    return Baseline({nodeid: LazyStages(data, stages) for nodeid, stages in spans.items()},
                    version)


def copy_for_worker(config: pytest.Config) -> tuple[Path, int] | None:
    """The copy the controller named for this worker and the version of the file it read,
    when this worker runs the same Python."""
    workerinput: Mapping[str, Any] = getattr(config, "workerinput", {})
    named = workerinput.get(COPY_KEY)
    version = workerinput.get(VERSION_KEY)
    if (not isinstance(named, str) or not isinstance(version, int)
            or workerinput.get(PYTHON_KEY) != sys.version):
        return None
    return Path(named), version


class BaselineCopyPlugin:
    """On the xdist controller: writes the copy when the first worker starts."""

    def __init__(self, baseline: Baseline | None) -> None:
        self.baseline = baseline
        self._folder: Path | None = None
        self._copy: Path | None = None
        self._failed = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        baseline = self.baseline
        if baseline is None or not baseline.tests or self._failed:
            return
        if self._copy is None:
            self._folder = Path(tempfile.mkdtemp(prefix="pytest-rag-baseline-"))
            path = self._folder / "baseline.marshal"
            try:
                write_copy(baseline, path)
            except (OSError, ValueError):  # the workers read the file themselves
                self._failed = True
                return
            self._copy = path
        node.workerinput[COPY_KEY] = str(self._copy)
        node.workerinput[PYTHON_KEY] = sys.version
        node.workerinput[VERSION_KEY] = baseline.version

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        """The workers are gone by now: the copy goes."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
