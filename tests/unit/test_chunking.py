"""ChunkingEvaluator: hand-computed cases, every None rule, and a naive oracle."""

from __future__ import annotations

import math
import re
from itertools import combinations
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.dataset.model import Chunk, Dataset, Document, EvidenceSpan, Params, Query
from pytest_rag.registry import stage_metrics
from pytest_rag.stages.chunking import ChunkingEvaluator, json_equal
from pytest_rag.text.markdown import markdown_blocks

KEYS = [spec.key for spec in stage_metrics("chunking")]

# Tokens (start, end): Refunds 2-9, Refunds 11-18, take 19-23, 30 24-26, days 27-31,
# Keep 33-37, the 38-41, receipt 42-49, Ship 54-58, within 59-65, 2 66-67, days 68-72,
# Track 75-80, the 81-84, parcel 85-91; len 92, len(rstrip) 91.
HAND = ("# Refunds\n\nRefunds take 30 days. Keep the receipt.\n\n"
        "- Ship within 2 days\n- Track the parcel\n")
HAND_CHUNKS = [
    {"id": "c0", "doc_id": "refunds", "start": 0, "end": 32,
     "metadata": {"source": "refunds.md", "page": 1}},
    {"id": "c1", "doc_id": "refunds", "start": 24, "end": 61,  # cuts "within" after "wi"
     "metadata": {"source": "refunds.md", "page": None}},
    {"id": "c2", "doc_id": "refunds", "start": 61, "end": 91,
     "metadata": {"source": "refunds.md"}},
]


def chunk(chunk_id: str, start: int, end: int, doc_id: str = "d") -> dict[str, Any]:
    return {"id": chunk_id, "doc_id": doc_id, "start": start, "end": end}


def evaluate(evaluator: ChunkingEvaluator | None = None, **inputs: Any) -> dict[str, float | None]:
    return dict((evaluator or ChunkingEvaluator()).evaluate(**inputs).values)


def hand_values() -> dict[str, float | None]:
    return evaluate(
        ChunkingEvaluator(size_limits=(6, 10), boundary_tolerance=0,
                       required_metadata=["source", "page"]),
        documents={"refunds": HAND},
        chunks=HAND_CHUNKS,
        expected_chunks=[{"doc_id": "refunds", "start": 0, "end": 32},
                         {"doc_id": "refunds", "start": 33, "end": 91}],
        expected_metadata={"c0": {"page": 1}, "c1": {"page": 1, "source": "refunds.md"},
                           "c3": {"page": 2}},
        chunk_vectors={"c0": [1, 0], "c1": [1, 1], "c2": [0, 1]},
        sentence_vectors={"c0": [[1, 0], [1, 0]], "c1": [[0, 1], [1, 0]], "c2": [[1, 1]]},
        expected_evidence={"q1": [{"doc_id": "refunds", "quote": "Refunds take 30 days."}],
                           "q2": [{"doc_id": "refunds", "start": 52, "end": 72}]},
    )


# -- the hand document ---------------------------------------------------------
def test_hand_document_sizes() -> None:
    values = hand_values()
    # c0: refunds refunds take 30 days; c1: 30 days keep the receipt ship within;
    # c2: within 2 days track the parcel -> sizes 5, 7, 6 over 15 source tokens.
    assert values["coverage"] == 15 / 15
    assert values["mean_chunk_tokens"] == (5 + 7 + 6) / 3
    assert values["min_chunk_tokens"] == 5
    assert values["max_chunk_tokens"] == 7
    assert values["size_cv"] == pytest.approx(math.sqrt((1 + 1 + 0) / 3) / 6)
    assert values["overlap_ratio"] == pytest.approx((18 - 15) / 15)
    assert values["size_compliance"] == pytest.approx(2 / 3)  # 7 and 6 lie in [6, 10]


def test_hand_document_evidence_structure_boundaries() -> None:
    values = hand_values()
    # q1 "Refunds take 30 days." lies whole in c0 and touches c0, c1;
    # q2 "Ship within 2 days" touches c1 and c2 and is in neither whole.
    assert values["evidence_completeness"] == 1 / 2
    assert values["evidence_fragmentation"] == (2 + 2) / 2
    # Blocks: the heading (whole in c0) and the list (split between c1 and c2).
    assert values["structural_integrity"] == 1 / 2
    # Predicted ends {32, 61} (91 is the document end), ideal {32}: P = 1/2, R = 1.
    assert values["boundary_f1"] == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))


