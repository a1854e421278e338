"""No ratchet: what a baseline update keeps, and which regressions it accepts.

An update records the run's numbers as the new reference, except where the
change since the accepted reference is within the tolerance: there the
reference stays (its value and per-query values), so that small losses add up
against it across routine updates until they cross the tolerance and fail.
A change beyond the tolerance (better or worse), a lost metric or query, other
gold or other settings move the reference, and every regression an update
accepts is named (:attr:`UpdatePlan.accepted`).  With ``accept=True`` (an
explicit acceptance) every reference moves to the run's numbers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from ..formatting import number_text
from ..registry import MetricSpec
from .baseline import Baseline
from .comparison import MetricDiff, compare_record
from .records import StageRecord
from .thresholds import Tolerances

__all__ = ["UpdatePlan", "plan_update"]

@dataclass(frozen=True)
class UpdatePlan:
    """The baseline an update writes, and what it accepts.

    ``accepted`` holds one line per regression (or comparison that was not like
    with like, counted in ``unlike``) the update makes the new reference;
    ``kept`` counts the metrics whose reference stayed because they changed
    within their tolerance.
    """

    baseline: Baseline
    accepted: tuple[str, ...]
    kept: int
    unlike: int = 0


def _value(value: float | None) -> str:
    return "not measured" if value is None else number_text(value)


def _accepted_line(record: StageRecord, diff: MetricDiff) -> str:
    where = f"{record.nodeid} [{record.entry_key}]"
    if diff.unsettled:
        return f"{where}: {diff.note}"
    line = f"{where} {diff.key} {_value(diff.baseline)} -> {_value(diff.current)} ({diff.status})"
    return f"{line}: {diff.note}" if diff.note else line


def plan_update(baseline: Baseline, records: Iterable[StageRecord],
                specs: Mapping[str, MetricSpec], tolerances: Tolerances, *,
                accept: bool = False, accept_tests: Collection[str] = ()) -> UpdatePlan:
    """The update of ``baseline`` with ``records`` (see the module's docstring);
    ``accept_tests`` are node ids whose records are accepted explicitly (a failed test
    recorded on purpose), as ``accept`` does for every record.

    Raises
    ------
    BaselineError
        As :meth:`Baseline.updated` does, for a value the reader would refuse.
    """
    records = list(records)
    kept: dict[tuple[str, str], set[str]] = {}
    accepted: list[str] = []
    unlike = 0
    for record in records:
        if baseline.entry(record.nodeid, record.entry_key) is None:
            continue
        diffs = compare_record(record, baseline, specs, tolerances, statistics=False)
        like = baseline.gold_change(record) is None and not any(
            diff.unsettled or diff.status == "gold changed" for diff in diffs)
        accepted.extend(dict.fromkeys(_accepted_line(record, diff) for diff in diffs
                                      if diff.worse or diff.unsettled))
        unlike += len({diff.note for diff in diffs if diff.unsettled})
        if like and not accept and record.nodeid not in accept_tests:
            keys = {diff.key for diff in diffs
                    if diff.status == "unchanged" and diff.baseline is not None}
            if keys:
                kept[(record.nodeid, record.entry_key)] = keys
    updated = baseline.updated(records, specs, tolerances, kept=kept)
    return UpdatePlan(updated, tuple(accepted), sum(len(keys) for keys in kept.values()),
                      unlike)
