"""Rules for single decoded values, and how a value is shown in a message.

:class:`ValueRules` is the part of the dataset parser
(:class:`~pytest_rag.dataset.parser.FormatRules`) that knows no section of the
format: a mapping with allowed keys, a list, a string, an id, a whole or a
finite number, a vector.  Each rule raises one
:class:`~pytest_rag.errors.DatasetError` naming the source and the place, with
what arrived shown by :func:`describe_value` (short, whatever the value).
"""

from __future__ import annotations

import datetime
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NoReturn, cast

from ..errors import DatasetError, describe_value, did_you_mean
from ..errors import is_bool as _is_bool
from ..errors import show_value as _show
from ..settings import SettingError, whole_number

__all__ = ["MAX_NESTING", "ValueRules", "describe_value"]

#: The deepest nesting of mappings and lists a free-form value (metadata) may
#: have; deeper values would exhaust Python's recursion in comparisons.
MAX_NESTING = 100
_STR: Final = frozenset({str})
_INT: Final = frozenset({int})


def _only(items: Iterable[object], types: frozenset[type]) -> bool:
    """Whether every item's exact type is in ``types`` (one C-level pass, no per-item call)."""
    return set(map(type, items)) <= types


def _is_plain_data(value: object) -> bool:
    """What a JSON or YAML file can hold (and numbers of numpy): not an object of a library."""
    return value is None or isinstance(value, (str, bytes, numbers.Number, Mapping, list, tuple,
                                               set, frozenset, datetime.date))