def test_hand_document_vectors() -> None:
    values = hand_values()
    # c0: cos([1,0],[1,0]) = 1; c1: cos([0,1],[1,0]) = 0; c2 has one sentence.
    assert values["semantic_cohesion"] == pytest.approx((1 + 0) / 2)
    # c0|c1: 1 - cos([1,0],[0,1]) = 1; c1|c2: 1 - cos([1,0],[1,1]) = 1 - 1/sqrt(2).
    assert values["semantic_boundary_clarity"] == pytest.approx((1 + (1 - 1 / math.sqrt(2))) / 2)
    assert values["semantic_chunk_stickiness"] == pytest.approx(
        (1 / math.sqrt(2) + 1 / math.sqrt(2)) / 2)


def test_hand_document_metadata() -> None:
    values = hand_values()
    # Only c0 has both keys non-null (c1 page is null, c2 has no page).
    assert values["metadata_completeness"] == pytest.approx(1 / 3)
    # c0.page right; c1.page wrong (null); c1.source right; c3 missing -> wrong.
    assert values["metadata_accuracy"] == 2 / 4


def test_hand_document_lexical_uses_the_chunk_text_tokens() -> None:
    values = hand_values()
    c0 = {"refunds", "take", "30", "days"}
    c1 = {"30", "days", "keep", "the", "receipt", "ship", "wi"}  # "within" cut to "wi"
    c2 = {"thin", "2", "days", "track", "the", "parcel"}
    assert len(c0 & c1) == 2 and len(c0 | c1) == 9
    assert len(c1 & c2) == 2 and len(c1 | c2) == 11
    # c0 sentences {refunds} and {refunds take 30 days}: J = 1/4; c1 and c2 pairs share nothing.
    assert values["lexical_cohesion"] == pytest.approx((1 / 4 + 0 + 0) / 3)
    assert values["lexical_boundary_clarity"] == pytest.approx(((1 - 2 / 9) + (1 - 2 / 11)) / 2)
    assert values["lexical_chunk_stickiness"] == pytest.approx((2 / 9 + 2 / 11) / 2)


# -- None rules ------------------------------------------------------------------
def test_no_chunk_gives_every_metric_none() -> None:
    values = evaluate(ChunkingEvaluator(size_limits=(1, 5), required_metadata=["source"]),
                      documents={"d": "Some text here."},
                      expected_metadata={"c1": {"source": "x"}})
    assert values == dict.fromkeys(KEYS)


def test_inputs_not_given_leave_their_metrics_none() -> None:
    report = ChunkingEvaluator().evaluate(documents={"d": "One two. Three four."},
                                       chunks=[chunk("a", 0, 8), chunk("b", 9, 20)])
    for key in ("size_compliance", "boundary_f1", "semantic_cohesion",
                "semantic_boundary_clarity", "semantic_chunk_stickiness",
                "metadata_completeness", "metadata_accuracy",
                "evidence_completeness", "evidence_fragmentation",
                "structural_integrity", "lexical_cohesion"):
        assert report[key] is None, key
    assert report.missing["size_compliance"] == "needs size_limits"
    assert report.missing["boundary_f1"] == "needs expected_chunks"
    assert report.coverage == 1.0
    assert report.lexical_boundary_clarity == 1 - 0 / 4
    assert report.lexical_chunk_stickiness == 0 / 4


def test_settings_come_from_params_when_not_given() -> None:
    doc = Document("d", "a b c. d e")
    chunks = (Chunk("x", "d", 0, 6, {"k": 1}), Chunk("y", "d", 7, 10))
    dataset = Dataset(params=Params(size_limits=(3, 3), required_metadata=("k",)),
                      documents=(doc,), chunks=chunks)
    from_params = ChunkingEvaluator().evaluate(dataset)
    assert from_params.size_compliance == 1 / 2  # sizes 3 and 2
    assert from_params.metadata_completeness == 1 / 2
    overridden = ChunkingEvaluator(size_limits=(2, 3), required_metadata=[]).evaluate(dataset)
    assert overridden.size_compliance == 2 / 2
    assert overridden.metadata_completeness == 2 / 2  # no key required: every chunk complete
    assert overridden.settings["boundary_tolerance"] == 0


