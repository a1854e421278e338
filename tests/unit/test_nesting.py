"""The metadata nesting limit: ``_too_deep`` against a recursive definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_rag.dataset.values import _too_deep

_SCALARS = st.one_of(st.none(), st.integers(), st.text(max_size=3))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=25)


def _levels(value: Any) -> int:
    """Levels of mappings and lists: 0 for a scalar, 1 for a flat mapping."""
    if isinstance(value, Mapping):
        children = list(value.values())
    elif isinstance(value, (list, tuple)):
        children = list(value)
    else:
        return 0
    return 1 + max((_levels(child) for child in children), default=0)


def _step(value: Any, key: Any) -> str:
    if not isinstance(value, Mapping):
        return f"[{key}]"
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{key!r}]"


@given(value=st.dictionaries(st.text(max_size=3), _VALUES, max_size=4),
       limit=st.integers(1, 5))
def test_too_deep_exactly_when_the_levels_exceed_the_limit(value: dict[str, Any],
                                                           limit: int) -> None:
    found = _too_deep(value, limit)
    assert (found is not None) == (_levels(value) > limit)
    if found is not None:  # the step names a child that is itself too deep
        assert any(_step(value, key) == found and _levels(child) >= limit
                   for key, child in value.items())


def test_flat_metadata_is_never_too_deep() -> None:
    assert _too_deep({"source": "a.md", "page": 3}, 1) is None
    assert _too_deep({"tags": ["a"]}, 1) == ".tags"
    assert _too_deep({"odd key": [[1]]}, 2) == "['odd key']"
