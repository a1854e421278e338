"""Strategies and oracles shared by the fuzz tests (not a test module).

- :func:`valid_datasets` draws small *valid* FORMAT v1 dataset dicts that use
  every section: 1-3 documents of words, numbers and awkward Unicode
  (combining marks, right-to-left text and controls, emoji sequences, NUL, a
  byte order mark, line and paragraph separators), chunks by offsets or by
  text to locate, vectors, queries with every gold field, and a run.
- :func:`mutate` changes 1-4 places of such a dict: wrong types, dropped and
  extra keys, empty strings and lists, Unicode inserted into strings, huge and
  negative offsets, NaN and infinities (as floats and as strings), repeated
  ids, vectors of mixed dimensions, 0-dimensional and empty numpy arrays
  (anywhere), numpy arrays where lists are expected, deeply nested values,
  huge integers (``10**30``, ``2**63``) anywhere, ``params.k`` included.
- :func:`check_report` is the oracle for a report: every key of the stage,
  every value (aggregate and per query) ``None`` or a finite float in the
  registry's ``[low, high]``.  :func:`check_error` is the oracle for an error:
  an allowed type, a non-empty message that names the place.

Every bug these tests found in a module the fuzz owner may change is fixed,
with a regression test of its minimal input (the "regressions" section of the
test module that found it).  A bug that is not fixed yet is listed in
``KNOWN_BUGS``: it has a strict ``xfail`` reproduction, and only its inputs are
kept out of the strategy that reaches it (the entry says how), so that the fuzz
runs stay green and the xfail fails loudly once the bug is fixed; then remove
the entry and its avoidance.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import fractions
import functools
import itertools
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

import pytest_rag
from pytest_rag import DatasetError

Raw = dict[str, Any]

SOURCE = "fuzz-gold.yaml"
STAGES: tuple[str, ...] = tuple(pytest_rag.STAGES)
SPECS = {(spec.stage, spec.key): spec for spec in pytest_rag.REGISTRY.values()}
STAGE_KEYS = {stage: [key for (s, key) in SPECS if s == stage] for stage in STAGES}

#: Open bugs: name -> where its strict xfail reproduction is.
KNOWN_BUGS: dict[str, str] = {}  # none open

# -- text ---------------------------------------------------------------------
#: Awkward Unicode: combining marks, RTL scripts and controls, emoji (with
#: modifiers and joiners), NUL, BOM, separators, digits of other scripts.
UNICODE_PIECES = (
    "e\u0301", "a\u0308\u0323", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "\u05e9\u05dc\u05d5\u05dd",
    "\u202eevil\u202c", "\u200f", "\u200d", "\U0001f44d\U0001f3fd",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\x00", "\ufeff", "\u2028", "\u2029", "\r\n",
    "\t", "\u00df", "\u0130", "\ufb01", "\u216b", "\u0663\u0664", "\U0001d518", "\u6771\u4eac",
    "\u00a0", "\u3000", "\u0085",
)
WORDS = ("refund", "Refunds", "30", "days", "1,200", "3.5", "window", "the", "x_1", "caf\u00e9",
         "don't", "know", "i", "Straße", "\u03a9\u03bc\u03ad\u03b3\u03b1", "2024")
SEPARATORS = (" ", " ", " ", "\n", ". ", "\n\n", "\n# ", "\n- ", "\n| a | b |\n", "\n```\n", ", ")

_piece = st.one_of(st.sampled_from(WORDS), st.sampled_from(WORDS), st.sampled_from(UNICODE_PIECES))
TEXT = st.lists(st.tuples(_piece, st.sampled_from(SEPARATORS)), min_size=1, max_size=14).map(
    lambda parts: "".join(word + sep for word, sep in parts))
SHORT_TEXT = st.lists(_piece, max_size=5).map(" ".join)

#: Ids: plain, and the awkward ones (RTL, combining, emoji, NUL, brackets, spaces).
ID_POOL = ("a", "b", "doc-1", "d.2", "0", "x y", "q[1]", "e\u0301", "\u05e9\u05dc\u05d5\u05dd",
           "\u202eevil", "\U0001f44d", "nul\x00id", "\u0627\u0644", "'quoted'", "a#0", "\ufeffbom")
_ids = st.sampled_from(ID_POOL)

# -- nasty values ---------------------------------------------------------------
_NASTY_FIXED: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, -(10**6), 2**31, 2**63, -(2**63), 10**18, 10**30, 10**40,
    10**400, 1.5, -0.0, 0.5,
    float("nan"), float("inf"), float("-inf"), 1e300, -1e300, 5e-324,
    "NaN", "nan", "inf", "-Infinity", "1e400", "12", "", " ", "\x00", "e\u0301", "\u202e",
    "\U0001f44d\U0001f3fd", "\ufeff", "x" * 300,
    [], [None], [[]], [[[]]], [""], [1, "a", None], [float("nan")], [10**40], {}, {"": 1},
    {"x": None}, {"id": "a"}, {1: 2}, (1, 2), frozenset({"a"}), {"a", "b"}, b"bytes",
    bytearray(b"x"), datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 1, 12, 0),
    decimal.Decimal("NaN"), decimal.Decimal("1.5"), fractions.Fraction(1, 3), complex(1, 2),
    range(3), object(),
)


def _numpy_values() -> st.SearchStrategy[Any]:
    """numpy scalars and arrays: empty, 0-d, 2-D, mixed, NaN, strings, objects."""
    return st.sampled_from([
        lambda: np.array([]), lambda: np.zeros((0, 3)),
        lambda: np.zeros((2, 0)), lambda: np.array([[1.0, 2.0], [3.0, 4.0]]),
        lambda: np.array([1.0, float("nan")]), lambda: np.array([1, 2, 3], dtype=np.int8),
        lambda: np.array([0.1, 0.2], dtype=np.float32), lambda: np.array(["a", "b"]),
        lambda: np.array([None, 1], dtype=object), lambda: np.array([True, False]),
        lambda: np.array([1e308, 1e308]), lambda: np.array([1 + 2j]),
        lambda: np.ones((2, 2, 2)), lambda: np.int64(3), lambda: np.float64("nan"),
        lambda: np.bool_(True), lambda: np.str_("a"), lambda: np.float32(0.5),
        lambda: np.uint64(2**64 - 1), lambda: np.array(1.0), lambda: np.array(3),
        lambda: np.array("a"), lambda: np.array(float("nan")), lambda: np.array(None, dtype=object),
        lambda: np.array([1.0]).reshape(()), lambda: np.array(2**63 - 1),
    ]).map(lambda make: make())


def _deep(depth: int, kind: str) -> Any:
    value: Any = 1 if kind != "str" else "x"
    for _ in range(depth):
        value = [value] if kind != "dict" else {"a": value}
    return value


DEEP = st.builds(_deep, st.integers(20, 400), st.sampled_from(["list", "dict", "str"]))

NASTY: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(_NASTY_FIXED),
    _numpy_values(),
    st.integers(-(10**12), 10**12),
    st.floats(max_value=1e300, min_value=-1e300)
    | st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    st.text(max_size=8),
    SHORT_TEXT,
    st.lists(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3),
                       st.floats(max_value=1e300, min_value=-1e300) | st.just(float("nan"))),
             max_size=4),
    st.dictionaries(st.text(max_size=4), st.one_of(st.none(), st.integers(), st.text(max_size=3)),
                    max_size=3),
    DEEP,
)

#: Keys to add: every key the format knows (in the wrong place), typos, odd keys.
KEY_POOL = (
    "format", "params", "documents", "chunks", "expected_chunks", "expected_metadata",
    "vectors", "queries", "run", "expected", "id", "text", "path", "metadata", "doc_id",
    "start", "end", "quote", "relevant", "expected_evidence", "reference_answer",
    "required_facts", "expected_citations", "answerable", "question", "retrieved_ids",
    "reranked_ids", "context_ids", "answer", "cited_ids", "abstained", "verified_claims",
    "task_success", "query_vector", "ann_ids", "retrieval_latency_ms", "latency_ms",
    "cost_usd", "total_tokens", "k", "size_limits", "sentences", "indexed_ids", "claim",
    "supported", "expected_evidnce", "retreived_ids", "", " ", "ID", "\x00", "e\u0301",
    "\u202ek", "q1", "a#0", "retrieval", "recall_at_k",
)


# -- valid datasets ---------------------------------------------------------------
def _finite(low: float = -10.0, high: float = 10.0) -> st.SearchStrategy[float]:
    edges = [x for x in (0.0, 1.0, -1.0, 1e-300, 1e200, low, high) if low <= x <= high]
    return st.one_of(st.floats(low, high, allow_nan=False, allow_infinity=False),
                     st.sampled_from(edges))


@st.composite
def valid_datasets(draw: st.DrawFn, *, max_docs: int = 3) -> Raw:
    """A small valid FORMAT v1 dataset using every section (as a plain dict)."""
    doc_ids = draw(st.lists(_ids, min_size=1, max_size=max_docs, unique=True))
    documents = []
    texts: dict[str, str] = {}
    for doc_id in doc_ids:
        text = draw(TEXT)
        texts[doc_id] = text
        entry: Raw = {"id": doc_id, "text": text}
        if draw(st.booleans()):
            entry["metadata"] = {"source": f"{doc_id}.md", "n": draw(st.integers(0, 3))}
        documents.append(entry)
    single = len(doc_ids) == 1

    def span(doc_id: str) -> tuple[int, int]:
        length = len(texts[doc_id])
        a = draw(st.integers(0, length))
        b = draw(st.integers(0, length))
        return min(a, b), max(a, b)

    # Chunks: per document, consecutive (sometimes overlapping) segments.
    chunks: list[Raw] = []
    chunk_ids: list[str] = []
    counter = 0
    for doc_id in doc_ids:
        text = texts[doc_id]
        cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=4))) | {0, len(text)})
        for start, end in itertools.pairwise(cuts):
            if draw(st.integers(0, 5)) == 0:
                continue  # a gap: not every character is covered
            start = max(0, start - draw(st.integers(0, 3)))  # a little overlap
            chunk_id = draw(st.sampled_from([f"c{counter}", f"{doc_id}#{counter}",
                                             f"\u05e9{counter}", f"c\u0301{counter}"]))
            counter += 1
            if chunk_id in chunk_ids:
                chunk_id = f"c{counter}-{len(chunk_ids)}"
            entry = {"id": chunk_id}
            if not single or draw(st.booleans()):
                entry["doc_id"] = doc_id
            piece = text[start:end]
            if piece.strip() and not has_chunk_of(chunks, doc_id) and draw(st.booleans()):
                entry["text"] = piece  # located (first chunk of its document only)
            else:
                entry["start"], entry["end"] = start, end
                if draw(st.integers(0, 3)) == 0:
                    entry["text"] = piece
            if draw(st.booleans()):
                entry["metadata"] = {"source": f"{doc_id}.md",
                                     "page": draw(st.one_of(st.none(), st.integers(0, 9)))}
            chunks.append(entry)
            chunk_ids.append(chunk_id)

    expected_chunks = []
    for doc_id in draw(st.lists(st.sampled_from(doc_ids), max_size=3)):
        start, end = span(doc_id)
        expected_chunks.append({"doc_id": doc_id, "start": start, "end": end})

    any_ids = (st.sampled_from(chunk_ids + ["unknown", "\U0001f44d"]) if chunk_ids
               else st.sampled_from(["unknown", "x"]))
    known_ids = st.sampled_from(chunk_ids) if chunk_ids else st.nothing()

    data: Raw = {}
    if draw(st.booleans()):
        data["format"] = "pytest-rag/v1"
    data["params"] = draw(st.fixed_dictionaries({}, optional={
        "k": st.integers(1, 6),
        "size_limits": st.integers(0, 6).flatmap(lambda low: st.tuples(
            st.just(low), st.integers(low, 40)).map(list)),
        "boundary_tolerance": st.integers(0, 5),
        "required_metadata": st.lists(st.sampled_from(["source", "page", "n"]), max_size=2),
        "max_context_tokens": st.integers(0, 60),
        "abstain_phrases": st.lists(st.sampled_from(["i don't know", "", "no",
                                                     "\u05e9\u05dc\u05d5\u05dd"]),
                                    max_size=2),
    }))
    data["documents"] = documents
    data["chunks"] = chunks
    if expected_chunks:
        data["expected_chunks"] = expected_chunks
    if chunk_ids and draw(st.booleans()):
        sources = st.sampled_from(["a.md", f"{doc_ids[0]}.md"])
        data["expected_metadata"] = {cid: {"source": draw(sources)}
                                     for cid in draw(st.lists(known_ids, max_size=2))}
    dim = draw(st.integers(1, 4))
    vector = st.lists(_finite(), min_size=dim, max_size=dim)
    if chunk_ids and draw(st.integers(0, 3)):
        vectors: Raw = {"chunks": {cid: draw(vector)
                                   for cid in draw(st.lists(any_ids, max_size=6))}}
        if draw(st.booleans()):
            vectors["sentences"] = {cid: draw(st.lists(vector, max_size=3))
                                    for cid in draw(st.lists(known_ids, max_size=4))}
        if draw(st.booleans()):
            vectors["indexed_ids"] = draw(st.lists(any_ids, max_size=4))
        data["vectors"] = vectors
    has_chunk_vectors = bool(data.get("vectors", {}).get("chunks"))

    query_ids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "\u202eq", "q\x00", "\U0001f44d"]),
                              min_size=1, max_size=3, unique=True))
    queries = []
    run: Raw = {}
    for query_id in query_ids:
        query: Raw = {"id": query_id}
        if draw(st.booleans()):
            query["question"] = draw(SHORT_TEXT)
        if chunk_ids and draw(st.integers(0, 4)):
            if draw(st.booleans()):
                query["relevant"] = draw(st.dictionaries(any_ids, st.integers(0, 3), max_size=4))
            else:
                query["relevant"] = draw(st.lists(any_ids, max_size=3))
        if draw(st.integers(0, 4)):
            evidence = []
            for doc_id in draw(st.lists(st.sampled_from(doc_ids), max_size=3)):
                start, end = span(doc_id)
                quote = texts[doc_id][start:end]
                item: Raw = {"doc_id": doc_id} if not single or draw(st.booleans()) else {}
                if quote.strip() and draw(st.booleans()):
                    item["quote"] = quote
                else:
                    item["start"], item["end"] = start, end
                evidence.append(item)
            query["expected_evidence"] = evidence
        if draw(st.booleans()):
            query["reference_answer"] = draw(st.one_of(SHORT_TEXT,
                                                       st.lists(SHORT_TEXT, max_size=3)))
        if draw(st.booleans()):
            query["required_facts"] = draw(st.lists(SHORT_TEXT, max_size=3))
        if draw(st.booleans()):
            query["expected_citations"] = draw(st.lists(st.sampled_from(doc_ids + chunk_ids),
                                                        max_size=3))
        if draw(st.booleans()):
            query["answerable"] = draw(st.booleans())
        queries.append(query)
        if draw(st.integers(0, 4)) == 0:
            continue  # no run entry
        entry: Raw = {}
        optional: dict[str, st.SearchStrategy[Any]] = {
            "retrieved_ids": st.lists(any_ids, max_size=7),
            "reranked_ids": st.lists(any_ids, max_size=7),
            "context_ids": st.lists(known_ids, max_size=4) if chunk_ids else st.just([]),
            "answer": SHORT_TEXT,
            "cited_ids": st.lists(st.sampled_from(doc_ids + ["zz"]), max_size=3),
            "abstained": st.booleans(),
            "verified_claims": st.lists(st.fixed_dictionaries(
                {"supported": st.booleans()}, optional={"claim": SHORT_TEXT}), max_size=3),
            "task_success": st.booleans(),
            "ann_ids": st.lists(any_ids, max_size=6),
            "retrieval_latency_ms": _finite(0, 1e6),
            "generation_latency_ms": _finite(0, 1e6),
            "latency_ms": _finite(0, 1e6),
            "cost_usd": _finite(0, 10),
            "total_tokens": st.integers(0, 10**6),
        }
        if has_chunk_vectors:
            optional["query_vector"] = vector
        for name, strategy in optional.items():
            if draw(st.booleans()):
                entry[name] = draw(strategy)
        run[query_id] = entry if entry or draw(st.booleans()) else None
    data["queries"] = queries
    data["run"] = run
    if draw(st.integers(0, 3)) == 0:
        data["expected"] = {"retrieval": {"recall_at_k": 0.5, "mrr_at_k": None}}
    return data


def has_chunk_of(chunks: list[Raw], doc_id: str) -> bool:
    """Whether ``chunks`` already holds a chunk of ``doc_id`` (or of the only document)."""
    return any(chunk.get("doc_id", doc_id) == doc_id for chunk in chunks)


# -- mutation ---------------------------------------------------------------------
#: Places deeper than this are not listed for mutation: a value nested hundreds
#: of levels by the "deep" operation (several times over) is one place, not a
#: recursion as deep as itself (which ended in RecursionError in a deep run).
MAX_PATH_DEPTH = 64


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a tree of dicts and lists (the root is ``()``), down to
    :data:`MAX_PATH_DEPTH` levels."""
    found = [prefix]
    if len(prefix) >= MAX_PATH_DEPTH:
        return found
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(paths_of(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(paths_of(value, (*prefix, index)))
    return found


def _at(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


def _ids_in(root: Any) -> list[str]:
    """Every string that is an id somewhere (to make repeated ids)."""
    found = []
    for path in paths_of(root):
        if path and path[-1] in ("id", "doc_id"):
            value = _at(root, path)
            if isinstance(value, str):
                found.append(value)
    return found or ["a"]


def _number_variants(value: Any) -> st.SearchStrategy[Any]:
    number = value if isinstance(value, (int, float)) else 0
    if isinstance(number, int) and abs(number) > 10**300:  # beyond floats: the arithmetic below
        number = 10**300
    whole = int(number) if isinstance(number, float) and math.isfinite(number) else number
    return st.sampled_from([
        -1, -(10**9), 10**9, 2**63, 2**63 - 1, 2**64, -(2**63) - 1, 10**30, 10**400, whole + 1,
        whole - 1, float("nan"), float("inf"),
        float("-inf"), "nan", "inf", "1e400", str(number), float(whole) + 0.5, float(whole),
        np.int64(whole) if isinstance(whole, int) and abs(whole) < 2**62 else np.int64(1),
        np.float64(number), np.float32(number) if abs(number) < 1e30 else np.float32(1),
        1e300, -1e300, True,
    ])


def _string_variants(text: str) -> st.SearchStrategy[str]:
    def insert(args: tuple[int, str]) -> str:
        where, piece = args
        where = min(where, len(text))
        return text[:where] + piece + text[where:]

    return st.one_of(
        st.tuples(st.integers(0, max(len(text), 0)), st.sampled_from(UNICODE_PIECES)).map(insert),
        st.sampled_from(["", " ", "\x00", text + "\x00", text.upper(), text[::-1],
                         "\u202e" + text, text + "\u0301", text * 3]),
    )


def _array_variants(value: list[Any]) -> st.SearchStrategy[Any]:
    def as_array(kind: str) -> Any:
        try:
            if kind == "float":
                return np.asarray(value, dtype=np.float64)
            if kind == "float32":
                return np.asarray(value, dtype=np.float32)
            if kind == "object":
                array = np.empty(len(value), dtype=object)
                array[:] = value
                return array
            if kind == "tuple":
                return tuple(value)
            if kind == "generator":
                return iter(list(value))
            return np.asarray(value)
        except (ValueError, TypeError, OverflowError):
            return np.asarray(value, dtype=object) if kind != "tuple" else tuple(value)

    return st.sampled_from(["float", "float32", "object", "plain", "tuple",
                            "generator"]).map(as_array)


def _vector_variants(value: list[Any]) -> st.SearchStrategy[Any]:
    """Mixed dimensions, empty, nested, NaN, strings, huge, and numpy forms (0-d too)."""
    def array(items: Any, dtype: Any = None) -> list[Any]:
        """``[np.asarray(items, dtype)]``, or nothing when numpy cannot convert them
        (NaN or a huge number into an integer dtype is the test's problem, not the package's)."""
        try:
            with np.errstate(all="ignore"):
                return [np.asarray(items, dtype=dtype)]
        except (ValueError, OverflowError, TypeError):
            return []

    zero_d = [np.array(1.0), *array(value[0] if value else 0.0)]
    row = array(value)
    return st.sampled_from([
        *zero_d, *([row[0][None, :]] if row and row[0].ndim == 1 else []),
        np.array([]), *array(value, np.float16), *array(value, np.int32),
        *array([value, value]), *array(value, object),
        value + [0.5], value[:-1], [], [value], [[*value], [*value, 1.0]], value + [float("nan")],
        [*value[:-1], "1.0"] if value else ["1.0"],
        [*value[:-1], float("inf")] if value else [1e308],
        [1e300] * max(len(value), 1), [-0.0] * max(len(value), 1), [True] * max(len(value), 1),
    ])


OPERATIONS = ("replace", "drop", "add_key", "insert", "repeat", "variant", "variant", "variant",
              "repeat_id", "numpy", "deep")


@st.composite
def mutate(draw: st.DrawFn, data: Raw, *, min_changes: int = 1, max_changes: int = 4) -> Any:
    """``data`` (deep-copied) with 1-4 random changes; may also replace the root."""
    data = copy.deepcopy(data)
    root: Any = data
    for _ in range(draw(st.integers(min_changes, max_changes))):
        paths = paths_of(root)
        path = draw(st.sampled_from(paths))
        operation = draw(st.sampled_from(OPERATIONS))
        target = _at(root, path)
        if not path and operation in ("replace", "drop"):
            if draw(st.integers(0, 9)) == 0:
                root = draw(NASTY)  # the whole file is something else
            continue
        parent = _at(root, path[:-1]) if path else None
        key = path[-1] if path else None
        if operation == "replace" and parent is not None:
            parent[key] = draw(NASTY)
        elif operation == "drop" and parent is not None:
            del parent[key]
        elif operation == "add_key" and isinstance(target, dict):
            target[draw(st.one_of(st.sampled_from(KEY_POOL), st.text(max_size=5)))] = draw(NASTY)
        elif operation == "insert" and isinstance(target, list):
            target.insert(draw(st.integers(0, len(target))), draw(NASTY))
        elif operation == "repeat" and isinstance(target, list) and target:
            target.insert(draw(st.integers(0, len(target))),
                          copy.deepcopy(target[draw(st.integers(0, len(target) - 1))]))
        elif operation == "repeat_id" and parent is not None and isinstance(target, str):
            parent[key] = draw(st.sampled_from(_ids_in(root)))
        elif operation == "numpy" and parent is not None and isinstance(target, list):
            parent[key] = draw(_array_variants(target))
        elif operation == "deep" and parent is not None:
            parent[key] = draw(DEEP)
        elif operation == "variant" and parent is not None:
            if isinstance(target, bool):
                parent[key] = draw(st.sampled_from([1, 0, "true", None, np.bool_(not target)]))
            elif isinstance(target, (int, float)):
                parent[key] = draw(_number_variants(target))
            elif isinstance(target, str):
                parent[key] = draw(_string_variants(target))
            elif isinstance(target, list) and target and all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) for x in target):
                parent[key] = draw(_vector_variants(target))
            elif isinstance(target, list):
                parent[key] = draw(st.sampled_from([[], [None], target + target, target[::-1],
                                                    [target], target[:1]]))
            elif isinstance(target, dict):
                parent[key] = draw(st.sampled_from([{}, list(target), list(target.values()),
                                                    {str(i): v
                                                     for i, v in enumerate(target.values())},
                                                    None]))
    return root


def mutated_datasets(**kwargs: Any) -> st.SearchStrategy[Any]:
    return valid_datasets(**kwargs).flatmap(mutate)


# -- converting to file text --------------------------------------------------------
def plain(value: Any) -> Any:
    """The value in JSON/YAML types (what a file can hold), as closely as it goes."""
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, Mapping):
        return {(key if isinstance(key, (str, int, float, bool)) or key is None else str(key)):
                plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, range)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(item) for item in value), key=repr)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        return float(value)
    if isinstance(value, complex):
        return [value.real, value.imag]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


