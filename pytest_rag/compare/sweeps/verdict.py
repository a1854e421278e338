"""Which sweep variant to ship: noise-aware ranking, the trade-off frontier, the gate.

Pure functions over the variants' objective values (their means and per-query
values) and their costs; :mod:`pytest_rag.compare.sweeps` feeds them.

* **Tied**: the variants share their queries, so each is compared with the
  best one query by query (:func:`pytest_rag.compare.significance.paired_changes`):
  a variant is tied with the best when the 95% interval of the paired mean
  difference contains 0 (or, without per-query values, when the means are equal).
* **Frontier**: a variant is dominated when another one is at least as good on
  the objective and costs no more on every cost, and is strictly better in one
  of them; the others form the frontier.
* **Recommendation**: among the variants on the frontier that are tied with the
  best, the one with the lowest cost (costs compared in the rule's order), then
  the best objective, then the first listed.
* **Eligible**: a variant whose test failed, or that misses a requirement of the
  rule, is shown but takes no part: it is never the best, tied, on the frontier,
  recommended, nor a variant that beats the shipped one.
* **Gate**: the shipped variant fails when another one is better on the
  objective beyond noise (interval above 0) and costs no more on every cost;
  the message names the recommended variant when it is one of those, else the
  best of them.
  When it passes, :attr:`Verdict.shipped_note` says why, and names the best
  variant that is better beyond noise at a higher cost (a trade-off) if any.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import did_you_mean
from ...formatting import delta_text, number_text

if TYPE_CHECKING:
    from ..significance import PairedChange

__all__ = ["Standing", "Verdict", "decide", "dominates", "frontier"]

#: Confidence of the interval that decides a tie.
CONFIDENCE = 0.95
#: Bootstrap resamples of that interval (a sweep needs no p-value, so the sign test
#: runs its minimum of one assignment): 2,000 keep a tenth of the cost of the
#: baseline diff's 10,000 with the 2.5 % and 97.5 % quantiles stable to about 1 %
#: of the interval's width.
RESAMPLES = 2_000
Costs = Sequence[float | None]


@dataclass(frozen=True)
class Standing:
    """One variant against the best on the objective.

    ``mean``: its objective value (``None``: not measured, then it is neither
    tied nor on the frontier); ``delta``, ``ci_low``, ``ci_high``: the mean
    paired difference to the best variant (this minus best) and its 95%
    interval (``None`` without two shared per-query values); ``tied``: within
    noise of the best (the best is tied with itself); ``frontier``: not dominated;
    ``eligible``: takes part in the decision (see the module's rules).
    """

    mean: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    tied: bool
    frontier: bool
    eligible: bool = True

    def to_json(self) -> dict[str, object]:
        return {"objective": self.mean, "delta_to_best": self.delta,
                "ci95": None if self.ci_low is None else [self.ci_low, self.ci_high],
                "tied_with_best": self.tied, "frontier": self.frontier,
                "eligible": self.eligible}


@dataclass(frozen=True)
class Verdict:
    """The sweep's decision under its rule.

    ``best``, ``recommended``, ``shipped`` and ``beaten_by`` are variant indices
    (``None`` when there is none); ``reason`` says why the recommendation won
    (or why there is none) and ``gate`` why the shipped variant fails (``None``:
    it passes, or none was stated); ``shipped_note`` why it passes (``None``
    when it fails or none was stated).
    """

    objective: str
    direction: str
    cost: tuple[str, ...]
    standings: tuple[Standing, ...]
    best: int | None
    recommended: int | None
    reason: str
    shipped: int | None = None
    beaten_by: int | None = None
    gate: str | None = None
    shipped_note: str | None = None

    @property
    def rule(self) -> str:
        """The rule in words (the same text in every report)."""
        cost = ", then ".join(self.cost) if self.cost else "no cost recorded"
        return (f"the cheapest ({cost}) of the non-dominated variants within noise of "
                f"the best {self.objective} ({self.direction} is better)")


def _oriented(value: float, direction: str) -> float:
    return value if direction == "higher" else -value


def dominates(a: tuple[float, Costs], b: tuple[float, Costs]) -> bool:
    """``a`` dominates ``b``: quality (oriented, higher better) at least as good, every
    cost known on both sides no higher, and one of them strictly better."""
    quality_a, costs_a = a
    quality_b, costs_b = b
    pairs = [(x, y) for x, y in zip(costs_a, costs_b) if x is not None and y is not None]
    if quality_a < quality_b or any(x > y for x, y in pairs):
        return False
    return quality_a > quality_b or any(x < y for x, y in pairs)


def frontier(points: Sequence[tuple[float, Costs] | None]) -> tuple[bool, ...]:
    """For each point (oriented quality, costs) whether no other point dominates it;
    ``None`` (not measured) is never on the frontier."""
    return tuple(point is not None and not any(
        other is not None and dominates(other, point) for other in points)
        for point in points)


def _changes(before: Mapping[str, float | None],
             afters: Sequence[Mapping[str, float | None]]) -> list[PairedChange]:
    """The paired differences ``after - before`` and their intervals (no p-value
    needed), the bootstrap's draws shared; numpy is imported here, when a sweep is
    decided, not with the reports."""
    from ..significance import paired_changes

    return paired_changes(before, afters, permutations=1, resamples=RESAMPLES,
                          confidence=CONFIDENCE)


def _cost_key(costs: Costs) -> tuple[float, ...]:
    return tuple(float("inf") if c is None else c for c in costs)


def _beats(change_low: float | None, change_high: float | None, direction: str) -> bool:
    """The interval of ``other - shipped`` lies wholly on the better side of 0."""
    if change_low is None or change_high is None:
        return False
    return change_low > 0 if direction == "higher" else change_high < 0


def decide(variants: Sequence[str], objective: str, direction: str,
           means: Sequence[float | None], per_query: Sequence[Mapping[str, float | None]],
           cost_names: Sequence[str], costs: Sequence[Costs],
           shipped: str | None = None, eligible: Sequence[bool] | None = None,
           exclusions: Sequence[str] | None = None) -> Verdict:
    """Rank the variants on ``objective`` and recommend one (see the module's rules).

    ``means[i]`` and ``per_query[i]`` are variant ``i``'s objective value and its
    per-query values (empty for a pooled metric); ``costs[i]`` its costs, in the
    order of ``cost_names``.  ``shipped``: the variant the project ships, checked
    by the gate.  ``eligible[i]``: variant ``i`` takes part (default: all).
    ``exclusions[i]``: why variant ``i`` takes no part ("its test failed", "it misses
    ..."; ``""``: it takes part), given instead of ``eligible`` to have the reason said.
    """
    count = len(variants)
    if exclusions is not None:
        eligible = [not why for why in exclusions]
    allowed = list(eligible) if eligible is not None else [True] * count
    points = [None if m is None or not ok else (_oriented(m, direction), tuple(c))
              for m, c, ok in zip(means, costs, allowed)]
    measured = [i for i in range(count) if points[i] is not None]  # and eligible
    on_front = frontier(points)
    best = (min(measured, key=lambda i: (-_oriented(means[i] or 0.0, direction),
                                         _cost_key(costs[i]), i)) if measured else None)
    standings = []
    changes: dict[int, PairedChange] = {}  # with the best, all at once (shared draws)
    if best is not None:
        compared = [i for i in range(count) if means[i] is not None and i != best]
        if compared:
            changes = dict(zip(compared, _changes(per_query[best],
                                                  [per_query[i] for i in compared])))
    for i in range(count):
        mean = means[i]
        if mean is None or best is None:
            standings.append(Standing(mean, None, None, None, False, False, allowed[i]))
            continue
        best_mean = means[best]
        assert best_mean is not None
        if i == best:
            standings.append(Standing(mean, 0.0, None, None, True, on_front[i]))
            continue
        change = changes[i]
        delta = mean - best_mean
        if change.ci_low is None or change.ci_high is None:
            tied = delta == 0
        else:
            tied = change.ci_low <= 0 <= change.ci_high
        standings.append(Standing(mean, delta, change.ci_low, change.ci_high,
                                  tied and allowed[i], on_front[i], allowed[i]))
    candidates = [i for i in measured if standings[i].tied and standings[i].frontier]
    recommended = (min(candidates, key=lambda i: (_cost_key(costs[i]),
                                                  -_oriented(means[i] or 0.0, direction), i))
                   if candidates else None)
    verdict = Verdict(objective, direction, tuple(cost_names), tuple(standings), best,
                      recommended, _reason(variants, objective, cost_names, costs, standings,
                                           best, recommended, len(candidates)))
    if shipped is None:
        return verdict
    return _gate(verdict, variants, shipped, [m if ok else None for m, ok in zip(means, allowed)],
                 per_query, costs, means, exclusions)


def _reason(variants: Sequence[str], objective: str, cost_names: Sequence[str],
            costs: Sequence[Costs], standings: Sequence[Standing], best: int | None,
            recommended: int | None, choices: int) -> str:
    if recommended is None or best is None:
        excluded = [v for v, s in zip(variants, standings) if not s.eligible]
        if excluded and all(s.mean is None for s in standings if s.eligible):
            if any(s.mean is not None for s in standings):  # the views list the excluded
                return ("every variant was excluded (its test failed or a requirement was "
                        "missed)" if len(excluded) == len(variants) else
                        f"no variant that takes part measured {objective}")
        return f"no variant measured {objective}"
    mean = standings[recommended].mean
    assert mean is not None
    said = f"{objective} {number_text(mean)}"
    if recommended == best:
        said += ", the best"
    else:
        best_mean = standings[best].mean
        assert best_mean is not None
        said += f", within noise of the best {number_text(best_mean)} ({variants[best]})"
    if cost_names and choices > 1:
        spent = ", ".join(f"{name} {_cost_text(value)}"
                          for name, value in zip(cost_names, costs[recommended]))
        said += f"; the lowest cost of the {choices} tied on the frontier: {spent}"
    return said


def _cost_text(value: float | None) -> str:
    """A cost: a count (chunks, tokens in the index) as a whole number, else a value."""
    if value is None:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() else number_text(value)


def _costs_against(names: Sequence[str], mine: Costs, theirs: Costs) -> str:
    """``chunks 120 vs 80, ...``: each cost of one variant against another's."""
    return ", ".join(f"{name} {_cost_text(a)} vs {_cost_text(b)}"
                     for name, a, b in zip(names, mine, theirs))


def _passed_note(verdict: Verdict, variants: Sequence[str], s: int,
                 means: Sequence[float | None], per_query: Sequence[Mapping[str, float | None]],
                 costs: Sequence[Costs], why: str) -> str:
    """Why the shipped variant ``s`` passes the gate: whether it takes part, and the best
    variant better beyond noise at a higher cost (the trade-off the gate lets pass)."""
    direction = verdict.direction
    mine = verdict.standings[s].mean
    assert mine is not None
    said = []
    if not verdict.standings[s].eligible:
        said.append(f"excluded: {why}; " + (
            "the failed test fails the run" if why == FAILED else
            "the gate does not fail on that" if why.startswith("it misses") else
            "a failed test fails the run, a missed requirement does not") if why else
            "excluded (its test failed or it misses a requirement)")
    # The gate weighs only the variants that take part: say so when some do not.
    rivals = ("no variant that takes part" if any(
        not standing.eligible for j, standing in enumerate(verdict.standings) if j != s)
        else "no variant")
    better = [j for j, mean in enumerate(means) if j != s and mean is not None
              and _oriented(mean, direction) > _oriented(mine, direction)]
    costlier = _beyond_noise(s, better, means, per_query, direction)
    if not costlier:
        said.append(f"{rivals} beats it beyond noise at no higher cost")
    else:
        _, j, _, _ = min(costlier)
        better_mean = means[j]
        assert better_mean is not None
        spent = _costs_against(verdict.cost, costs[j], costs[s])
        unknown = any(cost is None for cost in (*costs[j], *costs[s]))
        said.append(f"{rivals} beats it beyond noise at no higher cost; {variants[j]} is "
                    f"better beyond noise ({number_text(better_mean)} vs {number_text(mine)}), "
                    f"at a higher{' or unknown' if unknown else ''} cost"
                    + (f": {spent}" if spent else ""))
    return "; ".join(said)


def _beyond_noise(s: int, candidates: Sequence[int], means: Sequence[float | None],
                  per_query: Sequence[Mapping[str, float | None]], direction: str,
                  ) -> list[tuple[float, int, float | None, float | None]]:
    """The ``candidates`` better than variant ``s`` beyond noise, each as ``(key, j,
    low, high)``: ``min`` gives the best (``key``: its oriented mean, negated) and
    ``low``/``high`` bound the 95% interval of its paired difference to ``s``."""
    found = []
    for j, change in zip(candidates, _changes(per_query[s], [per_query[j] for j in candidates])
                         if candidates else []):
        if _beats(change.ci_low, change.ci_high, direction):
            mean = means[j]
            assert mean is not None
            found.append((-_oriented(mean, direction), j, change.ci_low, change.ci_high))
    return found


#: The exclusion of a variant whose test failed (see :func:`decide`'s ``exclusions``).
FAILED = "its test failed"


def _gate(verdict: Verdict, variants: Sequence[str], shipped: str,
          means: Sequence[float | None], per_query: Sequence[Mapping[str, float | None]],
          costs: Sequence[Costs], measured: Sequence[float | None],
          exclusions: Sequence[str] | None) -> Verdict:
    """``means``: of the eligible variants (``None`` for the others), which may beat the
    shipped one; ``measured``: of every variant."""
    import dataclasses

    if shipped not in variants:
        return dataclasses.replace(verdict, gate=(
            f"shipped variant {shipped!r} is not one of this sweep's variants"
            f"{did_you_mean(shipped, variants)}: " + ", ".join(variants)))
    s = variants.index(shipped)
    mine = measured[s]
    if mine is None:
        return dataclasses.replace(verdict, shipped=s, gate=(
            f"shipped variant {shipped!r} did not measure {verdict.objective}"))
    direction = verdict.direction
    rivals = [j for j, mean in enumerate(means)
              if j != s and mean is not None and _oriented(mean, direction) > _oriented(
                  mine, direction)
              # a cost that is higher, or unknown, is not "no higher cost"
              and not any(x is None or y is None or x > y for x, y in zip(costs[j], costs[s]))]
    winners = _beyond_noise(s, rivals, means, per_query, direction)
    if not winners:
        # Only variants at a higher (or unknown) cost are left to be better.
        others = [None if j in rivals else mean for j, mean in enumerate(means)]
        return dataclasses.replace(verdict, shipped=s, shipped_note=_passed_note(
            verdict, variants, s, others, per_query, costs,
            exclusions[s] if exclusions is not None else ""))
    # The recommended variant where it is one of them (the views then name one variant
    # twice, not two), else the best.
    _, j, low, high = next((w for w in winners if w[1] == verdict.recommended), min(winners))
    better = means[j]
    assert better is not None and low is not None and high is not None
    spent = _costs_against(verdict.cost, costs[j], costs[s])
    message = (f"shipped variant {shipped!r} is beaten beyond noise by {variants[j]!r} on "
               f"{verdict.objective}: {number_text(better)} vs {number_text(mine)} "
               f"({delta_text(better - mine)}, 95% interval [{delta_text(low)}, "
               f"{delta_text(high)}]) at no higher cost"
               + (f" ({spent})" if spent else ""))
    return dataclasses.replace(verdict, shipped=s, beaten_by=j, gate=message)
