"""Framework chunk objects through the ``rag`` fixture, and ini ``rag_doc_id_key``."""

from __future__ import annotations

import pytest
from ragproject import write_ini

GOLD = """\
documents:
  - {id: faq, text: "Refunds are paid within 14 days. Shipping takes 3 to 5 days."}
queries:
  - id: q1
    expected_evidence: [{doc_id: faq, start: 0, end: 32}]
"""

#: LangChain-like Documents (the attributes LangChain sets) whose document is in ``article``.
TEST = """\
class Document:
    def __init__(self, page_content, metadata):
        self.page_content, self.metadata, self.id = page_content, metadata, None


TEXT = "Refunds are paid within 14 days. Shipping takes 3 to 5 days."
CHUNKS = [Document(TEXT[:32], {"article": "faq", "source": "crawl.jsonl", "start_index": 0}),
          Document(TEXT[33:], {"article": "faq", "source": "crawl.jsonl", "start_index": 33})]


def test_chunks(rag):
    report = rag.chunking(chunks=CHUNKS)
    assert [chunk.id for chunk in report.dataset.chunks] == ["faq[0:32]", "faq[33:60]"]
    retrieved = [Document(c.page_content, dict(c.metadata)) for c in reversed(CHUNKS)]
    report = rag.retrieval(chunks=CHUNKS, retrieved_ids={"q1": retrieved},
                           relevance_from_evidence=True)
    assert report.values["mrr_at_k"] == 0.5
"""


def test_ini_doc_id_key_names_the_document_of_framework_objects(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makefile(".yaml", gold=GOLD)
    rag_pytester.makepyfile(test_rag=TEST)
    write_ini(rag_pytester)
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert ("pytest-rag: <arguments>: chunks[0]: the LangChain Document's document is not known: "
            "metadata['source'] 'crawl.jsonl' matches no document (tried as a document id, as a "
            "file (no document was read from a file)); known documents: 'faq' "
            "(metadata['article'] is a document id: set doc_id_key='article')"
            ) in result.stdout.lines
    write_ini(rag_pytester, "rag_doc_id_key = article")
    rag_pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_doc_id_key_given_to_a_call(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makefile(".yaml", gold=GOLD)
    rag_pytester.makepyfile(test_rag=TEST.replace("rag.chunking(chunks=CHUNKS)",
                                                  "rag.chunking(chunks=CHUNKS, "
                                                  "doc_id_key='article')")
                            .replace("relevance_from_evidence=True)",
                                     "relevance_from_evidence=True, doc_id_key='article')"))
    write_ini(rag_pytester)
    rag_pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_doc_id_key_that_is_not_a_key_fails_the_test(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makefile(".yaml", gold=GOLD)
    rag_pytester.makepyfile(test_rag=TEST.replace("rag.chunking(chunks=CHUNKS)",
                                                  "rag.chunking(chunks=CHUNKS, doc_id_key=3)"))
    write_ini(rag_pytester)
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert ("pytest-rag: rag.chunking(): doc_id_key: expected a non-empty string, "
            "got a number 3") in result.stdout.lines