# -- oracles --------------------------------------------------------------------------
def check_report(report: Any, stage: str) -> None:
    """A valid report: every key of the stage, every value None or finite in [low, high]."""
    assert isinstance(report, pytest_rag.Report), type(report)
    assert report.stage == stage
    assert sorted(report.values) == sorted(STAGE_KEYS[stage]), (sorted(report.values), stage)
    for key in STAGE_KEYS[stage]:
        spec = SPECS[(stage, key)]
        values = [("aggregate", report.values[key])]
        values += [(query_id, value) for query_id, value in report.per_query.get(key, {}).items()]
        for where, value in values:
            if value is None:
                continue
            assert type(value) is float, f"{stage}.{key} [{where}]: {value!r} is not a float"
            assert math.isfinite(value), f"{stage}.{key} [{where}]: {value!r} is not finite"
            assert spec.low <= value <= spec.high, (
                f"{stage}.{key} [{where}]: {value!r} outside [{spec.low}, {spec.high}]")
        if report.values[key] is None:
            assert report.missing.get(key), f"{stage}.{key} is None without a reason"
    assert set(report.per_query) <= set(report.values)
    for key, per_query in report.per_query.items():
        assert list(per_query) == list(report.query_ids), key


def check_error(error: BaseException, places: tuple[str, ...], *,
                allowed: tuple[type[BaseException], ...] = (DatasetError,)) -> None:
    """An allowed error whose message is non-empty and names one of ``places``."""
    assert isinstance(error, allowed), f"{type(error).__name__}: {error}"
    message = str(error)
    assert message.strip(), f"{type(error).__name__} with an empty message"
    assert any(place in message for place in places), (
        f"{type(error).__name__} message names none of {places}: {message!r}")
    if isinstance(error, DatasetError):
        assert error.problem.strip(), message
        assert message.startswith(error.source), message


