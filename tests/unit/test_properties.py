"""Invariance properties of every metric, looping over the registry.

In the manner of scikit-learn's ``metrics/tests/test_common.py`` ("it is often
possible to write one general test for several metrics"), each test states one
property and checks it for every ``"stage.key"`` of :data:`pytest_rag.REGISTRY`
it applies to, on random but valid FORMAT v1 datasets that :func:`datasets`
builds as plain dicts.  Values are read only through ``report.values[key]``
and ``report.per_query[key][query_id]``.

The examples are small (1-3 short documents, up to 9 chunks, 1-3 queries) and
the runs derandomized (no example database), so the file is deterministic.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

import pytest_rag
from pytest_rag.registry import MetricSpec, need_alternatives

Raw = dict[str, Any]
#: ``"stage.key"`` -> (aggregate, {query id: per-query value}).
Snapshot = dict[str, tuple[Any, dict[str, Any]]]

REGISTRY = pytest_rag.REGISTRY


#: Shrinking a failure can take minutes; the examples are small already, so a
#: failure is reported as found.  Set PYTEST_RAG_SHRINK=1 to shrink it.
PHASES = tuple(Phase) if os.environ.get("PYTEST_RAG_SHRINK") else (Phase.explicit, Phase.generate)


def examples(count: int) -> settings:
    """Deterministic settings: derandomized, no database, no deadline."""
    return settings(max_examples=budget(count), derandomize=True, deadline=None, database=None,
                    phases=PHASES,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- the dataset strategy -----------------------------------------------------
# Strategies are built once, at import: building them inside the composite
# costs more than drawing from them.

#: Words with digits, grouped numbers, an underscore, an apostrophe and
#: non-ASCII letters; shared by documents, answers and facts so they overlap.
WORDS = ("alpha", "Beta", "gamma", "refund", "refunds", "days", "window", "receipt", "the",
         "30", "1,200", "3.5", "2024", "x_1", "don't", "café", "Naïve", "STRASSE", "Straße",
         "Ωμέγα", "東京")
MARKS = ("", "", "", "", ",", ".", "!", "?", ";", ":", "...")
_WORD = st.tuples(st.sampled_from(WORDS), st.sampled_from(MARKS))
PHRASES = {(low, high): st.lists(_WORD, min_size=low, max_size=high).map(
               lambda words: " ".join(word + mark for word, mark in words))
           for low, high in ((0, 2), (0, 4), (0, 6), (1, 2), (1, 5))}
LINE_KINDS = st.sampled_from(("text", "text", "blank", "heading", "item", "indented",
                              "table", "table", "fence"))
BULLETS = st.sampled_from(("- ", "* ", "+ ", "1. ", "2) "))
FENCES = st.sampled_from(("```", "~~~"))
ENDINGS = st.sampled_from(("", "\n", "  \n"))
#: Mostly present: metrics that need several inputs at once must get them.
PRESENT = st.sampled_from((True, True, True, False))
RARELY = st.sampled_from((False,) * 5 + (True,))
COIN = st.booleans()
ONE_OR_NONE = st.sampled_from((1, 1, 1, 0))
FEW = st.sampled_from((1, 2, 0))
LIST_SIZES = st.sampled_from((3, 1, 5, 0))
GRADES = st.sampled_from((1, 2, 3, 0))
META_KEYS = st.sampled_from(["source", "page"])
META_VALUES = st.one_of(st.none(), st.booleans(), st.integers(0, 3), st.sampled_from([1.0, 2.5]),
                        st.sampled_from(["a.md", "b.md"]))
CHUNK_METADATA = st.dictionaries(META_KEYS, META_VALUES, max_size=2)
COMPONENTS = st.sampled_from((0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 0.25))
ANSWERS = st.one_of(PHRASES[0, 6], st.sampled_from((
    "I don't know.", "", "Cannot answer that!", "no information, sorry: 30", "It is 1,200 days.")))
REFERENCES = st.one_of(PHRASES[0, 4], st.lists(PHRASES[0, 4], min_size=1, max_size=2))
CLAIMS = st.lists(st.one_of(
    st.builds(lambda text, ok: {"claim": text, "supported": ok}, PHRASES[1, 5], COIN),
    st.builds(lambda ok: {"supported": ok}, COIN)), max_size=3)
LATENCIES = st.one_of(st.integers(0, 5000),
                      st.floats(0, 5000, allow_nan=False, allow_infinity=False))
COSTS = st.floats(0, 1, allow_nan=False)
TOKENS = st.integers(0, 4000)
RUN_ENTRY = st.sampled_from(("entry",) * 8 + ("absent", "null"))
PARAMS = st.fixed_dictionaries({}, optional={
    "k": st.integers(1, 4),
    "size_limits": st.integers(0, 8).flatmap(
        lambda low: st.tuples(st.just(low), st.integers(low, 20)).map(list)),
    "boundary_tolerance": st.integers(0, 3),
    "required_metadata": st.lists(META_KEYS, unique=True, max_size=2),
    "max_context_tokens": st.integers(0, 40),
    "abstain_phrases": st.lists(st.sampled_from(
        ["i don't know", "no information", "?!", "Naïve days"]), max_size=2),
})
GHOSTS = ("ghost-1", "ghost-2")  # ids that are not chunks


@st.composite
def document_text(draw: st.DrawFn) -> str:
    """Lines of text, Markdown headings, list items (and indented lines), table
    rows and code fences (closed or not)."""
    lines = []
    for _ in range(draw(st.integers(draw(ONE_OR_NONE), 5))):
        kind, text = draw(LINE_KINDS), draw(PHRASES[1, 5])
        if kind == "heading":
            text = "#" * draw(st.integers(1, 3)) + " " + text
        elif kind == "item":
            text = draw(BULLETS) + text
        elif kind == "indented":
            text = "  " + text
        elif kind == "table":
            text = f"| {text} | {draw(PHRASES[1, 2])} |"
        elif kind == "fence":
            fence = draw(FENCES)
            text = f"{fence}\n{text}" + (f"\n{fence}" if draw(COIN) else "")
        elif kind == "blank":
            text = ""
        lines.append(text)
    return "\n".join(lines) + draw(ENDINGS)


def offsets(draw: st.DrawFn, length: int) -> tuple[int, int]:
    """``start <= end`` within ``[0, length]``: empty spans and cut words included."""
    start = draw(st.integers(0, length))
    if start == length or draw(RARELY):
        return start, start
    return start, draw(st.integers(start + 1, length))


def sometimes(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    """A value of ``strategy`` (three times in four) or ``None`` (leave the field out)."""
    return draw(strategy) if draw(PRESENT) else None


def ranked_ids(draw: st.DrawFn, pool: Sequence[str], k: int) -> list[str]:
    """A ranked list of known chunk ids (repeats allowed) and, once its first K
    distinct ids are complete, sometimes a tail of any ids: ids ranked below K
    are never looked up, so unknown ones are allowed there."""
    ids = draw(st.lists(st.sampled_from(pool), min_size=draw(LIST_SIZES), max_size=6))
    if len(set(ids)) >= k and draw(COIN):
        tail = [*dict.fromkeys(pool), *GHOSTS]  # dict, not set: a set's order varies by run
        ids += draw(st.lists(st.sampled_from(tail), min_size=1, max_size=3))
    return ids


def positive_grades(query: Raw) -> dict[str, int]:
    """The query's gold ids of grade > 0 (a list means grade 1 each)."""
    relevant = query.get("relevant") or {}
    if not isinstance(relevant, Mapping):
        relevant = dict.fromkeys(relevant, 1)
    return {chunk_id: grade for chunk_id, grade in relevant.items() if grade > 0}


