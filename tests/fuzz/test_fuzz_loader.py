"""Fuzzing the loader: mutated datasets as dicts, as JSON and YAML files, as raw text.

Every input must end in a :class:`~pytest_rag.Dataset` whose seven stage reports
are valid (every value ``None`` or a finite float in the registry's range), or
in a :class:`~pytest_rag.DatasetError` whose message starts with the source
name and says what is wrong.  Nothing else may escape.  The single-mutation
table of ``tests/unit/test_loading_errors.py`` checks exact messages; here the
mutations are stacked (1-4 per example), go through files and raw text, and
every dataset that loads is also evaluated.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from fuzz_strategies import (
    NASTY,
    SOURCE,
    UNICODE_PIECES,
    check_report,
    evaluate_all,
    examples,
    mutate,
    mutated_datasets,
    outcome,
    plain,
    valid_datasets,
)
from hypothesis import assume, given, note
from hypothesis import strategies as st

import pytest_rag
from pytest_rag import DatasetError, load_dataset, parse_dataset
from pytest_rag.dataset import parser as parser_module
from pytest_rag.dataset.loading import located
from pytest_rag.dataset.sources.lines import read_dataset_text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder per worker; each example overwrites its files."""
    return tmp_path_factory.mktemp("fuzz-loader")


# -- dicts ----------------------------------------------------------------------
@examples(1.0)
@given(valid_datasets())
def test_valid_datasets_load_and_every_stage_gives_a_valid_report(raw: dict[str, Any]) -> None:
    dataset = parse_dataset(raw, source=SOURCE)
    reports = evaluate_all(dataset, SOURCE)
    # A valid dataset only fails where a token metric meets an id that is not a chunk.
    for stage, report in reports.items():
        if report is None:
            assert stage in ("retrieval", "augmentation", "generation"), stage
    combined = pytest_rag.evaluate_dataset(dataset, stages=["chunking", "embedding",
                                                            "reranking", "end_to_end"])
    for stage, report in combined.items():
        check_report(report, stage)
        assert dict(report.values) == dict(reports[stage].values)


@examples(3.0)
@given(mutated_datasets())
def test_mutated_dict_loads_or_names_the_place(raw: Any) -> None:
    dataset = outcome(lambda: parse_dataset(raw, source=SOURCE), (SOURCE,))
    if dataset is not None:
        evaluate_all(dataset, SOURCE)


@examples(0.5)
@given(st.one_of(NASTY, st.lists(NASTY, max_size=3), st.dictionaries(
    st.sampled_from(["format", "documents", "chunks", "queries", "run", "vectors", "params",
                     "expected", "expected_chunks", "expected_metadata"]), NASTY, max_size=4)))
def test_anything_at_the_top_level_loads_or_names_the_place(raw: Any) -> None:
    dataset = outcome(lambda: parse_dataset(raw, source=SOURCE), (SOURCE,))
    if dataset is not None:
        evaluate_all(dataset, SOURCE)


def _parsed(raw: Any) -> Any:
    """The queries and run of ``parse_dataset(raw)`` (every instance dictionary as items),
    or the message of its error."""
    try:
        dataset = parse_dataset(copy.deepcopy(raw), source=SOURCE)
    except DatasetError as error:
        return str(error)
    return ([list(vars(query).items()) for query in dataset.queries],
            [(query_id, [(name, repr(value)) for name, value in vars(entry).items()])
             for query_id, entry in dataset.run.items()])


@examples(1.0)
@given(mutated_datasets())
def test_column_checks_give_the_item_by_item_outcome(raw: Any) -> None:
    """``queries`` and ``run`` checked column by column: the same records, or the same
    message, as with the item-by-item path alone (``pytest_rag.dataset.columns``)."""
    fast = _parsed(raw)
    with mock.patch.object(parser_module, "plain_queries", return_value=None), \
            mock.patch.object(parser_module, "plain_run", return_value=None):
        slow = _parsed(raw)
    note(f"fast: {fast!r}\nslow: {slow!r}")
    assert fast == slow


