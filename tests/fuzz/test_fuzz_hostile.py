"""Hostile input generators: alias bombs, nesting depth, broken text encodings,
files that are not files, and pathological whitespace in located text.

Each generated file loads, or fails with a :class:`DatasetError` that names the
file (and, for the parser's rules, the place); nothing else may escape.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from fuzz_strategies import evaluate_all, examples, outcome
from hypothesis import given
from hypothesis import strategies as st

from pytest_rag import load_dataset


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def _load(path: Path) -> None:
    dataset = outcome(lambda: load_dataset(path), (str(path),))
    if dataset is not None:
        evaluate_all(dataset, str(path))


# -- alias amplification -------------------------------------------------------------------
@st.composite
def alias_bombs(draw: st.DrawFn) -> str:
    """Anchors that each repeat the one before: ``levels`` deep, ``fan`` wide, used where
    a list of ids or metadata is read."""
    levels = draw(st.integers(1, 9))
    fan = draw(st.integers(2, 12))
    lines = ["x0: &a0 [c1, c2]"]
    for level in range(1, levels + 1):
        lines.append(f"x{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * fan) + "]")
    where = draw(st.sampled_from(["metadata", "retrieved_ids", "unknown"]))
    top = f"*a{levels}"
    body = {
        "metadata": f"chunks: [{{id: c1, doc_id: d, start: 0, end: 3, metadata: {{m: {top}}}}}]",
        "retrieved_ids": f"queries: [{{id: q1}}]\nrun: {{q1: {{retrieved_ids: {top}}}}}",
        "unknown": f"queries: [{{id: q1, extra: {top}}}]",
    }[where]
    # The anchors live under a key the format does not know, so a file under the alias
    # limit fails there, and one over it fails at the alias: either names its place.
    return ("documents: [{id: d, text: abc}]\nanchors:\n"
            + "".join(f"  {line}\n" for line in lines) + body + "\n")


@examples(0.5)
@given(alias_bombs())
def test_alias_bombs_load_or_name_the_place(folder: Path, text: str) -> None:
    path = folder / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    _load(path)


# -- nesting depth ---------------------------------------------------------------------------
@st.composite
def deep_metadata(draw: st.DrawFn) -> tuple[str, int]:
    depth = draw(st.integers(1, 300))
    kind = draw(st.sampled_from(["list", "dict", "mixed"]))
    value: Any = "leaf"
    for level in range(depth):
        use_list = kind == "list" or (kind == "mixed" and level % 2)
        value = [value] if use_list else {"k": value}
    where = draw(st.sampled_from(["document", "chunk", "expected_metadata"]))
    data: dict[str, Any] = {"documents": [{"id": "d", "text": "alpha beta"}]}
    if where == "document":
        data["documents"][0]["metadata"] = {"m": value}
    elif where == "chunk":
        data["chunks"] = [{"id": "c", "doc_id": "d", "start": 0, "end": 5,
                           "metadata": {"m": value}}]
    else:
        data["expected_metadata"] = {"c": {"m": value}}
    return json.dumps(data), depth


@examples(0.5)
@given(deep_metadata())
def test_nesting_loads_up_to_the_limit_and_is_refused_beyond(folder: Path,
                                                            case: tuple[str, int]) -> None:
    text, depth = case
    path = folder / "deep.json"
    path.write_text(text, encoding="utf-8")
    dataset = outcome(lambda: load_dataset(path), (str(path),))
    # "m" holds ``depth`` levels below a mapping: over 100 levels it must be refused.
    assert (dataset is None) == (depth + 1 > 100), depth


# -- text that is not UTF-8 or not text ------------------------------------------------------
@st.composite
def broken_encodings(draw: st.DrawFn) -> tuple[str, bytes]:
    suffix = draw(st.sampled_from([".json", ".yaml"]))
    base = ('{"documents": [{"id": "d", "text": "caf\\u00e9 X"}], "queries": [{"id": "q1"}]}'
            if suffix == ".json" else
            'documents: [{id: d, text: "café X"}]\nqueries: [{id: q1}]\n')
    data = base.encode("utf-8")
    pieces = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\xc0\xaf",
              b"\\ud800", b"\\udc00", b"\\ud83d\\ude00", b"\xe2\x80\xae"]
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.integers(0, len(data)))
        data = data[:where] + draw(st.sampled_from(pieces)) + data[where:]
    return suffix, data


@examples(0.5)
@given(broken_encodings())
def test_broken_encodings_load_or_name_the_file(folder: Path, case: tuple[str, bytes]) -> None:
    suffix, data = case
    path = folder / f"enc{suffix}"
    path.write_bytes(data)
    _load(path)


# -- files that are not files ------------------------------------------------------------------
@examples(0.25)
@given(st.sampled_from(["/dev/zero", "/dev/null", "/dev/urandom", "fifo", "dir", "loop"]),
       st.sampled_from(["dataset", "document"]))
def test_files_that_are_not_files_are_refused(folder: Path, kind: str, role: str) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs POSIX FIFOs and devices")
    target = folder / f"{role}-{kind.strip('/').replace('/', '-')}.json"
    if target.exists() or target.is_symlink():
        target.unlink() if not target.is_dir() else target.rmdir()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    elif kind == "loop":
        target.symlink_to(target.name)
    else:
        target.symlink_to(kind)
    if role == "dataset":
        _load(target)
    else:
        gold = folder / "gold.yaml"
        gold.write_text(f"documents: [{{id: d, path: {target.name}}}]\n", encoding="utf-8")
        _load(gold)


# -- pathological whitespace ---------------------------------------------------------------------
WHITESPACE = (" ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u2003", " \n ")


@st.composite
def respaced_quotes(draw: st.DrawFn) -> tuple[str, str]:
    words = draw(st.lists(st.sampled_from(["the", "a", "th", "e", "thee", "ab"]),
                          min_size=2, max_size=60))
    text = " ".join(words)
    i = draw(st.integers(0, len(words) - 1))
    j = draw(st.integers(i + 1, len(words)))
    joiners = draw(st.lists(st.sampled_from(WHITESPACE), min_size=j - i, max_size=j - i))
    quote = "".join(word + joiner for word, joiner in zip(words[i:j], joiners)).rstrip()
    if draw(st.booleans()):
        quote = draw(st.sampled_from(WHITESPACE)) + quote
    return text, quote


@examples(0.25)
@given(respaced_quotes())
def test_respaced_quotes_are_located_as_the_whitespace_rule_says(folder: Path,
                                                                 case: tuple[str, str]) -> None:
    text, quote = case
    path = folder / "quotes.json"
    path.write_text(json.dumps({
        "documents": [{"id": "d", "text": text}],
        "queries": [{"id": "q", "expected_evidence": [{"doc_id": "d", "quote": quote}]}],
    }), encoding="utf-8")
    dataset = outcome(lambda: load_dataset(path), (str(path),))
    # Every run of whitespace may stand for any other: the quote's words are in the text.
    pattern = r"\s+".join(map(re.escape, quote.split()))
    expected = re.search((r"(?<!\s)\s+" if quote[:1].isspace() else "") + pattern, text)
    if expected is None:
        assert dataset is None
        return
    assert dataset is not None
    span = dataset.queries[0].expected_evidence[0]
    assert (span.start, span.end) == expected.span()
