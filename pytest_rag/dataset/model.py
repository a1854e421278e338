"""Plain frozen dataclasses that carry a gold dataset and a run between layers.

Everything here is already validated: offsets are inside their document,
quotes are located, ids are unique strings, numbers are finite.  Build these
with :func:`pytest_rag.load_dataset` (a file) or let an evaluator build them
from keyword arguments; the constructors do not check their input again.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final, TypeVar, overload

from .caches import DatasetCache, ObjectCache, cache_entry
from .fields import gold_attributes

if TYPE_CHECKING:
    import json

    import numpy as np
    import numpy.typing as npt

    from ..text.tokens import TokenTable

_QUERY_ID: Final = operator.attrgetter("id")
_DOC_ID: Final = operator.attrgetter("doc_id")
_START: Final = operator.attrgetter("start")
_END: Final = operator.attrgetter("end")

__all__ = [
    "Chunk",
    "ChunkTable",
    "Claim",
    "Dataset",
    "Document",
    "EvidenceSpan",
    "Params",
    "Query",
    "RunEntry",
    "Vectors",
    "chunk_ids",
    "chunk_spans",
    "documents_fingerprint",
]


def _digest(*parts: str) -> str:
    """16 hex digits of BLAKE2b over ``parts``, separated so that they cannot run together."""
    import hashlib

    digest = hashlib.blake2b(digest_size=8)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def _plain(value: object) -> object:
    """JSON for what :func:`json.dumps` does not know: dataclasses and read-only mappings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Its fields in order, as a JSON array: json.dumps comes back here for a nested one
        # (the text ``dataclasses.astuple`` gives, without its deep copy: 10 x faster).
        return [getattr(value, field_.name) for field_ in dataclasses.fields(value)]
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot fingerprint {type(value).__name__}")


@functools.cache
def _gold_encoder() -> json.JSONEncoder:
    """The encoder of the text a gold fingerprint digests: ``json.dumps(value,
    sort_keys=True, ensure_ascii=False, default=_plain)``, made once (``dumps`` makes one
    per call with these options)."""
    import json

    return json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=_plain)


def _gold_json(value: object) -> str:
    """The JSON text of a query's gold that its fingerprints digest (never change it:
    baselines keep the digests)."""
    return _gold_encoder().encode(value)


def documents_fingerprint(documents: Sequence[Document]) -> str | None:
    """A digest of all documents' ids and texts, in any order; ``None`` for none."""
    if not documents:
        return None
    return _digest(*sorted(document.fingerprint for document in documents))