# -- files ------------------------------------------------------------------------
def _same_outcome(path: Path, decoded: Any) -> None:
    """``load_dataset(path)`` must do what ``parse_dataset`` does with the decoded text."""
    source = str(path)
    try:
        from_file: Any = load_dataset(path)
    except DatasetError as error:
        from_file = error
    try:
        direct: Any = parse_dataset(decoded, source=source, base_dir=path.parent)
    except DatasetError as error:
        direct = error
    note(f"file: {from_file!r}\ndirect: {direct!r}")
    if isinstance(direct, DatasetError):
        assert isinstance(from_file, DatasetError)
        # The file's error adds the record's id and the line to the same place and problem.
        text = read_dataset_text(path)
        assert str(from_file) == str(located(direct, decoded, text))
    else:
        assert not isinstance(from_file, DatasetError), str(from_file)
    for result in (from_file, direct):
        if isinstance(result, DatasetError):
            assert str(result).startswith(source + ":") and result.problem.strip()
    if not isinstance(from_file, DatasetError):
        reports = evaluate_all(from_file, source)
        again = evaluate_all(direct, source)
        for stage in reports:
            if reports[stage] is not None and again[stage] is not None:
                assert repr(dict(reports[stage].values)) == repr(dict(again[stage].values))


@examples(1.5)
@given(mutated_datasets(), st.booleans(), st.booleans())
def test_json_file_loads_like_the_decoded_text(folder: Path, raw: Any, ascii_only: bool,
                                               bom: bool) -> None:
    text = json.dumps(plain(raw), ensure_ascii=ascii_only, allow_nan=True)
    path = folder / "gold.json"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8", "surrogatepass"))
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # pragma: no cover - json.dumps output reads back
        decoded = None
    _same_outcome(path, decoded)


@examples(1.5)
@given(mutated_datasets(), st.sampled_from([None, '"', "'"]), st.booleans(),
       st.sampled_from([".yaml", ".yml", ".YAML"]))
def test_yaml_file_loads_like_the_decoded_text(folder: Path, raw: Any, style: str | None,
                                               unicode: bool, suffix: str) -> None:
    try:
        text = yaml.safe_dump(plain(raw), default_style=style, allow_unicode=unicode,
                              sort_keys=False)
    except (yaml.YAMLError, RecursionError):
        assume(False)
    path = folder / f"gold{suffix}"
    path.write_text(text, encoding="utf-8")
    try:
        decoded = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(DatasetError):
            load_dataset(path)
        return
    _same_outcome(path, decoded)


#: Pieces that break JSON and YAML text in interesting ways.
TEXT_PIECES = ("{", "}", "[", "]", ":", ",", '"', "'", "\\", "\\u0000", "\\ud800", "\x00",
               "\ufeff", "- ", "&a ", "*a", "<<: *a", "? ", "!!python/object/apply:os.system ",
               "!!binary ", "!!timestamp ", "!!float ", "!!int ", "!!set ", "!foo ",
               "NaN", "Infinity", "-Infinity", ".nan", ".inf", "1e999", "9" * 5000, "[" * 3000,
               "{\"a\":" * 1500, "- " * 2000, "\t", "\r", "\n", "\n---\n", "%YAML 1.1\n", "#",
               "null", "true", "~", "2024-02-30", "0x1F", "0o17", "1_000", "+.5",
               *UNICODE_PIECES)
RAW_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\xe2\x80\xae")


