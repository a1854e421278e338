"""Comparing two baseline or report files outside pytest (``pytest-rag diff OLD NEW``).

Both kinds of file hold ``tests[nodeid][stage]`` with metric values and
per-query values, so either can stand on either side.  The comparison is the
one ``--rag-baseline`` makes (directions and tolerances from the registry),
plus a paired randomization test and a bootstrap interval per metric with
per-query values on both sides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .baseline import BASELINE_FORMAT, BASELINE_VERSION, Baseline, BaselineError, compare_record
from .records import StageRecord
from .registry import REGISTRY, MetricSpec
from .scorecard import REPORT_FORMAT
from .significance import PairedChange, paired_change
from .thresholds import Tolerances

__all__ = ["DiffRow", "diff_files", "load_scores"]


@dataclass(frozen=True)
class DiffRow:
    """One metric of one test and stage, old against new."""

    nodeid: str
    stage: str
    key: str
    old: float | None
    new: float | None
    allowed: float
    direction: str
    status: str
    change: PairedChange | None

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    @property
    def failed(self) -> bool:
        return self.status in ("regressed", "lost")


def load_scores(path: Path) -> Baseline:
    """Read a baseline file or a ``--rag-report`` file as a :class:`Baseline`.

    Raises
    ------
    BaselineError
        For a missing, unreadable or malformed file, naming it.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path}: not valid JSON (line {error.lineno}, column "
                            f"{error.colno}: {error.msg})") from None
    if isinstance(data, dict) and data.get("format") == REPORT_FORMAT:
        data = {"format": BASELINE_FORMAT, "version": BASELINE_VERSION,
                "tests": data.get("tests")}
    elif not (isinstance(data, dict) and data.get("format") == BASELINE_FORMAT):
        found = data.get("format") if isinstance(data, dict) else None
        raise BaselineError(f"{path}: not a pytest-rag baseline or report file "
                            f"(format {found!r})")
    return Baseline.from_json(data, str(path))


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
        entry = old.entry(record.nodeid, record.stage)
        old_per_query = entry.get("per_query", {}) if entry else {}
        for diff in compare_record(record, old, specs, tolerances):
            before = old_per_query.get(diff.key)
            after = record.per_query.get(diff.key)
            change = (paired_change(before, after, permutations=permutations,
                                    resamples=permutations)
                      if before and after else None)
            status = diff.status
            if status == "regressed" and alpha is not None and not (
                    change is not None and change.significant(alpha)):
                status = "within noise"
            rows.append(DiffRow(record.nodeid, record.stage, diff.key, diff.baseline,
                                diff.current, diff.allowed, diff.direction, status, change))
    for nodeid, stages in sorted(old.tests.items()):
        for stage in sorted(stages):
            if new.entry(nodeid, stage) is None:
                rows.append(DiffRow(nodeid, stage, "*", None, None, 0.0, "info", "removed", None))
    return rows


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if abs(value) < 1000 else f"{value:.1f}"


def render_diff(rows: list[DiffRow], *, show_all: bool = False) -> str:
    """Tables per test and stage: old, new, delta, p-value, 95% interval, status."""
    from tabulate import tabulate

    out: list[str] = []
    groups: dict[tuple[str, str], list[DiffRow]] = {}
    for row in rows:
        groups.setdefault((row.nodeid, row.stage), []).append(row)
    for (nodeid, stage), group in groups.items():
        shown = [row for row in group if show_all or row.status not in ("unchanged", "info")]
        if not shown:
            continue
        out.append(f"{nodeid} [{stage}]")
        table: list[Any] = []
        for row in shown:
            change = row.change
            p_value = "" if change is None or change.p_value is None else f"{change.p_value:.4f}"
            interval = ("" if change is None or change.ci_low is None else
                        f"[{change.ci_low:+.3f}, {change.ci_high:+.3f}]")
            delta = "" if row.delta is None else f"{row.delta:+.3f}"
            table.append((row.key, _num(row.old), _num(row.new), delta, p_value, interval,
                          row.status))
        text = tabulate(table, headers=("metric", "old", "new", "delta", "p", "95% CI", "status"),
                        tablefmt="simple", disable_numparse=True)
        out.extend("  " + line for line in text.splitlines())
    failed = sum(row.failed for row in rows)
    noise = sum(row.status == "within noise" for row in rows)
    improved = sum(row.status == "improved" for row in rows)
    summary = f"{failed} regressed, {improved} improved"
    if noise:
        summary += f", {noise} worse but within noise"
    out.append(summary if out else f"no differences; {summary}")
    return "\n".join(out)
