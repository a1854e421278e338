"""Parametrized variants of one test, side by side: the chunker-sweep table.

``test_chunking[markdown-160]``, ``test_chunking[tokens-160-32]``, ... record
stages under one test function.  :func:`find_sweeps` groups them into one
:class:`Sweep` per test function: a row per variant with its knobs (the
parametrize arguments), a column per metric that differs between variants
(stages in pipeline order), the variant's costs, and the :class:`Verdict` of
its rule (:mod:`pytest_rag.compare.sweeps.verdict`).

Stars (the best value of a column) and the verdict use only metrics that
compare across chunkers on equal terms: a metric that counts relevant chunks
(:attr:`pytest_rag.registry.MetricSpec.graded_by_chunk`) is shown but marked
not comparable when its grades were derived from evidence, since each variant
then grades its own chunks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import did_you_mean
from ...registry import REGISTRY, STAGES, MetricSpec
from .verdict import FAILED, Verdict, decide

__all__ = ["COSTS", "DEFAULT_OBJECTIVES", "Sweep", "SweepColumn", "SweepRule", "Variant",
           "find_sweeps", "split_nodeid"]

#: The costs measured for every variant (see :mod:`pytest_rag.compare.sweeps.costs`):
#: name to what it counts.  Metrics of the registry that are costs
#: (:attr:`~pytest_rag.registry.MetricSpec.cost`: latency, money, tokens) count too,
#: named ``"stage.key"``.
COSTS: dict[str, str] = {
    "chunks": "chunks in the index",
    "index_tokens": "tokens in the index (sum over the chunks)",
    "topk_tokens": "mean tokens per query in the retrieved top K",
    "context_tokens": "mean tokens per query in the packed context",
}
#: The objective when the rule names none: the first of these the sweep measured
#: (then the first comparable metric with a direction, in pipeline order).
DEFAULT_OBJECTIVES = ("end_to_end.task_success_rate", "end_to_end.answer_f1",
                      "generation.answer_f1", "augmentation.context_sufficient",
                      "retrieval.complete_evidence_recall", "retrieval.token_recall",
                      "chunking.evidence_completeness")
#: The costs when the rule names none: those measured, in this order.
DEFAULT_COSTS = ("context_tokens", "topk_tokens", "index_tokens")


def split_nodeid(nodeid: str) -> tuple[str, str | None]:
    """``("path::test", "param-id")`` for a parametrized node id, else ``(nodeid, None)``."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return nodeid, None
    base, _, variant = nodeid.partition("[")
    return base, variant[:-1]