def test_chunk_without_token_counts_with_size_zero() -> None:
    values = evaluate(ChunkingEvaluator(size_limits=(1, 9)),
                      documents={"d": "alpha beta ... gamma"},
                      chunks=[chunk("a", 0, 10), chunk("b", 10, 15), chunk("c", 15, 20)])
    # sizes 2, 0 ("  ..."), 1
    assert values["min_chunk_tokens"] == 0
    assert values["mean_chunk_tokens"] == (2 + 0 + 1) / 3
    assert values["size_compliance"] == 2 / 3
    assert values["overlap_ratio"] == (3 - 3) / 3
    # Pairs a|b and b|c: b has no token, so J = 0 and clarity 1 on both.
    assert values["lexical_chunk_stickiness"] == 0.0
    assert values["lexical_boundary_clarity"] == 1.0


def test_only_empty_chunks_give_none_where_dividing_by_zero() -> None:
    values = evaluate(documents={"d": "word  ...  "}, chunks=[chunk("a", 4, 9)])
    assert values["coverage"] == 0 / 1
    assert values["mean_chunk_tokens"] == 0.0
    assert values["size_cv"] is None  # mean 0
    assert values["overlap_ratio"] is None  # nothing covered


def test_gold_spans_without_token_are_ignored_and_duplicates_count_once() -> None:
    text = "alpha beta; gamma delta"
    spans = {"q1": [{"doc_id": "d", "start": 10, "end": 12},   # "; " holds no token
                    {"doc_id": "d", "start": 0, "end": 10}],   # alpha beta
             "q2": [{"doc_id": "d", "start": 0, "end": 10},    # same span again
                    {"doc_id": "d", "start": 6, "end": 17}]}   # beta gamma
    values = evaluate(documents={"d": text}, chunks=[chunk("a", 0, 11), chunk("b", 11, 23)],
                      expected_evidence=spans)
    # Distinct spans with a token: "alpha beta" (whole in a), "beta gamma" (split).
    assert values["evidence_completeness"] == 1 / 2
    assert values["evidence_fragmentation"] == (1 + 2) / 2
    only_empty = evaluate(documents={"d": text}, chunks=[chunk("a", 0, 23)],
                          expected_evidence={"q1": [{"doc_id": "d", "start": 10, "end": 12}]})
    assert only_empty["evidence_completeness"] is None
    assert only_empty["evidence_fragmentation"] is None


def test_scope_is_the_documents_that_have_a_chunk() -> None:
    values = evaluate(
        documents={"d": "one two three", "other": "# Title\n\n| a |\n| b |\nfour five"},
        chunks=[chunk("a", 0, 7)],
        expected_chunks=[{"doc_id": "other", "start": 0, "end": 7}],
        expected_evidence={"q1": [{"doc_id": "other", "quote": "four"}],
                           "q2": [{"doc_id": "d", "quote": "three"}]},
    )
    assert values["coverage"] == 2 / 3  # N counts only document d
    assert values["evidence_completeness"] == 0 / 1  # only the span of d counts
    assert values["structural_integrity"] is None  # blocks of "other" are not looked at
    # Predicted {7}; ideal boundaries come only from d, which has none.
    assert values["boundary_f1"] == 0.0


def test_structural_integrity_none_without_block_with_a_token() -> None:
    values = evaluate(documents={"d": "# !\n\nplain text"}, chunks=[chunk("a", 0, 15)])
    assert values["structural_integrity"] is None