def outcome(call: Callable[[], Any], places: tuple[str, ...], *,
            allowed: tuple[type[BaseException], ...] = (DatasetError,)) -> Any:
    """``call()``'s result, or ``None`` after checking the error it raised."""
    from hypothesis import event

    try:
        result = call()
    except allowed as error:
        check_error(error, places, allowed=allowed)
        event(f"outcome: {type(error).__name__}: {str(error)[:25]}")
        return None
    event("outcome: ok")
    return result


def evaluate_all(dataset: Any, source: str) -> dict[str, Any]:
    """Every stage of ``dataset``: its report, or None when it raised a (checked) DatasetError."""
    reports = {}
    for stage in STAGES:
        evaluator = pytest_rag.EVALUATORS[stage]()
        report = outcome(functools.partial(evaluator.evaluate, dataset), (source,))
        if report is not None:
            check_report(report, stage)
        reports[stage] = report
    return reports




def examples(weight: float) -> Any:
    """Settings with ``weight`` times the active profile's ``max_examples``.

    Read when the test module is imported, i.e. after the profile is chosen
    (``ci`` by default, ``--hypothesis-profile=deep`` for the long run).
    """
    from hypothesis import Phase, settings

    count = max(1, round(settings.default.max_examples * weight))
    if settings.get_current_profile_name() == "deep" or os.environ.get("PYTEST_RAG_SHRINK"):
        return settings(max_examples=count)
    # In CI a failure is reported as found: shrinking a big mutated dataset can
    # take minutes.  The deep profile (or PYTEST_RAG_SHRINK=1) shrinks.
    return settings(max_examples=count,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target))