@dataclass(frozen=True)
class SweepRule:
    """How a sweep decides (``@pytest.mark.rag_sweep(objective=..., cost=..., shipped=...)``).

    ``objective``: the metric to maximise (or minimise), ``"stage.key"``; ``None``:
    :data:`DEFAULT_OBJECTIVES`.  ``cost``: cost names (:data:`COSTS` or a cost
    metric's ``"stage.key"``), compared in order; ``None``: :data:`DEFAULT_COSTS`.
    ``shipped``: the variant id the project ships; the run fails when another
    variant beats it beyond noise at no higher cost.  ``require``: thresholds
    (``"chunking.size_compliance >= 0.9"``) a variant must meet to be chosen or
    to beat the shipped one; a variant whose test failed never is.
    """

    objective: str | None = None
    cost: tuple[str, ...] | None = None
    shipped: str | None = None
    require: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"objective": self.objective,
                "cost": None if self.cost is None else list(self.cost), "shipped": self.shipped,
                "require": list(self.require)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> SweepRule:
        if not data:
            return cls()
        cost = data.get("cost")
        return cls(data.get("objective"), None if cost is None else tuple(cost),
                   data.get("shipped"), tuple(data.get("require", ())))

    def missed(self, values: Mapping[str, float | None],
               specs: Mapping[str, MetricSpec]) -> list[str]:
        """The requirements that ``values`` (``"stage.key"`` to value) miss."""
        from ..thresholds import parse_threshold

        out = []
        for text in self.require:
            threshold = parse_threshold(text, "rag_sweep", specs)
            if not threshold.holds(values.get(threshold.name)):
                out.append(text)
        return out

    @classmethod
    def validated(cls, specs: Mapping[str, MetricSpec], objective: object = None,
                  cost: object = None, shipped: object = None,
                  require: object = ()) -> SweepRule:
        """A rule from the marker's arguments; :class:`ValueError` names what is wrong."""
        if objective is not None:
            if not isinstance(objective, str) or objective not in specs:
                hint = did_you_mean(objective, specs) if isinstance(objective, str) else ""
                raise ValueError(f"rag_sweep(objective={objective!r}): not a metric{hint}; "
                                 "give 'stage.key', e.g. 'augmentation.context_sufficient'")
            if specs[objective].direction.value == "info":
                raise ValueError(f"rag_sweep(objective={objective!r}): an informational "
                                 "metric has no better direction")
        names: tuple[str, ...] | None = None
        if cost is not None:
            names = (cost,) if isinstance(cost, str) else tuple(cost) if isinstance(
                cost, (list, tuple)) else ()
            known = [*COSTS, *(name for name, spec in specs.items() if spec.cost)]
            for name in names or (cost,):
                if not isinstance(name, str) or name not in known:
                    hint = did_you_mean(name, known) if isinstance(name, str) else ""
                    raise ValueError(f"rag_sweep(cost={cost!r}): {name!r} is not a cost{hint}; "
                                     f"known: {', '.join(known)}")
        if shipped is not None and not isinstance(shipped, str):
            raise ValueError(f"rag_sweep(shipped={shipped!r}): give the variant's id, a string")
        required = (require,) if isinstance(require, str) else require
        if not isinstance(required, (list, tuple)) or not all(
                isinstance(text, str) for text in required):
            raise ValueError(f"rag_sweep(require={require!r}): give thresholds like "
                             "'chunking.size_compliance >= 0.9'")
        from ..thresholds import parse_threshold

        for text in required:
            try:
                parse_threshold(text, "rag_sweep", specs)
            except ValueError as error:
                raise ValueError(f"rag_sweep(require=...): {error}") from None
        return cls(objective, names, shipped, tuple(required))


