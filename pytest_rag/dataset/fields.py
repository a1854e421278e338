"""The one table of the format's per-query fields: :data:`FIELDS`.

Each row says, for one field of a query or of a run entry, everything the
rest of the code needs to know about it: its key in a file (and its keyword
in ``rag.<stage>()``), the attribute of :class:`~pytest_rag.dataset.model.Query`
or :class:`~pytest_rag.dataset.model.RunEntry` that holds it, its kind (which
converter of the parser checks it, and which column check of the fast path
shortcuts that), whether it is gold or run data, and which stages read it.

The parser's key lists, the column-by-column fast path, the keyword inputs of
the evaluators, the stages' "is this input given" checks and the per-stage
gold fingerprints of the baseline are all derived from this table, so adding
a field is one row here plus its semantics (its metrics, its README row);
``tests/unit/test_field_table.py`` checks that every layer knows every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["FIELDS", "GOLD_FIELDS", "QUERY", "RUN", "Field", "Kind", "gold_attributes"]

#: How a field's value is checked and converted (one converter of the parser each):
#: ``id`` a non-empty string; ``text`` a string; ``boolean``; ``grades`` a mapping
#: of chunk id to grade or a list of chunk ids; ``evidence`` a list of spans;
#: ``answers`` a string or a list of strings; ``strings`` a list of strings;
#: ``ids`` a list of ids; ``ranked_ids`` a ranked list of chunk ids (or chunk
#: objects of a framework, from Python); ``claims`` a list of ``{claim, supported}``;
#: ``vector`` a list of numbers; ``number`` a finite number >= 0.
Kind = Literal["id", "text", "boolean", "grades", "evidence", "answers", "strings", "ids",
               "ranked_ids", "claims", "vector", "number"]

_RANKING: Final = frozenset({"retrieval", "reranking", "embedding"})


@dataclass(frozen=True)
class Field:
    """One per-query field of the format.

    ``section`` is ``"queries"`` (a query's gold, ``queries[]`` in a file) or
    ``"run"`` (what the pipeline produced, ``run.<query id>``).  ``gold`` is
    true for the gold a query carries (not its id).  ``keyword``: the field can
    be passed to ``rag.<stage>()`` as a mapping of query id to value.
    ``stages``: the stages whose metrics read the field; only these stages'
    baseline entries see an edit of a gold field as "gold edited".
    """

    key: str
    attribute: str
    kind: Kind
    section: Literal["queries", "run"]
    stages: frozenset[str] = frozenset()
    keyword: bool = True

    @property
    def gold(self) -> bool:
        return self.section == "queries" and self.kind != "id"


def _query(key: str, kind: Kind, *stages: str, attribute: str | None = None,
           keyword: bool = True) -> Field:
    return Field(key, attribute or key, kind, "queries", frozenset(stages), keyword)


def _run(key: str, kind: Kind, *stages: str) -> Field:
    return Field(key, key, kind, "run", frozenset(stages))


#: Every per-query field, in the format's order (queries, then run entries).
FIELDS: Final[tuple[Field, ...]] = (
    _query("id", "id", keyword=False),
    # For people: no metric reads the question.
    _query("question", "text", keyword=False),
    _query("relevant", "grades", *_RANKING),
    # The ranking stages read it too: relevance_from_evidence grades chunks from it.
    _query("expected_evidence", "evidence", "chunking", "augmentation", *_RANKING),
    _query("reference_answer", "answers", "generation", "end_to_end",
           attribute="reference_answers"),
    _query("required_facts", "strings", "generation"),
    _query("expected_citations", "strings", "generation"),
    _query("answerable", "boolean", "generation"),
    _run("retrieved_ids", "ranked_ids", "retrieval", "reranking"),
    _run("reranked_ids", "ranked_ids", "reranking"),
    _run("context_ids", "ranked_ids", "augmentation", "generation"),
    _run("answer", "text", "generation", "end_to_end"),
    _run("cited_ids", "ids", "generation"),
    _run("abstained", "boolean", "generation"),
    _run("verified_claims", "claims", "generation"),
    _run("task_success", "boolean", "generation", "end_to_end"),
    _run("query_vector", "vector", "embedding"),
    _run("ann_ids", "ids", "embedding"),
    _run("retrieval_latency_ms", "number", "retrieval"),
    _run("generation_latency_ms", "number", "generation"),
    _run("latency_ms", "number", "end_to_end"),
    _run("cost_usd", "number", "end_to_end"),
    _run("total_tokens", "number", "end_to_end"),
)

#: A query's fields by file key, in file order.
QUERY: Final = {row.key: row for row in FIELDS if row.section == "queries"}
#: A run entry's fields by file key, in file order.
RUN: Final = {row.key: row for row in FIELDS if row.section == "run"}
#: The gold fields of a query, by file key.
GOLD_FIELDS: Final = {key: row for key, row in QUERY.items() if row.gold}


def gold_attributes(stage: str | None = None) -> tuple[str, ...]:
    """The :class:`Query` attributes of the gold that ``stage`` reads, in table order;
    every gold field for ``None``."""
    return tuple(row.attribute for row in GOLD_FIELDS.values()
                 if stage is None or stage in row.stages)