@st.composite
def broken_text(draw: st.DrawFn) -> tuple[str, bytes]:
    raw = draw(valid_datasets(max_docs=2))
    suffix = draw(st.sampled_from([".json", ".yaml", ".yml", ".JSON", ".txt", ""]))
    if suffix.lower() == ".json" or draw(st.booleans()):
        text = json.dumps(raw, ensure_ascii=draw(st.booleans()))
    else:
        text = yaml.safe_dump(raw, allow_unicode=draw(st.booleans()), sort_keys=False)
    data = text.encode("utf-8")
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "insert", "delete", "bytes", "truncate"]))
        if kind == "insert":
            piece = draw(st.sampled_from(TEXT_PIECES)).encode("utf-8", "surrogatepass")
            data = data[:where] + piece + data[where:]
        elif kind == "delete":
            data = data[:where] + data[where + draw(st.integers(1, 20)):]
        elif kind == "bytes":
            data = data[:where] + draw(st.sampled_from(RAW_BYTES)) + data[where:]
        else:
            data = data[:where]
    return suffix, data


@examples(2.0)
@given(broken_text())
def test_broken_file_text_loads_or_names_the_file(folder: Path, case: tuple[str, bytes]) -> None:
    suffix, data = case
    path = folder / f"broken{suffix}"
    path.write_bytes(data)
    dataset = outcome(lambda: load_dataset(path), (str(path),))
    if dataset is not None:
        evaluate_all(dataset, str(path))


# -- path: documents ----------------------------------------------------------------
PATH_NAMES = ("doc.md", "sub/doc.md", "./doc.md", "sub/../doc.md", "../outside.md", "/etc/hostname",
              "", ".", "sub", "missing.md", "latin1.md", "link-out.md", "link-in.md",
              "e\u0301.md", "\u202edm.txt", "\x00", "doc.md\x00", "a" * 300, "sub/" * 40 + "x",
              "\U0001f44d.md", "~/doc.md", "doc.md/", "C:\\doc.md", "nul\u0000.md")


@pytest.fixture(scope="module")
def documents_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-paths")
    base = root / "data"
    (base / "sub").mkdir(parents=True)
    text = "Refunds within 30 days. \u05e9\u05dc\u05d5\u05dd e\u0301 \U0001f44d\x00 end.\n"
    (base / "doc.md").write_text(text, encoding="utf-8")
    (base / "sub" / "doc.md").write_text(text, encoding="utf-8")
    (base / "e\u0301.md").write_text(text, encoding="utf-8")
    (base / "\U0001f44d.md").write_text(text, encoding="utf-8")
    (base / "latin1.md").write_bytes("caf\u00e9".encode("latin-1"))
    (root / "outside.md").write_text(text, encoding="utf-8")
    os.symlink(root / "outside.md", base / "link-out.md")
    os.symlink(base / "doc.md", base / "link-in.md")
    return base


@examples(0.5)
@given(st.lists(st.sampled_from(PATH_NAMES) | st.text(max_size=6), min_size=1, max_size=3),
       st.booleans(), st.sampled_from([".json", ".yaml"]), st.data())
def test_path_documents_load_or_name_the_place(documents_folder: Path, names: list[str],
                                               allow_outside: bool, suffix: str,
                                               data: st.DataObject) -> None:
    documents = [{"id": f"d{i}", "path": name} for i, name in enumerate(names)]
    raw = {"documents": documents,
           "chunks": [{"id": "c0", "doc_id": "d0", "start": 0, "end": 7}],
           "queries": [{"id": "q1", "expected_evidence": [{"doc_id": "d0", "quote": "30 days"}],
                        "relevant": ["c0"]}],
           "run": {"q1": {"retrieved_ids": ["c0"], "context_ids": ["c0"],
                          "answer": "30 days"}}}
    mutated = data.draw(st.booleans())
    if mutated:
        raw = data.draw(mutate(raw, max_changes=2))
    path = documents_folder / f"gold{suffix}"
    text = (json.dumps(plain(raw), allow_nan=True) if suffix == ".json"
            else yaml.safe_dump(plain(raw), allow_unicode=True))
    path.write_text(text, encoding="utf-8")
    dataset = outcome(lambda: load_dataset(path, allow_outside_paths=allow_outside), (str(path),))
    if dataset is None:
        return
    if not (allow_outside or mutated):
        for document in dataset.documents:  # only the files inside the folder hold this
            assert "\u05e9" in document.text, "a document outside the folder was read"
    evaluate_all(dataset, str(path))
