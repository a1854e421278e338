"""Fuzzing the seven evaluators: keyword-argument inputs, settings, numpy vectors.

Each evaluator is called with a loaded dataset, with keyword-argument inputs
(built from a valid dataset, then mutated), or with both.  Every call must
give a valid report (every key of the stage; every value ``None`` or a finite
float in the registry's ``[low, high]``, per query too) or raise
``DatasetError`` / ``ValueError`` / ``TypeError`` with a message that names
the argument, setting or place.  Nothing else may escape.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from fuzz_strategies import (
    KEY_POOL,
    NASTY,
    SOURCE,
    STAGES,
    check_report,
    examples,
    mutate,
    outcome,
    valid_datasets,
)
from hypothesis import given, note
from hypothesis import strategies as st

import pytest_rag
from pytest_rag import EVALUATORS, DatasetError, parse_dataset

API_ERRORS = (DatasetError, ValueError, TypeError)
GOLD_FIELDS = ("relevant", "expected_evidence", "reference_answer", "required_facts",
               "expected_citations", "answerable")
RUN_FIELDS = ("retrieved_ids", "reranked_ids", "context_ids", "answer", "cited_ids", "abstained",
              "verified_claims", "task_success", "query_vector", "ann_ids",
              "retrieval_latency_ms", "generation_latency_ms", "latency_ms", "cost_usd",
              "total_tokens")
SETTINGS = ("k", "size_limits", "boundary_tolerance", "required_metadata", "max_context_tokens",
            "abstain_phrases")
#: What an error message may name: the source, an argument, a setting, a section.
PLACES = (SOURCE, "<arguments>", "dataset", "input", "stage", *SETTINGS, *GOLD_FIELDS,
          *RUN_FIELDS, "documents", "chunks", "expected_chunks", "expected_metadata", "queries",
          "chunk_vectors", "sentence_vectors", "indexed_ids")


def keyword_inputs(raw: dict[str, Any], names: list[str], draw: st.DrawFn) -> dict[str, Any]:
    """The inputs ``names`` of a valid dataset dict, in the keyword-argument forms."""
    inputs: dict[str, Any] = {}
    queries = raw.get("queries", [])
    run = {query_id: entry or {} for query_id, entry in raw.get("run", {}).items()}
    vectors = raw.get("vectors", {})
    for name in names:
        if name == "documents":
            documents = raw["documents"]
            inputs[name] = (documents if draw(st.booleans())
                            else {doc["id"]: doc["text"] for doc in documents})
        elif name in ("chunks", "expected_chunks", "expected_metadata", "queries"):
            if name in raw:
                inputs[name] = raw[name]
        elif name == "chunk_vectors" and vectors.get("chunks"):
            mapping = vectors["chunks"]
            ids = [chunk["id"] for chunk in raw["chunks"]]
            if draw(st.booleans()) and ids and all(cid in mapping for cid in ids):
                inputs[name] = np.asarray([mapping[cid] for cid in ids])  # one row per chunk
            else:
                inputs[name] = mapping
        elif name == "sentence_vectors" and vectors.get("sentences"):
            inputs[name] = {cid: (np.asarray(rows) if rows and draw(st.booleans()) else rows)
                            for cid, rows in vectors["sentences"].items()}
        elif name == "indexed_ids" and "indexed_ids" in vectors:
            inputs[name] = vectors["indexed_ids"]
        elif name in GOLD_FIELDS:
            inputs[name] = {query["id"]: query.get(name) for query in queries}
        elif name in RUN_FIELDS:
            value = {query_id: entry.get(name) for query_id, entry in run.items()}
            if name == "query_vector" and draw(st.booleans()):
                value = {key: None if v is None else np.asarray(v) for key, v in value.items()}
            inputs[name] = value
    return inputs


@st.composite
def evaluator_calls(draw: st.DrawFn) -> tuple[str, Any, Any]:
    """(stage, dataset or None, keyword inputs, possibly mutated)."""
    stage = draw(st.sampled_from(STAGES))
    raw = draw(valid_datasets())
    accepted = sorted(EVALUATORS[stage].inputs)
    names = draw(st.lists(st.sampled_from(accepted), max_size=len(accepted), unique=True))
    inputs: Any = keyword_inputs(raw, names, draw)
    base = draw(st.sampled_from(["none", "full", "documents only"]))
    dataset = None
    if base == "full":
        dataset = parse_dataset(raw, source=SOURCE)
    elif base == "documents only":
        dataset = parse_dataset({"documents": raw["documents"], "chunks": raw["chunks"]},
                                source=SOURCE)
    if draw(st.integers(0, 4)):
        # Mutated inside a wrapper, so that most changes go to the values, not the names.
        wrapper = draw(mutate({"inputs": inputs}))
        inputs = wrapper.get("inputs") if isinstance(wrapper, dict) else wrapper
    if isinstance(inputs, dict) and draw(st.integers(0, 9)) == 0:
        inputs[draw(st.sampled_from(KEY_POOL))] = draw(NASTY)  # maybe not an input of the stage
    return stage, dataset, inputs


@examples(3.0)
@given(evaluator_calls())
def test_every_evaluator_with_keyword_inputs(call: tuple[str, Any, Any]) -> None:
    stage, dataset, inputs = call
    evaluator = EVALUATORS[stage]()
    if isinstance(inputs, dict) and all(isinstance(key, str) for key in inputs):
        report = outcome(lambda: evaluator.evaluate(dataset, **inputs), PLACES, allowed=API_ERRORS)
    else:  # the mutation replaced the whole mapping: pass it where the dataset goes
        report = outcome(lambda: evaluator.evaluate(inputs), PLACES, allowed=API_ERRORS)
    if report is not None:
        check_report(report, stage)


SETTING_VALUES = st.one_of(
    NASTY,
    st.integers(-2, 50),
    st.lists(st.integers(-1, 50), max_size=3),
    st.lists(st.sampled_from(["source", "", "\x00", "i don't know", "\u202e"]), max_size=3),
    st.sampled_from([(1, 2), [3, 1], [True, 5], [1.0, 2.0], [1.5, 2], np.array([1, 5]),
                     np.int64(3), np.float64(2.0), 2.0, "5", ("source",), {"a": 1},
                     10**30, 2**63, 2**63 - 1, 2**64, 10**400, np.uint64(2**64 - 1), np.array(3),
                     np.array(2.0), [1, 10**30], [2**63, 2**64]]),
)


@examples(1.0)
@given(valid_datasets(), st.dictionaries(st.sampled_from((*SETTINGS, "kk", "stage")),
                                         SETTING_VALUES, max_size=3),
       st.sampled_from(STAGES))
def test_settings_are_checked_and_name_the_setting(raw: dict[str, Any], settings: dict[str, Any],
                                                   stage: str) -> None:
    dataset = parse_dataset(raw, source=SOURCE)
    cls = EVALUATORS[stage]
    given_settings = {name: value for name, value in settings.items()
                      if name in cls.settings_names or name in ("kk", "stage")}
    evaluator = outcome(lambda: cls(**given_settings), PLACES + ("kk",),
                        allowed=(ValueError, TypeError))
    if evaluator is not None:
        report = outcome(lambda: evaluator.evaluate(dataset), PLACES, allowed=API_ERRORS)
        if report is not None:
            check_report(report, stage)


@examples(0.5)
@given(valid_datasets(), st.dictionaries(st.sampled_from(SETTINGS), SETTING_VALUES, max_size=3),
       st.one_of(st.none(), st.lists(st.sampled_from((*STAGES, "retreival", "", "\x00")),
                                     max_size=3),
                 st.sampled_from(["retrieval", (), tuple(STAGES), {"chunking": 1}])))
def test_evaluate_dataset_with_odd_settings_and_stages(raw: dict[str, Any],
                                                       settings: dict[str, Any],
                                                       stages: Any) -> None:
    dataset = parse_dataset(raw, source=SOURCE)
    reports = outcome(lambda: pytest_rag.evaluate_dataset(dataset, stages, **settings),
                      PLACES + STAGES, allowed=API_ERRORS)
    if reports is not None:
        for stage, report in reports.items():
            check_report(report, stage)


# -- numpy vectors ------------------------------------------------------------------
DTYPES = (np.float64, np.float32, np.float16, np.int8, np.int64, np.uint64, np.bool_, object,
          np.complex128, np.str_)
SPECIAL = (float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324, 1e-300, 0.0, -0.0,
           1e150)


@st.composite
def vector_arrays(draw: st.DrawFn, rows: int | None, dim: int) -> Any:
    """An array meant as ``rows`` vectors (or one vector: ``rows=None``) of ``dim``, often not."""
    shape: tuple[int, ...] = (dim,) if rows is None else (rows, dim)
    shape = draw(st.sampled_from([shape, shape, shape, (), (0,), (dim + 1,), (0, dim),
                                  (rows or 1, 0), (1, dim), (2, 2, dim), ((rows or 1) + 1, dim)]))
    values = draw(st.lists(st.floats(-1e3, 1e3) | st.sampled_from(SPECIAL),
                           min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    array = np.asarray(values, dtype=np.float64).reshape(shape)
    dtype = draw(st.sampled_from(DTYPES[:2] * 4 + DTYPES))
    try:
        with np.errstate(all="ignore"):
            return array.astype(dtype)
    except (ValueError, OverflowError):
        return array


@st.composite
def vector_calls(draw: st.DrawFn) -> tuple[str, Any, dict[str, Any]]:
    raw = draw(valid_datasets())
    raw.pop("vectors", None)
    for entry in raw["run"].values():
        if entry:
            entry.pop("query_vector", None)
    dataset = parse_dataset(raw, source=SOURCE)
    chunk_ids = [chunk["id"] for chunk in raw["chunks"]]
    dim = draw(st.integers(1, 4))
    inputs: dict[str, Any] = {}
    stage = draw(st.sampled_from(["embedding", "chunking"]))
    if draw(st.booleans()):
        inputs["chunk_vectors"] = draw(vector_arrays(len(chunk_ids), dim))
    else:
        inputs["chunk_vectors"] = {cid: draw(vector_arrays(None, dim))
                                   for cid in draw(st.lists(st.sampled_from(chunk_ids + ["x"]),
                                                            max_size=4))}
    if stage == "embedding":
        inputs["query_vector"] = {query["id"]: draw(vector_arrays(None, dim))
                                  for query in raw["queries"] if draw(st.booleans())}
    else:
        inputs["sentence_vectors"] = {cid: draw(vector_arrays(draw(st.integers(0, 3)), dim))
                                      for cid in chunk_ids if draw(st.booleans())}
    return stage, dataset, inputs


@examples(1.5)
@given(vector_calls())
def test_numpy_vectors_of_any_shape_and_dtype(call: tuple[str, Any, dict[str, Any]]) -> None:
    stage, dataset, inputs = call
    note(repr(inputs))
    report = outcome(lambda: EVALUATORS[stage]().evaluate(dataset, **inputs), PLACES,
                     allowed=API_ERRORS)
    if report is not None:
        check_report(report, stage)


# -- regressions: minimal reproductions of fixed bugs ---------------------------------------------
def test_evaluate_dataset_names_stages_when_they_are_not_a_list() -> None:
    with pytest.raises(TypeError, match="stages"):
        pytest_rag.evaluate_dataset(parse_dataset({}, source=SOURCE), 5)  # type: ignore[arg-type]


def test_end_to_end_means_stay_finite_for_finite_inputs() -> None:
    report = EVALUATORS["end_to_end"]().evaluate(
        cost_usd={"q1": 1.7e308, "q2": 1.7e308}, total_tokens={"q1": 1.7e308, "q2": 1.7e308})
    assert math.isfinite(report.values["mean_cost_usd"])
    assert math.isfinite(report.values["mean_total_tokens"])


@pytest.mark.parametrize("k", [2**63, 10**12, 10**30])
@pytest.mark.parametrize("stage", ["retrieval", "reranking"])
def test_huge_k_is_refused_or_costs_no_memory(stage: str, k: int) -> None:
    inputs = {"relevant": {"q1": ["a"]}, "retrieved_ids": {"q1": ["a", "b"]}}
    if stage == "reranking":
        inputs["reranked_ids"] = {"q1": ["b", "a"]}
    try:
        report = EVALUATORS[stage](k=k).evaluate(**inputs)
    except (ValueError, TypeError) as error:  # refusing it would do, naming k
        assert re.search(r"\bk\b", str(error)), str(error)
    else:
        check_report(report, stage)


def test_zero_d_array_as_retrieved_ids_names_the_argument() -> None:
    with pytest.raises(DatasetError, match=r"retrieved_ids\['q1'\]"):
        EVALUATORS["retrieval"]().evaluate(retrieved_ids={"q1": np.array("c1")},
                                           relevant={"q1": ["c1"]})



BEYOND_FLOAT = 10**400  # an integer above the float range


@pytest.mark.parametrize(("stage", "settings"), [
    ("retrieval", {"k": BEYOND_FLOAT}),
    ("reranking", {"k": BEYOND_FLOAT}),
    ("chunking", {"size_limits": [0, BEYOND_FLOAT]}),
    ("chunking", {"size_limits": [BEYOND_FLOAT, BEYOND_FLOAT]}),
], ids=["retrieval-k", "reranking-k", "chunking-max-size", "chunking-min-size"])
def test_settings_beyond_the_float_range(stage: str, settings: dict[str, Any]) -> None:
    dataset = parse_dataset({"documents": [{"id": "d", "text": "a b c"}],
                             "chunks": [{"id": "a", "start": 0, "end": 5}],
                             "queries": [{"id": "q1", "relevant": ["a"]}],
                             "run": {"q1": {"retrieved_ids": ["a", "b"],
                                            "reranked_ids": ["b", "a"]}}}, source=SOURCE)
    try:
        report = EVALUATORS[stage](**settings).evaluate(dataset)
    except (ValueError, TypeError) as error:  # refusing it would do, naming the setting
        assert any(name in str(error) for name in settings), str(error)
    else:
        check_report(report, stage)


@pytest.mark.parametrize("params", [{"k": BEYOND_FLOAT}, {"size_limits": [0, BEYOND_FLOAT]}],
                         ids=["k", "size_limits"])
def test_params_beyond_the_float_range(params: dict[str, Any]) -> None:
    dataset = parse_dataset({"params": params, "documents": [{"id": "d", "text": "a b c"}],
                             "chunks": [{"id": "a", "start": 0, "end": 5}],
                             "queries": [{"id": "q1", "relevant": ["a"]}],
                             "run": {"q1": {"retrieved_ids": ["a", "b"]}}}, source=SOURCE)
    try:
        reports = pytest_rag.evaluate_dataset(dataset)
    except DatasetError as error:
        assert "params." in str(error), str(error)
    else:
        for stage, report in reports.items():
            check_report(report, stage)


@pytest.mark.parametrize(("stage", "name"), [("chunking", "size_limits"),
                                             ("generation", "abstain_phrases")])
def test_zero_d_array_settings_name_the_setting(stage: str, name: str) -> None:
    with pytest.raises((ValueError, TypeError)) as caught:
        EVALUATORS[stage](**{name: np.array(3)})
    assert name in str(caught.value), str(caught.value)


def test_mean_vector_norm_of_vectors_near_the_float_maximum() -> None:
    report = EVALUATORS["embedding"]().evaluate(chunk_vectors={"a": [1e308], "b": [1e308]})
    check_report(report, "embedding")
    assert report.values["mean_vector_norm"] == 1e308