@dataclass(frozen=True)
class Document(ObjectCache):
    """A source document: its id, full text and metadata.

    ``path`` is the absolute path of the file the text was read from (a
    ``path:`` document), else ``None``.
    """

    id: str
    text: str
    metadata: Mapping[str, Any] | None = None
    path: str | None = field(default=None, compare=False)

    @functools.cached_property
    def tokens(self) -> TokenTable:
        """The document's tokens, computed once per document object."""
        from ..text.tokens import tokenize

        return tokenize(self.text)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of the id and text: equal for equal documents (metadata aside)."""
        return _digest(self.id, self.text)


@dataclass(frozen=True)
class Chunk:
    """A chunk (or an expected chunk): a character span ``[start, end)`` of a document.

    ``id`` is ``None`` only for expected chunks, whose ids are optional.
    ``metadata`` is ``None`` when the chunk carried none.
    """

    id: str | None
    doc_id: str
    start: int
    end: int
    metadata: Mapping[str, Any] | None = None


_Item = TypeVar("_Item")


@functools.cache
def field_defaults(cls: type) -> dict[str, Any]:
    """Every field of ``cls`` in order, with its default (``None`` for a field without one;
    shared: do not modify)."""
    return {item.name: None if item.default is dataclasses.MISSING else item.default
            for item in dataclasses.fields(cls)}


def assemble(cls: type[_Item], fields: Mapping[str, Any]) -> _Item:
    """``cls(**fields)`` for a flat frozen dataclass of this module and validated values.

    The same instance (its dictionary holds every field, defaults included),
    made with dictionary updates instead of the generated ``__init__``'s
    ``object.__setattr__`` per field, which is most of the cost of an item on
    the loaders' bulk paths (15 fields for a run entry).  Only for classes
    without ``__post_init__`` or ``default_factory`` fields.
    """
    item = object.__new__(cls)
    state = item.__dict__
    item_class: type = cls  # a class is hashable, as the cache needs
    state.update(field_defaults(item_class))
    state.update(fields)
    return item


def replaced(item: _Item, changes: Mapping[str, Any]) -> _Item:
    """``dataclasses.replace(item, **changes)`` for a flat frozen dataclass of this module.

    Without ``replace``'s loop over the fields: the instance dictionary is
    copied and updated.  What an item caches beside its fields (a query's
    ``fingerprint``, a document's tokens) describes the old values and is left
    behind.
    """
    state = vars(item)
    fields = {**state, **changes}
    item_class: type = type(item)  # a class is hashable, as the cache needs
    names = field_defaults(item_class).keys()
    if len(state) > len(names):  # something derived is cached: not carried over
        for key in state.keys() - names:
            del fields[key]
    return assemble(type(item), fields)


_new_instance: Final = object.__new__
_drain: Final = deque[object](maxlen=0).extend  # runs an iterator to its end, keeping nothing


def assemble_columns(cls: type[_Item], columns: Mapping[str, Sequence[Any]], count: int
                     ) -> tuple[_Item, ...]:
    """``count`` items of ``cls``: field ``name`` of item ``i`` is ``columns[name][i]``,
    every other field its default (every field without one must be a column; as for
    :func:`assemble`, only for classes without ``default_factory`` fields).

    The bulk form of :func:`assemble` for validated columns: each instance
    dictionary is filled in C-level passes (one update with the defaults, one
    item per column), at 200,000 chunks several times faster than the
    generated ``__init__``.
    """
    items = list(map(_new_instance, repeat(cls, count)))
    states: list[dict[str, Any]] = list(map(vars, items))
    item_class: type = cls  # a class is hashable, as the cache needs
    # Every field in field order first (a column overwrites its place), so the
    # dictionaries are those the generated __init__ makes.
    _drain(map(dict.update, states, repeat(field_defaults(item_class))))
    for name, column in columns.items():
        _drain(map(dict.__setitem__, states, repeat(name), column))
    return tuple(items)


def copies_with(items: Sequence[_Item], columns: Mapping[str, Iterable[Any]]) -> list[_Item]:
    """Copies of ``items`` (flat frozen dataclasses of this module, of one class) with
    ``columns[name][i]`` set as the ``name`` of copy ``i``, in C-level passes: the bulk
    form of ``assemble(cls, {**vars(item), name: value, ...})``.

    Each copy's dictionary is the item's, with the same keys in the same order (a
    column for a new key adds it at the end), and so holds what the item caches
    too: only for changes that leave those caches valid.
    """
    if not items:
        return []
    copies = list(map(_new_instance, repeat(type(items[0]), len(items))))
    states: list[dict[str, Any]] = list(map(vars, copies))
    _drain(map(dict.update, states, map(vars, items)))
    for name, column in columns.items():
        _drain(map(dict.__setitem__, states, repeat(name), column))
    return copies


@dataclass(frozen=True, eq=False)
class ChunkTable(Sequence[Chunk]):
    """Chunks without metadata held as columns: a read-only sequence of :class:`Chunk`.

    What a list of plain ``{"id", "doc_id", "start", "end"}`` chunks becomes:
    the parser checks it column by column and keeps the columns, so a stage
    that needs only the ids (embedding: which vector is which chunk) never
    makes 200,000 :class:`Chunk` objects.  They are made the first time one is read
    (:attr:`chunks`) and kept with the table; the table equals the tuple of
    its chunks and hashes like it, so a dataset holding it compares,
    hashes and prints as one holding that tuple.

    The columns are validated (unique non-empty ids, known documents,
    offsets inside them); the constructor does not check them again.
    """

    ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, ids: Sequence[str], doc_ids: Sequence[str], starts: Sequence[int],
           ends: Sequence[int], index: dict[str, int] | None = None) -> ChunkTable:
        """The table of four validated columns; ``index``: :attr:`row_of`, when already built."""
        table = cls(tuple(ids), tuple(doc_ids), tuple(starts), tuple(ends))
        if index is not None:
            table.__dict__["row_of"] = index
        return table

    @functools.cached_property
    def chunks(self) -> tuple[Chunk, ...]:
        """The rows as :class:`Chunk` objects, made once per table."""
        return assemble_columns(Chunk, {"id": self.ids, "doc_id": self.doc_ids,
                                        "start": self.starts, "end": self.ends}, len(self.ids))

    @functools.cached_property
    def row_of(self) -> dict[str, int]:
        """Chunk id to its row (do not modify: it is shared with the datasets holding the table)."""
        return dict(zip(self.ids, range(len(self.ids))))

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, row: int) -> Chunk: ...

    @overload
    def __getitem__(self, row: slice) -> tuple[Chunk, ...]: ...

    def __getitem__(self, row: int | slice) -> Chunk | tuple[Chunk, ...]:
        return self.chunks[row]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkTable):
            return self is other or self.chunks == other.chunks
        if isinstance(other, tuple):
            return self.chunks == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.chunks)

    def __add__(self, other: tuple[Chunk, ...]) -> tuple[Chunk, ...]:
        return self.chunks + other

    def __radd__(self, other: tuple[Chunk, ...]) -> tuple[Chunk, ...]:
        return other + self.chunks

    def __repr__(self) -> str:
        return repr(self.chunks)


def chunk_ids(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """The ids of the chunks that have one, in order (a table's id column as it is)."""
    if isinstance(chunks, ChunkTable):
        return chunks.ids
    return tuple(chunk.id for chunk in chunks if chunk.id is not None)


def chunk_spans(chunks: Sequence[Chunk]) -> tuple[Sequence[str], Sequence[int], Sequence[int]]:
    """The ``doc_id``, ``start`` and ``end`` columns of the chunks (a table's own
    columns, without making its :class:`Chunk` objects)."""
    if isinstance(chunks, ChunkTable):
        return chunks.doc_ids, chunks.starts, chunks.ends
    return (tuple(map(_DOC_ID, chunks)), tuple(map(_START, chunks)),
            tuple(map(_END, chunks)))


@dataclass(frozen=True)
class EvidenceSpan:
    """A gold evidence span ``[start, end)`` of a document (quotes already located)."""

    doc_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Claim:
    """One human-verified claim of an answer."""

    claim: str
    supported: bool


@dataclass(frozen=True)
class Query:
    """Gold data of one question.  Empty collections mean "not given"."""

    id: str
    question: str | None = None
    relevant: Mapping[str, int] | None = None
    expected_evidence: tuple[EvidenceSpan, ...] = ()
    reference_answers: tuple[str, ...] = ()
    required_facts: tuple[str, ...] = ()
    expected_citations: tuple[str, ...] = ()
    answerable: bool | None = None
    #: ``relevant`` was derived from ``expected_evidence`` and the chunks
    #: (``relevance_from_evidence``), not written in the gold.
    relevant_from_evidence: bool = field(default=False, compare=False)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of the gold as written (every field but the id; a ``relevant`` derived
        from evidence is not gold): it changes when the gold is edited."""
        source = self.__dict__.get(GOLD_SOURCE)
        if source is not None:  # kept with the query as written, for every copy
            return str(source.fingerprint)
        gold = [None if name == "relevant" and self.relevant_from_evidence
                else getattr(self, name) for name in _GOLD_FIELDS]
        return _digest(_gold_json(gold))

    def fingerprint_of(self, names: tuple[str, ...]) -> str:
        """A digest of the gold fields ``names`` (attributes, as written; a ``relevant``
        derived from evidence is not gold), kept with the query per tuple of names.

        What one stage's baseline entry keeps
        (:func:`~pytest_rag.dataset.fields.gold_attributes`):
        it changes when a field that stage reads is edited, and only then.  It
        never equals :attr:`fingerprint` (the field names are part of it).
        """
        source = self.__dict__.get(GOLD_SOURCE)
        if source is not None:  # kept with the query as written, for every copy
            return str(source.fingerprint_of(names))

        def build() -> str:
            gold = {name: None if name == "relevant" and self.relevant_from_evidence
                    else getattr(self, name) for name in names}
            return _digest(_gold_json(gold))

        return cache_entry(self.__dict__, "fingerprint:" + ",".join(names), build)


#: What a :class:`Query` caches beside its fields (a test keeps this list complete).
QUERY_CACHES: Final = frozenset({"fingerprint"})
#: The key, in the instance dictionary of a query whose ``relevant`` was derived from
#: evidence, of the query as written: its gold, and so its fingerprints, which are
#: computed and kept there once for every chunking a sweep derives grades from.
GOLD_SOURCE: Final = "gold-source"
#: The fields of a query's gold: every field but the id.
_GOLD_FIELDS: Final = gold_attributes()


@dataclass(frozen=True)
class RunEntry:
    """What the pipeline produced for one query.  ``None`` means not given."""

    retrieved_ids: tuple[str, ...] | None = None
    reranked_ids: tuple[str, ...] | None = None
    context_ids: tuple[str, ...] | None = None
    answer: str | None = None
    cited_ids: tuple[str, ...] | None = None
    abstained: bool | None = None
    verified_claims: tuple[Claim, ...] | None = None
    task_success: bool | None = None
    query_vector: npt.NDArray[np.float64] | None = field(default=None, compare=False)
    ann_ids: tuple[str, ...] | None = None
    retrieval_latency_ms: float | None = None
    generation_latency_ms: float | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    total_tokens: float | None = None


#: The fields of a run entry, in the format's order (the field table, :mod:`.fields`).
RUN_FIELDS: tuple[str, ...] = tuple(RunEntry.__dataclass_fields__)


@dataclass(frozen=True)
class Params:
    """Evaluator settings from a file's ``params`` section (``None``: not given)."""

    k: int | None = None
    size_limits: tuple[int, int] | None = None
    boundary_tolerance: int | None = None
    required_metadata: tuple[str, ...] | None = None
    max_context_tokens: int | None = None
    abstain_phrases: tuple[str, ...] | None = None
    relevance_from_evidence: bool | None = None


@dataclass(frozen=True)
class Vectors:
    """Embeddings passed in (no model is called).

    ``chunk_matrix`` row ``i`` is the vector of ``chunk_ids[i]``; ids that are
    not chunks are allowed (they count among the negatives).  ``sentences``
    maps a chunk id to its sentence vectors, one row per sentence, in order.
    """

    chunk_ids: tuple[str, ...] = ()
    chunk_matrix: npt.NDArray[np.float64] | None = field(default=None, compare=False)
    sentences: Mapping[str, npt.NDArray[np.float64]] | None = field(default=None, compare=False)
    indexed_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Dataset(DatasetCache):
    """A gold dataset with an optional run: everything the evaluators read.

    Attributes
    ----------
    source:
        The file it came from, or ``"<arguments>"``.
    chunks, expected_chunks:
        Sequences of :class:`Chunk`: a tuple, or a :class:`ChunkTable` (equal
        to the tuple of its chunks) where they were plain chunks.
    run:
        Query id to :class:`RunEntry`; a query without an entry has no run data.
    expected:
        The file's ``expected`` section (``{stage: {key: value}}``), unused by
        evaluation.
    argument_inputs:
        The inputs that were passed as keyword arguments rather than read from
        ``source``: errors about them name the argument, not the file.
    run_source:
        ``(file, place prefix)`` when the run was read from a run file of its
        own (``load_dataset(run=...)``): errors about the run name that file.
    discovered_chunks:
        How many of the last :attr:`chunks` were not given but found in ranked
        lists (framework objects in ``retrieved_ids=``, ...).  When every chunk
        was found so, the chunk list is only what was retrieved, not the corpus.
    """

    source: str = "<arguments>"
    params: Params = field(default_factory=Params)
    documents: tuple[Document, ...] = ()
    chunks: Sequence[Chunk] = ()
    expected_chunks: Sequence[Chunk] = ()
    expected_metadata: Mapping[str, Mapping[str, Any]] | None = None
    vectors: Vectors | None = None
    queries: tuple[Query, ...] = ()
    run: Mapping[str, RunEntry] = field(default_factory=dict)
    expected: Mapping[str, Mapping[str, float | None]] | None = None
    argument_inputs: frozenset[str] = field(default=frozenset(), compare=False)
    run_source: tuple[str, str] | None = field(default=None, compare=False)
    discovered_chunks: int = field(default=0, compare=False)

    @functools.cached_property
    def document_by_id(self) -> dict[str, Document]:
        return {doc.id: doc for doc in self.documents}

    @functools.cached_property
    def chunk_index(self) -> dict[str, int]:
        """Chunk id to its position in :attr:`chunks` (do not modify: a
        :class:`ChunkTable`'s own index is shared)."""
        if isinstance(self.chunks, ChunkTable):
            return self.chunks.row_of
        return {chunk.id: i for i, chunk in enumerate(self.chunks) if chunk.id is not None}

    @property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(map(_QUERY_ID, self.queries))

    def run_place(self, query_id: str, name: str, rank: int) -> tuple[str, str]:
        """The source and the place of item ``rank`` of a query's run list ``name``.

        ``run.q1.retrieved_ids[0]`` of the file, or ``retrieved_ids['q1'][0]``
        of ``<arguments>`` when that list was passed as a keyword argument.
        """
        if name in self.argument_inputs:
            return "<arguments>", f"{name}[{query_id!r}][{rank}]"
        if self.run_source is not None:
            source, prefix = self.run_source
            return source, f"{prefix + '.' if prefix else ''}{query_id}.{name}[{rank}]"
        return self.source, f"run.{query_id}.{name}[{rank}]"

    def run_entry(self, query_id: str) -> RunEntry | None:
        """The run entry of a query, or ``None`` when it has none."""
        return self.run.get(query_id)