def _put(target: Raw, key: str, value: Any) -> None:
    if value is not None:
        target[key] = value


@st.composite
def datasets(draw: st.DrawFn) -> Raw:
    """A random valid FORMAT v1 mapping (plain dicts, lists, str, int, float, bool)."""
    raw: Raw = {}
    if draw(COIN):
        raw["format"] = "pytest-rag/v1"
    params = draw(PARAMS)
    if params or draw(COIN):
        raw["params"] = params
    k = params.get("k", 5)

    doc_ids = [f"doc{i}" for i in range(draw(st.integers(1, 3)))]
    documents = []
    for doc_id in doc_ids:
        document: Raw = {"id": doc_id, "text": draw(document_text())}
        if draw(COIN):
            document["metadata"] = {"source": f"{doc_id}.md"}
        documents.append(document)
    raw["documents"] = documents
    lengths = {doc["id"]: len(doc["text"]) for doc in documents}
    doc_choice = st.sampled_from(doc_ids)

    def span(doc_id: str) -> Raw:
        start, end = offsets(draw, lengths[doc_id])
        return {"doc_id": doc_id, "start": start, "end": end}

    chunks = []
    for n, doc_id in enumerate(doc_ids):
        for i in range(draw(st.integers(1 if n == 0 else 0, 3))):
            chunk = {"id": f"{doc_id}#{i}", **span(doc_id)}
            _put(chunk, "metadata", sometimes(draw, CHUNK_METADATA))
            chunks.append(chunk)
    raw["chunks"] = draw(st.permutations(chunks))  # documents interleaved
    known = [chunk["id"] for chunk in chunks]
    chunk_choice = st.sampled_from(chunks)

    def evidence() -> Raw:
        """Anywhere, or inside a chunk (so that chunks and contexts meet the evidence)."""
        if draw(COIN):
            return span(draw(doc_choice))
        chunk = draw(chunk_choice)
        start, end = offsets(draw, chunk["end"] - chunk["start"])
        return {"doc_id": chunk["doc_id"], "start": chunk["start"] + start,
                "end": chunk["start"] + end}

    def ideal_chunk() -> Raw:
        """Anywhere, or a chunk's own span (so that boundaries match)."""
        if draw(COIN):
            return span(draw(doc_choice))
        chunk = draw(chunk_choice)
        return {"doc_id": chunk["doc_id"], "start": chunk["start"], "end": chunk["end"]}

    if draw(PRESENT):
        raw["expected_chunks"] = [ideal_chunk() for _ in range(draw(LIST_SIZES))]
    _put(raw, "expected_metadata", sometimes(draw, st.dictionaries(
        st.sampled_from([*known, "ghost-m"]),
        st.dictionaries(META_KEYS, META_VALUES, min_size=draw(ONE_OR_NONE), max_size=2),
        min_size=1, max_size=3)))

    dim = draw(st.integers(1, 3))
    pool = draw(st.lists(st.lists(COMPONENTS, min_size=dim, max_size=dim),
                         min_size=1, max_size=4))
    if draw(COIN):
        pool.append([0.0] * dim)
    vector = st.sampled_from(pool)  # a small pool: duplicate vectors are common
    vector_ids = [*known, "ghost-v"]
    if draw(PRESENT):
        vectors: Raw = {}
        if draw(PRESENT):
            vectors["chunks"] = {vector_id: draw(vector) for vector_id in vector_ids
                                 if draw(PRESENT)}
        if draw(PRESENT):
            vectors["sentences"] = {
                chunk_id: draw(st.lists(vector, min_size=draw(FEW), max_size=3))
                for chunk_id in known if draw(PRESENT)}
        _put(vectors, "indexed_ids", sometimes(draw, st.lists(
            st.sampled_from([*vector_ids, "ghost-i"]), max_size=4)))
        raw["vectors"] = vectors

    relevance_ids = st.sampled_from([*known, *known, GHOSTS[0]])
    citable = st.lists(st.sampled_from([*doc_ids, *known, "ghost-c"]), max_size=3)
    queries = []
    for i in range(draw(st.integers(1, 3))):
        query: Raw = {"id": f"q{i}"}
        _put(query, "question", sometimes(draw, PHRASES[1, 5]))
        _put(query, "relevant", sometimes(draw, st.one_of(
            st.dictionaries(relevance_ids, GRADES, min_size=draw(FEW), max_size=4),
            st.lists(relevance_ids, max_size=3))))
        if draw(PRESENT):
            query["expected_evidence"] = [evidence() for _ in range(draw(FEW))]
        _put(query, "reference_answer", sometimes(draw, REFERENCES))
        _put(query, "required_facts", sometimes(draw, st.lists(PHRASES[0, 2], max_size=2)))
        _put(query, "expected_citations", sometimes(draw, citable))
        _put(query, "answerable", sometimes(draw, COIN))
        queries.append(query)
    raw["queries"] = queries

    run: Raw = {}
    for query in queries:
        choice = draw(RUN_ENTRY)
        if choice == "absent":
            continue  # no run entry: no run data
        if choice == "null":
            run[query["id"]] = None  # a null entry is the same as an absent one
            continue
        entry: Raw = {}
        # Gold chunks twice as likely: lists should often hold a relevant chunk.
        ranked_pool = [*known, *(i for i in positive_grades(query) if i in known)]
        retrieved = ranked_ids(draw, ranked_pool, k) if draw(PRESENT) else None
        _put(entry, "retrieved_ids", retrieved)
        if draw(PRESENT):
            entry["reranked_ids"] = (draw(st.permutations(retrieved))
                                     if retrieved is not None and draw(COIN)
                                     else ranked_ids(draw, ranked_pool, k))
        _put(entry, "context_ids", sometimes(draw, st.lists(
            st.sampled_from(known), min_size=draw(FEW), max_size=4)))
        _put(entry, "answer", sometimes(draw, ANSWERS))
        _put(entry, "cited_ids", sometimes(draw, citable))
        _put(entry, "abstained", sometimes(draw, COIN))
        _put(entry, "verified_claims", sometimes(draw, CLAIMS))
        _put(entry, "task_success", sometimes(draw, COIN))
        _put(entry, "query_vector", sometimes(draw, vector))
        _put(entry, "ann_ids", sometimes(draw, st.lists(
            st.sampled_from([*vector_ids, *GHOSTS]), max_size=5)))
        for field in ("retrieval_latency_ms", "generation_latency_ms", "latency_ms"):
            _put(entry, field, sometimes(draw, LATENCIES))
        _put(entry, "cost_usd", sometimes(draw, COSTS))
        _put(entry, "total_tokens", sometimes(draw, TOKENS))
        run[query["id"]] = entry
    if run or draw(COIN):
        raw["run"] = run
    return raw


