"""Helpers shared by the stage evaluators: per-query arrays, means, percentiles."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter, is_not

import numpy as np
import numpy.typing as npt

from ..dataset.model import RUN_FIELDS, Dataset
from ..registry import MetricSpec, describe_need, need_alternatives
from .report import Report

__all__ = ["FloatArray", "ReportBuilder", "mean", "percentile", "ratio"]

FloatArray = npt.NDArray[np.float64]


def mean(values: FloatArray) -> float | None:
    """Mean over the non-NaN entries; ``None`` when there is none."""
    valid = values[~np.isnan(values)]
    if valid.shape[0] == 0:
        return None
    with np.errstate(over="ignore"):  # handled below, so no RuntimeWarning for the user
        result = float(valid.mean())
    if not math.isfinite(result):  # the sum of huge finite values overflowed
        result = float((valid / valid.shape[0]).sum())
    return result


def ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> FloatArray:
    """Elementwise ``numerator / denominator``; NaN where the denominator is 0."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def f1(precision: FloatArray, recall: FloatArray) -> FloatArray:
    """Harmonic mean; 0 when precision + recall is 0; NaN where either is NaN."""
    total = precision + recall
    out = np.zeros_like(total)
    np.divide(2 * precision * recall, total, out=out, where=total > 0)
    out[np.isnan(total)] = np.nan
    return out


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """numpy's default (linear) percentile of the given values; ``None`` if none."""
    data = np.fromiter((v for v in values if v is not None), dtype=np.float64)
    if data.shape[0] == 0:
        return None
    return float(np.percentile(data, q))


def _has(value: object) -> bool:
    if value is None:
        return False
    if isinstance(value, (str, bytes)):
        return True
    try:
        return len(value) > 0  # type: ignore[arg-type]
    except TypeError:
        return True


_GOLD_FIELDS = {
    "relevant": "relevant",
    "expected_evidence": "expected_evidence",
    "reference_answer": "reference_answers",
    "required_facts": "required_facts",
    "expected_citations": "expected_citations",
    "answerable": "answerable",
}


def available(dataset: Dataset, settings: Mapping[str, object], name: str) -> bool:
    """Whether the input ``name`` (a FORMAT.md name or a setting) is given at all."""
    if name in settings:
        return settings[name] is not None
    if name == "documents":
        return bool(dataset.documents)
    if name == "chunks":
        return bool(dataset.chunks)
    if name == "expected_chunks":
        return bool(dataset.expected_chunks)
    if name == "expected_metadata":
        return bool(dataset.expected_metadata)
    vectors = dataset.vectors
    if name == "chunk_vectors":
        return vectors is not None and vectors.chunk_matrix is not None and len(vectors.chunk_ids) > 0
    if name == "sentence_vectors":
        return vectors is not None and bool(vectors.sentences)
    if name == "indexed_ids":
        return vectors is not None and vectors.indexed_ids is not None
    # The scans below run in C until the first value that is given.
    if name in _GOLD_FIELDS:
        values = map(attrgetter(_GOLD_FIELDS[name]), dataset.queries)
    elif name in RUN_FIELDS:
        values = map(attrgetter(name), dataset.run.values())
    else:
        return False
    return any(map(_has, filter(_given, values)))


_given = partial(is_not, None)


class ReportBuilder:
    """Collects a stage's values, then explains every ``None`` from the registry."""

    def __init__(self, stage: str, specs: Sequence[MetricSpec], dataset: Dataset,
                 settings: Mapping[str, object]) -> None:
        self.stage = stage
        self.specs = specs
        self.dataset = dataset
        self.settings = dict(settings)
        self.values: dict[str, float | None] = {spec.key: None for spec in specs}
        self.query_values: dict[str, FloatArray] = {}
        self.reasons: dict[str, str] = {}

    def set(self, key: str, value: float | None, *, reason: str | None = None) -> None:
        """Record an aggregate; ``reason`` explains a ``None`` better than the default."""
        if key not in self.values:
            raise KeyError(f"{key!r} is not a metric of stage {self.stage!r}")
        self.values[key] = None if value is None else float(value)
        if reason is not None:
            self.reasons[key] = reason

    def set_per_query(self, key: str, values: FloatArray) -> None:
        """Record per-query values (NaN = None) and their mean as the aggregate."""
        self.query_values[key] = values
        self.set(key, mean(values))

    def build(self) -> Report:
        missing: dict[str, str] = {}
        given: dict[str, bool] = {}  # each input is looked for once
        for spec in self.specs:
            if self.values[spec.key] is not None:
                continue
            for need in spec.needs:
                if need not in given:
                    given[need] = any(available(self.dataset, self.settings, name)
                                      for name in need_alternatives(need))
            absent = [describe_need(need) for need in spec.needs if not given[need]]
            if absent:
                missing[spec.key] = "needs " + ", ".join(absent)
            elif spec.key in self.reasons:
                missing[spec.key] = self.reasons[spec.key]
            elif spec.per_query:
                missing[spec.key] = ("no query has every input it needs ("
                                     + ", ".join(map(describe_need, spec.needs))
                                     + ") with a value that defines it")
            else:
                missing[spec.key] = "nothing in the data defines it (0 of 0)"
        query_ids = tuple(query.id for query in self.dataset.queries)
        return Report(self.stage, dict(self.values), self.settings, missing, query_ids,
                      dict(self.query_values), dataset=self.dataset)
