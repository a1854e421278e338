"""Gold fingerprints and the change between a baseline entry and a run."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from pytest_rag.compare.gold import gold_change, mean_over
from pytest_rag.compare.records import StageRecord
from pytest_rag.dataset.model import Document, EvidenceSpan, Query, documents_fingerprint
from pytest_rag.registry import STAGES

QUERY = Query("q1", "Who?", {"a": 2, "b": 1}, (EvidenceSpan("d", 0, 5),), ("Ann",))


def test_a_query_fingerprint_follows_its_gold_not_its_id_or_key_order() -> None:
    assert Query("other", "Who?", {"b": 1, "a": 2}, (EvidenceSpan("d", 0, 5),),
                 ("Ann",)).fingerprint == QUERY.fingerprint
    for change in ({"question": "Who is it?"}, {"relevant": {"a": 2}},
                   {"expected_evidence": (EvidenceSpan("d", 0, 6),)},
                   {"reference_answers": ("Anne",)}, {"answerable": False}):
        assert dataclasses.replace(QUERY, **change).fingerprint != QUERY.fingerprint, change


def test_the_documents_fingerprint_ignores_order_and_metadata() -> None:
    one, two = Document("a", "alpha"), Document("b", "beta", {"x": 1})
    assert documents_fingerprint([one, two]) == documents_fingerprint([two, Document("a", "alpha",
                                                                                     {"y": 2})])
    assert documents_fingerprint([one, two]) != documents_fingerprint([one, Document("b", "beta!")])
    assert documents_fingerprint([]) is None
    # Parts are separated: ("ab", "c") and ("a", "bc") differ.
    assert Document("ab", "c").fingerprint != Document("a", "bc").fingerprint


def record(gold: dict[str, str], documents: str | None = "D") -> StageRecord:
    return StageRecord("t::t", "retrieval", {}, gold=gold, documents=documents)


def test_gold_change_names_added_removed_and_edited_queries() -> None:
    stored = {"queries": {"q1": "a", "q2": "b", "q3": "c"}, "documents": "D"}
    change = gold_change(stored, record({"q1": "a", "q2": "B", "q4": "d"}))
    assert change is not None and change.changed
    assert (change.added, change.removed, change.edited, change.documents) == (
        ("q4",), ("q3",), ("q2",), False)
    assert change.same == frozenset({"q1"})
    assert not gold_change(stored, record({"q1": "a", "q2": "b", "q3": "c"})).changed
    assert gold_change(stored, record({"q1": "a", "q2": "b", "q3": "c"}, "E")).documents
    assert gold_change(None, record({"q1": "a"})) is None  # an entry from before fingerprints
    assert gold_change(stored, record({})) is None


def test_mean_over_skips_unmeasured_and_other_queries() -> None:
    values = {"q1": 1.0, "q2": None, "q3": 0.0, "q4": 0.5}
    assert mean_over(values, frozenset({"q1", "q2", "q3"})) == 0.5
    assert mean_over(values, frozenset({"q2"})) is None


def test_relevance_derived_from_evidence_is_not_gold() -> None:
    """Derived grades follow the chunks: a new chunker must not read as a gold edit."""
    from pytest_rag.stages.retrieval import RetrievalEvaluator

    documents = [{"id": "d", "text": "alpha beta gamma delta"}]
    queries = [{"id": "q1", "expected_evidence": [{"doc_id": "d", "start": 6, "end": 10}]}]
    fingerprints = set()
    for chunks in ([{"id": "a", "doc_id": "d", "start": 0, "end": 11}],
                   [{"id": "b", "doc_id": "d", "start": 6, "end": 22}]):
        report = RetrievalEvaluator(relevance_from_evidence=True).evaluate(
            documents=documents, queries=queries, chunks=chunks,
            retrieved_ids={"q1": [chunks[0]["id"]]})
        assert report.dataset is not None and report.dataset.queries[0].relevant
        fingerprints.add(StageRecord.from_report("t::t", report).gold["q1"])
    assert len(fingerprints) == 1


def test_corpus_metrics_still_gate_when_only_the_queries_changed() -> None:
    """Coverage reads documents and chunks only: 20 new queries must not hide its fall."""
    from pytest_rag.compare.baseline import Baseline
    from pytest_rag.compare.comparison import compare_record
    from pytest_rag.compare.thresholds import Tolerances
    from pytest_rag.registry import REGISTRY

    before = StageRecord("t::t", "chunking", {"coverage": 1.0, "evidence_completeness": 0.9},
                         gold={"q1": "a"}, documents="D")
    after = StageRecord("t::t", "chunking", {"coverage": 0.5, "evidence_completeness": 0.4},
                        gold={"q1": "a", "q2": "b"}, documents="D")
    baseline = Baseline().updated([before], REGISTRY, Tolerances())
    status = {diff.key: diff.status for diff in compare_record(after, baseline, REGISTRY,
                                                               Tolerances())}
    assert status == {"coverage": "regressed", "evidence_completeness": "gold changed"}
    edited = StageRecord("t::t", "chunking", after.values, gold=after.gold, documents="E")
    status = {diff.key: diff.status for diff in compare_record(edited, baseline, REGISTRY,
                                                               Tolerances())}
    assert status == {"coverage": "gold changed", "evidence_completeness": "gold changed"}


def test_a_gold_with_no_query_left_unchanged_compares_nothing_that_reads_queries() -> None:
    from pytest_rag.compare.baseline import Baseline
    from pytest_rag.compare.comparison import compare_record
    from pytest_rag.compare.thresholds import Tolerances
    from pytest_rag.registry import REGISTRY

    before = StageRecord("t::t", "retrieval", {"recall_at_k": 0.9},
                         {"recall_at_k": {"q1": 0.9}}, gold={"q1": "a"})
    after = StageRecord("t::t", "retrieval", {"recall_at_k": 0.1},
                        {"recall_at_k": {"q1": 0.1}}, gold={"q1": "b"})
    baseline = Baseline().updated([before], REGISTRY, Tolerances())
    [diff] = compare_record(after, baseline, REGISTRY, Tolerances())
    assert diff.status == "gold changed"


def test_a_stage_fingerprint_follows_only_the_gold_that_stage_reads() -> None:
    from pytest_rag.compare.gold import gold_fingerprints
    from pytest_rag.dataset.model import Dataset

    edits = {"reference_answers": ("x",), "required_facts": ("f",), "answerable": False,
             "question": "other", "expected_citations": ("d",)}
    before = Dataset(queries=(QUERY,))
    for change in edits.items():
        after = Dataset(queries=(dataclasses.replace(QUERY, **dict([change])),))
        assert gold_fingerprints(after, "retrieval") == gold_fingerprints(before, "retrieval")
    relevant = Dataset(queries=(dataclasses.replace(QUERY, relevant={"other": 1}),))
    assert gold_fingerprints(relevant, "retrieval") != gold_fingerprints(before, "retrieval")
    assert gold_fingerprints(relevant, "generation") == gold_fingerprints(before, "generation")
    answers = Dataset(queries=(dataclasses.replace(QUERY, reference_answers=("x",)),))
    assert gold_fingerprints(answers, "generation") != gold_fingerprints(before, "generation")
    # Never a digest of all the gold: an old entry's digest is told apart from a stage's.
    assert QUERY.fingerprint not in gold_fingerprints(before, "generation").values()


def test_an_entry_of_whole_gold_digests_is_unchanged_while_the_gold_is() -> None:
    """Entries written before the per-stage fingerprints hold a digest of all the gold."""
    from pytest_rag.compare.gold import gold_fingerprints, whole_gold_fingerprints
    from pytest_rag.dataset.model import Dataset

    def record_of(dataset: Dataset) -> StageRecord:
        return StageRecord("t::t", "retrieval", {}, gold=gold_fingerprints(dataset, "retrieval"),
                           whole_gold=whole_gold_fingerprints(dataset))

    old = {"queries": {"q1": QUERY.fingerprint}}
    change = gold_change(old, record_of(Dataset(queries=(QUERY,))))
    assert change is not None and not change.changed and change.same == {"q1"}
    answered = Dataset(queries=(dataclasses.replace(QUERY, reference_answers=("x",)),))
    change = gold_change(old, record_of(answered))  # which field moved is not known: edited
    assert change is not None and change.edited == ("q1",) and not change.same


EDITS = {"question": "Whom?", "relevant": {"a": 1}, "expected_evidence": (EvidenceSpan("d", 1, 5),),
         "reference_answers": ("Bob",), "required_facts": ("fact",),
         "expected_citations": ("d",), "answerable": False}


@given(st.sets(st.sampled_from(sorted(EDITS))), st.sampled_from(STAGES))
def test_a_stage_fingerprint_changes_exactly_when_a_field_it_reads_is_edited(
        edited: set[str], stage: str) -> None:
    from pytest_rag.compare.gold import gold_fingerprints
    from pytest_rag.dataset.fields import gold_attributes
    from pytest_rag.dataset.model import Dataset

    after = dataclasses.replace(QUERY, **{name: EDITS[name] for name in edited})
    changed = (gold_fingerprints(Dataset(queries=(after,)), stage)
               != gold_fingerprints(Dataset(queries=(QUERY,)), stage))
    assert changed == bool(edited & set(gold_attributes(stage)))