# -- evaluation and comparison ------------------------------------------------
def evaluate(raw: Raw, stages: Sequence[str] | None = None) -> Snapshot:
    """Every metric of ``stages`` (default all): aggregate and per-query values."""
    reports = pytest_rag.evaluate_dataset(pytest_rag.parse_dataset(raw), stages)
    out: Snapshot = {}
    for name, spec in REGISTRY.items():
        if spec.stage in reports:
            report = reports[spec.stage]
            out[name] = (report.values[spec.key], dict(report.per_query.get(spec.key, {})))
    return out


def close(left: float | None, right: float | None) -> bool:
    """Equal within 1e-12 (relative and absolute); ``None`` only equals ``None``."""
    if left is None or right is None:
        return left is None and right is None
    return math.isclose(left, right, rel_tol=1e-12, abs_tol=1e-12)


def identical(left: float | None, right: float | None) -> bool:
    """Equal to the last bit; ``None`` only equals ``None``."""
    if left is None or right is None:
        return left is None and right is None
    return left == right


def differences(before: Snapshot, after: Snapshot, names: Sequence[str] | None = None,
                equal: Callable[[Any, Any], bool] = close) -> list[str]:
    """Metrics whose aggregate or per-query value differs, as readable lines."""
    lines = []
    for name in before if names is None else names:
        (value, per_query), (new_value, new_per_query) = before[name], after[name]
        if not equal(value, new_value):
            lines.append(f"{name}: {value!r} -> {new_value!r}")
        for query_id in sorted(per_query.keys() | new_per_query.keys()):
            old, new = per_query.get(query_id), new_per_query.get(query_id)
            if not equal(old, new):
                lines.append(f"{name}[{query_id}]: {old!r} -> {new!r}")
    return lines


