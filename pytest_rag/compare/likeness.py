"""Like with like: when a baseline entry and a run may be compared at all, and on what.

A metric is compared with its baseline only over the same thing on both sides:

* the same dataset (the entry's ``dataset`` identity, and at least one query
  id in common) -- otherwise ``not compared: different gold``;
* the same settings (``k``, ``size_limits``, ...) -- otherwise ``settings
  changed (size_limits [20, 100] -> [20, 1000])``;
* the same queries: a per-query metric's two means are taken over the queries
  measured on both sides whose gold is unchanged, and a query that had a value
  in the entry, still exists with the same gold, but has none now is *lost*
  ("3 queries no longer measured: q2, q3, q4"), a regression.

A metric whose per-query value the output itself can leave undefined although
every input is given (:attr:`~pytest_rag.registry.MetricSpec.undefined_when`:
``unsupported_number_rate`` of an answer without a number) is compared on what
each side measured instead (:func:`output_shift`): among the queries both sides
share with unchanged gold, each side's mean is over the queries it measured, and
a query measured on one side only is neither lost nor ignored; the note says
how many became or stopped being measured ("1 query newly measured: q2").  Its
paired statistics use the queries measured on both sides.  A query whose run
input is gone (the pipeline no longer ran it: no per-query metric of the stage
has a value for it) is lost for every metric.

Each rule is a plain function of the stored entry and the record, used by
:func:`pytest_rag.compare.comparison.compare_record`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import did_you_mean
from ..formatting import setting_text
from ..registry import MetricSpec
from .gold import GoldChange, _ids
from .records import StageRecord, entry_stage

__all__ = ["OutputShift", "compared_queries", "different_gold", "lost_queries", "lost_text",
           "output_shift", "ran_queries", "settings_change", "unknown_metrics"]

def _plain(value: Any) -> Any:
    """``value`` as JSON would give it back (tuples as lists), for comparing settings."""
    try:
        return json.loads(json.dumps(value, sort_keys=True))
    except (TypeError, ValueError):
        return repr(value)


def settings_change(entry: Mapping[str, Any] | None, record: StageRecord) -> str | None:
    """``"settings changed (size_limits [20, 100] -> [20, 1000])"`` when a setting stored
    in ``entry`` has another value in ``record``, else ``None``.

    Only settings stored on both sides count: an entry written before a setting
    existed compares as before.
    """
    stored = (entry or {}).get("settings")
    if not isinstance(stored, Mapping):
        return None
    changes = []
    for name in sorted(set(stored) & set(record.settings)):
        before, after = _plain(stored[name]), _plain(record.settings[name])
        if before != after:
            changes.append(f"{name} {setting_text(before)} -> {setting_text(after)}")
    if not changes:
        return None
    return f"settings changed ({', '.join(changes)})"


def _entry_queries(entry: Mapping[str, Any]) -> set[str]:
    gold = entry.get("gold")
    if isinstance(gold, Mapping) and gold.get("queries"):
        return set(gold["queries"])
    return {query for values in entry.get("per_query", {}).values() for query in values}


def _record_queries(record: StageRecord) -> set[str]:
    if record.gold:
        return set(record.gold)
    return {query for values in record.per_query.values() for query in values}


def different_gold(entry: Mapping[str, Any] | None, record: StageRecord) -> str | None:
    """Why ``entry`` was measured on other gold than ``record`` (``"different gold:
    ..."``), or ``None`` when they may be compared.

    Other gold is another dataset (both sides name theirs and the names differ)
    or no query id in common (both sides know their queries).
    """
    if entry is None:
        return None
    stored = entry.get("dataset")
    if isinstance(stored, str) and record.dataset is not None and stored != record.dataset:
        return (f"different gold: the baseline was measured on {stored}, this run on "
                f"{record.dataset}")
    before, after = _entry_queries(entry), _record_queries(record)
    if before and after and not before & after:
        return (f"different gold: no query in common with the baseline entry "
                f"({len(before)} there, {len(after)} here)")
    return None


def lost_queries(before: Mapping[str, float | None], after: Mapping[str, float | None],
                 record: StageRecord, change: GoldChange | None) -> tuple[str, ...]:
    """The queries with a value in the entry (``before``) that are still in the dataset
    with unchanged gold but have no value now (``after``), in the entry's order.

    Still in the dataset: among the record's gold queries (or, without
    fingerprints, among the queries it evaluated).
    """
    present = set(record.gold) if record.gold else set(after)
    return tuple(query for query, value in before.items()
                 if value is not None and after.get(query) is None and query in present
                 and (change is None or query in change.same))


def compared_queries(before: Mapping[str, float | None], after: Mapping[str, float | None],
                     change: GoldChange | None) -> frozenset[str]:
    """The queries a per-query metric's two means are taken over: measured on both
    sides, with unchanged gold."""
    return frozenset(query for query, value in after.items()
                     if value is not None and before.get(query) is not None
                     and (change is None or query in change.same))


def _queries(count: int) -> str:
    return f"{count} {'query' if count == 1 else 'queries'}"


def lost_text(lost: tuple[str, ...]) -> str:
    """``"3 queries no longer measured: q2, q3, q4"``."""
    return f"{_queries(len(lost))} no longer measured: {_ids(lost)}"


def ran_queries(per_query: Mapping[str, Mapping[str, float | None]]) -> frozenset[str]:
    """The queries the pipeline ran on one side (``per_query``: that side's per-query
    values of the stage): those with a value in any per-query metric of the stage.
    A query with none lost its run input (not answered, not retrieved for, ...);
    a claim list or a context the output left empty still leaves other metrics
    measured."""
    return frozenset(query for values in per_query.values()
                     for query, value in values.items() if value is not None)


@dataclass(frozen=True)
class OutputShift:
    """What a metric that the output can leave undefined is compared on
    (:func:`output_shift`).

    ``before`` and ``after`` are the queries each side measured among those both
    share with unchanged gold (each side's mean is over its own); ``paired`` those
    measured on both (the paired statistics); ``lost`` the queries measured in the
    entry whose run input is gone now (a regression); ``newly`` and ``stopped`` the
    queries measured now only, or in the entry only although run now.
    """

    before: frozenset[str]
    after: frozenset[str]
    lost: tuple[str, ...]
    newly: tuple[str, ...]
    stopped: tuple[str, ...]

    @property
    def paired(self) -> frozenset[str]:
        return self.before & self.after

    def note(self, why: str) -> str:
        """``"1 query newly measured: q2; 2 queries no longer measurable (the answer has
        no number): q3, q4"``, or ``""`` when each side measured the same queries."""
        parts = []
        if self.newly:
            parts.append(f"{_queries(len(self.newly))} newly measured: {_ids(self.newly)}")
        if self.stopped:
            parts.append(f"{_queries(len(self.stopped))} no longer measurable ({why}): "
                         f"{_ids(self.stopped)}")
        return "; ".join(parts)


