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

Each rule is a plain function of the stored entry and the record, used by
:func:`pytest_rag.compare.comparison.compare_record`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import did_you_mean
from ..formatting import setting_text
from ..registry import MetricSpec
from .gold import GoldChange, _ids
from .records import StageRecord, entry_stage

__all__ = ["compared_queries", "different_gold", "lost_queries", "lost_text",
           "settings_change", "unknown_metrics"]

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


def lost_text(lost: tuple[str, ...]) -> str:
    """``"3 queries no longer measured: q2, q3, q4"``."""
    return (f"{len(lost)} {'query' if len(lost) == 1 else 'queries'} no longer measured: "
            f"{_ids(lost)}")


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