# -- structure -------------------------------------------------------------------
def test_structural_integrity_counts_blocks_held_by_one_chunk() -> None:
    text = "# Title\n- item one\n  | a | b |\n  | c | d |\n```\ncode here\n"  # 57 characters
    blocks = markdown_blocks(text)
    assert [block.kind for block in blocks] == ["heading", "list", "code"]
    # Chunk a holds the heading and the list (with its indented table); the
    # unclosed fence runs to the end and is split between b and c.
    split_code = [chunk("a", 0, 43), chunk("b", 43, 52), chunk("c", 52, 57)]
    assert evaluate(documents={"d": text}, chunks=split_code)["structural_integrity"] == 2 / 3
    # Cutting the list inside its indented table breaks the list, not a separate table.
    split_list = [chunk("a", 0, 33), chunk("b", 33, 57)]
    assert evaluate(documents={"d": text}, chunks=split_list)["structural_integrity"] == 2 / 3


def test_overlapping_chunks_hold_a_block_only_when_one_holds_all_of_it() -> None:
    text = "- one two\n- three four\n"
    halves = [chunk("a", 0, 12), chunk("b", 10, 22)]
    assert evaluate(documents={"d": text}, chunks=halves)["structural_integrity"] == 0.0
    whole = halves + [chunk("c", 0, 22)]
    assert evaluate(documents={"d": text}, chunks=whole)["structural_integrity"] == 1.0


# -- boundary F1 -------------------------------------------------------------------
TEN = "aaaaaaaaa " * 4  # 40 characters, rstrip length 39


def boundary(ends: list[int], ideal: list[int], tolerance: int) -> float | None:
    starts = [0, *ends]
    chunks = [chunk(f"c{i}", s, e) for i, (s, e) in enumerate(zip(starts, [*ends, 40]))]
    expected = [{"doc_id": "d", "start": s, "end": e}
                for s, e in zip([0, *ideal], [*ideal, 40])]
    return evaluate(ChunkingEvaluator(boundary_tolerance=tolerance), documents={"d": TEN},
                    chunks=chunks, expected_chunks=expected)["boundary_f1"]


def test_boundary_tolerance() -> None:
    assert boundary([10, 20, 30], [11, 19, 33], 0) == 0.0
    # Tolerance 1: 10-11 and 20-19 match; P = R = 2/3.
    assert boundary([10, 20, 30], [11, 19, 33], 1) == pytest.approx(2 / 3)
    assert boundary([10, 20, 30], [11, 19, 33], 3) == 1.0


def test_boundary_matching_is_one_to_one() -> None:
    # 10 and 11 are both within 1 of 10, but only one may take it: P = 1/2, R = 1.
    assert boundary([10, 11], [10], 1) == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))
    # Greedy over sorted lists: 9-10 and 11-12 both match.
    assert boundary([9, 11], [10, 12], 1) == 1.0


def test_document_end_is_not_a_boundary() -> None:
    # Ends 39 and 40 are at or after len(text.rstrip()) == 39: no boundary on either side.
    assert boundary([39], [], 0) == 1.0
    assert boundary([20, 39], [], 0) == 0.0  # P = 0/1, R undefined: no match, F1 0


def test_boundary_ends_are_a_set_per_document() -> None:
    values = evaluate(documents={"d": TEN, "e": TEN},
                      chunks=[chunk("a", 0, 10), chunk("b", 5, 10), chunk("c", 0, 20, "e")],
                      expected_chunks=[{"doc_id": "d", "start": 0, "end": 20},
                                       {"doc_id": "e", "start": 0, "end": 10}])
    # Predicted d:{10}, e:{20}; ideal d:{20}, e:{10}: no match across documents.
    assert values["boundary_f1"] == 0.0


# -- vectors -----------------------------------------------------------------------
def test_cosine_with_a_zero_vector_is_zero() -> None:
    values = evaluate(documents={"d": "a b. c d"}, chunks=[chunk("x", 0, 4), chunk("y", 5, 8)],
                      chunk_vectors={"x": [0, 0], "y": [1, 0]},
                      sentence_vectors={"x": [[1, 0], [0, 0], [2, 0]], "y": [[0, 0]]})
    assert values["semantic_chunk_stickiness"] == 0.0
    # Pairs of x: (1,0)-(0,0) 0, (1,0)-(2,0) 1, (0,0)-(2,0) 0.
    assert values["semantic_cohesion"] == pytest.approx((0 + 1 + 0) / 3)
    assert values["semantic_boundary_clarity"] == 1 - 0


