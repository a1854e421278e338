"""Metamorphic tests on real text: changes that keep the meaning keep the numbers.

The documents and gold evidence are two corpora of Chroma's chunking evaluation
(``shared/data/chroma_chunking``: chatlogs and State of the Union; or the copy
in ``example_project/data/chroma``).  A small deterministic pipeline written
here chunks them (paragraphs packed to ~600 characters), grades the chunks
against the evidence, retrieves and reranks by word overlap, packs a context,
"answers" with a context sentence and embeds with hashed bags of words, so
every stage has data.  Each test then changes the dataset in a way that must
not change some numbers:

- permuting documents, chunks of different documents, queries, run entries,
  gold mappings and id sets changes no aggregate and no per-query value;
- renaming chunk, query and document ids consistently (to awkward Unicode)
  changes nothing;
- scaling vectors by positive factors leaves every cosine metric unchanged;
- appending results after rank K changes nothing at K;
- splitting chunks at whitespace, with the retrieved and context lists
  covering the same positions, leaves the token metrics (retrieval
  ``token_*``, augmentation ``context_*``, budget, duplicates, grounding)
  unchanged and can only lower span completeness.
"""

from __future__ import annotations

import copy
import json
import math
import re
import zlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from fuzz_strategies import SPECS, STAGE_KEYS, STAGES, examples
from hypothesis import given, note
from hypothesis import strategies as st

import pytest_rag

Raw = dict[str, Any]
Snapshot = dict[str, dict[str, tuple[float | None, dict[str, float | None]]]]

HERE = Path(__file__).resolve()
SHARED = HERE.parents[2].parent / "shared"
CORPORA = ("chatlogs", "state_of_the_union")
QUERIES_PER_CORPUS = 24
SOURCE = "metamorphic.json"


def _gold_files() -> list[Path]:
    shared = [SHARED / "data" / "chroma_chunking" / f"{name}.gold.json" for name in CORPORA]
    if all(path.is_file() for path in shared):
        return shared
    example = HERE.parents[2] / "example_project" / "data" / "chroma" / "gold.json"
    return [example] if example.is_file() else []


GOLD_FILES = _gold_files()
pytestmark = pytest.mark.skipif(
    not GOLD_FILES, reason=f"real text absent: neither {SHARED}/data/chroma_chunking/"
                           f"{{{','.join(CORPORA)}}}.gold.json nor "
                           "example_project/data/chroma/gold.json exists")

WORD = re.compile(r"\w+")
STOP = frozenset("the and for are was were that this with from have has had what which how "
                 "does did who whom when where why their there they them its into about "
                 "some any been being than then also more most such these those".split())


def _tokens(text: str) -> list[str]:
    return [match.lower() for match in WORD.findall(text)]


def _hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _embed(text: str, dim: int = 32) -> list[float]:
    vector = [0.0] * dim
    for token in _tokens(text):
        code = _hash(token)
        vector[code % dim] += 1.0 if code & 0x100 else -1.0
    return vector


def _chunk_spans(text: str, limit: int = 600) -> list[tuple[int, int]]:
    """Paragraphs (split at blank lines), packed into chunks of up to ``limit`` characters."""
    paragraphs = [(m.start(), m.end()) for m in re.finditer(r"\S(?:.|\n(?!\s*\n))*", text)]
    spans: list[tuple[int, int]] = []
    for start, end in paragraphs:
        if spans and end - spans[-1][0] <= limit:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


