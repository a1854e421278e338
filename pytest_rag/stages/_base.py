"""What every stage evaluator shares: settings, input resolution, the report builder."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import partial
from operator import attrgetter, is_not
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from ..dataset.arguments import resolve_inputs
from ..dataset.caches import collector_paused
from ..dataset.fields import GOLD_FIELDS, RUN
from ..dataset.frameworks import validate_doc_id_key
from ..dataset.model import Dataset
from ..kernels.aggregate import FloatArray, mean
from ..registry import MetricSpec, describe_need, need_alternatives, stage_metrics
from ..settings import setting, validate_setting
from .report import Report

__all__ = ["RankedSettings", "RankedStageEvaluator", "ReportBuilder", "StageEvaluator",
           "StageSettings", "available", "explain_uncounted"]

#: The cut-off when neither the evaluator nor the dataset's params give one.
DEFAULT_K: int = setting("k").default

_S = TypeVar("_S", bound="StageSettings")


@dataclass(frozen=True)
class StageSettings:
    """The settings a stage reads, typed: one field per row of
    :data:`pytest_rag.settings.SETTINGS` whose ``stages`` name the stage (a test
    holds the two together), each field's default the value used when neither
    the evaluator nor the dataset's ``params`` give one.  A stage without
    settings (end to end) uses this class as it is."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The settings' names, in the order of the fields."""
        return tuple(item.name for item in fields(cls))

    def as_mapping(self) -> dict[str, Any]:
        """The settings as a report carries them (``Report.settings``, the baseline
        file, the JSON report): every field by name, except that a flag which is
        off is left out (so a report stays as it was before the flag existed)."""
        return {item.name: value for item in fields(self)
                if (value := getattr(self, item.name)) is not False}


class StageEvaluator(Generic[_S]):
    """Base of the seven evaluators.

    Subclasses set :attr:`stage`, :attr:`inputs` (the keyword arguments
    ``evaluate`` accepts) and :attr:`settings_type` (a :class:`StageSettings`),
    and implement :meth:`_compute`, which gets the settings typed.  Settings
    are constructor arguments stored as attributes of the same name; a setting
    left ``None`` falls back to the dataset's ``params`` and then to the
    field's default (``k`` = 5, ``boundary_tolerance`` = 0, ``abstain_phrases``
    the built-in list, none for the others).
    """

    stage: ClassVar[str]
    inputs: ClassVar[frozenset[str]]
    #: The typed settings of the stage; ``settings_names`` are its fields.
    settings_type: type[_S]
    settings_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.settings_names = cls.settings_type.names()

    def _settings(self, dataset: Dataset) -> _S:
        """The settings in force for ``dataset``: each from the evaluator's attribute of
        the same name, else from the dataset's ``params`` (checked by the table's rule,
        a bad value named ``params.<name>``), else the field's default."""
        values: dict[str, Any] = {}
        for name in self.settings_names:
            value = getattr(self, name)
            if value is None:
                value = validate_setting(name, getattr(dataset.params, name), f"params.{name}")
            if value is not None:
                values[name] = value
        return self.settings_type(**values)

    def _prepare(self, dataset: Dataset, settings: _S) -> Dataset:
        """The dataset :meth:`_compute` sees (a hook; the ranked stages derive grades)."""
        return dataset

    def evaluate(self, dataset: Dataset | None = None, /, *, doc_id_key: str | None = None,
                 **inputs: Any) -> Report:
        """Evaluate the stage on ``dataset``, with ``inputs`` replacing its inputs.

        Parameters
        ----------
        dataset:
            A loaded :class:`~pytest_rag.Dataset` (gold and run), or ``None``.
        doc_id_key:
            The metadata key that names the document of a framework chunk
            object (LangChain, LlamaIndex, Haystack) instead of the defaults
            (:mod:`pytest_rag.dataset.frameworks`).
        **inputs:
            Inputs by their dataset-format names.  Per-query inputs are mappings of
            query id to value (``retrieved_ids={"q1": ["c3", "c1"]}``); an input
            passed here replaces the dataset's input of the same name for every
            query.  ``chunks`` and the ranked lists also take the chunk objects
            of LangChain, LlamaIndex and Haystack.

        Returns
        -------
        Report
            Every key of the stage; ``None`` where not measured, with the reason
            in ``report.missing``.
        """
        # The collector is paused (and restored) around the whole call: the
        # objects built from the inputs are freed on return, before it is back.
        validate_doc_id_key(doc_id_key)
        with collector_paused():
            return self._evaluate(dataset, inputs, doc_id_key)

    def _evaluate(self, dataset: Dataset | None, inputs: Mapping[str, Any],
                  doc_id_key: str | None = None) -> Report:
        data = resolve_inputs(dataset, inputs, self.inputs, doc_id_key=doc_id_key)
        settings = self._settings(data)
        data = self._prepare(data, settings)
        builder = ReportBuilder(self.stage, stage_metrics(self.stage), data,
                                settings.as_mapping())
        self._compute(data, settings, builder)
        return builder.build()

    def _compute(self, dataset: Dataset, settings: _S, builder: ReportBuilder) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({args})"


@dataclass(frozen=True)
class RankedSettings(StageSettings):
    """The settings of retrieval, reranking and embedding (see :class:`RankedStageEvaluator`)."""

    k: int = DEFAULT_K
    relevance_from_evidence: bool = False


