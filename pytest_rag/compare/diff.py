"""Comparing two baseline or report files outside pytest (``pytest-rag diff OLD NEW``).

Both kinds of file hold ``tests[nodeid][stage]`` with metric values and
per-query values, so either can stand on either side.  The comparison is the
one ``--rag-baseline`` makes (:func:`~pytest_rag.compare.comparison.compare_record`:
directions, tolerances, paired randomization test and bootstrap interval).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..registry import REGISTRY, MetricSpec
from .baseline import BASELINE_FORMAT, Baseline, BaselineError, read_json_file
from .comparison import MetricDiff, compare_record
from .records import REPORT_FORMAT, REPORT_VERSION, StageRecord, entry_stage
from .thresholds import Tolerances

__all__ = ["DiffRow", "diff_files", "load_scores"]


@dataclass(frozen=True)
class DiffRow:
    """One metric of one test and stage, old against new (``diff`` holds the numbers)."""

    nodeid: str
    diff: MetricDiff

    @property
    def failed(self) -> bool:
        return self.diff.failed


def load_scores(path: Path) -> Baseline:
    """Read a baseline file or a ``--rag-report`` file as a :class:`Baseline`.

    Raises
    ------
    BaselineError
        For a missing, unreadable or malformed file, naming it.
    """
    where = f"baseline or report file {str(path)!r}"
    data = read_json_file(path, "baseline or report file")
    if not isinstance(data, dict):
        raise BaselineError(f"{where}: top level: expected a JSON object")
    if data.get("format") == REPORT_FORMAT:
        return Baseline.from_json(data, str(path), kind="report file", format_id=REPORT_FORMAT,
                                  max_version=REPORT_VERSION)
    if data.get("format") == BASELINE_FORMAT:
        return Baseline.from_json(data, str(path))
    found = repr(data.get("format"))
    raise BaselineError(f"{where}: format: expected {BASELINE_FORMAT!r} or {REPORT_FORMAT!r}, "
                        f"got {found if len(found) <= 40 else found[:37] + '...'}")


def tolerances_for(old: Baseline, nodeid: str, stage: str, fallback: Tolerances
                   ) -> Tolerances:
    """``fallback`` with the tolerances ``old`` stored for this test and stage on top."""
    stored = old.stored_tolerances(nodeid, stage)
    if not stored:
        return fallback
    return Tolerances(fallback.absolute, fallback.relative, {**fallback.overrides, **stored},
                      fallback.latency)


def _records(scores: Baseline) -> list[StageRecord]:
    records = []
    for nodeid, stages in scores.tests.items():
        for stage, entry in stages.items():
            # As the baseline reads its side: a number as a float (10**30 written as an
            # integer must equal the float that 1e30 reads as, or it "regresses").
            values = {key: _as_float(metric.get("value") if isinstance(metric, Mapping)
                                     else metric)
                      for key, metric in entry["metrics"].items()}
            gold = entry.get("gold") or {}  # null: no gold fingerprints, as the reader takes it
            # Not an object (null, a list): no stored settings, as the other side reads it.
            settings = entry.get("settings")
            settings = settings if isinstance(settings, Mapping) else {}
            name = stage[len(entry_stage(stage)) + 1:-1] or None  # "retrieval[bm25]": bm25
            records.append(StageRecord(nodeid, entry_stage(stage), values,
                                       entry.get("per_query", {}), settings,
                                       gold=gold.get("queries", {}),
                                       documents=gold.get("documents"), name=name,
                                       dataset=entry.get("dataset")))
    return records


def diff_files(old: Baseline, new: Baseline, *, alpha: float | None = None,
               tolerances: Tolerances | None = None,
               specs: Mapping[str, MetricSpec] = REGISTRY,
               permutations: int = 10_000, stored_tolerances: bool = True) -> list[DiffRow]:
    """Every metric of ``new`` against ``old``; entries only in ``old`` become ``removed``.

    Each metric is judged by the tolerance stored with it in ``old`` (what the
    project configured when it wrote that baseline), so the verdict is the one
    ``--rag-baseline`` gives on the same data; ``tolerances`` decide where none
    is stored, and everywhere when ``stored_tolerances`` is false (tolerances
    asked for on the command line).

    With ``alpha``, a regression beyond the tolerance that is not significant at
    ``alpha`` gets the status ``"within noise"`` and does not fail; one that
    cannot be tested for significance is judged by its tolerance alone.
    """
    fallback = tolerances or Tolerances()
    rows: list[DiffRow] = []
    for record in sorted(_records(new), key=lambda r: (r.nodeid, r.stage)):
        judged_by = (tolerances_for(old, record.nodeid, record.stage, fallback)
                     if stored_tolerances else fallback)
        rows.extend(DiffRow(record.nodeid, diff) for diff in compare_record(
            record, old, specs, judged_by, alpha=alpha, permutations=permutations))
    for nodeid, stages in sorted(old.tests.items()):
        for stage in sorted(stages):
            if new.entry(nodeid, stage) is None:
                rows.append(DiffRow(nodeid, MetricDiff(stage, "*", None, None, 0.0, "info",
                                                       "removed")))
    return rows


def _as_float(value: Any) -> float | None:
    return None if value is None else float(value)