@lru_cache(maxsize=1)
def real_dataset_json() -> str:
    """The real-text dataset with every stage's data, as JSON text (copied per test)."""
    documents: list[Raw] = []
    queries: list[Raw] = []
    for gold_file in GOLD_FILES:
        gold = json.loads(gold_file.read_text(encoding="utf-8"))
        for document in gold["documents"]:
            if document["id"] in CORPORA:
                text = (gold_file.parent / document["path"]).read_text(encoding="utf-8")
                documents.append({"id": document["id"], "text": text,
                                  "metadata": {"source": document["path"]}})
        kept = {doc["id"] for doc in documents}
        per_doc: dict[str, int] = {}
        for query in gold["queries"]:
            doc_ids = {span["doc_id"] for span in query.get("expected_evidence", [])}
            if not doc_ids or not doc_ids <= kept:
                continue
            first = sorted(doc_ids)[0]
            if per_doc.get(first, 0) >= QUERIES_PER_CORPUS:
                continue
            per_doc[first] = per_doc.get(first, 0) + 1
            queries.append({"id": query["id"], "question": query["question"],
                            "expected_evidence": query["expected_evidence"],
                            "answerable": query.get("answerable", True)})
    texts = {doc["id"]: doc["text"] for doc in documents}

    chunks: list[Raw] = []
    expected_chunks: list[Raw] = []
    for doc in documents:
        for i, (start, end) in enumerate(_chunk_spans(doc["text"])):
            chunk: Raw = {"id": f"{doc['id']}#{i}", "doc_id": doc["id"], "start": start, "end": end}
            if i % 7:
                chunk["metadata"] = {"source": doc["metadata"]["source"], "page": i // 10}
            chunks.append(chunk)
        for start, end in _chunk_spans(doc["text"], limit=300):
            expected_chunks.append({"doc_id": doc["id"], "start": start, "end": end})
    chunk_text = {c["id"]: texts[c["doc_id"]][c["start"]:c["end"]] for c in chunks}
    chunk_tokens = {cid: set(_tokens(text)) for cid, text in chunk_text.items()}

    vectors: Raw = {"chunks": {cid: _embed(text) for cid, text in chunk_text.items()},
                    "sentences": {}, "indexed_ids": [c["id"] for c in chunks if _hash(c["id"]) % 9]}
    for n, (cid, text) in enumerate(chunk_text.items()):
        if n % 3 == 2:
            continue
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if WORD.search(s)][:4]
        vectors["sentences"][cid] = [_embed(s) for s in sentences]

    run: Raw = {}
    for n, query in enumerate(queries):
        spans = query["expected_evidence"]
        relevant = {}
        for c in chunks:
            for span in spans:
                if (span["doc_id"] == c["doc_id"]
                        and c["start"] < span["end"] and c["end"] > span["start"]):
                    whole = c["start"] <= span["start"] and span["end"] <= c["end"]
                    relevant[c["id"]] = max(relevant.get(c["id"], 0), 2 if whole else 1)
        query["relevant"] = relevant
        words = {w for w in _tokens(query["question"]) if len(w) > 2 and w not in STOP}
        scores = {cid: len(words & toks) / math.sqrt(1 + len(toks))
                  for cid, toks in chunk_tokens.items()}
        ranked = sorted(scores, key=lambda cid: (-scores[cid], cid))[:10]
        reranked = sorted(ranked, key=lambda cid: (-len(words & chunk_tokens[cid]),
                                                   ranked.index(cid)))
        context = reranked[:3] + (reranked[:1] if n % 5 == 0 else [])
        evidence_text = " ".join(texts[s["doc_id"]][s["start"]:s["end"]] for s in spans)
        evidence_words = _tokens(evidence_text)
        first = chunk_text[context[0]]
        answer = " ".join(WORD.findall(first)[:25]) if n % 6 else "I don't know."
        query["reference_answer"] = [" ".join(evidence_text.split()[:30]), evidence_text[:80]]
        query["required_facts"] = evidence_words[:2] + evidence_words[-1:]
        query["expected_citations"] = sorted({s["doc_id"] for s in spans})
        qvec = _embed(query["question"])
        cos = {cid: _cosine(qvec, vec) for cid, vec in vectors["chunks"].items()}
        exact = sorted(cos, key=lambda cid: -cos[cid])[:12]
        code = _hash(query["id"])
        run[query["id"]] = {
            "retrieved_ids": ranked, "reranked_ids": reranked, "context_ids": context,
            "answer": answer, "cited_ids": sorted({cid.split("#")[0] for cid in context}),
            "verified_claims": [{"claim": answer[:30], "supported": bool(code & 1)},
                                {"claim": "x", "supported": bool(code & 2)}],
            "task_success": bool(code & 4), "query_vector": qvec,
            "ann_ids": [cid for i, cid in enumerate(exact) if i % 3 != 2],
            "retrieval_latency_ms": float(code % 97) + 0.5,
            "generation_latency_ms": float(code % 991), "latency_ms": float(code % 1999) + 10.0,
            "cost_usd": (code % 50) / 10_000, "total_tokens": code % 4000,
        }
        if n % 4 == 0:
            run[query["id"]]["abstained"] = n % 8 == 0
    raw = {"format": "pytest-rag/v1",
           "params": {"k": 5, "size_limits": [20, 200], "boundary_tolerance": 5,
                      "required_metadata": ["source"], "max_context_tokens": 400},
           "documents": documents, "chunks": chunks, "expected_chunks": expected_chunks,
           "expected_metadata": {c["id"]: {"source": c.get("metadata", {}).get("source", "?")}
                                 for c in chunks[::5]},
           "vectors": vectors, "queries": queries, "run": run}
    return json.dumps(raw)