class RankedStageEvaluator(StageEvaluator[RankedSettings]):
    """Base of the evaluators that rank chunks at K: retrieval, reranking, embedding.

    Parameters
    ----------
    k:
        Cut-off.  ``None``: the dataset's ``params.k``, else 5.
    relevance_from_evidence:
        Derive the grades of queries that have ``expected_evidence`` but no
        ``relevant`` from the chunks (2: holds a whole gold span, 1: touches
        one).  ``None``: the dataset's ``params.relevance_from_evidence``, else off.
    """

    settings_type = RankedSettings

    def __init__(self, *, k: int | None = None,
                 relevance_from_evidence: bool | None = None) -> None:
        self.k: int | None = validate_setting("k", k)
        # None: the dataset's params decide (else off).
        self.relevance_from_evidence: bool | None = validate_setting(
            "relevance_from_evidence", relevance_from_evidence)

    def _prepare(self, dataset: Dataset, settings: RankedSettings) -> Dataset:
        """With ``relevance_from_evidence`` on, queries without ``relevant`` get grades
        derived from their evidence spans (:mod:`pytest_rag.kernels.relevance`)."""
        if not settings.relevance_from_evidence:
            return dataset
        from ..kernels.relevance import relevance_from_evidence

        return relevance_from_evidence(dataset)


def explain_uncounted(builder: ReportBuilder, keys: Collection[str],
                      uncounted: npt.NDArray[np.bool_]) -> None:
    """Give the metrics ``keys`` that are ``None`` the reason of relevance derived
    against the retrieved chunks alone, when some query was graded so."""
    if not uncounted.any():
        return
    from ..kernels.relevance import UNCOUNTED_REASON

    for key in keys:
        if key in builder.values and builder.values[key] is None:
            builder.set(key, None, reason=UNCOUNTED_REASON)


def _has(value: object) -> bool:
    if value is None:
        return False
    if isinstance(value, (str, bytes)):
        return True
    try:
        return len(value) > 0  # type: ignore[arg-type]
    except TypeError:
        return True




def available(dataset: Dataset, settings: Mapping[str, object], name: str) -> bool:
    """Whether the input ``name`` (a dataset-format name or a setting) is given at all."""
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
        return (vectors is not None and vectors.chunk_matrix is not None
                and len(vectors.chunk_ids) > 0)
    if name == "sentence_vectors":
        return vectors is not None and bool(vectors.sentences)
    if name == "indexed_ids":
        return vectors is not None and vectors.indexed_ids is not None
    # The scans below run in C until the first value that is given.
    row = GOLD_FIELDS.get(name) or RUN.get(name)  # the field table's row of a per-query input
    if row is None:
        return False
    items = dataset.queries if row.section == "queries" else dataset.run.values()
    values = map(attrgetter(row.attribute), items)
    return any(map(_has, filter(_given, values)))


_given = partial(is_not, None)


#: Appended to "needs relevant" when the queries have evidence spans and grading
#: chunks from them is off: the setting that measures the metric.
EVIDENCE_HINT = ("; the queries have expected_evidence: relevance_from_evidence=True "
                 "(ini rag_relevance_from_evidence = true) grades the chunks from it")

#: Appended to "needs relevant" when grading chunks from evidence is on but no chunk is
#: known to grade (ids alone were given): what to pass.
NO_CHUNKS_HINT = ("; relevance_from_evidence is on, but no chunk is known to grade from "
                  "expected_evidence: give the full chunk list (chunks=, or the dataset's "
                  "chunks), or retrieved chunk objects instead of ids")


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
        """Set an aggregate; ``reason`` explains a ``None`` better than the default."""
        if key not in self.values:
            raise KeyError(f"{key!r} is not a metric of stage {self.stage!r}")
        self.values[key] = None if value is None else float(value)
        if reason is not None:
            self.reasons[key] = reason

    def set_per_query(self, key: str, values: FloatArray) -> None:
        """Set per-query values (NaN = None) and their mean as the aggregate."""
        self.query_values[key] = values
        self.set(key, mean(values))

    def _relevance_hint(self) -> str:
        """What would give ``relevant`` from the queries' evidence spans, where grading
        chunks from them is a setting of this stage: turning the setting on, or (on,
        with no chunk to grade) passing the chunks; ``""`` where neither applies."""
        if (self.stage not in setting("relevance_from_evidence").stages
                or not available(self.dataset, self.settings, "expected_evidence")):
            return ""
        if not self.settings.get("relevance_from_evidence"):
            return EVIDENCE_HINT
        return "" if available(self.dataset, self.settings, "chunks") else NO_CHUNKS_HINT

    def build(self) -> Report:
        missing: dict[str, str] = {}
        given: dict[str, bool] = {}  # each input is looked for once
        for spec in self.specs:
            if self.values[spec.key] is not None:
                continue
            if spec.key in self.reasons:  # the stage knows better than the inputs
                missing[spec.key] = self.reasons[spec.key]
                continue
            for need in spec.needs:
                if need not in given:
                    given[need] = any(available(self.dataset, self.settings, name)
                                      for name in need_alternatives(need))
            absent = [describe_need(need) for need in spec.needs if not given[need]]
            if absent:
                missing[spec.key] = "needs " + ", ".join(absent) + (
                    self._relevance_hint() if "relevant" in absent else "")
            elif spec.per_query:
                missing[spec.key] = ("no query has every input it needs ("
                                     + ", ".join(map(describe_need, spec.needs))
                                     + ") with a value that defines it")
            else:
                missing[spec.key] = "nothing in the data defines it (0 of 0)"
        query_ids = self.dataset.query_ids
        return Report(self.stage, dict(self.values), self.settings, missing, query_ids,
                      dict(self.query_values), dataset=self.dataset)
