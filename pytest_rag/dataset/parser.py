"""The rules of the dataset format, version 1, for decoded data: :func:`parse_dataset`.

:func:`parse_dataset` validates an already decoded mapping (a file is read by
:func:`pytest_rag.dataset.loading.load_dataset`).  Every rule of the format is enforced and each
violation raises one :class:`~pytest_rag.errors.DatasetError` naming the file
and the place (``queries[3].expected_evidence[0].end``).  The section rules of
:class:`FormatRules` also validate the evaluators' keyword arguments: data passed
in Python is validated by exactly the same rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ..errors import did_you_mean
from ..errors import show_value as _show
from ..registry import REGISTRY, STAGES
from ..settings import SETTINGS, SettingError, validate_settings
from ..text.locate import locate, nearest_text
from .bounded_read import DocumentUnreadable, read_document
from .columns import plain_chunks, plain_queries, plain_run, plain_spans, stack_vectors
from .fields import QUERY, RUN, Field
from .frameworks import FrameworkReader
from .model import (
    Chunk,
    Claim,
    Dataset,
    Document,
    EvidenceSpan,
    Params,
    Query,
    RunEntry,
    Vectors,
    field_defaults,
)
from .values import (
    _INT,
    _STR,
    ValueRules,
    _is_plain_data,
    _join,
    _only,
    describe_value,
)

__all__ = ["FORMAT_ID", "FormatRules", "describe_value", "parse_dataset"]

FORMAT_ID = "pytest-rag/v1"

TOP_KEYS = ("format", "params", "documents", "chunks", "expected_chunks",
            "expected_metadata", "vectors", "queries", "run", "expected")
PARAM_KEYS = tuple(row.name for row in SETTINGS if row.params)
DOCUMENT_KEYS = ("id", "text", "path", "metadata")
CHUNK_KEYS = ("id", "doc_id", "start", "end", "text", "metadata")
VECTOR_KEYS = ("chunks", "sentences", "indexed_ids")
QUERY_KEYS = tuple(QUERY)
EVIDENCE_KEYS = ("doc_id", "start", "end", "quote")
RUN_KEYS = tuple(RUN)
ID_LIST_FIELDS = tuple(key for key, row in RUN.items() if row.kind in ("ids", "ranked_ids"))
#: The ranked chunk lists, whose entries may also be chunk objects of a framework.
RANKED_FIELDS = tuple(key for key, row in RUN.items() if row.kind == "ranked_ids")
CLAIM_KEYS = ("claim", "supported")

#: The largest relevance grade: its nDCG gain 2**grade - 1 must stay a finite float
#: even summed over a long list.
MAX_GRADE = 100
#: What a query field is when its file key is absent or null.
_QUERY_DEFAULTS: Final = field_defaults(Query)


class FormatRules(ValueRules):
    """The format's rules for decoded sections, which build the :mod:`pytest_rag.dataset.model`
    objects of data that passes them (it reads no text: files are decoded first).

    Parameters
    ----------
    source:
        Named in every error: the file, or ``"<arguments>"``.
    base_dir:
        Folder that ``path:`` documents are relative to.
    allow_outside_paths:
        Allow ``path:`` documents outside ``base_dir``'s tree.
    objects:
        Accept the chunk objects of LangChain, LlamaIndex and Haystack and
        plain strings as chunks, and those objects in ranked lists (data built
        in Python; a file's chunks are mappings).
    doc_id_key:
        The metadata key that names a chunk object's document.
    """

    def __init__(self, source: str, base_dir: Path | None = None, *,
                 allow_outside_paths: bool = False, objects: bool = False,
                 doc_id_key: str | None = None) -> None:
        self.source = source
        self.base_dir = base_dir
        self.allow_outside_paths = allow_outside_paths
        self.objects = objects
        self.doc_id_key = doc_id_key
        self.documents: dict[str, Document] = {}
        self._lengths: dict[str, int] = {}
        self._frameworks: FrameworkReader | None = None
        self._chunks: Sequence[Chunk] = ()

    @property
    def frameworks(self) -> FrameworkReader:
        """Reads framework chunk objects against :attr:`documents` (made when first needed)."""
        if self._frameworks is None:
            self._frameworks = FrameworkReader(self.documents, self.fail, self.doc_id_key)
        self._frameworks.use_chunks(self._chunks)
        return self._frameworks

    def use_chunks(self, chunks: Sequence[Chunk]) -> None:
        """The chunks that chunk objects in ranked lists (``retrieved_ids``) are matched
        against: those of the dataset being built."""
        self._chunks = chunks

    def with_discovered(self, chunks: Sequence[Chunk]) -> Sequence[Chunk]:
        """``chunks`` and, after them, the chunks of ranked-list objects that were not
        among them."""
        if self._frameworks is None or not self._frameworks.discovered:
            return chunks
        return (*chunks, *self._frameworks.discovered.values())

    # -- sections -----------------------------------------------------------
    def params(self, value: object, place: str = "params") -> Params:
        raw = self.mapping(value, place, PARAM_KEYS)
        try:  # the one validation of every setting (pytest_rag.settings)
            return Params(**validate_settings(raw, place))
        except SettingError as error:
            self.fail(error.place, error.problem)

    def documents_section(self, value: object, place: str = "documents") -> tuple[Document, ...]:
        if isinstance(value, Mapping) and "glob" in value:  # documents: {glob: "docs/*.md"}
            from .bounded_read import MAX_FILE_BYTES
            from .sources.globbing import glob_documents

            value = glob_documents(self, value, place, MAX_FILE_BYTES)
        documents: list[Document] = []
        for i, item in enumerate(self.sequence(value, place)):
            where = f"{place}[{i}]"
            if isinstance(item, Document):
                document = item
                self.identifier(document.id, f"{where}.id")
                self.string(document.text, f"{where}.text")
            else:
                raw = self.mapping(item, where, DOCUMENT_KEYS, required=("id",))
                doc_id = self.identifier(raw["id"], f"{where}.id")
                has_text = raw.get("text") is not None
                has_path = raw.get("path") is not None
                if has_text and has_path:
                    self.fail(where, "give either 'text' or 'path', not both")
                if not has_text and not has_path:
                    self.fail(where, "missing 'text' (or 'path' to a UTF-8 file)")
                path = None
                if has_text:
                    text = self.string(raw["text"], f"{where}.text")
                else:
                    text, path = self._read_document(raw["path"], f"{where}.path")
                metadata = raw.get("metadata")
                if metadata is not None:
                    metadata = self.free_form(self.mapping(metadata, f"{where}.metadata"),
                                              f"{where}.metadata")
                document = Document(doc_id, text, metadata, path)
            if document.id in self.documents:
                self.fail(f"{where}.id", f"duplicate document id {document.id!r}")
            self.documents[document.id] = document
            documents.append(document)
        return tuple(documents)

    def _read_document(self, value: object, place: str) -> tuple[str, str]:
        """The text of a ``path:`` document and the file's absolute path."""
        name = self.string(value, place)
        if not name or "\0" in name:
            self.fail(place, f"{_show(name)} is not a file name")
        base = self.base_dir if self.base_dir is not None else Path.cwd()
        try:
            return read_document(name, base, allow_outside=self.allow_outside_paths)
        except DocumentUnreadable as error:
            self.fail(place, str(error))

    def _doc_id(self, raw: Mapping[str, Any], where: str) -> str:
        if raw.get("doc_id") is None:
            if len(self.documents) == 1:
                return next(iter(self.documents))
            count = len(self.documents)
            self.fail(where, f"missing 'doc_id' (it may be omitted only with exactly one "
                             f"document; there {'is' if count == 1 else 'are'} "
                             f"{'no' if count == 0 else count} documents)")
        return self._known_document(raw["doc_id"], f"{where}.doc_id")

    def _known_document(self, value: object, place: str) -> str:
        doc_id = self.string(value, place)
        if doc_id not in self.documents:
            known = ", ".join(map(repr, list(self.documents)[:5]))
            more = ", ..." if len(self.documents) > 5 else ""
            self.fail(place, f"unknown document {doc_id!r}{did_you_mean(doc_id, self.documents)} "
                             f"(known: {known}{more})" if self.documents
                      else f"unknown document {doc_id!r} (there are no documents)")
        return doc_id

    def _offsets(self, raw: Mapping[str, Any], where: str, doc_id: str) -> tuple[int, int] | None:
        has_start, has_end = raw.get("start") is not None, raw.get("end") is not None
        if not has_start and not has_end:
            return None
        if has_start != has_end:
            self.fail(where, "give both 'start' and 'end', or neither")
        length = len(self.documents[doc_id].text)
        start = self.integer(raw["start"], f"{where}.start", 0)
        end = self.integer(raw["end"], f"{where}.end", 0)
        for key, offset in (("start", start), ("end", end)):
            if offset > length:
                self.fail(f"{where}.{key}", f"{offset} is past the end of document "
                                            f"{doc_id!r} ({length} characters)")
        if start > end:
            self.fail(where, f"start {start} is after end {end}")
        return start, end

    def chunks_section(self, value: object, place: str, *, ids_required: bool) -> Sequence[Chunk]:
        items = self.sequence(value, place)  # an iterator is read once, here
        plain = plain_chunks(items, self._document_lengths())
        if plain is not None:
            return plain
        chunks: list[Chunk] = []
        seen: set[str] = set()
        search_from: dict[str, int] = {}
        for i, item in enumerate(items):
            where = f"{place}[{i}]"
            if self.objects and not isinstance(item, Chunk) and (
                    isinstance(item, str) or not _is_plain_data(item)):
                chunk = self._object_chunk(item, where, search_from)
            elif isinstance(item, Chunk):
                chunk = item
                if chunk.id is not None or ids_required:
                    self.identifier(chunk.id, f"{where}.id")
                self._known_document(chunk.doc_id, f"{where}.doc_id")
                self._offsets({"start": chunk.start, "end": chunk.end}, where, chunk.doc_id)
            else:
                raw = self.mapping(item, where, CHUNK_KEYS,
                                   required=("id",) if ids_required else ())
                chunk_id = (self.identifier(raw["id"], f"{where}.id")
                            if raw.get("id") is not None else None)
                doc_id = self._doc_id(raw, where)
                span = self._offsets(raw, where, doc_id)
                if span is None:
                    if raw.get("text") is None:
                        self.fail(where, "give 'start' and 'end', or 'text' to locate")
                    text = self.string(raw["text"], f"{where}.text")
                    if not text:
                        self.fail(f"{where}.text", "an empty text cannot be located; "
                                                   "give 'start' and 'end'")
                    span = locate(self.documents[doc_id].text, text, search_from.get(doc_id, 0))
                    if span is None:
                        self.fail(f"{where}.text", f"{_show(text)} not found in document "
                                                   f"{doc_id!r} at or after character "
                                                   f"{search_from.get(doc_id, 0)}" + nearest_text(
                                                       self.documents[doc_id].text, text,
                                                       search_from.get(doc_id, 0)))
                elif raw.get("text") is not None:
                    self.string(raw["text"], f"{where}.text")
                metadata = raw.get("metadata")
                if metadata is not None:
                    metadata = self.free_form(self.mapping(metadata, f"{where}.metadata"),
                                              f"{where}.metadata")
                chunk = Chunk(chunk_id, doc_id, span[0], span[1], metadata)
            if chunk.id is not None:
                if chunk.id in seen:
                    self.fail(f"{where}.id", f"duplicate chunk id {chunk.id!r}")
                seen.add(chunk.id)
            search_from[chunk.doc_id] = chunk.start
            chunks.append(chunk)
        return tuple(chunks)

    def _object_chunk(self, item: object, place: str, search_from: Mapping[str, int]) -> Chunk:
        """The chunk of a framework object or a plain string (:mod:`.frameworks`)."""
        chunk = self.frameworks.chunk(item, place, search_from)
        if chunk is None:
            self.fail(place, f"expected a mapping, a chunk object (a LangChain or Haystack "
                             f"Document, a LlamaIndex node) or a string, got "
                             f"{describe_value(item)}")
        if chunk.metadata is not None:
            self.free_form(chunk.metadata, f"{place}.metadata")
        return chunk

    def expected_metadata(self, value: object, place: str = "expected_metadata"
                          ) -> dict[str, dict[str, Any]]:
        raw = self.mapping(value, place)
        return {key: self.free_form(self.mapping(values, _join(place, key)), _join(place, key))
                for key, values in raw.items()}

    def vectors(self, value: object, place: str = "vectors") -> Vectors:
        raw = self.mapping(value, place, VECTOR_KEYS)
        chunk_ids: tuple[str, ...] = ()
        chunk_matrix = None
        if raw.get("chunks") is not None:
            chunk_ids, chunk_matrix = self.chunk_vectors(raw["chunks"], f"{place}.chunks")
        sentences = None
        if raw.get("sentences") is not None:
            sentences = self.sentence_vectors(raw["sentences"], f"{place}.sentences")
        indexed = None
        if raw.get("indexed_ids") is not None:
            indexed = self.ids(raw["indexed_ids"], f"{place}.indexed_ids")
        return Vectors(chunk_ids, chunk_matrix, sentences, indexed)

    def chunk_vectors(self, value: object, place: str) -> tuple[tuple[str, ...], Any]:
        import numpy as np

        raw = self.mapping(value, place)
        ids = tuple(raw)
        if not ids:
            return (), None
        stacked = stack_vectors(list(raw.values()))
        if stacked is not None:
            return ids, stacked
        rows = [self.matrix(raw[chunk_id], _join(place, chunk_id), rows=False) for chunk_id in ids]
        dims = {row.shape[0] for row in rows}
        if len(dims) > 1:
            first = rows[0].shape[0]
            bad = next(i for i, row in enumerate(rows) if row.shape[0] != first)
            self.fail(_join(place, ids[bad]), f"has {rows[bad].shape[0]} dimensions, "
                                              f"{_join(place, ids[0])} has {first}")
        return ids, np.vstack(rows)

    def sentence_vectors(self, value: object, place: str) -> dict[str, Any]:
        raw = self.mapping(value, place)
        result = {key: self.matrix(rows, _join(place, key), rows=True) for key, rows in raw.items()}
        dims = [(key, array.shape[1]) for key, array in result.items() if array.shape[0]]
        for key, dim in dims[1:]:
            if dim != dims[0][1]:
                first_key, first = dims[0]
                self.fail(_join(place, key), f"has {dim} dimensions, "
                                             f"{_join(place, first_key)} has {first}")
        return result

    def relevant(self, value: object, place: str) -> dict[str, int] | None:
        """Chunk id to grade: a mapping of grades (whole numbers >= 0) or a list (grade 1)."""
        if (type(value) is dict and _only(value, _STR) and _only(value.values(), _INT)
                and (not value or 0 <= min(value.values()) <= max(value.values()) <= MAX_GRADE)):
            return dict(value) or None  # plain grades: the checks below would pass
        if isinstance(value, Mapping):
            raw = self.mapping(value, place)
            grades = {key: self.integer(grade, _join(place, key), 0) for key, grade in raw.items()}
            for key, grade in grades.items():
                if grade > MAX_GRADE:
                    self.fail(_join(place, key), f"a grade must be <= {MAX_GRADE} (its nDCG gain "
                                                 f"is 2**grade - 1), got {grade}")
        elif isinstance(value, (str, bytes, set, frozenset)) or not isinstance(value, Iterable):
            self.fail(place, "expected a list of chunk ids or a mapping of chunk id to grade, "
                             f"got {describe_value(value)}")
        else:
            grades = dict.fromkeys(self.ids(value, place), 1)
        return grades or None

    def evidence(self, value: object, place: str) -> tuple[EvidenceSpan, ...]:
        items = self.sequence(value, place)
        plain = plain_spans(items, self._document_lengths())
        if plain is not None:
            return plain
        spans: dict[EvidenceSpan, None] = {}
        for i, item in enumerate(items):
            where = f"{place}[{i}]"
            if isinstance(item, EvidenceSpan):
                self._known_document(item.doc_id, f"{where}.doc_id")
                self._offsets({"start": item.start, "end": item.end}, where, item.doc_id)
                spans[item] = None
                continue
            raw = self.mapping(item, where, EVIDENCE_KEYS)
            doc_id = self._doc_id(raw, where)
            offsets = self._offsets(raw, where, doc_id)
            has_quote = raw.get("quote") is not None
            if offsets is not None and has_quote:
                self.fail(where, "give either 'start' and 'end', or 'quote', not both")
            if offsets is None and not has_quote:
                self.fail(where, "missing 'start' and 'end' (or a 'quote' to locate)")
            if offsets is None:
                quote = self.string(raw["quote"], f"{where}.quote")
                if not quote:
                    self.fail(f"{where}.quote", "an empty quote cannot be located; "
                                                "give 'start' and 'end'")
                offsets = locate(self.documents[doc_id].text, quote, 0)
                if offsets is None:
                    self.fail(f"{where}.quote", f"{_show(quote)} not found in document {doc_id!r}"
                              + nearest_text(self.documents[doc_id].text, quote))
            spans[EvidenceSpan(doc_id, offsets[0], offsets[1])] = None
        return tuple(spans)

    def _document_lengths(self) -> dict[str, int]:
        """Text length of every known document (kept until a document is added)."""
        if len(self._lengths) != len(self.documents):
            self._lengths = {doc_id: len(doc.text) for doc_id, doc in self.documents.items()}
        return self._lengths

    def answers(self, value: object, place: str) -> tuple[str, ...]:
        """A reference answer, or a list of acceptable answers."""
        if isinstance(value, str):
            return (str(value),)
        if type(value) is list or type(value) is tuple:
            return self.strings(value, place)
        if isinstance(value, (bytes, Mapping, set, frozenset)) or not isinstance(value, Iterable):
            self.fail(place, f"expected a string or a list of strings, got {describe_value(value)}")
        return self.strings(value, place)

    def query(self, value: object, place: str) -> Query:
        if isinstance(value, Query):
            self.identifier(value.id, f"{place}.id")
            return dataclasses.replace(value, expected_evidence=self.evidence(
                value.expected_evidence, f"{place}.expected_evidence"))
        raw = self.mapping(value, place, QUERY_KEYS, required=("id",))
        fields: dict[str, Any] = {"id": self.identifier(raw["id"], f"{place}.id")}
        for key, row in QUERY.items():  # in file order: the first problem is named
            if key != "id":
                item = raw.get(key)
                fields[row.attribute] = (_QUERY_DEFAULTS[row.attribute] if item is None
                                         else self.convert(row, item, f"{place}.{key}"))
        return Query(**fields)

    def queries_section(self, value: object, place: str = "queries") -> tuple[Query, ...]:
        items = self.sequence(value, place)  # an iterator is read once, here
        plain = plain_queries(items, self._query_field, MAX_GRADE)
        if plain is not None:  # every query plain and valid, checked column by column
            return plain
        queries: list[Query] = []
        seen: set[str] = set()
        for i, item in enumerate(items):
            query = self.query(item, f"{place}[{i}]")
            if query.id in seen:
                self.fail(f"{place}[{i}].id", f"duplicate query id {query.id!r}")
            seen.add(query.id)
            queries.append(query)
        return tuple(queries)

    def _query_field(self, key: str, value: object) -> Any:
        """One query field (not ``None``) by its file key, its errors at the key itself
        (for the column-by-column path, which shows no place: a problem sends it
        through :meth:`query` again)."""
        return self.convert(QUERY[key], value, key)

    def convert(self, row: Field, value: object, place: str) -> Any:
        """The value (not ``None``) of the field ``row`` of the table
        (:mod:`pytest_rag.dataset.fields`), checked and converted by its kind."""
        if row.kind == "ranked_ids" and self.objects:
            items = self.sequence(value, place)
            if _only(items, _STR):
                return tuple(items)
            return tuple(self._ranked_id(item, f"{place}[{i}]") for i, item in enumerate(items))
        return _CONVERTERS[row.kind](self, value, place)

    def claims(self, value: object, place: str) -> tuple[Claim, ...]:
        claims = []
        for i, item in enumerate(self.sequence(value, place)):
            if isinstance(item, Claim):
                claims.append(item)
                continue
            raw = self.mapping(item, f"{place}[{i}]", CLAIM_KEYS, required=("supported",))
            text = raw.get("claim")
            claims.append(Claim(
                "" if text is None else self.string(text, f"{place}[{i}].claim"),
                self.boolean(raw["supported"], f"{place}[{i}].supported"),
            ))
        return tuple(claims)

    def run_field(self, name: str, value: object, place: str) -> Any:
        """One run field, converted; ``None`` stays ``None``."""
        return None if value is None else self.convert(RUN[name], value, place)

    def _ranked_id(self, item: object, place: str) -> str:
        """An id of a ranked list: the id, or the chunk a framework object stands for."""
        if isinstance(item, str):
            return self.string(item, place)
        found = self.frameworks.ranked_id(item, place)
        if found is not None:
            return found
        if _is_plain_data(item):  # a typo'd id, not an unknown object: the usual message
            self.string(item, place)
        self.fail(place, f"expected a chunk id or a chunk object (a LangChain or Haystack "
                         f"Document, a LlamaIndex node, an (object, score) pair), got "
                         f"{describe_value(item)}")

    def run_entry(self, value: object, place: str) -> RunEntry:
        if value is None:
            return RunEntry()
        raw = self.mapping(value, place, RUN_KEYS)
        return RunEntry(**{name: self.run_field(name, item, _join(place, name, dot=True))
                           for name, item in raw.items()})

    def run_section(self, value: object, query_ids: Iterable[str], place: str = "run"
                    ) -> dict[str, RunEntry]:
        known = set(query_ids)
        plain = plain_run(value, known, lambda name, item: self.run_field(name, item, name))
        if plain is not None:  # every entry plain and valid, checked column by column
            return plain
        raw = self.mapping(value, place)
        run: dict[str, RunEntry] = {}
        for query_id, entry in raw.items():
            if query_id not in known:
                self.fail(_join(place, query_id), f"query {query_id!r} is not in 'queries'")
            if entry is not None:  # a null entry is the same as an absent one
                run[query_id] = self.run_entry(entry, _join(place, query_id))
        return run

    def expected(self, value: object, place: str = "expected"
                 ) -> dict[str, dict[str, float | None]]:
        raw = self.mapping(value, place, STAGES)
        result: dict[str, dict[str, float | None]] = {}
        for stage, values in raw.items():
            keys = [name.split(".", 1)[1] for name in REGISTRY if name.startswith(stage + ".")]
            section = self.mapping(values, f"{place}.{stage}", keys)
            result[stage] = {key: None if item is None
                             else float(self.number(item, f"{place}.{stage}.{key}"))
                             for key, item in section.items()}
        return result


#: The converter of each kind of field (:data:`pytest_rag.dataset.fields.Kind`).
_CONVERTERS: Final[dict[str, Callable[[FormatRules, Any, str], Any]]] = {
    "id": FormatRules.identifier, "text": FormatRules.string, "boolean": FormatRules.boolean,
    "grades": FormatRules.relevant, "evidence": FormatRules.evidence,
    "answers": FormatRules.answers, "strings": FormatRules.strings, "ids": FormatRules.ids,
    "ranked_ids": FormatRules.ids, "claims": FormatRules.claims,
    "vector": lambda rules, value, place: rules.matrix(value, place, rows=False),
    "number": lambda rules, value, place: rules.number(value, place, 0),
}


def validate_vector_dimensions(parser: FormatRules, dataset_vectors: Vectors | None,
                               run: Mapping[str, RunEntry],
                               place_of: Callable[[str], str] | None = None) -> None:
    """Query vectors must have the chunk vectors' dimension."""
    if dataset_vectors is None or dataset_vectors.chunk_matrix is None:
        return
    dim = dataset_vectors.chunk_matrix.shape[1]
    for query_id, entry in run.items():
        vector = entry.query_vector
        if vector is not None and vector.shape[0] != dim:
            place = (place_of(query_id) if place_of is not None
                     else _join(_join("run", query_id), "query_vector", dot=True))
            parser.fail(place,
                        f"has {vector.shape[0]} dimensions, the chunk vectors have {dim}")


def parse_dataset(raw: object, *, source: str = "<arguments>", base_dir: Path | None = None,
                  allow_outside_paths: bool = False, objects: bool = False,
                  doc_id_key: str | None = None) -> Dataset:
    """Validate a decoded file (a mapping in version 1 of the format) into a :class:`Dataset`.

    ``None`` (an empty YAML file) is an empty dataset.  A section that is
    ``null`` is the same as an absent one.  With ``objects=True`` (data built
    in Python), ``chunks`` and ``expected_chunks`` may also hold the chunk
    objects of LangChain, LlamaIndex or Haystack and plain strings, and the
    run's ranked lists those objects (:mod:`pytest_rag.dataset.frameworks`;
    ``doc_id_key`` names the metadata key that holds a chunk's document); by
    default the data is read as a file's, exactly as :func:`load_dataset` reads it.

    Raises
    ------
    DatasetError
        For the first rule the data breaks, naming ``source`` and the place.
    """
    parser = FormatRules(source, base_dir, allow_outside_paths=allow_outside_paths,
                    objects=objects, doc_id_key=doc_id_key)
    data = parser.mapping(raw, "", TOP_KEYS) if raw is not None else {}

    def section(name: str, parse: Callable[[Any], Any], default: Any) -> Any:
        value = data.get(name)
        return default if value is None else parse(value)

    format_id = data.get("format")
    if format_id is not None and not (isinstance(format_id, str) and format_id == FORMAT_ID):
        parser.fail("format", f"expected {FORMAT_ID!r}, got {describe_value(format_id)}")
    params = section("params", parser.params, Params())
    documents = section("documents", parser.documents_section, ())
    chunks = section("chunks", lambda v: parser.chunks_section(v, "chunks", ids_required=True), ())
    if chunks:
        parser.use_chunks(chunks)
    expected_chunks = section("expected_chunks", lambda v: parser.chunks_section(
        v, "expected_chunks", ids_required=False), ())
    expected_metadata = section("expected_metadata", parser.expected_metadata, None)
    vectors = section("vectors", parser.vectors, None)
    queries = section("queries", parser.queries_section, ())
    run = section("run", lambda v: parser.run_section(v, [query.id for query in queries]), {})
    validate_vector_dimensions(parser, vectors, run)
    expected = section("expected", parser.expected, None)
    chunks = parser.with_discovered(chunks)
    return Dataset(source, params, documents, chunks, expected_chunks, expected_metadata,
                   vectors, queries, run, expected)