def _cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return 0.0 if not na or not nb else sum(x * y for x, y in zip(a, b)) / (na * nb)


def real() -> Raw:
    return json.loads(real_dataset_json())


def snapshot(raw: Raw, stages: Iterable[str] = STAGES, **settings: Any) -> Snapshot:
    """Every value of ``stages``; ``settings`` go to the evaluators that take them."""
    dataset = pytest_rag.parse_dataset(raw, source=SOURCE)
    result: Snapshot = {}
    for stage in stages:
        cls = pytest_rag.EVALUATORS[stage]
        evaluator = cls(**{name: value for name, value in settings.items()
                           if name in cls.settings_names})
        report = evaluator.evaluate(dataset)
        result[stage] = {key: (report.values[key], dict(report.per_query.get(key, {})))
                         for key in STAGE_KEYS[stage]}
    return result


@lru_cache(maxsize=4)
def _base_snapshot_json(settings: tuple[tuple[str, Any], ...] = ()) -> str:
    return json.dumps(snapshot(real(), **dict(settings)))


def base_snapshot(**settings: Any) -> Snapshot:
    data = json.loads(_base_snapshot_json(tuple(sorted(settings.items()))))
    return {stage: {key: (value, per_query) for key, (value, per_query) in keys.items()}
            for stage, keys in data.items()}