def test_neighbours_are_consecutive_chunks_of_one_document() -> None:
    # Order x1, y1, x2: pairs are x1|x2 (y1 in between does not break it); y1 has no pair.
    values = evaluate(documents={"x": "p q", "y": "r s"},
                      chunks=[chunk("x1", 0, 1, "x"), chunk("y1", 0, 3, "y"),
                              chunk("x2", 2, 3, "x")],
                      chunk_vectors={"x1": [1, 0], "y1": [0, 1], "x2": [1, 1]})
    assert values["semantic_chunk_stickiness"] == pytest.approx(1 / math.sqrt(2))
    assert values["lexical_boundary_clarity"] == 1 - 0 / 2


def test_vectors_missing_for_some_chunks_skip_those_pairs() -> None:
    values = evaluate(documents={"d": "a b c"},
                      chunks=[chunk("x", 0, 1), chunk("y", 2, 3), chunk("z", 4, 5)],
                      chunk_vectors={"x": [1, 0], "y": [3, 4]},
                      sentence_vectors={"y": [[0, 1]], "z": [[0, 2]]})
    assert values["semantic_chunk_stickiness"] == pytest.approx(3 / 5)  # only x|y
    assert values["semantic_boundary_clarity"] == pytest.approx(1 - 1)  # only y|z
    assert values["semantic_cohesion"] is None  # no chunk has two sentences


# -- metadata ----------------------------------------------------------------------
def test_metadata_accuracy_uses_json_equality() -> None:
    chunks = [{**chunk("a", 0, 1), "metadata": {"flag": True, "page": 1, "tags": [1, "x"],
                                                 "none": None}},
              {**chunk("b", 2, 3), "metadata": {"flag": 1, "page": 1.0, "tags": [1.0, "x"]}}]
    expected = {"a": {"flag": True, "page": 1.0, "tags": [1, "x"], "none": None},
                "b": {"flag": True, "page": 1, "tags": [True, "x"], "none": None}}
    values = evaluate(documents={"d": "p q"}, chunks=chunks, expected_metadata=expected)
    # a: all four right (null equals null); b: flag 1 != True, page right,
    # tags [1.0] != [True], missing "none" key is wrong.
    assert values["metadata_accuracy"] == (4 + 1) / 8