@dataclass(frozen=True)
class Variant:
    """What the plugin knows of one variant beyond its metrics: its knobs (parameter
    names and values, in order) and its measured costs (:data:`COSTS`)."""

    knobs: tuple[tuple[str, Any], ...] = ()
    costs: Mapping[str, float] = field(default_factory=dict)
    rule: SweepRule | None = None

    def to_json(self) -> dict[str, Any]:
        return {"knobs": [[name, value] for name, value in self.knobs],
                "costs": dict(self.costs),
                "rule": None if self.rule is None else self.rule.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Variant:
        rule = data.get("rule")
        return cls(tuple((name, value) for name, value in data.get("knobs", ())),
                   dict(data.get("costs", {})),
                   None if rule is None else SweepRule.from_json(rule))


@dataclass(frozen=True)
class SweepColumn:
    """One metric of a sweep: ``values[i]`` of variant ``i`` (``None``: not measured);
    ``best``: the variants with the best value (only for comparable metrics of a
    ``rag_sweep``); ``comparable``: whether it compares across the variants on
    equal terms."""

    stage: str
    key: str
    direction: str
    comparable: bool
    values: tuple[float | None, ...]
    best: tuple[int, ...] = ()
    per_query: tuple[Mapping[str, float | None], ...] = field(default=(), repr=False,
                                                              compare=False)

    @property
    def name(self) -> str:
        return f"{self.stage}.{self.key}"


@dataclass(frozen=True)
class Sweep:
    """One test function's variants.

    ``columns``: the metrics that differ between variants, stages in pipeline
    order; ``same``: how many are equal in every variant (left out);
    ``costs``: ``(name, values per variant)``; ``knobs[i]``: variant ``i``'s
    parameters; ``starred``: the test is marked ``rag_sweep`` (only then are
    bests starred and a verdict given).
    """

    test: str
    variants: tuple[str, ...]
    knobs: tuple[tuple[tuple[str, Any], ...], ...]
    columns: tuple[SweepColumn, ...]
    costs: tuple[tuple[str, tuple[float | None, ...]], ...] = ()
    same: int = 0
    starred: bool = True
    rule: SweepRule = SweepRule()
    verdict: Verdict | None = None

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(column.stage for column in self.columns))

    @property
    def knob_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for knobs in self.knobs for name, _ in knobs))

    def knob(self, variant: int, name: str) -> Any:
        return dict(self.knobs[variant]).get(name)

    def to_json(self) -> dict[str, Any]:
        stages: dict[str, dict[str, Any]] = {}
        for column in self.columns:
            stages.setdefault(column.stage, {"metrics": {}})["metrics"][column.key] = {
                "values": dict(zip(self.variants, column.values)),
                "best": [self.variants[i] for i in column.best],
                "comparable": column.comparable, "direction": column.direction}
        data: dict[str, Any] = {
            "variants": list(self.variants),
            "knobs": {variant: dict(knobs)
                      for variant, knobs in zip(self.variants, self.knobs)},
            "stages": stages, "equal_in_every_variant": self.same,
            "costs": {name: dict(zip(self.variants, values)) for name, values in self.costs},
            "rag_sweep": self.starred, "rule": self.rule.to_json(), "verdict": None}
        verdict = self.verdict
        if verdict is not None:
            data["verdict"] = {
                "objective": verdict.objective, "direction": verdict.direction,
                "cost": list(verdict.cost), "rule": verdict.rule,
                "best": _name(self.variants, verdict.best),
                "recommended": _name(self.variants, verdict.recommended),
                "reason": verdict.reason,
                "tied_with_best": [v for v, s in zip(self.variants, verdict.standings) if s.tied],
                "frontier": [v for v, s in zip(self.variants, verdict.standings) if s.frontier],
                "variants": {v: s.to_json() for v, s in zip(self.variants, verdict.standings)},
                "shipped": _name(self.variants, verdict.shipped),
                "beaten_by": _name(self.variants, verdict.beaten_by), "gate": verdict.gate,
                "shipped_note": verdict.shipped_note}
        return data


def _name(variants: Sequence[str], index: int | None) -> str | None:
    return None if index is None else variants[index]


def _best(values: Sequence[float | None], direction: str) -> tuple[int, ...]:
    measured = [(v, i) for i, v in enumerate(values) if v is not None]
    if direction not in ("higher", "lower") or not measured:
        return ()
    target = max(measured)[0] if direction == "higher" else min(measured)[0]
    return tuple(i for v, i in measured if v == target)


def _objective(rule: SweepRule, columns: Sequence[SweepColumn],
               all_columns: Mapping[str, SweepColumn], specs: Mapping[str, MetricSpec],
               count: int) -> SweepColumn | None:
    if rule.objective is not None:
        named = all_columns.get(rule.objective)
        if named is None:  # not recorded: decided as "not measured", so a gate fails
            stage, _, key = rule.objective.partition(".")
            spec = specs.get(rule.objective)
            named = SweepColumn(stage, key, spec.direction.value if spec else "higher", True,
                                (None,) * count, (), ({},) * count)
        return named
    for name in DEFAULT_OBJECTIVES:
        column = all_columns.get(name)
        if column is not None and column.comparable and any(
                v is not None for v in column.values):
            return column
    return next((c for c in columns if c.comparable and c.direction != "info"), None)


