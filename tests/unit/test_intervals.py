"""Interval arithmetic against plain Python sets of positions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.text.intervals import containing, intersection_sizes, touching_count, union_sizes

interval = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1]))
grouped = st.lists(st.tuples(interval, st.integers(0, 3)), max_size=25)


def _arrays(items: list[tuple[tuple[int, int], int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo = np.array([i[0][0] for i in items], dtype=np.int64)
    hi = np.array([i[0][1] for i in items], dtype=np.int64)
    group = np.array([i[1] for i in items], dtype=np.int64)
    return lo, hi, group


def _sets(items: list[tuple[tuple[int, int], int]], groups: int) -> list[set[int]]:
    sets: list[set[int]] = [set() for _ in range(groups)]
    for (lo, hi), group in items:
        sets[group].update(range(lo, hi))
    return sets


@settings(max_examples=budget(200), derandomize=True, deadline=None)
@given(grouped, grouped)
def test_union_and_intersection_match_sets(a: list, b: list) -> None:
    groups = 4
    size_a, size_b, inter, union = intersection_sizes(*_arrays(a), *_arrays(b), groups)
    sets_a, sets_b = _sets(a, groups), _sets(b, groups)
    assert size_a.tolist() == [len(s) for s in sets_a]
    assert size_b.tolist() == [len(s) for s in sets_b]
    assert inter.tolist() == [len(x & y) for x, y in zip(sets_a, sets_b)]
    assert union.tolist() == [len(x | y) for x, y in zip(sets_a, sets_b)]
    assert union_sizes(*_arrays(a), groups).tolist() == [len(s) for s in sets_a]


@settings(max_examples=budget(200), derandomize=True, deadline=None)
@given(st.lists(interval, max_size=15), st.lists(interval, max_size=15))
def test_containing_and_touching_match_sets(outer: list, inner: list) -> None:
    o_lo = np.array([i[0] for i in outer], dtype=np.int64)
    o_hi = np.array([i[1] for i in outer], dtype=np.int64)
    i_lo = np.array([i[0] for i in inner], dtype=np.int64)
    i_hi = np.array([i[1] for i in inner], dtype=np.int64)
    held = containing(o_lo, o_hi, i_lo, i_hi).tolist()
    touching = touching_count(o_lo, o_hi, i_lo, i_hi).tolist()
    for index, (lo, hi) in enumerate(inner):
        positions = set(range(lo, hi))
        assert held[index] == (bool(positions) and any(
            positions <= set(range(a, b)) for a, b in outer))
        assert touching[index] == sum(1 for a, b in outer if positions & set(range(a, b)))


def test_empty_inputs() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert union_sizes(empty, empty, empty, 3).tolist() == [0, 0, 0]
    assert containing(empty, empty, np.array([1]), np.array([2])).tolist() == [False]
    assert touching_count(empty, empty, np.array([1]), np.array([2])).tolist() == [0]
