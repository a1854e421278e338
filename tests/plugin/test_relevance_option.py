"""ini ``rag_relevance_from_evidence``: ranking metrics for a dataset with evidence only."""

from __future__ import annotations

import pytest
from ragproject import write_ini

#: Two chunks; q1's span "beta" lies in c0 (grade 2), q2's "gamma delta" touches both (1, 1).
EVIDENCE_ONLY = """\
params: {k: 1}
documents:
  - {id: d, text: "alpha beta gamma delta epsilon"}
chunks:
  - {id: c0, doc_id: d, start: 0, end: 16}
  - {id: c1, doc_id: d, start: 17, end: 30}
queries:
  - id: q1
    expected_evidence: [{doc_id: d, start: 6, end: 10}]
  - id: q2
    expected_evidence: [{doc_id: d, start: 11, end: 23}]
run:
  q1: {retrieved_ids: [c0, c1], reranked_ids: [c1, c0]}
  q2: {retrieved_ids: [c1, c0], reranked_ids: [c1, c0]}
"""

TEST = """\
def test_ranking(rag):
    report = rag.retrieval()
    assert report.settings == {expected_settings!r}
    assert report.values["recall_at_k"] == {recall!r}
    assert report.values["token_recall"] is not None
    assert rag.reranking().values["mrr_at_k"] == {mrr!r}


def test_call_level_value_wins(rag):
    assert rag.retrieval(relevance_from_evidence=False).values["recall_at_k"] is None
    assert rag.retrieval(relevance_from_evidence=True).values["recall_at_k"] == 0.75
"""


@pytest.mark.parametrize("on", [True, False])
def test_ini_option_derives_relevance_from_evidence(rag_pytester: pytest.Pytester,
                                                    on: bool) -> None:
    rag_pytester.makefile(".yaml", gold=EVIDENCE_ONLY)
    write_ini(rag_pytester, *(["rag_relevance_from_evidence = true"] if on else []))
    if on:  # q1: c0 of {c0} found; q2: c1 of {c0, c1} found. Reranked: q1 c1 (grade 0) first.
        expected = TEST.format(expected_settings={"k": 1, "relevance_from_evidence": True},
                               recall=(1 + 0.5) / 2, mrr=(0 + 1) / 2)
    else:
        expected = TEST.format(expected_settings={"k": 1}, recall=None, mrr=None)
    rag_pytester.makepyfile(test_rag=expected)
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