def output_shift(entry: Mapping[str, Any], before: Mapping[str, float | None],
                 after: Mapping[str, float | None], record: StageRecord,
                 change: GoldChange | None, ran_now: frozenset[str]) -> OutputShift:
    """The queries a metric with :attr:`~pytest_rag.registry.MetricSpec.undefined_when`
    compares on: the queries of both the baseline ``entry`` (``before``: its values)
    and the record (``after``), with unchanged gold; ``ran_now`` are the queries the
    record ran (:func:`ran_queries`).  Lost queries (measured before, not run now)
    are left out of both sides."""
    present = set(record.gold) if record.gold else set(after)
    in_entry = _entry_queries(entry) | set(before)
    shared = [query for query in sorted(in_entry) if query in present
              and (change is None or query in change.same)]
    lost = tuple(query for query in shared if before.get(query) is not None
                 and after.get(query) is None and query not in ran_now)
    kept = [query for query in shared if query not in lost]
    measured_before = frozenset(query for query in kept if before.get(query) is not None)
    measured_after = frozenset(query for query in kept if after.get(query) is not None)
    return OutputShift(measured_before, measured_after, lost,
                       tuple(query for query in kept if query in measured_after - measured_before),
                       tuple(query for query in kept if query in measured_before - measured_after))


def unknown_metrics(tests: Mapping[str, Mapping[str, Mapping[str, Any]]],
                    specs: Mapping[str, MetricSpec]) -> list[str]:
    """The metrics of baseline entries that neither the registry nor a registered custom
    metric (``specs``) knows, each as ``"nodeid [entry] stage.key"`` with the closest
    known key of the stage (a custom metric renamed or unregistered: its gate would
    vanish).  Sorted; empty when every key is known."""
    found = []
    for nodeid, stages in sorted(tests.items()):
        for key_of_entry, entry in sorted(stages.items()):
            stage = entry_stage(key_of_entry)
            known = [spec.key for spec in specs.values() if spec.stage == stage]
            for key in sorted(entry.get("metrics", {})):
                if f"{stage}.{key}" not in specs:
                    found.append(f"{nodeid} [{key_of_entry}] {stage}.{key}"
                                 f"{did_you_mean(key, known)}")
    return found
