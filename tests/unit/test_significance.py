"""The paired randomization test and bootstrap interval."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pytest_rag.compare.significance import paired_change


def test_identical_runs_are_not_significant() -> None:
    before = {f"q{i}": i / 10 for i in range(10)}
    change = paired_change(before, dict(before))
    assert change.queries == 10 and change.mean_delta == 0.0
    assert change.p_value == 1.0 and (change.ci_low, change.ci_high) == (0.0, 0.0)


def test_exact_p_value_matches_full_enumeration_in_expectation() -> None:
    # With 8 queries there are 256 sign assignments; the Monte Carlo p-value with
    # many permutations must be close to the exact one.
    diffs = np.array([0.3, 0.1, -0.05, 0.2, 0.25, 0.15, -0.1, 0.4])
    before = {f"q{i}": 0.5 for i in range(8)}
    after = {f"q{i}": 0.5 + d for i, d in enumerate(diffs)}
    observed = abs(diffs.mean())
    exact = np.mean([abs((np.array(s) * diffs).mean()) >= observed - 1e-12
                     for s in itertools.product([-1, 1], repeat=8)])
    change = paired_change(before, after, permutations=20_000)
    assert change.p_value == pytest.approx(exact, abs=0.01)
    assert change.ci_low is not None and change.ci_low < diffs.mean() < change.ci_high


def test_same_data_same_numbers_and_order_does_not_matter() -> None:
    rng = np.random.default_rng(3)
    before = {f"q{i}": float(v) for i, v in enumerate(rng.random(50))}
    after = {k: v - 0.02 for k, v in before.items()}
    reversed_before = dict(reversed(list(before.items())))
    assert paired_change(before, after) == paired_change(reversed_before, after)


def test_missing_and_none_queries_are_left_out() -> None:
    change = paired_change({"a": 0.1, "b": None, "c": 0.3}, {"a": 0.2, "b": 0.5, "d": 1.0})
    assert change.queries == 1 and change.mean_delta == pytest.approx(0.1)
    assert change.p_value is None and change.ci_low is None
    assert paired_change({}, {}).mean_delta is None


def test_a_clear_shift_is_significant() -> None:
    rng = np.random.default_rng(7)
    before = {f"q{i}": float(v) for i, v in enumerate(rng.random(200))}
    after = {k: v - 0.1 for k, v in before.items()}
    change = paired_change(before, after)
    assert change.significant(0.05) and change.ci_high < 0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="confidence"):
        paired_change({}, {}, confidence=1.5)
    with pytest.raises(ValueError, match="permutations"):
        paired_change({}, {}, permutations=0)
