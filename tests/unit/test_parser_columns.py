"""The column-by-column path of ``queries`` and ``run`` gives what the item-by-item path gives.

:mod:`pytest_rag.dataset.columns` checks plain sections a column at a time and
returns ``None`` on any doubt, and the parser then takes its item-by-item path.
These tests compare the two on the same data: the same records (the same
instance dictionaries, in the same order) for valid data, and the same message
for every defect, wherever it is and whichever column it is in.  A file whose
objects repeat a key is refused before either path runs, naming the key and
its line and column, wherever the repeat is.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget
from test_loading_errors import BASE, CASES, changed

from pytest_rag.dataset import columns
from pytest_rag.dataset import parser as parser_module
from pytest_rag.dataset.loading import load_dataset
from pytest_rag.dataset.model import Dataset
from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.errors import DatasetError


@contextlib.contextmanager
def item_by_item() -> Iterator[None]:
    """The parser without its column-by-column path."""
    with mock.patch.object(parser_module, "plain_queries", return_value=None), \
            mock.patch.object(parser_module, "plain_run", return_value=None):
        yield


def outcome(data: Any) -> Dataset | str:
    try:
        return parse_dataset(copy.deepcopy(data), source="gold.json")
    except DatasetError as error:
        return str(error)


def assert_same(fast: Dataset | str, slow: Dataset | str) -> None:
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return
    assert fast.queries == slow.queries
    for a, b in zip(fast.queries, slow.queries):
        assert list(vars(a).items()) == list(vars(b).items())
    assert list(fast.run) == list(slow.run)
    for query_id, entry in fast.run.items():
        other = slow.run[query_id]
        assert entry == other
        assert list(vars(entry)) == list(vars(other))
        assert [type(value) for value in vars(entry).values()] == [
            type(value) for value in vars(other).values()]
        if entry.query_vector is not None:
            assert other.query_vector is not None
            assert np.array_equal(entry.query_vector, other.query_vector)


def both(data: Any) -> Dataset | str:
    """The outcome of the parser as it is, checked equal to the item-by-item outcome."""
    fast = outcome(data)
    with item_by_item():
        slow = outcome(data)
    assert_same(fast, slow)
    return fast


def wide(count: int = 50) -> dict[str, Any]:
    """BASE with ``count`` queries and a run entry for each (every field somewhere)."""
    data = copy.deepcopy(BASE)
    first, second = data["queries"]
    entry = data["run"]["q1"]
    data["queries"], data["run"] = [], {}
    for i in range(count):
        query = copy.deepcopy(first if i % 3 else second)
        query["id"] = f"q{i}"
        data["queries"].append(query)
        if i % 7 == 0:
            data["run"][f"q{i}"] = None
        elif i % 5 == 0:
            data["run"][f"q{i}"] = {"retrieved_ids": [], "total_tokens": i, "answer": None}
        else:
            data["run"][f"q{i}"] = copy.deepcopy(entry)
    return data


def test_a_plain_file_takes_the_column_path() -> None:
    queries = [{"id": f"q{i}", "relevant": {"c1": 1, "c2": 0}} for i in range(20)]
    run = {f"q{i}": {"retrieved_ids": ["c2", "c1", "c9"]} for i in range(20)}
    calls: list[object] = []

    def spy(function: Any) -> Any:
        def call(*args: Any) -> Any:
            result = function(*args)
            calls.append(result)
            return result
        return call

    with mock.patch.object(parser_module, "plain_queries", spy(columns.plain_queries)), \
            mock.patch.object(parser_module, "plain_run", spy(columns.plain_run)):
        dataset = both({"queries": queries, "run": run})
    assert len(calls) == 2 and None not in calls
    assert isinstance(dataset, Dataset)
    assert dataset.run["q3"].retrieved_ids == ("c2", "c1", "c9")
    assert dataset.queries[3].relevant == {"c1": 1, "c2": 0}


def test_every_field_gives_the_records_of_the_item_by_item_path() -> None:
    dataset = both(wide())
    assert isinstance(dataset, Dataset)
    assert len(dataset.queries) == 50 and len(dataset.run) == 42  # null entries left out
    assert dataset.run["q5"].total_tokens == 5.0 and dataset.run["q5"].retrieved_ids == ()


@pytest.mark.parametrize(("path", "value", "message"), CASES,
                         ids=[repr(path) for path, _, _ in CASES])
def test_every_rule_gives_the_same_message_on_both_paths(path: tuple[Any, ...], value: Any,
                                                        message: str) -> None:
    assert both(changed(path, value)) == f"gold.json: {message}"


DEEP_DEFECTS = [
    (("queries", 37, "answerable"), 1,
     "queries[37].answerable: expected true or false, got a number 1"),
    (("queries", 37, "question"), 5, "queries[37].question: expected a string, got a number 5"),
    (("queries", 37, "relevant"), {"a#0": 101},
     "queries[37].relevant['a#0']: a grade must be <= 100 (its nDCG gain is 2**grade - 1), "
     "got 101"),
    (("queries", 37, "relevant"), {"a#0": True},
     "queries[37].relevant['a#0']: expected a whole number, got a boolean True"),
    (("queries", 37, "reference_answer"), ["x", 3],
     "queries[37].reference_answer[1]: expected a string, got a number 3"),
    (("queries", 37, "required_facts"), "30 days",
     "queries[37].required_facts: expected a list, got a string '30 days'"),
    (("queries", 37, "id"), "q36", "queries[37].id: duplicate query id 'q36'"),
    (("queries", 37, "id"), "", "queries[37].id: an id must not be empty"),
    (("queries", 37, "idd"), "x", "queries[37].idd: unknown key (did you mean 'id'?)"),
    (("queries", 37, "expected_evidence", 0, "end"), 10**6,
     "queries[37].expected_evidence[0].end: 1000000 is past the end of document 'a' "
     "(75 characters)"),
    (("run", "q37", "retrieved_ids", 1), None,
     "run.q37.retrieved_ids[1]: expected a string, got null"),
    (("run", "q37", "latency_ms"), -1.0, "run.q37.latency_ms: must be >= 0, got -1"),
    (("run", "q37", "latency_ms"), float("inf"),
     "run.q37.latency_ms: must be a finite number, got inf"),
    (("run", "q37", "total_tokens"), 10**400,
     "run.q37.total_tokens: must be a finite number, got 100000000000000000..."
     "0000000000000000000"),
    (("run", "q37", "cost_usd"), True, "run.q37.cost_usd: expected a number, got a boolean True"),
    (("run", "q37", "abstained"), "no",
     "run.q37.abstained: expected true or false, got a string 'no'"),
    (("run", "q37", "answer"), ["x"], "run.q37.answer: expected a string, got a list ['x']"),
    (("run", "q37", "verified_claims", 0, "supported"), None,
     "run.q37.verified_claims[0]: missing required key 'supported'"),
    (("run", "q37", "query_vector"), [0.1], "run.q37.query_vector: has 1 dimensions, the chunk "
                                            "vectors have 2"),
    (("run", "q37", "query_vector"), [0.1, "x"],
     "run.q37.query_vector[1]: expected a number, got a string 'x'"),
    (("run", "q37", "ranked"), [], "run.q37.ranked: unknown key (did you mean 'reranked_ids'?)"),
    (("run", "q99"), {}, "run.q99: query 'q99' is not in 'queries'"),
    (("run", "q37"), [], "run.q37: expected a mapping, got a list []"),
]


@pytest.mark.parametrize(("path", "value", "message"), DEEP_DEFECTS,
                         ids=[f"{path}={value!r}"[:60] for path, value, _ in DEEP_DEFECTS])
def test_a_defect_deep_in_a_large_section_is_named_as_before(path: tuple[Any, ...], value: Any,
                                                             message: str) -> None:
    data = wide()
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert both(data) == f"gold.json: {message}"


def test_the_first_defect_in_file_order_is_named_not_the_first_column() -> None:
    data = wide()
    data["queries"][10]["expected_evidence"][0]["start"] = -1  # a column checked value by value
    data["queries"][20]["answerable"] = "yes"  # a column checked at once (and sorted first)
    data["run"]["q11"]["answer"] = 1
    data["run"]["q22"]["abstained"] = None
    data["run"]["q22"]["ann_ids"] = [1]
    message = both(data)
    assert message == "gold.json: queries[10].expected_evidence[0].start: must be >= 0, got -1"
    del data["queries"][10]["expected_evidence"]
    assert both(data) == ("gold.json: queries[20].answerable: "
                          "expected true or false, got a string 'yes'")
    data["queries"][20]["answerable"] = None
    assert both(data) == "gold.json: run.q11.answer: expected a string, got a number 1"


def test_data_in_python_that_is_not_plain_goes_item_by_item() -> None:
    data = wide(6)
    data["queries"] = tuple(data["queries"])
    data["run"]["q1"]["retrieved_ids"] = np.array(["a#0", "a#1"])
    data["run"]["q2"]["retrieved_ids"] = ("a#0", np.str_("a#1"))
    data["run"]["q3"]["total_tokens"] = np.int64(7)
    data["queries"][4]["relevant"] = {"a#0": np.int64(2)}
    dataset = both(data)
    assert isinstance(dataset, Dataset)
    assert type(dataset.run["q2"].retrieved_ids[1]) is str


_DEFECTS: list[Any] = [None, "", 0, 1.5, -1, True, "x", [], ["x", 1], {}, {"a#0": -1},
                       {"a#0": 1.0}, float("nan"), 10**30, [None], {"k": "v"}]
_FIELDS = {"queries": ["id", "question", "relevant", "expected_evidence", "reference_answer",
                       "required_facts", "expected_citations", "answerable", "extra"],
           "run": ["retrieved_ids", "reranked_ids", "context_ids", "answer", "cited_ids",
                   "abstained", "verified_claims", "task_success", "query_vector", "ann_ids",
                   "latency_ms", "cost_usd", "total_tokens", "extra"]}


@settings(max_examples=budget(400), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["queries", "run"]), st.integers(0, 11),
                          st.integers(0, 13), st.sampled_from(range(len(_DEFECTS)))),
                min_size=1, max_size=3))
def test_random_defects_give_the_item_by_item_outcome(defects: list[Any]) -> None:
    data = wide(12)
    for section, index, which, defect in defects:
        field = _FIELDS[section][which % len(_FIELDS[section])]
        entry = (data["queries"][index] if section == "queries"
                 else data["run"].get(f"q{index}"))
        if isinstance(entry, dict):
            entry[field] = copy.deepcopy(_DEFECTS[defect])
    both(data)


def _with_repeated_key(value: Any, target: int) -> tuple[str, str, str]:
    """JSON text of ``value`` whose ``target``-th non-empty object (in text order)
    repeats its first key as its last; with that key and the repeat's line and column."""
    parts: list[str] = []
    length = 0
    count = 0
    found: list[tuple[str, int]] = []

    def put(text: str) -> None:
        nonlocal length
        parts.append(text)
        length += len(text)

    def emit(item: Any, depth: int) -> None:
        nonlocal count
        if isinstance(item, dict) and item:
            pairs = list(item.items())
            if count == target:
                pairs.append((pairs[0][0], "again"))
            count += 1
            put("{")
            for i, (key, child) in enumerate(pairs):
                put(("," if i else "") + "\n" + " " * depth)
                if i == len(item):  # the repeat
                    found.append((key, length))
                put(json.dumps(key) + ": ")
                emit(child, depth + 1)
            put("}")
        elif isinstance(item, list) and item:
            put("[")
            for i, child in enumerate(item):
                put(", " if i else "")
                emit(child, depth + 1)
            put("]")
        else:
            put(json.dumps(item))

    emit(value, 1)
    text = "".join(parts)
    key, position = found[0]
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return text, f"line {line}, column {column}", key


def _objects(value: Any) -> int:
    """How many non-empty mappings ``value`` holds, itself included."""
    if isinstance(value, dict):
        return (1 if value else 0) + sum(map(_objects, value.values()))
    if isinstance(value, list):
        return sum(map(_objects, value))
    return 0


@settings(max_examples=budget(60), deadline=None)
@given(st.integers(0, 10**6))
def test_a_repeated_key_anywhere_is_refused_with_its_place(target: int) -> None:
    import tempfile

    data = wide(5)
    text, place, key = _with_repeated_key(data, target % _objects(data))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "gold.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError) as info:
            load_dataset(path)
    assert str(info.value) == f"{path}: {place}: invalid JSON: duplicate key {key!r}"
