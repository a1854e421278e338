"""Comparing two baseline or report files outside pytest (``pytest-rag diff OLD NEW``).

Both kinds of file hold ``tests[nodeid][stage]`` with metric values and
per-query values, so either can stand on either side.  The comparison is the
one ``--rag-baseline`` makes (:func:`~pytest_rag.baseline.compare_record`:
directions, tolerances, paired randomization test and bootstrap interval).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .baseline import (
    BASELINE_FORMAT, BASELINE_VERSION, Baseline, BaselineError, MetricDiff, compare_record,
)
from .records import StageRecord
from .registry import REGISTRY, MetricSpec
from .scorecard import REPORT_FORMAT
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path}: not valid JSON (line {error.lineno}, column "
                            f"{error.colno}: {error.msg})") from None
    except RecursionError:
        raise BaselineError(f"{path}: nested too deeply to be a baseline or report") from None
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