def k_of(raw: Raw) -> int:
    return int((raw.get("params") or {}).get("k", 5))


def run_entries(raw: Raw) -> list[Raw]:
    return [entry for entry in (raw.get("run") or {}).values() if entry is not None]


# -- 1. ranges ------------------------------------------------------------------
def range_problems(reports: Mapping[str, Any]) -> list[str]:
    """Values that are not finite floats inside ``[spec.low, spec.high]``."""
    problems = []
    for name, spec in REGISTRY.items():
        report = reports[spec.stage]
        values = [("", report.values[spec.key])]
        values += [(f"[{query_id}]", value)
                   for query_id, value in report.per_query.get(spec.key, {}).items()]
        for where, value in values:
            if value is None:
                continue
            if type(value) is not float or not math.isfinite(value):
                problems.append(f"{name}{where}: {value!r} is not a finite float")
            elif not spec.low <= value <= spec.high:
                problems.append(f"{name}{where}: {value!r} outside [{spec.low}, {spec.high}]")
    return problems


@examples(60)
@given(raw=datasets())
def test_every_value_lies_in_its_registry_range(raw: Raw) -> None:
    reports = pytest_rag.evaluate_dataset(pytest_rag.parse_dataset(raw))
    for stage, report in reports.items():
        assert list(report.values) == [spec.key for spec in report.specs], stage
        for spec in report.specs:
            assert spec.per_query or spec.key not in report.per_query, spec.name
    problems = range_problems(reports)
    assert not problems, "\n".join(problems)