def test_json_equal() -> None:
    assert json_equal(1, 1.0) and json_equal("a", "a") and json_equal(None, None)
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal(1.0, True)
    assert json_equal(False, False) and not json_equal(None, 0) and not json_equal("1", 1)
    assert json_equal({"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal([1], [1, 1])


def test_metadata_completeness_needs_non_null_values() -> None:
    chunks = [{**chunk("a", 0, 1), "metadata": {"s": "x", "p": 0}},
              {**chunk("b", 2, 3), "metadata": {"s": "x", "p": None}},
              chunk("c", 4, 5)]
    values = evaluate(ChunkingEvaluator(required_metadata=["s", "p"]),
                      documents={"d": "a b c"}, chunks=chunks)
    assert values["metadata_completeness"] == 1 / 3


# -- lexical -----------------------------------------------------------------------
def test_lexical_sentences_split_after_stop_and_whitespace_and_at_newlines() -> None:
    text = "a b. a c!\na?b e.g. x\n\n...\n"
    # Pieces: "a b." | "a c!" | "a?b e.g." | "x" | "..." (no token, dropped)
    # Sets {a,b}, {a,c}, {a,b,e,g}, {x}: pairs 1/3, 2/4, 0, 1/5, 0, 0.
    values = evaluate(documents={"d": text}, chunks=[chunk("all", 0, len(text))])
    assert values["lexical_cohesion"] == pytest.approx((1 / 3 + 2 / 4 + 0 + 1 / 5 + 0 + 0) / 6)


def test_lexical_boundary_uses_last_and_first_twelve_tokens() -> None:
    left = " ".join(f"w{i}" for i in range(20))  # w0 .. w19
    right = "w0 w8 w19 " + " ".join(f"v{i}" for i in range(12))
    text = f"{left}\n{right}"
    values = evaluate(documents={"d": text},
                      chunks=[chunk("l", 0, len(left)), chunk("r", len(left) + 1, len(text))])
    # last 12 of left: w8..w19; first 12 of right: w0 w8 w19 v0..v8 -> share w8, w19.
    assert values["lexical_boundary_clarity"] == pytest.approx(1 - 2 / (12 + 12 - 2))
    # Whole sets: 20 and 15 words share w0, w8, w19.
    assert values["lexical_chunk_stickiness"] == pytest.approx(3 / (20 + 15 - 3))


# -- settings ----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    ({"size_limits": (5, 2)}, "size_limits: min 5 is greater than max 2"),
    ({"size_limits": (-1, 2)}, "size_limits[0]: must be >= 0, got -1"),
    ({"size_limits": (1, 2, 3)}, "size_limits: expected [min, max], got (1, 2, 3)"),
    ({"size_limits": (1.5, 2)}, "size_limits[0]: expected a whole number, got a number 1.5"),
    ({"size_limits": (True, 2)}, "size_limits[0]: expected a whole number, got a boolean True"),
    ({"size_limits": 5}, "size_limits: expected a list, got a number 5"),
    ({"boundary_tolerance": -1}, "boundary_tolerance: must be >= 0, got -1"),
    ({"boundary_tolerance": 0.5}, "boundary_tolerance: expected a whole number, got a number 0.5"),
    ({"required_metadata": "source"}, "required_metadata: expected a list, got a string 'source'"),
    ({"required_metadata": ["source", 3]},
     "required_metadata[1]: expected a string, got a number 3"),
])
def test_bad_settings_raise_value_error(kwargs: dict[str, Any], message: str) -> None:
    """The messages of the one setting validation (pytest_rag.settings)."""
    with pytest.raises(ValueError) as error:
        ChunkingEvaluator(**kwargs)
    assert str(error.value) == message


def test_settings_accept_lists_and_whole_floats() -> None:
    evaluator = ChunkingEvaluator(size_limits=[1, 2.0], boundary_tolerance=3.0,
                               required_metadata=("a",))
    assert evaluator.size_limits == (1, 2)
    assert evaluator.boundary_tolerance == 3
    assert evaluator.required_metadata == ("a",)


def test_module_does_not_import_pytest() -> None:
    import subprocess
    import sys

    code = "import pytest_rag.stages.chunking, sys; assert 'pytest' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- a naive oracle on random chunkings ----------------------------------------------