class ValueRules:
    """Validating converters of single values; errors name :attr:`source` and the place."""

    source: str

    def fail(self, place: str, problem: str) -> NoReturn:
        raise DatasetError(self.source, place, problem)

    def free_form(self, value: Mapping[str, Any], place: str) -> dict[str, Any]:
        """A metadata mapping, refused when nested deeper than :data:`MAX_NESTING`."""
        path = _too_deep(value, MAX_NESTING)
        if path is not None:
            self.fail(place + path, f"nested deeper than {MAX_NESTING} levels")
        return dict(value)

    def mapping(self, value: object, place: str, allowed: Sequence[str] | None = None,
                required: Sequence[str] = ()) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(place, f"expected a mapping, got {describe_value(value)}")
        for key in () if allowed is None and _only(value, _STR) else value:
            if not isinstance(key, str):
                self.fail(place, f"keys must be strings, got {describe_value(key)}")
            if allowed is not None and key not in allowed:
                self.fail(_join(place, key), f"unknown key{did_you_mean(key, allowed)}")
        for key in required:
            if value.get(key) is None:
                self.fail(place, f"missing required key {key!r}")
        return value

    def sequence(self, value: object, place: str) -> Sequence[Any]:
        if type(value) is list or type(value) is tuple:  # the common case, without ABC checks
            return value
        if (isinstance(value, (str, bytes, bytearray, Mapping, set, frozenset))
                or not isinstance(value, Iterable) or getattr(value, "ndim", None) == 0):
            self.fail(place, f"expected a list, got {describe_value(value)}")
        return value if isinstance(value, Sequence) else list(value)

    def string(self, value: object, place: str) -> str:
        if not isinstance(value, str):
            self.fail(place, f"expected a string, got {describe_value(value)}")
        return str(value)

    def identifier(self, value: object, place: str) -> str:
        text = self.string(value, place)
        if not text:
            self.fail(place, "an id must not be empty")
        return text

    def strings(self, value: object, place: str) -> tuple[str, ...]:
        items = self.sequence(value, place)
        if _only(items, _STR):  # str(item) is the item itself
            return tuple(items)
        return tuple(self.string(item, f"{place}[{i}]") for i, item in enumerate(items))

    def ids(self, value: object, place: str) -> tuple[str, ...]:
        items = self.sequence(value, place)
        if _only(items, _STR):  # checked in C; anything else gets the itemised message
            return tuple(items)
        return self.strings(items, place)

    def boolean(self, value: object, place: str) -> bool:
        if not _is_bool(value):
            self.fail(place, f"expected true or false, got {describe_value(value)}")
        return bool(value)

    def integer(self, value: object, place: str, minimum: int | None = None) -> int:
        try:  # the format's one rule for whole numbers, shared with the settings
            return whole_number(value, place, minimum)
        except SettingError as error:
            self.fail(error.place, error.problem)

    def number(self, value: object, place: str, minimum: float | None = None) -> float:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            self.fail(place, f"expected a number, got {describe_value(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if cast(float, value) > 0 else -math.inf
        if not math.isfinite(number):
            self.fail(place, f"must be a finite number, got {_show(value)}")
        if minimum is not None and number < minimum:
            self.fail(place, f"must be >= {minimum:g}, got {number:g}")
        return number

    def matrix(self, value: object, place: str, *, rows: bool) -> Any:
        """A finite float64 vector (``rows=False``) or matrix of row vectors.

        A float32 array of row vectors is kept as it is, without a float64
        copy: the stages read it a block at a time and compute in float64.
        """
        import numpy as np

        if isinstance(value, np.ndarray):
            array = value
            if array.dtype.kind not in "iuf":
                self.fail(place, f"expected numbers, got an array of {array.dtype}")
            want = 2 if rows else 1
            if rows and array.ndim == 1 and array.shape[0] == 0:
                array = array.reshape(0, 0)
            if array.ndim != want:
                self.fail(place, f"expected a {'list of vectors' if rows else 'vector'}, "
                                 f"got an array of {array.ndim} dimensions")
            if array.shape[-1] == 0 and not (rows and array.shape[0] == 0):
                self.fail(place, "a vector must have at least one dimension")
            if not (rows and array.dtype == np.float32):
                array = np.asarray(array, dtype=np.float64)
            # The row sums first, one BLAS product with a vector of ones at
            # memory speed: a NaN or an infinity makes its row's sum
            # non-finite.  Only then (or when finite values overflow a sum) is
            # every value checked, which also finds the first bad one.
            with np.errstate(over="ignore", invalid="ignore"):
                sums = array @ np.ones(array.shape[-1], dtype=array.dtype)
            if not np.isfinite(sums).all() and not np.isfinite(array).all():
                bad = np.argwhere(~np.isfinite(array))[0]
                where = "".join(f"[{int(i)}]" for i in bad)
                self.fail(f"{place}{where}",
                          f"must be a finite number, got {_show(float(array[tuple(bad)]))}")
            return array
        if rows:
            matrix = [self._vector_items(row, f"{place}[{i}]")
                      for i, row in enumerate(self.sequence(value, place))]
            if not matrix:
                return np.zeros((0, 0), dtype=np.float64)
            first = len(matrix[0])
            for i, row in enumerate(matrix):
                if len(row) != first:
                    self.fail(f"{place}[{i}]", f"has {len(row)} dimensions, "
                                               f"{place}[0] has {first}")
            return np.asarray(matrix, dtype=np.float64)
        return np.asarray(self._vector_items(value, place), dtype=np.float64)

    def _vector_items(self, value: object, place: str) -> list[float]:
        items = self.sequence(value, place)
        if not items:
            self.fail(place, "a vector must have at least one dimension")
        return [self.number(item, f"{place}[{j}]") for j, item in enumerate(items)]


def _too_deep(value: object, limit: int) -> str | None:
    """Where a value nested deeper than ``limit`` levels of mappings and lists below
    ``value`` starts (its first step, ``.a`` or ``[0]``), or ``None``; iterative, so any
    depth is safe.  Only containers are visited: flat metadata costs one pass."""
    containers = (Mapping, list, tuple)
    if not isinstance(value, containers):
        return None
    if limit == 0:
        return ""
    pairs: Iterable[tuple[object, object]] = (
        value.items() if isinstance(value, Mapping) else enumerate(value))
    # (container, its depth, the root's key or index it is under)
    stack: list[tuple[Any, int, object]] = [
        (child, 1, key) for key, child in pairs if isinstance(child, containers)]
    while stack:
        item, depth, top = stack.pop()
        if depth == limit:
            return _step(value, top)
        children = item.values() if isinstance(item, Mapping) else item
        stack.extend((child, depth + 1, top) for child in children
                     if isinstance(child, containers))
    return None


def _step(root: object, key: object) -> str:
    """``.key``, ``['odd key']`` or ``[3]``: one step below ``root``."""
    if not isinstance(root, Mapping):
        return f"[{key}]"
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{key!r}]"


def _join(place: str, key: str, *, dot: bool = False) -> str:
    """``place.key`` for identifier-like keys, else ``place['key']``."""
    if dot or key.isidentifier():
        return f"{place}.{key}" if place else key
    return f"{place}[{key!r}]"