def test_cosines_of_identical_vectors_stay_in_range() -> None:
    # The cosine of two equal vectors is 1; computed in floating point it can
    # come out as 1.0000000000000002 (and 1 - cos as -2.2e-16) unless clipped.
    vector = [1.0, 1.0, 1.0]
    raw = {"documents": [{"id": "d", "text": "alpha beta. gamma delta"}],
           "chunks": [{"id": "a", "doc_id": "d", "start": 0, "end": 11},
                      {"id": "b", "doc_id": "d", "start": 12, "end": 23}],
           "vectors": {"chunks": {"a": vector, "b": vector},
                       "sentences": {"a": [vector, vector], "b": [vector, vector]}},
           "queries": [{"id": "q", "relevant": ["a"]}],
           "run": {"q": {"query_vector": vector}}}
    problems = range_problems(pytest_rag.evaluate_dataset(pytest_rag.parse_dataset(raw)))
    assert not problems, "\n".join(problems)


@examples(40)
@given(raw=datasets())
def test_per_query_aggregates_are_the_mean_over_queries_with_a_value(raw: Raw) -> None:
    snapshot = evaluate(raw)
    for name, spec in REGISTRY.items():
        if not spec.per_query:
            continue
        value, per_query = snapshot[name]
        present = [v for v in per_query.values() if v is not None]
        if not present:
            assert value is None, f"{name}: {value!r} with no per-query value"
        else:
            assert close(value, math.fsum(present) / len(present)), (name, value, per_query)


# -- 2. and 3. order of queries, run entries and documents ----------------------
@examples(50)
@given(raw=datasets(), data=st.data())
def test_query_and_run_order_change_nothing(raw: Raw, data: st.DataObject) -> None:
    before = evaluate(raw)
    shuffled = copy.deepcopy(raw)
    shuffled["queries"] = data.draw(st.permutations(shuffled["queries"]), "queries")
    if shuffled.get("run"):
        order = data.draw(st.permutations(list(shuffled["run"])), "run order")
        shuffled["run"] = {query_id: shuffled["run"][query_id] for query_id in order}
    problems = differences(before, evaluate(shuffled))
    assert not problems, "\n".join(problems)


@examples(50)
@given(raw=datasets(), data=st.data())
def test_document_order_changes_nothing(raw: Raw, data: st.DataObject) -> None:
    # Chunk order is left alone: it decides neighbours and cosine ties.
    before = evaluate(raw)
    shuffled = copy.deepcopy(raw)
    shuffled["documents"] = data.draw(st.permutations(shuffled["documents"]), "documents")
    problems = differences(before, evaluate(shuffled))
    assert not problems, "\n".join(problems)