WORD = re.compile(r"\w+")


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def naive(dataset: Dataset) -> dict[str, float | None]:
    """The position metrics with Python sets of (doc, token) and re-tokenized chunk texts."""
    docs = {doc.id: doc.text for doc in dataset.documents}
    tokens = {d: [(m.start(), m.end()) for m in WORD.finditer(t)] for d, t in docs.items()}

    def held(doc_id: str, start: int, end: int) -> set[tuple[str, int]]:
        return {(doc_id, i) for i, (s, e) in enumerate(tokens[doc_id])
                if start < end and s < end and e > start}

    sets = [held(c.doc_id, c.start, c.end) for c in dataset.chunks]
    scope = {c.doc_id for c in dataset.chunks}
    source = sum(len(tokens[d]) for d in scope)
    union = set().union(*sets)
    sizes = [len(s) for s in sets]
    gold = {(sp.doc_id, sp.start, sp.end) for q in dataset.queries for sp in q.expected_evidence
            if sp.doc_id in scope}
    gold_sets = [g for g in (held(*span) for span in gold) if g]
    blocks = [held(d, b.start, b.end) for d in scope for b in markdown_blocks(docs[d])]
    blocks = [b for b in blocks if b]
    texts = [docs[c.doc_id][c.start:c.end] for c in dataset.chunks]
    words = [[w.lower() for w in WORD.findall(t)] for t in texts]
    pairs = [(i, j) for i, j in combinations(range(len(dataset.chunks)), 2)
             if dataset.chunks[i].doc_id == dataset.chunks[j].doc_id
             and not any(dataset.chunks[k].doc_id == dataset.chunks[i].doc_id
                         for k in range(i + 1, j))]
    cohesion = []
    for text in texts:
        parts = [{w.lower() for w in WORD.findall(p)}
                 for p in re.split(r"(?<=[.!?])(?=\s)|\n", text)]
        parts = [p for p in parts if p]
        if len(parts) >= 2:
            cohesion.append(np.mean([jaccard(a, b) for a, b in combinations(parts, 2)]))
    mean = float(np.mean(sizes))

    def avg(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    return {
        "coverage": len(union) / source if source else None,
        "mean_chunk_tokens": mean,
        "min_chunk_tokens": min(sizes),
        "max_chunk_tokens": max(sizes),
        "size_cv": float(np.std(sizes)) / mean if mean else None,
        "overlap_ratio": (sum(sizes) - len(union)) / len(union) if union else None,
        "evidence_completeness": avg([any(g <= s for s in sets) for g in gold_sets]),
        "evidence_fragmentation": avg([sum(1 for s in sets if g & s) for g in gold_sets]),
        "structural_integrity": avg([any(b <= s for s in sets) for b in blocks]),
        "lexical_cohesion": avg(cohesion),
        "lexical_boundary_clarity": avg([1 - jaccard(set(words[i][-12:]), set(words[j][:12]))
                                         for i, j in pairs]),
        "lexical_chunk_stickiness": avg([jaccard(set(words[i]), set(words[j]))
                                         for i, j in pairs]),
    }


LINES = st.sampled_from(["# Head", "- item one. two", "  indented more", "| a | b |",
                         "```", "", "Plain words here! Then more.", "1) x y", "ÄÖ é_x 42?"])


@st.composite
def datasets(draw: st.DrawFn) -> Dataset:
    documents = []
    for d in range(draw(st.integers(1, 3))):
        text = "\n".join(draw(st.lists(LINES, min_size=1, max_size=8)))
        documents.append(Document(f"d{d}", text))
    chunks = []
    for i in range(draw(st.integers(1, 8))):
        doc = draw(st.sampled_from(documents))
        start = draw(st.integers(0, len(doc.text)))
        end = draw(st.integers(start, len(doc.text)))
        chunks.append(Chunk(f"c{i}", doc.id, start, end))
    spans = []
    for _ in range(draw(st.integers(0, 4))):
        doc = draw(st.sampled_from(documents))
        start = draw(st.integers(0, len(doc.text)))
        spans.append(EvidenceSpan(doc.id, start, draw(st.integers(start, len(doc.text)))))
    return Dataset(documents=tuple(documents), chunks=tuple(chunks),
                   queries=(Query("q1", expected_evidence=tuple(spans)),))


@settings(max_examples=budget(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets())
def test_matches_a_naive_implementation(dataset: Dataset) -> None:
    values = ChunkingEvaluator().evaluate(dataset).values
    for key, expected in naive(dataset).items():
        if expected is None:
            assert values[key] is None, key
        else:
            assert values[key] == pytest.approx(expected, abs=1e-12), key


def test_document_work_is_done_once_per_document_across_chunkings(monkeypatch: Any) -> None:
    """Two chunkings of one corpus (a sweep) find each document's Markdown blocks once,
    and a fresh copy of the documents gives the same values."""
    import pytest_rag.stages.chunking as chunking

    calls: list[str] = []

    def counted(text: str) -> Any:
        calls.append(text)
        return markdown_blocks(text)

    monkeypatch.setattr(chunking, "markdown_blocks", counted)
    base = Dataset(documents=(Document("refunds", HAND),))
    first = ChunkingEvaluator().evaluate(base, chunks=HAND_CHUNKS)
    second = ChunkingEvaluator().evaluate(base, chunks=[chunk("w", 0, 92, "refunds")])
    assert len(calls) == 1
    fresh = Dataset(documents=(Document("refunds", HAND),))
    assert ChunkingEvaluator().evaluate(fresh, chunks=HAND_CHUNKS).values == first.values
    assert ChunkingEvaluator().evaluate(fresh, chunks=[chunk("w", 0, 92, "refunds")]).values == \
        second.values
    assert len(calls) == 2
    assert second.values["structural_integrity"] == 1.0
