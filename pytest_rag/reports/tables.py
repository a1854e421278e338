"""Plain-text and Markdown tables of the registry and of reports (pure functions)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..escaping import terminal_text
from ..formatting import delta_text, number_text, p_value_text
from ..registry import REGISTRY, STAGES, MetricSpec, describe_need
from ..stages.report import Report

if TYPE_CHECKING:
    from ..compare.comparison import MetricDiff
    from ..compare.diff import DiffRow

__all__ = ["format_value", "registry_rows", "registry_table", "render_diff", "report_table"]

def _tabulate(rows: Any, **options: Any) -> str:
    """:func:`tabulate.tabulate`, imported when a table is drawn: ``evaluate --format json``
    draws none, and the import takes 20 to 40 ms (it reads package metadata)."""
    from tabulate import tabulate as draw

    return draw(rows, **options)


_DIRECTION_WORDS = {"higher": "higher is better", "lower": "lower is better",
                    "info": "informational"}


def format_value(value: float | None) -> str:
    """A metric value for people (:func:`pytest_rag.formatting.number_text`); ``None`` is
    ``not measured``, never 0."""
    return "not measured" if value is None else number_text(value)


def registry_rows(stage: str | None = None) -> list[MetricSpec]:
    """The registry's metrics, of one stage or all, in stage order."""
    if stage is not None and stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; known: {', '.join(STAGES)}")
    return [spec for spec in REGISTRY.values() if stage is None or spec.stage == stage]


def registry_table(stage: str | None = None, *, markdown: bool = False) -> str:
    """The metric table of the README (``markdown=True``) or of ``pytest-rag metrics``."""
    rows = [
        (spec.stage, f"`{spec.key}`" if markdown else spec.key, spec.title,
         _DIRECTION_WORDS[spec.direction.value], "yes" if spec.per_query else "no",
         spec.meaning,
         ", ".join(describe_need(need, "`" if markdown else "") for need in spec.needs))
        for spec in registry_rows(stage)
    ]
    headers = ("stage", "key", "metric", "direction", "per query", "meaning", "needs")
    return _tabulate(rows, headers=headers, tablefmt="github" if markdown else "simple")


def report_table(report: Report) -> str:
    """One stage's values with the reason beside every ``None``."""
    rows = [(key, format_value(value), "" if value is not None else report.missing.get(key, ""))
            for key, value in report.values.items()]
    return _tabulate(rows, headers=("metric", "value", "note"), tablefmt="simple",
                    disable_numparse=True)


def reports_json(reports: Mapping[str, Report]) -> dict[str, dict[str, float | None]]:
    """``{stage: {key: value}}`` with ``None`` for not measured."""
    return {stage: report.to_dict() for stage, report in reports.items()}


def measured(reports: Iterable[Report]) -> list[Report]:
    """The reports that measured at least one metric."""
    return [report for report in reports if any(v is not None for v in report.values.values())]


def _diff_number(value: float | None) -> str:
    return "-" if value is None else number_text(value)


def render_diff(rows: list[DiffRow], *, show_all: bool = False) -> str:
    """Tables per test and stage: old, new, delta, p-value, 95% interval, status."""
    from ..compare.comparison import STATUSES

    out: list[str] = []
    groups: dict[tuple[str, str], list[MetricDiff]] = {}
    for row in rows:
        groups.setdefault((row.nodeid, row.diff.entry_key), []).append(row.diff)
    for (nodeid, stage), group in groups.items():
        shown = [d for d in group if show_all or STATUSES[d.status].attention]
        if not shown:
            continue
        out.append(terminal_text(f"{nodeid} [{stage}]"))
        table: list[Any] = []
        for d in shown:
            p_value = "" if d.p_value is None else p_value_text(d.p_value)
            if d.rule and STATUSES[d.status].statistics:  # the test did not decide
                rule = d.rule.split(" (", 1)[0]
                p_value = f"{p_value}, by {rule}" if p_value else f"by {rule}"
            interval = ("" if d.ci_low is None or d.ci_high is None else
                        f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]")
            delta = "" if d.delta is None else delta_text(d.delta)
            table.append((d.key, _diff_number(d.baseline), _diff_number(d.current), delta,
                          p_value, interval, d.status))
        text = _tabulate(table, headers=("metric", "old", "new", "delta", "p", "95% CI", "status"),
                        tablefmt="simple", disable_numparse=True)
        out.extend("  " + line for line in text.splitlines())
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.diff.status] = counts.get(row.diff.status, 0) + 1
    summary = ", ".join(status_counts(counts, always=True))
    out.append(summary if out else f"no differences; {summary}")
    return "\n".join(out)


def status_counts(counts: Mapping[str, int], *, always: bool = False) -> list[str]:
    """``["17 regressed", "1 no longer measured", "11 new"]``: the metrics of each
    status (``counts``, by status word) that has summary words, in the words and
    order of :data:`~pytest_rag.compare.comparison.STATUSES`; the scorecard's
    summary line and ``pytest-rag diff`` count alike.  ``always``: the statuses
    whose tile is always shown (regressed, improved) are counted at 0 too."""
    from ..compare.comparison import STATUSES

    return [f"{counts.get(word, 0)} {row.summary}" for word, row in STATUSES.items()
            if row.summary and (counts.get(word) or (always and row.tile_always))]