# -- 4. and 5. repeats and ids below K ------------------------------------------
RANKED_STAGES = ("retrieval", "reranking")


@examples(80)
@given(raw=datasets(), data=st.data())
def test_a_repeated_id_counts_once_at_its_first_rank(raw: Raw, data: st.DataObject) -> None:
    before = evaluate(raw, RANKED_STAGES)
    changed = copy.deepcopy(raw)
    for entry in run_entries(changed):
        for field in ("retrieved_ids", "reranked_ids"):
            ids = entry.get(field)
            for _ in range(data.draw(st.integers(1, 3)) if ids else 0):
                repeated = data.draw(st.sampled_from(ids), f"repeat in {field}")
                where = data.draw(st.integers(ids.index(repeated) + 1, len(ids)), "at")
                ids.insert(where, repeated)
    problems = differences(before, evaluate(changed, RANKED_STAGES))
    assert not problems, "\n".join(problems)


def end_of_top_k(ids: Sequence[str], k: int) -> int | None:
    """Index just past the K-th distinct id, or ``None`` with fewer than K distinct ids."""
    seen: set[str] = set()
    for index, chunk_id in enumerate(ids):
        seen.add(chunk_id)
        if len(seen) == k:
            return index + 1
    return None


@examples(80)
@given(raw=datasets(), data=st.data())
def test_ids_below_rank_k_change_no_retrieval_metric(raw: Raw, data: st.DataObject) -> None:
    # Reranking's whole-list metrics (first_relevant_rank_change,
    # candidate_set_preservation_rate) may change: only retrieval is checked.
    # Unknown ids are fine below K: "An id ranked below K is never looked up."
    before = evaluate(raw, ["retrieval"])
    changed = copy.deepcopy(raw)
    k = k_of(raw)
    known = [chunk["id"] for chunk in raw["chunks"]]
    queries = {query["id"]: query for query in raw["queries"]}
    for query_id, entry in (changed.get("run") or {}).items():
        ids = (entry or {}).get("retrieved_ids")
        cut = None if ids is None else end_of_top_k(ids, k)
        if cut is None:
            continue
        relevant = positive_grades(queries[query_id])
        others = [i for i in [*known, *GHOSTS, "never-seen"] if i not in relevant]
        for extra in data.draw(st.lists(st.sampled_from(others), min_size=1, max_size=3)):
            ids.insert(data.draw(st.integers(cut, len(ids)), "at"), extra)
    problems = differences(before, evaluate(changed, ["retrieval"]))
    assert not problems, "\n".join(problems)


# -- 6. removing an input ---------------------------------------------------------
def _query_field(field: str) -> Callable[[Raw], None]:
    def remove(raw: Raw) -> None:
        for query in raw.get("queries") or []:
            query.pop(field, None)
    return remove


def _run_field(field: str) -> Callable[[Raw], None]:
    def remove(raw: Raw) -> None:
        for entry in run_entries(raw):
            entry.pop(field, None)
    return remove


def _section(*path: str) -> Callable[[Raw], None]:
    def remove(raw: Raw) -> None:
        target = raw
        for key in path[:-1]:
            target = target.get(key) or {}
        target.pop(path[-1], None)
    return remove


#: Input name (as ``MetricSpec.needs`` spells it) -> how to remove it everywhere.
REMOVALS: dict[str, Callable[[Raw], None]] = {
    **{name: _query_field(name) for name in (
        "expected_evidence", "relevant", "reference_answer", "required_facts",
        "expected_citations", "answerable")},
    **{name: _run_field(name) for name in (
        "retrieved_ids", "reranked_ids", "context_ids", "answer", "cited_ids", "abstained",
        "verified_claims", "task_success", "query_vector", "ann_ids", "retrieval_latency_ms",
        "generation_latency_ms", "latency_ms", "cost_usd", "total_tokens")},
    "chunks": _section("chunks"),
    "expected_chunks": _section("expected_chunks"),
    "expected_metadata": _section("expected_metadata"),
    "chunk_vectors": _section("vectors", "chunks"),
    "sentence_vectors": _section("vectors", "sentences"),
    "indexed_ids": _section("vectors", "indexed_ids"),
    **{name: _section("params", name) for name in (
        "size_limits", "required_metadata", "max_context_tokens")},
}