def _close(a: float | None, b: float | None, exact: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b if exact else math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def assert_same(before: Snapshot, after: Snapshot, keys: Iterable[tuple[str, str]] | None = None,
                *, rename_query: Callable[[str], str] = lambda q: q, exact: bool = True) -> None:
    """Every ``(stage, key)`` (default: all) equal, aggregate and per query."""
    chosen = list(keys) if keys is not None else [(s, k) for s in before for k in before[s]]
    wrong = []
    for stage, key in chosen:
        value, per_query = before[stage][key]
        new_value, new_per_query = after[stage][key]
        if not _close(value, new_value, exact):
            wrong.append(f"{stage}.{key}: {value!r} -> {new_value!r}")
        for query_id, query_value in per_query.items():
            if not _close(query_value, new_per_query.get(rename_query(query_id)), exact):
                wrong.append(f"{stage}.{key}[{query_id}]: {query_value!r} -> "
                             f"{new_per_query.get(rename_query(query_id))!r}")
    assert not wrong, "\n".join(wrong[:20])


def test_the_real_dataset_measures_every_stage() -> None:
    before = base_snapshot()
    unmeasured = [f"{stage}.{key}" for stage in before for key, (value, _) in before[stage].items()
                  if value is None]
    # Plain prose: no Markdown heading, fence, table or list to keep intact.
    assert unmeasured == ["chunking.structural_integrity"], unmeasured
    for stage in before:
        for key, (value, per_query) in before[stage].items():
            spec = SPECS[(stage, key)]
            for number in [value, *per_query.values()]:
                assert number is None or (math.isfinite(number) and spec.low <= number <= spec.high)


# -- permutations ----------------------------------------------------------------------------
def _shuffled(items: list[Any], rng: Any) -> list[Any]:
    items = list(items)
    rng.shuffle(items)
    return items


def _interleave(chunks: list[Raw], rng: Any) -> list[Raw]:
    """Chunks of different documents mixed, each document's own order kept."""
    queues: dict[str, list[Raw]] = {}
    for chunk in chunks:
        queues.setdefault(chunk["doc_id"], []).append(chunk)
    order = [doc for doc, items in queues.items() for _ in items]
    rng.shuffle(order)
    return [queues[doc].pop(0) for doc in order]


@examples(0.3)
@given(st.randoms(use_true_random=False), st.booleans())
def test_permuting_documents_queries_and_unordered_fields_changes_nothing(
        rng: Any, interleave_chunks: bool) -> None:
    raw = real()
    raw["documents"] = _shuffled(raw["documents"], rng)
    raw["queries"] = _shuffled(raw["queries"], rng)
    raw["run"] = dict(_shuffled(list(raw["run"].items()), rng))
    raw["expected_chunks"] = _shuffled(raw["expected_chunks"], rng)
    raw["expected_metadata"] = dict(_shuffled(list(raw["expected_metadata"].items()), rng))
    vectors = raw["vectors"]
    vectors["chunks"] = dict(_shuffled(list(vectors["chunks"].items()), rng))
    vectors["sentences"] = dict(_shuffled(list(vectors["sentences"].items()), rng))
    vectors["indexed_ids"] = _shuffled(vectors["indexed_ids"], rng)
    for query in raw["queries"]:
        query["relevant"] = dict(_shuffled(list(query["relevant"].items()), rng))
        query["expected_evidence"] = _shuffled(query["expected_evidence"], rng)
        query["expected_citations"] = _shuffled(query["expected_citations"], rng)
        query["required_facts"] = _shuffled(query["required_facts"], rng)
    for entry in raw["run"].values():
        entry["cited_ids"] = _shuffled(entry["cited_ids"], rng)
        entry["verified_claims"] = _shuffled(entry["verified_claims"], rng)
        entry["cited_ids"] += entry["cited_ids"][:1]  # a repeated citation is the same citation
    if interleave_chunks:
        raw["chunks"] = _interleave(raw["chunks"], rng)
    # Means over queries add in another order: equal up to rounding.  Chunk
    # order breaks embedding ties, so mixing documents' chunks leaves
    # embedding out (its ties are covered by the test below).
    stages = [s for s in STAGES if not (interleave_chunks and s == "embedding")]
    assert_same(base_snapshot(), snapshot(raw, stages),
                [(s, k) for s in stages for k in STAGE_KEYS[s]], exact=False)


@examples(0.2)
@given(st.randoms(use_true_random=False))
def test_permuting_only_queries_keeps_every_per_query_value(rng: Any) -> None:
    raw = real()
    raw["queries"] = _shuffled(raw["queries"], rng)
    raw["run"] = dict(_shuffled(list(raw["run"].items()), rng))
    assert_same(base_snapshot(), snapshot(raw), exact=False)


# -- renaming ---------------------------------------------------------------------------------
AFFIXES = ("", "x", "\u05e9\u05dc\u05d5\u05dd-", "\u202e", "e\u0301", "\U0001f44d\U0001f3fd",
           "\x00", " ", "#", "q1", "\u0627\u0644", "\ufeff")


def _renamer(prefix: str, suffix: str, reverse: bool) -> Callable[[str], str]:
    def rename(value: str) -> str:
        return prefix + (value[::-1] if reverse else value) + suffix
    return rename


def rename_ids(raw: Raw, chunk: Callable[[str], str], query: Callable[[str], str],
               doc: Callable[[str], str]) -> Raw:
    raw = copy.deepcopy(raw)
    for document in raw["documents"]:
        document["id"] = doc(document["id"])
    for item in (*raw["chunks"], *raw["expected_chunks"]):
        item["doc_id"] = doc(item["doc_id"])
        if "id" in item:
            item["id"] = chunk(item["id"])
    raw["expected_metadata"] = {chunk(k): v for k, v in raw["expected_metadata"].items()}
    vectors = raw["vectors"]
    vectors["chunks"] = {chunk(k): v for k, v in vectors["chunks"].items()}
    vectors["sentences"] = {chunk(k): v for k, v in vectors["sentences"].items()}
    vectors["indexed_ids"] = [chunk(k) for k in vectors["indexed_ids"]]
    for item in raw["queries"]:
        item["id"] = query(item["id"])
        item["relevant"] = {chunk(k): v for k, v in item["relevant"].items()}
        for span in item["expected_evidence"]:
            span["doc_id"] = doc(span["doc_id"])
        item["expected_citations"] = [doc(d) for d in item["expected_citations"]]
    run = {}
    for query_id, entry in raw["run"].items():
        for name in ("retrieved_ids", "reranked_ids", "context_ids", "ann_ids"):
            entry[name] = [chunk(c) for c in entry[name]]
        entry["cited_ids"] = [doc(d) for d in entry["cited_ids"]]
        run[query(query_id)] = entry
    raw["run"] = run
    return raw


@examples(0.3)
@given(*[st.tuples(st.sampled_from(AFFIXES), st.sampled_from(AFFIXES), st.booleans())] * 3)
def test_renaming_ids_consistently_changes_nothing(chunk_scheme: Any, query_scheme: Any,
                                                   doc_scheme: Any) -> None:
    chunk, query, doc = (_renamer(*scheme) for scheme in (chunk_scheme, query_scheme, doc_scheme))
    note(f"chunk {chunk('a#1')!r}, query {query('q-1')!r}, doc {doc('doc')!r}")
    renamed = rename_ids(real(), chunk, query, doc)
    assert_same(base_snapshot(), snapshot(renamed), rename_query=query)


# -- scaling vectors -----------------------------------------------------------------------------
#: Everything of the embedding stage but the norm, and the chunking stage's cosines.
COSINE_KEYS = [("embedding", key) for key in STAGE_KEYS["embedding"]
               if key != "mean_vector_norm"] + [
    ("chunking", "semantic_cohesion"), ("chunking", "semantic_boundary_clarity"),
    ("chunking", "semantic_chunk_stickiness")]


@examples(0.3)
@given(st.randoms(use_true_random=False), st.integers(-30, 30))
def test_scaling_vectors_by_powers_of_two_leaves_cosine_metrics_unchanged(rng: Any,
                                                                          uniform: int) -> None:
    """Each vector by its own factor 2**e (exact in floating point): cosines are the same bits."""
    raw = real()
    vectors = raw["vectors"]
    vectors["chunks"] = {cid: _scaled(vector, 2.0 ** rng.randint(-40, 40))
                         for cid, vector in vectors["chunks"].items()}
    vectors["sentences"] = {cid: [_scaled(row, 2.0 ** rng.randint(-40, 40)) for row in rows]
                            for cid, rows in vectors["sentences"].items()}
    for entry in raw["run"].values():
        entry["query_vector"] = _scaled(entry["query_vector"], 2.0 ** rng.randint(-40, 40))
    # Equal vectors scaled by different factors are no longer duplicates.
    assert_same(base_snapshot(), snapshot(raw, ["embedding", "chunking"]),
                [key for key in COSINE_KEYS if key[1] != "duplicate_vector_rate"])
    # One factor for all: the mean norm scales by it, exactly.
    raw = real()
    factor = 2.0 ** uniform
    raw["vectors"]["chunks"] = {cid: _scaled(v, factor)
                                for cid, v in raw["vectors"]["chunks"].items()}
    after = snapshot(raw, ["embedding"])
    assert after["embedding"]["mean_vector_norm"][0] == base_snapshot()["embedding"][
        "mean_vector_norm"][0] * factor
    assert_same(base_snapshot(), after, [k for k in COSINE_KEYS if k[0] == "embedding"])


@examples(0.2)
@given(st.one_of(st.sampled_from([3.0, 0.1, 1e3, 1e-3, 7.25, 1e100, 1e-100]),
                 st.floats(min_value=1e-100, max_value=1e100)))
def test_scaling_vectors_by_any_positive_factor_keeps_similarities(factor: float) -> None:
    """Not a power of two: cosines agree to rounding (ranks may differ only at exact ties)."""
    raw = real()
    raw["vectors"]["chunks"] = {cid: _scaled(v, factor)
                                for cid, v in raw["vectors"]["chunks"].items()}
    for entry in raw["run"].values():
        entry["query_vector"] = _scaled(entry["query_vector"], 1 / factor)
    keys = [("embedding", "positive_similarity"), ("embedding", "negative_similarity"),
            ("embedding", "similarity_margin"), ("chunking", "semantic_chunk_stickiness")]
    assert_same(base_snapshot(), snapshot(raw, ["embedding", "chunking"]), keys, exact=False)


def _scaled(vector: list[float], factor: float) -> list[float]:
    return [x * factor for x in vector]


# -- appending after K ----------------------------------------------------------------------------
AT_K = {
    "retrieval": list(STAGE_KEYS["retrieval"]),
    "reranking": ["ndcg_at_k", "mrr_at_k", "ndcg_gain", "mrr_gain", "precision_gain",
                  "first_relevant_rank_change"],
    "embedding": ["ann_recall_at_k"],
}


@examples(0.3)
@given(st.integers(1, 7), st.randoms(use_true_random=False),
       st.sets(st.sampled_from(["retrieved_ids", "reranked_ids", "ann_ids"]), min_size=1))
def test_appending_non_relevant_results_after_k_changes_nothing_at_k(k: int, rng: Any,
                                                                     fields: set[str]) -> None:
    raw = real()
    chunk_ids = [chunk["id"] for chunk in raw["chunks"]]
    relevant = {query["id"]: query["relevant"] for query in raw["queries"]}
    for query_id, entry in raw["run"].items():
        for name in fields:
            ranked = entry[name]
            head = list(dict.fromkeys(ranked))
            assert len(head) >= k, "the pipeline's lists are longer than any K drawn"
            extra = [cid for cid in rng.sample(chunk_ids, 6) if not relevant[query_id].get(cid)]
            extra += ["ghost-\U0001f47b", "\x00", ""] [:rng.randint(0, 3)]  # unknown ids
            extra += rng.sample(head[:k], min(k, 2))  # repeats of the top K
            rng.shuffle(extra)
            # Inserted after the K-th distinct id, anywhere after it.
            cut = ranked.index(head[k - 1]) + 1
            where = rng.randint(cut, len(ranked))
            entry[name] = ranked[:where] + [x for x in extra if x] + ranked[where:]
            if name != "ann_ids":
                # Below K the order of the tail is free, too.
                tail = entry[name][cut:]
                rng.shuffle(tail)
                entry[name] = entry[name][:cut] + tail
    before = base_snapshot(k=k)
    after = snapshot(raw, AT_K, k=k)
    assert_same(before, after, [(stage, key) for stage, keys in AT_K.items() for key in keys
                                if not (stage == "reranking" and key == "first_relevant_rank_change"
                                        and fields & {"retrieved_ids", "reranked_ids"})])


# -- re-chunking -----------------------------------------------------------------------------------
TOKEN_KEYS = {
    "retrieval": ["token_recall", "token_precision", "token_iou"],
    "augmentation": ["context_precision", "context_recall", "context_noise", "duplicate_ratio",
                     "budget_compliant"],
    "generation": ["context_grounding", "unsupported_number_rate"],
}
SPAN_WHOLE_KEYS = [("retrieval", "complete_evidence_recall"),
                   ("augmentation", "context_sufficient")]


def split_chunks(raw: Raw, rng: Any, share: float) -> tuple[Raw, int]:
    """Split about ``share`` of the chunks in two at a whitespace inside them.

    Each split chunk is replaced, in every list that names it, by its two
    halves in order: the lists cover the same character ranges and, as no
    token and no number holds whitespace, the same token positions.
    """
    texts = {doc["id"]: doc["text"] for doc in raw["documents"]}
    halves: dict[str, list[str]] = {}
    chunks: list[Raw] = []
    for chunk in raw["chunks"]:
        text = texts[chunk["doc_id"]]
        cuts = [i for i in range(chunk["start"] + 1, chunk["end"]) if text[i].isspace()]
        if cuts and rng.random() < share:
            cut = rng.choice(cuts)
            left = dict(chunk, id=chunk["id"] + "/a", end=cut)
            right = dict(chunk, id=chunk["id"] + "/b", start=cut)
            chunks += [left, right]
            halves[chunk["id"]] = [left["id"], right["id"]]
        else:
            chunks.append(chunk)
    raw["chunks"] = chunks
    for entry in raw["run"].values():
        for name in ("retrieved_ids", "context_ids"):
            entry[name] = [part for cid in entry[name] for part in halves.get(cid, [cid])]
    for name in ("chunks", "sentences"):
        raw["vectors"][name] = {cid: v for cid, v in raw["vectors"][name].items()
                                if cid not in halves}
    raw["vectors"]["indexed_ids"] = [c for c in raw["vectors"]["indexed_ids"] if c not in halves]
    raw["expected_metadata"] = {c: v for c, v in raw["expected_metadata"].items()
                                if c not in halves}
    for query in raw["queries"]:
        query["relevant"] = {c: g for c, g in query["relevant"].items() if c not in halves}
    return raw, len(halves)


@examples(0.3)
@given(st.randoms(use_true_random=False), st.sampled_from([0.1, 0.5, 1.0]))
def test_splitting_chunks_changes_token_metrics_only_through_the_spans(rng: Any,
                                                                       share: float) -> None:
    # K beyond every list: the whole retrieved list counts, before and after.
    whole = {"k": 100}
    raw, count = split_chunks(real(), rng, share)
    note(f"{count} chunks split")
    before = base_snapshot(**whole)
    after = snapshot(raw, TOKEN_KEYS, **whole)
    assert_same(before, after, [(stage, key) for stage, keys in TOKEN_KEYS.items() for key in keys])
    # A span held whole by one chunk may be cut: completeness can only drop.
    for stage, key in SPAN_WHOLE_KEYS:
        old, new = before[stage][key][1], after[stage][key][1]
        for query_id, value in old.items():
            assert (value is None) == (new[query_id] is None)
            assert value is None or new[query_id] <= value, (stage, key, query_id)


@examples(0.1)
@given(st.randoms(use_true_random=False))
def test_splitting_no_listed_chunk_changes_no_retrieval_or_context_metric(rng: Any) -> None:
    """Chunks that no list names, split anyway: retrieval and context metrics stay put."""
    raw = real()
    listed = {cid for entry in raw["run"].values()
              for name in ("retrieved_ids", "reranked_ids", "context_ids") for cid in entry[name]}
    texts = {doc["id"]: doc["text"] for doc in raw["documents"]}
    chunks = []
    for chunk in raw["chunks"]:
        text = texts[chunk["doc_id"]]
        cuts = [i for i in range(chunk["start"] + 1, chunk["end"]) if text[i].isspace()]
        if chunk["id"] not in listed and cuts and rng.random() < 0.5:
            cut = rng.choice(cuts)
            chunks += [dict(chunk, end=cut), dict(chunk, id=chunk["id"] + "/b", start=cut)]
        else:
            chunks.append(chunk)
    raw["chunks"] = chunks
    stages = ["retrieval", "reranking", "augmentation", "generation"]
    assert_same(base_snapshot(), snapshot(raw, stages),
                [(s, k) for s in stages for k in STAGE_KEYS[s]])
