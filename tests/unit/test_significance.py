"""The paired randomization test and bootstrap interval."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.compare.significance import paired_change, paired_changes


def test_identical_runs_are_not_significant() -> None:
    before = {f"q{i}": i / 10 for i in range(10)}
    change = paired_change(before, dict(before))
    assert change.queries == 10 and change.mean_delta == 0.0
    assert change.p_value == 1.0 and (change.ci_low, change.ci_high) == (0.0, 0.0)


def _enumerated(diffs: np.ndarray) -> float:
    """The exact p-value, by listing every sign assignment of the changed queries."""
    changed = diffs[diffs != 0]
    observed = abs(diffs.mean())
    return float(np.mean([abs((np.array(s) * changed).sum() / len(diffs)) >= observed - 1e-12
                          for s in itertools.product([-1, 1], repeat=len(changed))]))


def test_few_changed_queries_give_the_exact_p_value() -> None:
    # 8 changed queries: 256 sign assignments, all counted.
    diffs = np.array([0.3, 0.1, -0.05, 0.2, 0.25, 0.15, -0.1, 0.4])
    before = {f"q{i}": 0.5 for i in range(8)}
    after = {f"q{i}": 0.5 + d for i, d in enumerate(diffs)}
    change = paired_change(before, after)
    assert change.p_value == _enumerated(diffs)
    assert change.ci_low is not None and change.ci_low < diffs.mean() < change.ci_high
    # Four queries that all got worse, among 100: 2 of the 16 assignments are as far
    # from 0 (the README's floor), where the random draws estimated 0.122 or so.
    before = {f"q{i:03d}": 0.5 for i in range(100)}
    worse = {**before, **{f"q{i:03d}": 0.0 for i in range(4)}}
    assert paired_change(before, worse).p_value == 0.125
    # Fewer draws than assignments: the draws' estimate, as before.
    assert paired_change(before, worse, permutations=10).p_value == _reference(
        before, worse, 10)[0]


def test_many_changed_queries_keep_the_estimate() -> None:
    rng = np.random.default_rng(5)
    before = {f"q{i:02d}": float(v) for i, v in enumerate(rng.random(14))}
    after = {q: v + 0.01 * (1 + i % 3) for i, (q, v) in enumerate(before.items())}
    change = paired_change(before, after, permutations=300, resamples=300)
    assert (change.p_value, change.ci_low, change.ci_high) == _reference(before, after, 300)


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


def _reference(before: dict[str, float], after: dict[str, float], permutations: int,
               seed: int = 20_241_202) -> tuple[float, float, float]:
    """The p-value and interval drawn the plain way: every sign of every query, every
    bootstrap pick, in blocks of 512 (what pytest-rag 0.x computed); the p-value
    enumerated where the changed queries' assignments are at most ``permutations``
    and 2 ** 13."""
    common = sorted(before)
    diffs = np.array([after[q] - before[q] for q in common])
    count = len(common)
    rng = np.random.default_rng(seed)
    scale = np.abs(diffs).max()
    target = abs(diffs.mean()) / scale - 1e-12
    unit = diffs / scale
    extreme = done = 0
    while done < permutations:
        block = min(512, permutations - done)
        signs = rng.integers(0, 2, size=(block, count), dtype=np.int8) * 2 - 1
        extreme += int((np.abs(signs @ unit) / count >= target).sum())
        done += block
    sums = np.empty(permutations)
    done = 0
    while done < permutations:
        block = min(512, permutations - done)
        picks = rng.integers(0, count, size=(block, count))
        sums[done:done + block] = diffs[picks].sum(axis=1)
        done += block
    tail = (1 - 0.95) / 2 * 100
    low, high = np.percentile(sums / count, [tail, 100 - tail])
    changed = int(np.count_nonzero(unit))
    exact = changed <= 13 and 2 ** changed <= permutations  # every assignment counted
    p_value = _enumerated(diffs) if exact else (extreme + 1) / (permutations + 1)
    return p_value, float(low), float(high)


@pytest.mark.parametrize("count", [2, 3, 5, 8, 13, 101, 1027])
@pytest.mark.parametrize("permutations", [1, 300, 512, 1100])
@pytest.mark.parametrize("changed", ["one", "some", "all"])
def test_the_draws_are_those_of_plain_sampling(count: int, permutations: int,
                                               changed: str) -> None:
    """Reading only the changed queries' signs, and drawing in bounded chunks, gives
    bit for bit the p-value and interval of drawing every sign and pick."""
    rng = np.random.default_rng(count * 7 + permutations)
    before = {f"q{i:05d}": float(v) for i, v in enumerate(rng.random(count))}
    after = dict(before)
    moved = {"one": [count // 2], "some": list(range(0, count, 3)),
             "all": list(range(count))}[changed]
    for i in moved:
        after[f"q{i:05d}"] = float(rng.random())
    change = paired_change(before, after, permutations=permutations, resamples=permutations)
    assert (change.p_value, change.ci_low, change.ci_high) == _reference(before, after,
                                                                         permutations)


def test_chunked_draws_match_with_a_small_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_rag.compare import significance

    monkeypatch.setattr(significance, "_CHUNK", 64)
    rng = np.random.default_rng(11)
    before = {f"q{i}": float(v) for i, v in enumerate(rng.random(77))}
    after = {k: v + (0.1 if k in ("q3", "q40") else 0.0) for k, v in before.items()}
    change = paired_change(before, after, permutations=700, resamples=700)
    assert (change.p_value, change.ci_low, change.ci_high) == _reference(before, after, 700)


def _pair(values: list[float], dropped: set[int], moved: dict[int, float]
          ) -> dict[str, float | None]:
    return {f"q{i:03d}": (None if i in dropped else moved.get(i, value))
            for i, value in enumerate(values)}


@settings(max_examples=budget(200))
@given(data=st.data(), count=st.integers(0, 40), draws=st.sampled_from([1, 7, 600]))
def test_several_comparisons_at_once_equal_one_at_a_time(data: st.DataObject, count: int,
                                                         draws: int) -> None:
    """A sweep compares every variant with the best at once, sharing the bootstrap's
    draws: each result is the one its comparison alone gives, bit for bit, and where
    no query is left out, the one of the plain draws (every sign, every pick)."""
    unit = st.floats(0, 1, allow_nan=False)
    values = data.draw(st.lists(unit, min_size=count, max_size=count))
    before = _pair(values, set(), {})
    index = st.integers(0, max(count - 1, 0))
    afters = [_pair(values, data.draw(st.sets(index, max_size=3)),
                    data.draw(st.dictionaries(index, unit, max_size=count)))
              for _ in range(data.draw(st.integers(1, 5)))]
    together = paired_changes(before, afters, permutations=draws, resamples=draws)
    assert together == [paired_change(before, after, permutations=draws, resamples=draws)
                        for after in afters]
    for after, change in zip(afters, together):
        kept = {q: v for q, v in after.items() if v is not None}
        if len(kept) == count >= 2 and any(kept[q] != before[q] for q in kept):
            plain = _reference({q: v for q, v in before.items() if v is not None}, kept, draws)
            assert (change.p_value, change.ci_low, change.ci_high) == plain


def test_comparisons_of_different_sizes_do_not_share_draws() -> None:
    """5 and 6 common queries use up the same random bytes in the sign test (a 64-bit
    output each, with one permutation), so the generator is in the same state before
    both bootstraps; their picks still differ, and each result is its own."""
    values = [0.1, 0.9, 0.4, 0.7, 0.2, 0.6]
    before = _pair(values, set(), {})
    five = _pair(values, {5}, {0: 0.8, 1: 0.35, 2: 0.0, 3: 0.95, 4: 0.5})
    six = _pair(values, set(), {0: 0.3, 1: 0.05, 2: 0.45, 3: 0.1, 4: 0.85, 5: 0.15})
    together = paired_changes(before, [five, six, six], permutations=1, resamples=500)
    assert together == [paired_change(before, five, permutations=1, resamples=500),
                        paired_change(before, six, permutations=1, resamples=500),
                        paired_change(before, six, permutations=1, resamples=500)]
    assert [change.queries for change in together] == [5, 6, 6]


#: Values whose differences are sums exact in any order (multiples of a power of two),
#: with a -0.0 and one beyond the bound (2**50 x 40 queries >= 2**53) among them.
_DYADIC = [0.0, 1.0, 0.5, 0.25, 0.75, 3.0, 2.0 ** -20, 2.0 ** 40, -0.0, 2.0 ** 50]


@settings(max_examples=budget(200))
@given(data=st.data(), count=st.integers(2, 40), draws=st.sampled_from([1, 7, 600]))
def test_exact_sums_from_pick_counts_equal_the_plain_draws(data: st.DataObject, count: int,
                                                           draws: int) -> None:
    """Differences that are multiples of one power of two have their bootstrap sums made
    from how often each query was picked (one matrix product): the interval is still
    the one of adding the picked values, bit for bit; so where the shortcut does not
    hold (a third, a -0.0, sums beyond 2**53) and when both kinds are compared at once.
    (The p-value takes no bootstrap sum.)"""
    value = st.one_of(st.sampled_from(_DYADIC), st.floats(0, 1, allow_nan=False))
    values = data.draw(st.lists(value, min_size=count, max_size=count))
    before = _pair(values, set(), {})
    index = st.integers(0, count - 1)
    afters = [_pair(values, set(), data.draw(st.dictionaries(index, value, max_size=count)))
              for _ in range(data.draw(st.integers(1, 4)))]
    together = paired_changes(before, afters, permutations=draws, resamples=draws)
    for after, change in zip(afters, together):
        if any(after[q] != before[q] for q in after):  # the interval: the p-value draws
            assert (change.ci_low, change.ci_high) == _reference(before, after, draws)[1:]


def test_which_differences_sum_exactly_in_any_order() -> None:
    from pytest_rag.compare.significance import _exact_in_any_order

    def exact(values: list[float]) -> bool:
        return _exact_in_any_order(np.array(values, dtype=np.float64))

    assert exact([0.0, 1.0, -1.0]) and exact([0.5, -0.25, 0.0]) and exact([2.0 ** -30])
    assert not exact([1 / 3, 0.0])  # no power of two makes it whole
    assert not exact([0.1])
    assert not exact([-0.0, 1.0])  # the sign of a sum of zeros depends on the order
    assert not exact([float("inf"), 0.0]) and not exact([float("nan")])
    assert not exact([2.0 ** 52, 1.0])  # two picks of 2**52 reach 2**53
    assert exact([2.0 ** 51, 1.0])
    assert not exact([])