#: (input, metric) pairs where the metric does not need the input, yet its value
#: may change when the input is removed (it need not become None).
MAY_CHANGE: dict[tuple[str, str], str] = {
    # SEMANTICS, Embedding: negative_similarity needs no gold, but it is "the
    # mean cosine over the query's gold (resp. other) chunks": relevant decides
    # which chunks are the negatives.
    ("relevant", "embedding.negative_similarity"): "gold splits positives from negatives",
    # SEMANTICS, Abstention: "abstained when given; otherwise an answer abstains
    # when ...": without abstained, the decision is detected from the answer.
    ("abstained", "generation.abstention_accuracy"): "detection from the answer takes over",
    # SEMANTICS, Embedding: exact top K ties are "broken by chunk order (vectors
    # whose id is not a chunk come after all chunks)": without chunks every
    # vector is a non-chunk vector, ranked in its given order.
    ("chunks", "embedding.query_topk_recall"): "chunk order breaks cosine ties",
    ("chunks", "embedding.ann_recall_at_k"): "chunk order breaks cosine ties",
}

#: (input, metric) -> run field: the registry says the metric needs the input
#: or the run field ("answer|abstained").  Without the input, the value stays
#: for the queries whose run entry has the field and is None for the others.
ALTERNATIVES: dict[tuple[str, str], str] = {
    # SEMANTICS, Abstention: "Needs answerable, and a run entry with abstained
    # or answer"; "abstained when given" (it wins over detection).
    ("answer", "generation.abstention_accuracy"): "abstained",
}


def strict_needs(spec: MetricSpec) -> set[str]:
    """The inputs ``spec`` cannot do without (entries with no alternative)."""
    return {need for need in spec.needs if len(need_alternatives(need)) == 1}


def test_removals_cover_every_registry_need() -> None:
    needs = {name for spec in REGISTRY.values() for need in spec.needs
             for name in need_alternatives(need)}
    assert needs - {"documents"} <= set(REMOVALS), sorted(needs - set(REMOVALS))
    for name, metric in [*MAY_CHANGE, *ALTERNATIVES]:
        assert name in REMOVALS and metric in REGISTRY, (name, metric)
    for name, metric in MAY_CHANGE:
        assert name not in strict_needs(REGISTRY[metric]), (name, metric)
    for (name, metric), field in ALTERNATIVES.items():
        assert f"{name}|{field}" in REGISTRY[metric].needs, (name, metric)


def removal_problems(name: str, before: Snapshot, after: Snapshot,
                     entries: Mapping[str, Raw]) -> list[str]:
    problems = []
    for metric, spec in REGISTRY.items():
        value, per_query = after[metric]
        if (name, metric) in ALTERNATIVES:
            field = ALTERNATIVES[name, metric]
            for query_id, new in per_query.items():
                old = before[metric][1].get(query_id)
                if entries.get(query_id, {}).get(field) is not None:
                    if not close(old, new):
                        problems.append(f"{metric}[{query_id}] with {field}: {old!r} -> {new!r}")
                elif new is not None:
                    problems.append(f"{metric}[{query_id}] without {field}: {new!r}")
            if (value is None) != all(v is None for v in per_query.values()):
                problems.append(f"{metric} = {value!r} for {per_query}")
        elif name in strict_needs(spec):
            if value is not None or any(v is not None for v in per_query.values()):
                problems.append(f"{metric} needs it but is {value!r}, {per_query}")
        elif (name, metric) not in MAY_CHANGE:
            problems += differences(before, after, [metric])
    return problems


