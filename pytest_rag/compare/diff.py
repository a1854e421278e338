"""Comparing two baseline or report files outside pytest (``pytest-rag diff OLD NEW``).

Both kinds of file hold ``tests[nodeid][stage]`` with metric values and
per-query values, so either can stand on either side.  The comparison is the
one ``--rag-baseline`` makes (:func:`~pytest_rag.compare.baseline.compare_record`:
directions, tolerances, paired randomization test and bootstrap interval).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..registry import REGISTRY, MetricSpec
from ..reports.scorecard import REPORT_FORMAT, REPORT_VERSION
from .baseline import (
    BASELINE_FORMAT,
    Baseline,
    BaselineError,
    MetricDiff,
    compare_record,
    read_json_file,
)
from .records import StageRecord
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


def _records(scores: Baseline) -> list[StageRecord]:
    records = []
    for nodeid, stages in scores.tests.items():
        for stage, entry in stages.items():
            values = {key: (metric.get("value") if isinstance(metric, Mapping) else metric)
                      for key, metric in entry["metrics"].items()}
            records.append(StageRecord(nodeid, stage, values, entry.get("per_query", {}),
                                       entry.get("settings", {})))
    return records


def diff_files(old: Baseline, new: Baseline, *, alpha: float | None = None,
               tolerances: Tolerances | None = None,
               specs: Mapping[str, MetricSpec] = REGISTRY,
               permutations: int = 10_000) -> list[DiffRow]:
    """Every metric of ``new`` against ``old``; entries only in ``old`` become ``removed``.

    With ``alpha``, a regression beyond the tolerance that is not significant at
    ``alpha`` gets the status ``"within noise"`` and does not fail.
    """
    tolerances = tolerances or Tolerances()
    rows: list[DiffRow] = []
    for record in sorted(_records(new), key=lambda r: (r.nodeid, r.stage)):
        rows.extend(DiffRow(record.nodeid, diff) for diff in compare_record(
            record, old, specs, tolerances, alpha=alpha, permutations=permutations))
    for nodeid, stages in sorted(old.tests.items()):
        for stage in sorted(stages):
            if new.entry(nodeid, stage) is None:
                rows.append(DiffRow(nodeid, MetricDiff(stage, "*", None, None, 0.0, "info",
                                                       "removed")))
    return rows


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if abs(value) < 1000 else f"{value:.1f}"


def render_diff(rows: list[DiffRow], *, show_all: bool = False) -> str:
    """Tables per test and stage: old, new, delta, p-value, 95% interval, status."""
    from tabulate import tabulate

    out: list[str] = []
    groups: dict[tuple[str, str], list[MetricDiff]] = {}
    for row in rows:
        groups.setdefault((row.nodeid, row.diff.stage), []).append(row.diff)
    for (nodeid, stage), group in groups.items():
        shown = [d for d in group if show_all or d.status not in ("unchanged", "info")]
        if not shown:
            continue
        out.append(f"{nodeid} [{stage}]")
        table: list[Any] = []
        for d in shown:
            p_value = "" if d.p_value is None else f"{d.p_value:.4f}"
            interval = ("" if d.ci_low is None or d.ci_high is None else
                        f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]")
            delta = "" if d.delta is None else f"{d.delta:+.3f}"
            table.append((d.key, _num(d.baseline), _num(d.current), delta, p_value, interval,
                          d.status))
        text = tabulate(table, headers=("metric", "old", "new", "delta", "p", "95% CI", "status"),
                        tablefmt="simple", disable_numparse=True)
        out.extend("  " + line for line in text.splitlines())
    failed = sum(row.failed for row in rows)
    noise = sum(row.diff.status == "within noise" for row in rows)
    improved = sum(row.diff.status == "improved" for row in rows)
    summary = f"{failed} regressed, {improved} improved"
    if noise:
        summary += f", {noise} worse but within noise"
    out.append(summary if out else f"no differences; {summary}")
    return "\n".join(out)
