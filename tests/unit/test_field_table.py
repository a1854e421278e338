"""Every row of the field table is known to every layer that reads fields.

:mod:`pytest_rag.dataset.fields` is the one place a per-query field is
declared; the parser's key lists, the column-by-column fast path, the keyword
inputs of ``rag.<stage>()``, the stages' gold lists and the per-stage gold
fingerprints are derived from it.  These tests walk the table, so a new row
that some layer does not handle (or a README without its format row) fails here.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

from pytest_rag.dataset import columns
from pytest_rag.dataset import parser as parser_module
from pytest_rag.dataset.arguments import ALL_INPUTS, GOLD_QUERY_INPUTS, RUN_INPUTS, resolve_inputs
from pytest_rag.dataset.fields import FIELDS, GOLD_FIELDS, QUERY, RUN, Field, gold_attributes
from pytest_rag.dataset.model import Query, RunEntry
from pytest_rag.dataset.parser import QUERY_KEYS, RUN_KEYS, parse_dataset
from pytest_rag.registry import REGISTRY, STAGES, need_alternatives
from pytest_rag.stages import _base

README = Path(__file__).resolve().parents[2] / "README.md"

#: A valid value of each kind (a new kind needs one here, so that it is tested).
SAMPLES: dict[str, Any] = {
    "text": "hello",
    "boolean": True,
    "grades": {"c1": 2, "c2": 0},
    "evidence": [{"doc_id": "d1", "start": 0, "end": 7}],
    "answers": ["one answer", "another"],
    "strings": ["x", "y"],
    "ids": ["c2", "c1"],
    "ranked_ids": ["c2", "c1"],
    "claims": [{"claim": "x", "supported": True}],
    "vector": [0.5, 1.0],
    "number": 3.5,
}
BASE: dict[str, Any] = {
    "documents": [{"id": "d1", "text": "Refunds are accepted within 30 days."}],
    "chunks": [{"id": "c1", "doc_id": "d1", "start": 0, "end": 12},
               {"id": "c2", "doc_id": "d1", "start": 12, "end": 36}],
}
ROWS = [row for row in FIELDS if row.kind != "id"]


def _file(row: Field, value: Any) -> dict[str, Any]:
    queries: list[dict[str, Any]] = [{"id": "q1"}, {"id": "q2"}]
    data = {**BASE, "queries": queries}
    if row.section == "queries":
        queries[0][row.key] = value
    else:
        data["run"] = {"q1": {row.key: value}}
    return data


def _value(dataset: Any, row: Field) -> Any:
    if row.section == "queries":
        return getattr(dataset.queries[0], row.attribute)
    return getattr(dataset.run["q1"], row.attribute)


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return bool(np.array_equal(left, right))
    return bool(left == right)


def test_every_record_field_is_a_row_and_every_row_a_record_field() -> None:
    query_fields = [f.name for f in dataclasses.fields(Query) if f.name != "relevant_from_evidence"]
    assert [row.attribute for row in QUERY.values()] == query_fields
    assert [row.attribute for row in RUN.values()] == [f.name for f in dataclasses.fields(RunEntry)]
    assert len({row.key for row in FIELDS}) == len(FIELDS)


def test_the_parser_knows_every_row() -> None:
    assert QUERY_KEYS == tuple(QUERY)
    assert RUN_KEYS == tuple(RUN)
    assert set(SAMPLES) >= {row.kind for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.key)
def test_the_item_path_and_the_fast_path_agree_on_every_row(row: Field) -> None:
    data = _file(row, SAMPLES[row.kind])
    fast = parse_dataset(data)
    with mock.patch.object(parser_module, "plain_queries", return_value=None), \
            mock.patch.object(parser_module, "plain_run", return_value=None):
        slow = parse_dataset(data)
    empty = _value(parse_dataset({**BASE, "queries": [{"id": "q1"}, {"id": "q2"}],
                                  "run": {"q1": {}}}), row)
    assert not _same(_value(slow, row), empty)  # the sample is read, not dropped
    assert _same(_value(fast, row), _value(slow, row))
    assert slow == fast


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.key)
def test_the_fast_path_takes_every_row(row: Field) -> None:
    """A plain section with the field is read column by column (never ``None``)."""
    data = _file(row, SAMPLES[row.kind])
    parser = parser_module.FormatRules("<test>")
    parser.documents_section(data["documents"])
    parser.use_chunks(parser.chunks_section(data["chunks"], "chunks", ids_required=True))
    if row.section == "queries":
        plain = columns.plain_queries(data["queries"], parser._query_field,
                                      parser_module.MAX_GRADE)
        assert plain is not None and _same(getattr(plain[0], row.attribute),
                                           _value(parse_dataset(data), row))
    else:
        run = columns.plain_run(data["run"], {"q1", "q2"},
                                lambda name, item: parser.run_field(name, item, name))
        assert run is not None and _same(getattr(run["q1"], row.attribute),
                                         _value(parse_dataset(data), row))


@pytest.mark.parametrize("row", [row for row in ROWS if row.keyword], ids=lambda row: row.key)
def test_every_keyword_row_is_an_input_read_as_the_file_reads_it(row: Field) -> None:
    assert row.key in ALL_INPUTS
    assert row.key in (GOLD_QUERY_INPUTS if row.section == "queries" else RUN_INPUTS)
    gold = parse_dataset({**BASE, "queries": [{"id": "q1"}, {"id": "q2"}]})
    given = resolve_inputs(gold, {row.key: {"q1": SAMPLES[row.kind]}})
    assert _same(_value(given, row), _value(parse_dataset(_file(row, SAMPLES[row.kind])), row))


def test_rows_that_are_not_keywords_are_not_inputs() -> None:
    assert {row.key for row in FIELDS if not row.keyword}.isdisjoint(ALL_INPUTS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.key)
def test_the_stages_see_every_row_given_and_not_given(row: Field) -> None:
    """What a stage reports as missing ("needs ...") is looked up in the table."""
    given = parse_dataset(_file(row, SAMPLES[row.kind]))
    absent = parse_dataset(_file(row, None))
    assert _base.available(given, {}, row.key)
    assert not _base.available(absent, {}, row.key)
    assert {key for key, row in GOLD_FIELDS.items() if row.keyword} == set(GOLD_QUERY_INPUTS)


def test_every_stage_a_metric_of_reads_a_field_is_in_its_row() -> None:
    """The table's "stages that read it" covers every metric's needs (the gold
    fingerprint of a stage's baseline entry is built from it)."""
    for spec in REGISTRY.values():
        for need in spec.needs:
            for name in need_alternatives(need):
                row = QUERY.get(name) or RUN.get(name)
                if row is not None:
                    assert spec.stage in row.stages, (spec.stage, spec.key, name)
    assert all(row.stages <= set(STAGES) for row in FIELDS)
    assert gold_attributes("chunking") == ("expected_evidence",)


def test_the_readme_format_reference_has_a_row_for_every_field() -> None:
    text = README.read_text(encoding="utf-8")
    section = {"queries": r"`queries\[\]`", "run": r"`run\.<query id>`"}
    for row in FIELDS:
        pattern = rf"^\| {section[row.section]} \| `{re.escape(row.key)}` \|"
        assert re.search(pattern, text, re.MULTILINE), row.key


def test_the_readme_format_reference_names_every_key_of_every_mapping() -> None:
    """The keys of the other mappings of the format (documents, chunks, vectors,
    evidence spans, claims, the top level) are each in the README's reference too."""
    from pytest_rag.dataset.parser import (
        CHUNK_KEYS,
        CLAIM_KEYS,
        DOCUMENT_KEYS,
        EVIDENCE_KEYS,
        TOP_KEYS,
        VECTOR_KEYS,
    )

    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (`[^|]*`|top level) \| ([^|]*) \|", text, re.MULTILINE)
    named: dict[str, str] = {}
    for section, keys in rows:
        named[section] = named.get(section, "") + keys
    for section, keys in (("`documents[]`", DOCUMENT_KEYS), ("`chunks[]`", CHUNK_KEYS),
                          ("`vectors`", VECTOR_KEYS)):
        for key in keys:
            assert f"`{key}`" in named.get(section, ""), (section, key)
    for key in TOP_KEYS:  # a section of its own, or the top level's row
        assert any(section.startswith(f"`{key}") for section in named) or (
            f"`{key}`" in named.get("top level", "")), key
    evidence = next(line for line in text.splitlines()
                    if line.startswith("| `queries[]` | `expected_evidence` |"))
    claims = next(line for line in text.splitlines()
                  if line.startswith("| `run.<query id>` | `verified_claims` |"))
    assert all(key in evidence for key in EVIDENCE_KEYS)
    assert all(key in claims for key in CLAIM_KEYS)