@examples(30)
@given(raw=datasets())
def test_removing_an_input_turns_exactly_its_metrics_to_none(raw: Raw) -> None:
    before = evaluate(raw)
    entries = {query_id: entry or {} for query_id, entry in (raw.get("run") or {}).items()}
    problems = []
    for name, remove in REMOVALS.items():
        changed = copy.deepcopy(raw)
        remove(changed)
        problems += [f"without {name}: {line}"
                     for line in removal_problems(name, before, evaluate(changed), entries)]
    assert not problems, "\n".join(problems)


# -- 7. perfect retrieval ---------------------------------------------------------
@examples(60)
@given(raw=datasets())
def test_perfect_retrieval_scores_one(raw: Raw) -> None:
    changed = copy.deepcopy(raw)
    queries = changed["queries"]
    if not any(positive_grades(query) for query in queries):
        queries[0]["relevant"] = {raw["chunks"][0]["id"]: 3, GHOSTS[0]: 1}
    run = changed["run"] = changed.get("run") or {}
    k = k_of(raw)
    expected: dict[str, dict[str, float]] = {}
    for query in queries:
        # Gold ids need not be chunks, and token metrics would need their spans.
        query.pop("expected_evidence", None)
        grades = positive_grades(query)
        if not grades:
            continue
        run[query["id"]] = run.get(query["id"]) or {}
        run[query["id"]]["retrieved_ids"] = sorted(grades, key=lambda i: -grades[i])
        found = min(len(grades), k)
        expected[query["id"]] = {
            "precision_at_k": found / k, "recall_at_k": found / len(grades),
            "ndcg_at_k": 1.0, "mrr_at_k": 1.0, "hit_at_k": 1.0, "average_precision_at_k": 1.0,
        }
    after = evaluate(changed, ["retrieval"])
    for key in ("precision_at_k", "recall_at_k", "ndcg_at_k", "mrr_at_k", "hit_at_k",
                "average_precision_at_k"):
        per_query = after[f"retrieval.{key}"][1]
        for query in queries:
            want = expected.get(query["id"], {}).get(key)
            assert close(per_query.get(query["id"]), want), (key, query["id"], per_query, want)


# -- 8. scaling vectors -----------------------------------------------------------
@examples(50)
@given(raw=datasets(), scale=st.sampled_from([0.5, 2.0, 3.0, 0.1, 1e3, 1e-3]))
def test_scaling_every_vector_keeps_cosines(raw: Raw, scale: float) -> None:
    before = evaluate(raw)
    changed = copy.deepcopy(raw)
    vectors = changed.get("vectors") or {}
    for vector_id, vector in (vectors.get("chunks") or {}).items():
        vectors["chunks"][vector_id] = [scale * x for x in vector]
    for chunk_id, rows in (vectors.get("sentences") or {}).items():
        vectors["sentences"][chunk_id] = [[scale * x for x in row] for row in rows]
    for entry in run_entries(changed):
        if "query_vector" in entry:
            entry["query_vector"] = [scale * x for x in entry["query_vector"]]
    after = evaluate(changed)
    # Norms scale with the vectors; every other metric is a cosine or ignores vectors.
    norm = "embedding.mean_vector_norm"
    value, new_value = before[norm][0], after[norm][0]
    assert close(None if value is None else scale * value, new_value), (value, new_value)
    problems = differences(before, after, [name for name in REGISTRY if name != norm])
    assert not problems, "\n".join(problems)


# -- 9. determinism and the JSON round trip ---------------------------------------
@examples(40)
@given(raw=datasets())
def test_evaluation_is_deterministic_and_survives_json(raw: Raw) -> None:
    first = evaluate(raw)
    dataset = pytest_rag.parse_dataset(raw)
    for _ in range(2):  # the second time with the dataset's cached tokens and positions
        again = pytest_rag.evaluate_dataset(dataset)
        for name, spec in REGISTRY.items():
            report = again[spec.stage]
            assert identical(report.values[spec.key], first[name][0]), name
            assert report.per_query.get(spec.key, {}) == first[name][1], name
    text = json.dumps(raw)  # key order kept: it is the order of the file
    problems = differences(first, evaluate(json.loads(text)), equal=identical)
    assert not problems, "\n".join(problems)
