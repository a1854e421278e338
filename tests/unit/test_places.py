"""Dataset errors name the record's id and the line of the file (pytest_rag.dataset.places)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rag import DatasetError, load_dataset, parse_dataset

GOLD = {"documents": [{"id": "faq", "text": "Returns within 30 days."}],
        "queries": [{"id": "q1", "relevant": ["a"]},
                    {"id": "q2", "relevant": ["a"]},
                    {"id": "q3", "expected_evidence": [{"doc_id": "fqa", "start": 0, "end": 3}]}]}


def _error(path: Path) -> str:
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    return str(raised.value)


def test_a_json_error_names_the_query_and_the_line_of_the_innermost_place(
        tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(GOLD, indent=2), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, start=1) if '"fqa"' in text)
    assert _error(path) == (f"{path}: queries[2].expected_evidence[0].doc_id (query 'q3', "
                            f"line {line}): unknown document 'fqa' (did you mean 'faq'?) "
                            "(known: 'faq')")


def test_a_yaml_error_names_the_document_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("documents:\n  - id: a\n    text: x\n  - id: b\n    text: 5\n",
                    encoding="utf-8")
    assert _error(path) == (f"{path}: documents[1].text (document 'b', line 5): expected a "
                            "string, got a number 5")


def test_syntax_errors_and_python_arguments_get_no_note(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("queries: [\n", encoding="utf-8")
    assert _error(path) == (f"{path}: line 2, column 1: invalid YAML: did not find expected "
                            "node content")
    with pytest.raises(DatasetError) as raised:
        parse_dataset({"queries": [{"id": 5}]}, source="<arguments>")
    assert str(raised.value) == "<arguments>: queries[0].id: expected a string, got a number 5"
