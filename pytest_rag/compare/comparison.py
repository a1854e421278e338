"""One run's metrics against their baseline entry: the status of each, and why.

:func:`compare_record` compares a stage record with the entry of its test and
entry key in a :class:`~pytest_rag.compare.baseline.Baseline`: like with like
(:mod:`pytest_rag.compare.likeness`), over the queries measured on both sides
whose gold did not change (:mod:`pytest_rag.compare.gold`), within each
metric's tolerance (:mod:`pytest_rag.compare.thresholds`), with the paired
statistics of :mod:`pytest_rag.compare.significance` where they are shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..registry import Direction, MetricSpec
from .gold import GoldChange, mean_over, reads_queries
from .records import StageRecord, entry_key
from .thresholds import Tolerances

if TYPE_CHECKING:
    from .baseline import Baseline

__all__ = ["ROUNDING", "SHOWN_STATISTICS", "STATUSES", "UNSETTLED", "MetricDiff", "Status",
           "StatusRow", "compare_record", "query_got_worse"]

#: Queries named in a regression message.
WORSE_QUERIES_SHOWN = 5


#: Every status a metric can have, by the word the comparison gives it
#: (:attr:`MetricDiff.status`, the junit property ``rag.<stage>.<key>.status``,
#: ``pytest-rag diff``).  ``fail`` (below a threshold), ``ok`` and ``not measured``
#: are the scorecard's own; ``removed`` is ``pytest-rag diff``'s (a stage gone).
Status = Literal["fail", "regressed", "lost", "within noise", "improved", "new",
                 "gold changed", "not compared", "settings changed", "removed", "ok",
                 "not measured", "unchanged", "info"]


@dataclass(frozen=True)
class StatusRow:
    """What a status means, said once; every list of statuses derives from
    :data:`STATUSES`.

    Attributes
    ----------
    word:
        The status (:data:`Status`).
    label:
        How the scorecard shows it (terminal, JSON, Markdown and HTML reports);
        ``""``: the row shows ``ok`` or ``not measured`` by its value.
    fails:
        Fails the test (and a ``pytest-rag diff``).
    worse:
        Got worse against the baseline: its per-query values are drawn in the
        HTML report, and an update names it as a loss it accepts.
    better:
        Got better against the baseline.
    unsettled:
        Not compared like with like: shown loudly, never counted as passing,
        failing under ``--rag-strict``.
    attention:
        Worth a look: the default scorecard shows the stage report of a row
        with it, ``pytest-rag diff`` lists it without ``--all``.
    statistics:
        Its p-value is shown (and computed when not all statistics are).
    summary:
        The words of its count in the summary line (terminal and HTML); ``""``:
        not counted there.
    tile, tile_always:
        The HTML summary's tile of its count (``""``: none), and whether the tile
        is shown at 0 too.
    """

    word: Status
    label: str = ""
    fails: bool = False
    worse: bool = False
    better: bool = False
    unsettled: bool = False
    attention: bool = True
    statistics: bool = False
    summary: str = ""
    tile: str = ""
    tile_always: bool = False


def _statuses(*rows: StatusRow) -> dict[Status, StatusRow]:
    return {row.word: row for row in rows}


#: Every status, worst first: the order of the summary line, of the HTML report's
#: counts and of its "worst status".
STATUSES: Mapping[Status, StatusRow] = _statuses(
    StatusRow("fail", "FAIL", fails=True, summary="below threshold", tile="below threshold"),
    StatusRow("regressed", "REGRESSED", fails=True, worse=True, statistics=True,
              summary="regressed", tile="metrics regressed", tile_always=True),
    StatusRow("lost", "LOST", fails=True, worse=True, summary="no longer measured",
              tile="no longer measured"),
    StatusRow("within noise", "within noise", worse=True, statistics=True,
              summary="worse but within noise", tile="worse but within noise"),
    StatusRow("improved", "improved", better=True, statistics=True, summary="improved",
              tile="metrics improved", tile_always=True),
    StatusRow("new", "new", summary="new"),
    StatusRow("gold changed", "gold changed", summary="not compared (gold changed)"),
    StatusRow("not compared", "not compared", unsettled=True,
              summary="not compared (different gold)"),
    StatusRow("settings changed", "settings changed", unsettled=True,
              summary="not compared (settings changed)"),
    StatusRow("removed"),
    StatusRow("ok", "ok", attention=False),
    StatusRow("not measured", "not measured", attention=False),
    StatusRow("unchanged", attention=False),
    StatusRow("info", attention=False),
)

#: Statuses that say the metric could not be compared like with like.
UNSETTLED: tuple[Status, ...] = tuple(word for word, row in STATUSES.items() if row.unsettled)


@dataclass(frozen=True)
class MetricDiff:
    """One metric of one record against its baseline.

    ``status`` is ``"regressed"`` (worse by more than ``tolerance``),
    ``"improved"`` (better by more than ``tolerance``: the baseline can be
    tightened), ``"unchanged"``, ``"new"`` (no baseline value),
    ``"lost"`` (measured in the baseline, not measured now -- the whole metric,
    some of its queries, or a key the run no longer produces; a regression
    unless informational), ``"info"`` (informational metrics never fail),
    ``"within noise"`` (worse beyond the tolerance, but not significant at
    the level asked for), ``"gold changed"`` (the gold changed since the
    baseline and the metric has no per-query values to compare on the
    unchanged queries; never fails), ``"not compared"`` (the entry was
    measured on other gold: another dataset, or no query in common) or
    ``"settings changed"`` (computed under other settings than the entry's);
    the last two are :data:`UNSETTLED`.  A per-query metric's ``current`` and
    ``baseline`` are its means over the same queries on both sides (measured on
    both, gold unchanged: :mod:`pytest_rag.compare.likeness`), so dropping
    queries never raises a mean; for a metric the output can leave undefined
    (:attr:`~pytest_rag.registry.MetricSpec.undefined_when`) they are each
    side's mean over what it measured of the queries both share, and
    ``note`` names the queries newly measured or no longer measurable.
    ``p_value`` and ``ci_low``/``ci_high`` (95% bootstrap interval of the mean
    per-query change) are set for metrics with
    per-query values on both sides.  ``note`` says why a status other than a
    plain comparison was given (the lost queries, the changed settings, the
    other gold); ``rule`` says, under a significance level, which rule decided
    when it was not the significance test (``"tolerance"``: no p-value, or an
    improvement, which the test never decides; ``"no longer measured"``;
    ``"different gold"``, ``"settings changed"``), and is empty otherwise.
    """

    stage: str
    key: str
    current: float | None
    baseline: float | None
    #: The metric's tolerance at the baseline value, in the metric's unit
    #: (:meth:`~pytest_rag.compare.thresholds.Tolerance.at`); 0 without a baseline
    #: value or for an undeclared metric.
    tolerance: float
    direction: str
    status: Status
    worse_queries: tuple[tuple[str, float | None, float | None], ...] = ()
    p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    rule: str = ""
    #: The call's name when the test recorded the stage more than once
    #: (:attr:`~pytest_rag.compare.records.StageRecord.name`).
    name: str | None = None
    #: For a ``"lost"`` diff, the share of the baseline's measured queries (of those
    #: compared) no longer measured: 1 when the whole metric is gone; else 0.
    lost_share: float = 0.0

    @property
    def entry_key(self) -> str:
        """The baseline entry compared: the stage, with the call's name in brackets."""
        return entry_key(self.stage, self.name)

    @property
    def delta(self) -> float | None:
        if self.current is None or self.baseline is None:
            return None
        return self.current - self.baseline

    @property
    def effect(self) -> float:
        """How bad a change is, for ordering regressions worst first: the change against
        the baseline's magnitude (infinite for a change away from 0 and for a metric no
        longer measured at all), and for lost queries at least the share of the
        queries lost (:attr:`lost_share`), so that losing a few queries ranks by how
        many rather than before every real drop."""
        if self.current is None or self.baseline is None or self.lost_share >= 1.0:
            return math.inf
        change = abs(self.current - self.baseline)
        relative = change / abs(self.baseline) if self.baseline else (math.inf if change else 0.0)
        return max(relative, self.lost_share)

    @property
    def failed(self) -> bool:
        """Fails its test (regressed, lost)."""
        return STATUSES[self.status].fails

    @property
    def worse(self) -> bool:
        """Got worse against the baseline (regressed, lost, within noise)."""
        return STATUSES[self.status].worse

    @property
    def unsettled(self) -> bool:
        """Not compared like with like (:data:`UNSETTLED`): fails under ``--rag-strict``."""
        return STATUSES[self.status].unsettled

    def fails(self, strict: bool) -> bool:
        """Whether this diff fails its test (``strict``: ``--rag-strict``)."""
        return self.failed or (strict and self.unsettled)


#: A per-query change within this share of the value is floating-point rounding.
ROUNDING = 1e-9


def query_got_worse(direction: Direction, before: float, after: float | None) -> bool:
    """Whether one query's value moved against ``direction`` (or is no longer measured);
    a change within :data:`ROUNDING` of the value is not one."""
    return after is None or direction.worse(after, before, ROUNDING * max(1.0, abs(before)))


def _worse_queries(direction: Direction, old: Mapping[str, float | None],
                   new: Mapping[str, float | None]
                   ) -> tuple[tuple[str, float | None, float | None], ...]:
    worse = []
    for query_id, before in old.items():
        after = new.get(query_id)
        if before is None or not query_got_worse(direction, before, after):
            continue
        worse.append((math.inf if after is None else abs(after - before), query_id, before,
                      after))
    worse.sort(key=lambda item: (-item[0], item[1]))
    return tuple((query_id, before, after) for _, query_id, before, after in worse)


def _nothing_to_compare(change: GoldChange, spec: MetricSpec | None, per_query: bool) -> bool:
    """Whether a gold change leaves a metric nothing to compare on: a per-query metric
    when no query's gold is unchanged, another one when it reads the queries or the
    documents changed (:mod:`pytest_rag.compare.gold`)."""
    if per_query:
        return not change.same and reads_queries(spec)
    return change.documents or reads_queries(spec)


#: The statuses whose p-value and interval are shown in the scorecard (and, for a
#: regression, decide "within noise"); with ``all_statistics=False`` only they get them.
SHOWN_STATISTICS: frozenset[Status] = frozenset(
    word for word, row in STATUSES.items() if row.statistics)


def compare_record(record: StageRecord, baseline: Baseline, specs: Mapping[str, MetricSpec],
                   tolerances: Tolerances, *, alpha: float | None = None,
                   permutations: int = 10_000, all_statistics: bool = True,
                   statistics: bool = True) -> list[MetricDiff]:
    """Each metric of ``record`` against the baseline entry of its test and
    :attr:`~StageRecord.entry_key`, then each metric of that entry the record no
    longer has (``"lost"``).

    Like is compared with like (:mod:`pytest_rag.compare.likeness`): an entry
    measured on other gold is ``"not compared"``, one computed under other
    settings ``"settings changed"``; a per-query metric compares its means over
    the queries measured on both sides whose gold did not change
    (:mod:`pytest_rag.compare.gold`), and a query measured in the entry, still
    there with the same gold, but not measured now makes the metric ``"lost"``.
    A metric the output can leave undefined although every input is given
    (:attr:`~pytest_rag.registry.MetricSpec.undefined_when`) compares each
    side's mean over what it measured of the queries both share, its paired
    statistics over the queries measured on both; only a query whose run input
    is gone makes it ``"lost"`` (:func:`~pytest_rag.compare.likeness.output_shift`).

    Metrics with per-query values on both sides also get a paired randomization
    test and a bootstrap interval of the change (see
    :mod:`pytest_rag.compare.significance`).  With ``alpha``, a regression beyond the
    tolerance that is not significant at ``alpha`` is ``"within noise"``; a
    metric that cannot be tested (no per-query values on both sides, or fewer
    than two paired queries) is judged by its tolerance alone, and says so in
    :attr:`MetricDiff.rule`.

    The paired statistics cost time in proportion to the queries; with
    ``all_statistics=False`` they are computed only for the statuses of
    :data:`SHOWN_STATISTICS` (the others get ``None``), which is what the
    scorecard shows and what ``alpha`` decides on.  ``statistics=False`` leaves
    them out altogether (an update, which needs only the statuses).
    """
    from . import likeness

    entry = baseline.entry(record.nodeid, record.entry_key)
    change = baseline.gold_change(record)
    other_gold = likeness.different_gold(entry, record)
    settings = likeness.settings_change(entry, record)
    diffs = []
    for key, current in record.values.items():
        spec = specs.get(f"{record.stage}.{key}")
        direction = spec.direction if spec is not None else Direction.INFO
        old = baseline.value(record.nodeid, record.entry_key, key) if entry is not None else None
        before = (entry or {}).get("per_query", {}).get(key)
        after = record.per_query.get(key)
        per_query = before is not None and after is not None
        blocked = change is not None and _nothing_to_compare(change, spec, per_query)
        lost: tuple[str, ...] = ()
        shift = None  # a metric the output can leave undefined: compared on what each measured
        shift_note = ""
        lost_share = 0.0
        if (before is not None and after is not None and not blocked and old is not None
                and other_gold is None and spec is not None and spec.per_query
                and spec.undefined_when is not None):
            shift = likeness.output_shift(entry or {}, before, after, record, change,
                                          likeness.ran_queries(record.per_query))
            lost = shift.lost
            shift_note = shift.note(spec.undefined_when)
            if (shift.before != {query for query, value in before.items() if value is not None}
                    or shift.after != {query for query, value in after.items()
                                       if value is not None}):
                # Each side's mean over what it measured of the queries both share.
                old, current = mean_over(before, shift.before), mean_over(after, shift.after)
            # The paired statistics and the queries named: measured on both sides (and lost).
            kept = shift.paired | set(lost)
            before = {query: value for query, value in before.items() if query in kept}
            after = {query: value for query, value in after.items() if query in kept}
            if lost:
                lost_share = len(lost) / (len(lost) + len(shift.before))
        elif (before is not None and after is not None and not blocked and old is not None
                and other_gold is None):
            lost = likeness.lost_queries(before, after, record, change)
            same = likeness.compared_queries(before, after, change)
            measured_before = {query for query, value in before.items() if value is not None}
            measured_after = {query for query, value in after.items() if value is not None}
            if same != measured_before or same != measured_after:
                # Compare the same queries on both sides: the means over those.
                kept = same | set(lost)
                before = {query: value for query, value in before.items() if query in kept}
                after = {query: value for query, value in after.items() if query in kept}
                if same and (spec is None or spec.per_query):
                    old, current = mean_over(before, same), mean_over(after, same)
            if lost:
                lost_share = len(lost) / len(measured_before)
        tolerance = tolerances.at(spec, old) if spec is not None and old is not None else 0.0
        worse: tuple[tuple[str, float | None, float | None], ...] = ()
        note = rule = ""
        status: Status
        if shift is not None and not lost and (old is None or current is None):
            # The output left one side nothing measured: nothing to compare, nothing lost.
            status = "unchanged"
        elif old is None:
            status = "new" if current is not None else "unchanged"
        elif direction is Direction.INFO:
            status = "info"
        elif other_gold is not None:
            status, note, rule = "not compared", other_gold, "different gold"
        elif settings is not None:
            status, note, rule = "settings changed", settings, "settings changed"
        elif blocked:
            status = "gold changed"
        elif current is None or lost:
            status, rule = "lost", "no longer measured"
            if lost:
                note = likeness.lost_text(lost)
                worse = _worse_queries(direction, before or {}, after or {})
            else:
                lost_share = 1.0  # the whole metric
        elif direction.worse(current, old, tolerance):
            status = "regressed"
            worse = _worse_queries(direction, before or {}, after or {})
        elif direction.worse(old, current, tolerances.at(spec, current) if spec else 0.0):
            # Improved: the old value would be a regression from the current one, so a
            # relative tolerance (latency: 100% + 5 ms) can be beaten in both directions.
            status = "improved"
        else:
            status = "unchanged"
        p_value = ci_low = ci_high = None
        if (statistics and before and after and old is not None and current is not None
                and (all_statistics or status in SHOWN_STATISTICS)):
            from .significance import paired_change  # numpy: only when comparing

            paired = paired_change(before, after, permutations=permutations,
                                   resamples=permutations)
            p_value, ci_low, ci_high = paired.p_value, paired.ci_low, paired.ci_high
            # Fewer than two paired queries give no p-value: then, as for a
            # metric without per-query values, the tolerance alone decides.
            if (status == "regressed" and alpha is not None and paired.p_value is not None
                    and paired.p_value >= alpha):
                status = "within noise"
        if alpha is not None and not rule and status in ("regressed", "improved"):
            if p_value is None:
                rule = "tolerance (no p-value: " + (
                    "fewer than 2 paired queries)" if (before and after) or shift is not None
                    else "no per-query values)")
            elif status == "improved" or p_value >= alpha:
                rule = "tolerance"
        if shift_note:
            note = f"{note}; {shift_note}" if note else shift_note
        diffs.append(MetricDiff(record.stage, key, current, old, tolerance, direction.value,
                                status, worse, p_value, ci_low, ci_high, note,
                                rule if alpha is not None else "", record.name,
                                lost_share if status == "lost" else 0.0))
    diffs.extend(_lost_keys(record, entry))
    return diffs


def _lost_keys(record: StageRecord, entry: Mapping[str, Any] | None) -> list[MetricDiff]:
    """A ``"lost"`` diff for each metric of ``entry`` that ``record`` no longer has (a
    renamed or removed metric: its gate would vanish silently); informational
    metrics are ``"info"``."""
    diffs = []
    for key, metric in (entry or {}).get("metrics", {}).items():
        if key in record.values:
            continue
        value = metric.get("value") if isinstance(metric, Mapping) else metric
        direction = (metric.get("direction") if isinstance(metric, Mapping) else None) or "info"
        if value is None:
            continue
        status: Status = "info" if direction == Direction.INFO.value else "lost"
        diffs.append(MetricDiff(record.stage, key, None, float(value), 0.0, direction, status,
                                note="no longer produced by this test (renamed or removed?)",
                                rule="no longer measured" if status == "lost" else "",
                                name=record.name, lost_share=1.0 if status == "lost" else 0.0))
    return diffs
