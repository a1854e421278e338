"""What a test leaves for the gate, in plain JSON types: a record per stage call
and the outcome of each threshold check.

A :class:`StageRecord` crosses process boundaries (pytest-xdist workers send
them to the controller inside their test reports), goes into the baseline
file and into the JSON report, so it holds only JSON-compatible values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..stages.report import Report

__all__ = ["CheckOutcome", "StageRecord", "dataset_identity", "entry_key", "entry_stage"]

#: The ``format`` and ``version`` of a ``--rag-report`` file (read back by ``pytest-rag diff``).
REPORT_FORMAT = "pytest-rag-report"
REPORT_VERSION = 1


@dataclass(frozen=True)
class CheckOutcome:
    """The outcome of a threshold check on a metric (``op`` ``value``): whether it
    passed, and where the threshold came from (``source``: see
    :data:`~pytest_rag.compare.thresholds.SOURCES`)."""

    stage: str
    key: str
    op: str
    value: float
    source: str
    passed: bool
    #: The call it was checked on, when the test named its calls of the stage.
    name: str | None = None

    @property
    def entry_key(self) -> str:
        """The stage, with the call's name in brackets when it has one."""
        return entry_key(self.stage, self.name)

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "key": self.key, "op": self.op, "value": self.value,
                "source": self.source, "passed": self.passed,
                **({"name": self.name} if self.name is not None else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckOutcome:
        return cls(data["stage"], data["key"], data["op"], float(data["value"]),
                   data["source"], bool(data["passed"]), data.get("name"))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def entry_key(stage: str, name: str | None) -> str:
    """The key of a baseline entry under its test: the stage, with the call's name in
    brackets when it has one (``"retrieval[bm25]"``)."""
    return stage if name is None else f"{stage}[{name}]"


def entry_stage(entry_key: str) -> str:
    """The stage of a baseline entry key: ``"retrieval"`` of ``"retrieval[bm25]"``."""
    return entry_key.split("[", 1)[0]


def dataset_identity(source: str | None, root: str | None = None) -> str | None:
    """Which dataset a record was measured on: its file, relative to ``root`` (the
    project's root folder) in ``/`` form when it lies inside; the file's name alone
    when it lies outside (a folder outside the project differs between machines,
    CI and a laptop); ``None`` for data passed as arguments.  The identity depends
    on where the gold is, never on what it holds, so that editing the gold keeps
    it."""
    import os.path

    if source is None or source.startswith("<"):
        return None
    path = os.path.abspath(source)
    if root is not None:
        base = os.path.abspath(root)
        if os.path.commonpath([path, base]) == base:
            return os.path.relpath(path, base).replace(os.sep, "/")
    return os.path.basename(path)


@dataclass(frozen=True)
class StageRecord:
    """One stage evaluated by one test (``nodeid``).

    ``name`` tells apart several calls of one stage in one test
    (``rag.retrieval(..., name="bm25")``; ``"#2"`` for the second unnamed call):
    each is its own baseline entry, under :attr:`entry_key`.  ``dataset`` is the
    identity of the dataset it was measured on (:func:`dataset_identity`).
    """

    nodeid: str
    stage: str
    values: Mapping[str, float | None]
    per_query: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    #: Drill-down data for the HTML report (:func:`pytest_rag.reports.drilldown.build_details`):
    #: plain JSON values, empty unless ``--rag-html`` asked for them.  Never
    #: stored in the baseline nor in the JSON report.
    details: Mapping[str, Any] = field(default_factory=dict)
    #: The fingerprint of each query's gold (query id to digest) and of the
    #: documents, so that a later run can tell a gold change from a regression
    #: (:mod:`pytest_rag.compare.gold`).  Empty / ``None`` when not known.
    gold: Mapping[str, str] = field(default_factory=dict)
    documents: str | None = None
    #: Each query's fingerprint of all its gold, for baseline entries written before
    #: the fingerprints were per stage (:mod:`pytest_rag.compare.gold`); sent from a
    #: worker with the record, never stored in a baseline.
    whole_gold: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    name: str | None = None
    dataset: str | None = None

    @property
    def entry_key(self) -> str:
        """The key of this record's baseline entry under its test: the stage, with the
        call's name in brackets when it has one (``"retrieval[bm25]"``)."""
        return entry_key(self.stage, self.name)

    @classmethod
    def from_report(cls, nodeid: str, report: Report, *, name: str | None = None,
                    root: str | None = None) -> StageRecord:
        """The record of ``report``; ``root`` is the project's root folder, against which
        the dataset's file is named (:func:`dataset_identity`)."""
        from ..dataset.model import documents_fingerprint
        from .gold import gold_fingerprints, whole_gold_fingerprints

        dataset = report.dataset
        return cls(nodeid, report.stage, dict(report.values),
                   {key: dict(values) for key, values in report.per_query.items()},
                   {key: _plain(value) for key, value in report.settings.items()},
                   dict(report.missing), gold=gold_fingerprints(dataset, report.stage),
                   documents=documents_fingerprint(dataset.documents) if dataset else None,
                   whole_gold=whole_gold_fingerprints(dataset), name=name,
                   dataset=dataset_identity(dataset.source, root) if dataset else None)

    def gold_json(self) -> dict[str, Any]:
        """The ``gold`` object of a baseline or report entry (empty when nothing is known)."""
        data: dict[str, Any] = {}
        if self.gold:
            data["queries"] = dict(self.gold)
        if self.documents is not None:
            data["documents"] = self.documents
        return data

    def to_json(self) -> dict[str, Any]:
        """Plain JSON; ``details`` only when there are any."""
        data = {"nodeid": self.nodeid, "stage": self.stage, "values": dict(self.values),
                "per_query": {k: dict(v) for k, v in self.per_query.items()},
                "settings": dict(self.settings), "missing": dict(self.missing)}
        if self.details:
            data["details"] = dict(self.details)
        gold = self.gold_json()
        if gold:
            data["gold"] = gold
        if self.whole_gold:
            data["whole_gold"] = dict(self.whole_gold)
        if self.name is not None:
            data["name"] = self.name
        if self.dataset is not None:
            data["dataset"] = self.dataset
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StageRecord:
        gold = data.get("gold", {})
        return cls(data["nodeid"], data["stage"], dict(data["values"]),
                   {k: dict(v) for k, v in data.get("per_query", {}).items()},
                   dict(data.get("settings", {})), dict(data.get("missing", {})),
                   dict(data.get("details", {})), dict(gold.get("queries", {})),
                   gold.get("documents"), dict(data.get("whole_gold", {})),
                   name=data.get("name"), dataset=data.get("dataset"))