def _sweep(base: str, members: Sequence[tuple[str, Any]], directions: Mapping[str, str],
           specs: Mapping[str, MetricSpec], variants: Mapping[str, Variant],
           starred: bool) -> Sweep:
    names = tuple(dict.fromkeys(variant for variant, _ in members))
    slot = {variant: i for i, variant in enumerate(names)}
    tables: list[dict[str, float | None]] = [{} for _ in names]
    queries: list[dict[str, Mapping[str, float | None]]] = [{} for _ in names]
    derived: set[str] = set()
    failed = [False] * len(names)
    for variant, entry in members:
        i = slot[variant]
        failed[i] = failed[i] or getattr(entry, "outcome", "passed") == "failed"
        for row in entry.rows:
            tables[i][f"{entry.stage}.{row.key}"] = row.value
        for key, values in getattr(entry, "per_query", {}).items():
            queries[i][f"{entry.stage}.{key}"] = values
        if entry.settings.get("relevance_from_evidence"):
            derived.add(entry.stage)
    order = {stage: index for index, stage in enumerate(STAGES)}
    keys = list(dict.fromkeys(key for table in tables for key in table))
    keys.sort(key=lambda name: order.get(name.partition(".")[0], len(order)))  # stable
    info: dict[str, Variant] = {}
    for variant, entry in members:
        info.setdefault(variant, variants.get(entry.nodeid, Variant()))
    all_columns: dict[str, SweepColumn] = {}
    for name in keys:
        stage, _, key = name.partition(".")
        spec = specs.get(name)
        comparable = not (spec is not None and spec.graded_by_chunk and stage in derived)
        direction = directions.get(name, "info")
        values = tuple(table.get(name) for table in tables)
        best = _best(values, direction) if starred and comparable else ()
        all_columns[name] = SweepColumn(stage, key, direction, comparable, values, best,
                                        tuple(q.get(name, {}) for q in queries))
    varying = [column for column in all_columns.values()
               if len(set(column.values)) > 1 and any(v is not None for v in column.values)]
    rule = next((v.rule for v in info.values() if v.rule is not None), SweepRule())
    cost_names = [name for name in COSTS if any(name in v.costs for v in info.values())]
    cost_names += [name for name in keys if name in specs and specs[name].cost
                   and any(table.get(name) is not None for table in tables)]
    costs = tuple((name, tuple(info[v].costs.get(name) if name in COSTS
                               else tables[slot[v]].get(name) for v in names))
                  for name in cost_names)
    knobs = tuple(info[v].knobs for v in names)
    verdict = None
    objective = _objective(rule, varying, all_columns, specs, len(names)) if starred else None
    if objective is not None:
        by_name = dict(costs)
        chosen = rule.cost if rule.cost is not None else tuple(
            name for name in DEFAULT_COSTS if name in by_name)
        matrix = [tuple(by_name.get(name, (None,) * len(names))[i] for name in chosen)
                  for i in range(len(names))]
        exclusions = []
        for i in range(len(names)):
            missed = rule.missed(tables[i], specs)
            exclusions.append(FAILED if failed[i] else
                              "it misses " + ", ".join(missed) if missed else "")
        verdict = decide(names, objective.name, objective.direction, objective.values,
                         objective.per_query, chosen, matrix, rule.shipped,
                         exclusions=exclusions)
    return Sweep(base, names, knobs, tuple(varying), costs, len(keys) - len(varying),
                 starred, rule, verdict)


def find_sweeps(entries: Sequence[Any], directions: Mapping[str, str],
                marked: Collection[str] | None = None,
                variants: Mapping[str, Variant] | None = None,
                specs: Mapping[str, MetricSpec] = REGISTRY) -> list[Sweep]:
    """Group scorecard entries (with ``nodeid``, ``stage``, ``settings``, ``rows`` and
    ``per_query``) into sweeps, one per test function with at least two variants.

    ``directions`` maps ``"stage.key"`` to ``"higher"``, ``"lower"`` or ``"info"``.
    ``marked``: the test functions (node ids without the parameter part) whose
    variants sweep one knob; the others (``[chroma]``, ``[clapnq]``: different
    datasets) are shown side by side with no best and no verdict.  ``None``: all
    of them.  ``variants``: knobs, costs and rule per node id.
    """
    groups: dict[str, list[tuple[str, Any]]] = {}
    for entry in entries:
        base, variant = split_nodeid(entry.nodeid)
        if variant is not None:
            groups.setdefault(base, []).append((variant, entry))
    sweeps = []
    for base, members in groups.items():
        if len({variant for variant, _ in members}) < 2:
            continue
        sweeps.append(_sweep(base, members, directions, specs, variants or {},
                             marked is None or base in marked))
    return sweeps
