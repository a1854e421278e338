"""The rules of the dataset format, version 1, for decoded data: :class:`Parser` and :func:`parse_dataset`.

:func:`parse_dataset` checks an already decoded mapping (a file is read by
:func:`pytest_rag.dataset.loading.load_dataset`).  Every rule of the format is enforced and each
violation raises one :class:`~pytest_rag.errors.DatasetError` naming the file
and the place (``queries[3].expected_evidence[0].end``).  The piecewise
parsers of :class:`Parser` are shared with the evaluators' keyword arguments,
so data passed in Python is checked by exactly the same rules.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import numbers
import operator
import reprlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, SupportsInt, cast

from ..errors import DatasetError, did_you_mean, similar_file
from ..registry import REGISTRY, STAGES
from ..text.locate import locate, nearest_text
from .bounded_read import UNREADABLE, NotARegularFile, read_text
from .columns import QUERY_FIELDS, plain_queries, plain_run
from .frameworks import FrameworkReader
from .model import (
    Chunk, ChunkTable, Claim, Dataset, Document, EvidenceSpan, Params, Query, RunEntry, Vectors,
    field_defaults,
)

__all__ = ["FORMAT_ID", "MAX_FILE_BYTES", "MAX_JSON_BYTES", "MAX_YAML_BYTES", "Parser",
           "dataset_limit", "parse_dataset"]

FORMAT_ID = "pytest-rag/v1"

TOP_KEYS = ("format", "params", "documents", "chunks", "expected_chunks",
            "expected_metadata", "vectors", "queries", "run", "expected")
PARAM_KEYS = ("k", "size_limits", "boundary_tolerance", "required_metadata",
              "max_context_tokens", "abstain_phrases", "relevance_from_evidence")
DOCUMENT_KEYS = ("id", "text", "path", "metadata")
CHUNK_KEYS = ("id", "doc_id", "start", "end", "text", "metadata")
VECTOR_KEYS = ("chunks", "sentences", "indexed_ids")
QUERY_KEYS = ("id", "question", "relevant", "expected_evidence", "reference_answer",
              "required_facts", "expected_citations", "answerable")
EVIDENCE_KEYS = ("doc_id", "start", "end", "quote")
RUN_KEYS = ("retrieved_ids", "reranked_ids", "context_ids", "answer", "cited_ids",
            "abstained", "verified_claims", "task_success", "query_vector", "ann_ids",
            "retrieval_latency_ms", "generation_latency_ms", "latency_ms", "cost_usd",
            "total_tokens")
ID_LIST_FIELDS = ("retrieved_ids", "reranked_ids", "context_ids", "cited_ids", "ann_ids")
#: The ranked chunk lists, whose entries may also be chunk objects of a framework.
RANKED_FIELDS = ("retrieved_ids", "reranked_ids", "context_ids")
NUMBER_FIELDS = ("retrieval_latency_ms", "generation_latency_ms", "latency_ms",
                 "cost_usd", "total_tokens")
CLAIM_KEYS = ("claim", "supported")

#: The largest relevance grade: its nDCG gain 2**grade - 1 must stay a finite float
#: even summed over a long list.
MAX_GRADE = 100
#: Files larger than this are refused rather than read into memory (``path:``
#: documents, baselines, reports).
MAX_FILE_BYTES = 512 * 1024 * 1024
#: Dataset files are held to less: loading takes about 10 bytes of memory per
#: byte of JSON (JSON Lines, CSV, TREC lines alike) and about 82 per byte of
#: YAML (measured), so any accepted dataset file loads within about 1.7 GiB.
MAX_JSON_BYTES = 160 * 1024 * 1024
MAX_YAML_BYTES = 20 * 1024 * 1024
#: The deepest nesting of mappings and lists a free-form value (metadata) may
#: have; deeper values would exhaust Python's recursion in comparisons.
MAX_NESTING = 100


#: Bytes of memory per byte of file while a dataset loads, measured (README "Reliability").
MEMORY_PER_BYTE = {"JSON": 10, "YAML": 82}


def dataset_kind(path: Path) -> str:
    """``"YAML"`` for ``.yaml``/``.yml``, else ``"JSON"`` (JSON Lines, CSV and TREC lines
    load like JSON)."""
    return "YAML" if path.suffix.lower() in (".yaml", ".yml") else "JSON"


def dataset_limit(path: Path) -> int:
    """The size limit of a dataset file (:data:`MAX_YAML_BYTES`, :data:`MAX_JSON_BYTES`)."""
    return MAX_YAML_BYTES if dataset_kind(path) == "YAML" else MAX_JSON_BYTES


_STR: Final = frozenset({str})
_INT: Final = frozenset({int})
_PLAIN_CHUNK_KEYS: Final = ("id", "doc_id", "start", "end")
#: What a query field is when its file key is absent or null.
_QUERY_DEFAULTS: Final = field_defaults(Query)
_plain_chunk_columns: Final = tuple(map(operator.itemgetter, _PLAIN_CHUNK_KEYS))
_plain_span_fields: Final = operator.itemgetter("doc_id", "start", "end")


def _only(items: Iterable[object], types: frozenset[type]) -> bool:
    """Whether every item's exact type is in ``types`` (one C-level pass, no per-item call)."""
    return set(map(type, items)) <= types


def _is_bool(value: object) -> bool:
    """``True`` for a boolean, also numpy's (which is not a number here)."""
    if isinstance(value, bool):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def _is_plain_data(value: object) -> bool:
    """What a JSON or YAML file can hold (and numbers of numpy): not an object of a library."""
    return value is None or isinstance(value, (str, bytes, numbers.Number, Mapping, list, tuple,
                                               set, frozenset, datetime.date))


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if _is_bool(value):
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (set, frozenset)):
        return "a set"
    if isinstance(value, datetime.datetime):
        return "a date and time"
    if isinstance(value, datetime.date):
        return "a date"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def _show(value: object) -> str:
    """A short, safe rendering of a value for a message (dates as in the file)."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, str):
        text = repr(value[:60])
    elif isinstance(value, numbers.Number) and hasattr(value, "item"):
        text = repr(value.item())  # a numpy scalar, shown as the plain number
    else:
        try:
            text = _REPR.repr(value)
        except Exception:  # a foreign object whose repr fails
            text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def describe_value(value: object) -> str:
    """``a number 7``, ``a string 'x'``, ``null``: what arrived, for a message."""
    if value is None:
        return "null"
    return f"{_type_name(value)} {_show(value)}"


class Parser:
    """Validating converters from decoded data to :mod:`pytest_rag.dataset.model` objects.

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

    # -- primitives ---------------------------------------------------------
    def fail(self, place: str, problem: str) -> NoReturn:
        raise DatasetError(self.source, place, problem)

    def free_form(self, value: Mapping[str, Any], place: str) -> dict[str, Any]:
        """A metadata mapping, refused when nested deeper than :data:`MAX_NESTING`."""
        path = _too_deep(value, MAX_NESTING)
        if path is not None:
            self.fail(place + path, f"nested deeper than {MAX_NESTING} levels")
        return dict(value)

    def mapping(self, value: object, place: str, allowed: Sequence[str] | None = None,
                required: Sequence[str] = ()) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(place, f"expected a mapping, got {describe_value(value)}")
        for key in () if allowed is None and _only(value, _STR) else value:
            if not isinstance(key, str):
                self.fail(place, f"keys must be strings, got {describe_value(key)}")
            if allowed is not None and key not in allowed:
                self.fail(_join(place, key), f"unknown key{did_you_mean(key, allowed)}")
        for key in required:
            if value.get(key) is None:
                self.fail(place, f"missing required key {key!r}")
        return value

    def sequence(self, value: object, place: str) -> Sequence[Any]:
        if type(value) is list or type(value) is tuple:  # the common case, without ABC checks
            return value
        if (isinstance(value, (str, bytes, bytearray, Mapping, set, frozenset))
                or not isinstance(value, Iterable) or getattr(value, "ndim", None) == 0):
            self.fail(place, f"expected a list, got {describe_value(value)}")
        return value if isinstance(value, Sequence) else list(value)

    def string(self, value: object, place: str) -> str:
        if not isinstance(value, str):
            self.fail(place, f"expected a string, got {describe_value(value)}")
        return str(value)

    def identifier(self, value: object, place: str) -> str:
        text = self.string(value, place)
        if not text:
            self.fail(place, "an id must not be empty")
        return text

    def strings(self, value: object, place: str) -> tuple[str, ...]:
        items = self.sequence(value, place)
        if _only(items, _STR):  # str(item) is the item itself
            return tuple(items)
        return tuple(self.string(item, f"{place}[{i}]") for i, item in enumerate(items))

    def ids(self, value: object, place: str) -> tuple[str, ...]:
        items = self.sequence(value, place)
        if _only(items, _STR):  # checked in C; anything else gets the itemised message
            return tuple(items)
        return self.strings(items, place)

    def boolean(self, value: object, place: str) -> bool:
        if not _is_bool(value):
            self.fail(place, f"expected true or false, got {describe_value(value)}")
        return bool(value)

    def integer(self, value: object, place: str, minimum: int | None = None) -> int:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            self.fail(place, f"expected a whole number, got {describe_value(value)}")
        if isinstance(value, numbers.Integral):
            number = int(value)
        else:
            try:
                whole = float(value).is_integer()
            except OverflowError:
                whole = False
            if not whole:
                self.fail(place, f"expected a whole number, got {describe_value(value)}")
            number = int(cast(SupportsInt, value))
        if minimum is not None and number < minimum:
            self.fail(place, f"must be >= {minimum}, got {number}")
        return number

    def number(self, value: object, place: str, minimum: float | None = None) -> float:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            self.fail(place, f"expected a number, got {describe_value(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if cast(float, value) > 0 else -math.inf
        if not math.isfinite(number):
            self.fail(place, f"must be a finite number, got {_show(value)}")
        if minimum is not None and number < minimum:
            self.fail(place, f"must be >= {minimum:g}, got {number:g}")
        return number

    def matrix(self, value: object, place: str, *, rows: bool) -> Any:
        """A finite float64 vector (``rows=False``) or matrix of row vectors.

        A float32 array of row vectors is kept as it is, without a float64
        copy: the stages read it a block at a time and compute in float64.
        """
        import numpy as np

        if isinstance(value, np.ndarray):
            array = value
            if array.dtype.kind not in "iuf":
                self.fail(place, f"expected numbers, got an array of {array.dtype}")
            want = 2 if rows else 1
            if rows and array.ndim == 1 and array.shape[0] == 0:
                array = array.reshape(0, 0)
            if array.ndim != want:
                self.fail(place, f"expected a {'list of vectors' if rows else 'vector'}, "
                                 f"got an array of {array.ndim} dimensions")
            if array.shape[-1] == 0 and not (rows and array.shape[0] == 0):
                self.fail(place, "a vector must have at least one dimension")
            if not (rows and array.dtype == np.float32):
                array = np.asarray(array, dtype=np.float64)
            # The row sums first, one BLAS product with a vector of ones at
            # memory speed: a NaN or an infinity makes its row's sum
            # non-finite.  Only then (or when finite values overflow a sum) is
            # every value checked, which also finds the first bad one.
            with np.errstate(over="ignore", invalid="ignore"):
                sums = array @ np.ones(array.shape[-1], dtype=array.dtype)
            if not np.isfinite(sums).all() and not np.isfinite(array).all():
                bad = np.argwhere(~np.isfinite(array))[0]
                where = "".join(f"[{int(i)}]" for i in bad)
                self.fail(f"{place}{where}",
                          f"must be a finite number, got {_show(float(array[tuple(bad)]))}")
            return array
        if rows:
            matrix = [self._vector_items(row, f"{place}[{i}]")
                      for i, row in enumerate(self.sequence(value, place))]
            if not matrix:
                return np.zeros((0, 0), dtype=np.float64)
            first = len(matrix[0])
            for i, row in enumerate(matrix):
                if len(row) != first:
                    self.fail(f"{place}[{i}]", f"has {len(row)} dimensions, "
                                               f"{place}[0] has {first}")
            return np.asarray(matrix, dtype=np.float64)
        return np.asarray(self._vector_items(value, place), dtype=np.float64)

    def _vector_items(self, value: object, place: str) -> list[float]:
        items = self.sequence(value, place)
        if not items:
            self.fail(place, "a vector must have at least one dimension")
        return [self.number(item, f"{place}[{j}]") for j, item in enumerate(items)]

    # -- sections -----------------------------------------------------------
    def params(self, value: object, place: str = "params") -> Params:
        raw = self.mapping(value, place, PARAM_KEYS)
        get = raw.get
        size_limits = None
        if get("size_limits") is not None:
            pair = self.sequence(raw["size_limits"], f"{place}.size_limits")
            if len(pair) != 2:
                self.fail(f"{place}.size_limits", f"expected [min, max], got {_show(pair)}")
            low = self.integer(pair[0], f"{place}.size_limits[0]", 0)
            high = self.integer(pair[1], f"{place}.size_limits[1]", 0)
            if low > high:
                self.fail(f"{place}.size_limits", f"min {low} is greater than max {high}")
            size_limits = (low, high)
        return Params(
            k=None if get("k") is None else self.integer(raw["k"], f"{place}.k", 1),
            size_limits=size_limits,
            boundary_tolerance=None if get("boundary_tolerance") is None else self.integer(
                raw["boundary_tolerance"], f"{place}.boundary_tolerance", 0),
            required_metadata=None if get("required_metadata") is None else self.strings(
                raw["required_metadata"], f"{place}.required_metadata"),
            max_context_tokens=None if get("max_context_tokens") is None else self.integer(
                raw["max_context_tokens"], f"{place}.max_context_tokens", 0),
            abstain_phrases=None if get("abstain_phrases") is None else self.strings(
                raw["abstain_phrases"], f"{place}.abstain_phrases"),
            relevance_from_evidence=None if get("relevance_from_evidence") is None
            else self.boolean(raw["relevance_from_evidence"],
                              f"{place}.relevance_from_evidence"),
        )

    def documents_section(self, value: object, place: str = "documents") -> tuple[Document, ...]:
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
            path = (base / name).resolve()
        except (OSError, ValueError, RuntimeError) as error:  # e.g. a symlink loop
            self.fail(place, f"cannot resolve document file {name!r}: {error}")
        if not self.allow_outside_paths:
            root = base.resolve()
            if path != root and root not in path.parents:
                self.fail(place, f"{name!r} is outside the dataset's folder {str(root)!r} "
                                 "(allow it with allow_outside_paths=True, --allow-outside-paths "
                                 "on the command line, or the ini option "
                                 "rag_allow_outside_paths)")
        try:
            # Bytes, then decode: no newline translation, offsets refer to the exact text.
            return read_text(path, MAX_FILE_BYTES), str(path)
        except NotARegularFile as error:
            if error.kind == "a directory":
                self.fail(place, f"document file {name!r} is a directory ({str(path)!r})")
            self.fail(place, f"document file {name!r} {error} ({str(path)!r})")
        except UNREADABLE as error:
            self.fail(place, f"document file {name!r} {error}")
        except (FileNotFoundError, NotADirectoryError):
            self.fail(place, f"document file {name!r} not found (looked at {str(path)!r})"
                             f"{similar_file(path, name)}")
        except OSError as error:
            self.fail(place, f"cannot read document file {name!r}: {error.strerror or error}")

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
        plain = self._plain_chunks(self.sequence(value, place))
        if plain is not None:
            return plain
        chunks: list[Chunk] = []
        seen: set[str] = set()
        search_from: dict[str, int] = {}
        for i, item in enumerate(self.sequence(value, place)):
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

    def _plain_chunks(self, items: Sequence[Any]) -> ChunkTable | None:
        """The chunks, checked column by column and kept as columns, when every
        item is a plain ``{"id", "doc_id", "start", "end"}`` dict that passes every rule.

        ``None`` otherwise: the item-by-item path then finds (and names) the
        first problem, so this changes no result and no message.
        """
        if (not items or set(map(type, items)) != {dict}
                or set(map(len, items)) != {len(_PLAIN_CHUNK_KEYS)}):
            return None
        try:
            ids, doc_ids, starts, ends = (tuple(map(column, items))
                                          for column in _plain_chunk_columns)
        except KeyError:
            return None
        if not (_only(ids, _STR) and _only(doc_ids, _STR) and _only(starts, _INT)
                and _only(ends, _INT) and all(ids)):
            return None
        index = dict(zip(ids, range(len(ids))))
        if len(index) != len(ids):
            return None
        import numpy as np

        count = len(ids)
        try:  # every doc_id is a str, so only an unknown one fails
            limits = np.fromiter(map(self._document_lengths().__getitem__, doc_ids),
                                 dtype=np.int64, count=count)
        except KeyError:
            return None
        try:
            low = np.fromiter(starts, dtype=np.int64, count=count)
            high = np.fromiter(ends, dtype=np.int64, count=count)
        except OverflowError:
            return None
        if not ((low >= 0) & (low <= high) & (high <= limits)).all():
            return None
        return ChunkTable.of(ids, doc_ids, starts, ends, index)

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
        stacked = _stack_vectors(list(raw.values()))
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
        plain = self._plain_spans(items)
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

    def _plain_spans(self, items: Sequence[Any]) -> tuple[EvidenceSpan, ...] | None:
        """The spans when every item is a plain ``{"doc_id", "start", "end"}`` dict
        that passes every rule; ``None`` otherwise (then the item-by-item path
        finds and names the first problem)."""
        lengths = self._document_lengths()
        spans: dict[EvidenceSpan, None] = {}
        for item in items:
            if type(item) is not dict or len(item) != 3:
                return None
            try:
                doc_id, start, end = _plain_span_fields(item)
            except KeyError:
                return None
            if (type(doc_id) is not str or type(start) is not int or type(end) is not int
                    or not 0 <= start <= end <= lengths.get(doc_id, -1)):
                return None
            spans[EvidenceSpan(doc_id, start, end)] = None
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
        for key, attribute in QUERY_FIELDS.items():  # in file order: the first problem is named
            if key != "id":
                item = raw.get(key)
                fields[attribute] = (_QUERY_DEFAULTS[attribute] if item is None
                                     else self._query_field(key, item, f"{place}.{key}"))
        return Query(**fields)

    def queries_section(self, value: object, place: str = "queries") -> tuple[Query, ...]:
        plain = plain_queries(value, self._query_field, MAX_GRADE)
        if plain is not None:  # every query plain and valid, checked column by column
            return plain
        queries: list[Query] = []
        seen: set[str] = set()
        for i, item in enumerate(self.sequence(value, place)):
            query = self.query(item, f"{place}[{i}]")
            if query.id in seen:
                self.fail(f"{place}[{i}].id", f"duplicate query id {query.id!r}")
            seen.add(query.id)
            queries.append(query)
        return tuple(queries)

    def _query_field(self, key: str, value: object, place: str | None = None) -> Any:
        """One query field (not ``None``) by its file key, converted, its errors at
        ``place`` (the key itself for the column-by-column path, which shows no place:
        a problem sends it through :meth:`query` again)."""
        where = key if place is None else place
        if key == "relevant":
            return self.relevant(value, where)
        if key == "expected_evidence":
            return self.evidence(value, where)
        if key == "reference_answer":
            return self.answers(value, where)
        if key in ("required_facts", "expected_citations"):
            return self.strings(value, where)
        if key == "question":
            return self.string(value, where)
        if key == "answerable":
            return self.boolean(value, where)
        raise AssertionError(key)  # pragma: no cover

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
        if value is None:
            return None
        if name in RANKED_FIELDS and self.objects:
            items = self.sequence(value, place)
            if _only(items, _STR):
                return tuple(items)
            return tuple(self._ranked_id(item, f"{place}[{i}]") for i, item in enumerate(items))
        if name in ID_LIST_FIELDS:
            return self.ids(value, place)
        if name in NUMBER_FIELDS:
            return self.number(value, place, 0)
        if name == "answer":
            return self.string(value, place)
        if name in ("abstained", "task_success"):
            return self.boolean(value, place)
        if name == "verified_claims":
            return self.claims(value, place)
        if name == "query_vector":
            return self.matrix(value, place, rows=False)
        raise AssertionError(name)  # pragma: no cover

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

    def expected(self, value: object, place: str = "expected") -> dict[str, dict[str, float | None]]:
        raw = self.mapping(value, place, STAGES)
        result: dict[str, dict[str, float | None]] = {}
        for stage, values in raw.items():
            keys = [name.split(".", 1)[1] for name in REGISTRY if name.startswith(stage + ".")]
            section = self.mapping(values, f"{place}.{stage}", keys)
            result[stage] = {key: None if item is None else float(self.number(item, f"{place}.{stage}.{key}"))
                             for key, item in section.items()}
        return result


def _stack_vectors(rows: list[Any]) -> Any:
    """Same-dtype float vectors (numpy arrays of one length) stacked into one
    matrix, when they are all finite; ``None`` for anything else, which then
    goes row by row through :meth:`Parser.matrix` and its messages.

    float32 rows stay float32, as a float32 matrix does in :meth:`Parser.matrix`.
    """
    import numpy as np

    if set(map(type, rows)) != {np.ndarray}:
        return None
    dtypes = set(map(operator.attrgetter("dtype"), rows))
    shapes = set(map(operator.attrgetter("shape"), rows))
    if len(dtypes) != 1 or len(shapes) != 1:
        return None
    dtype, shape = dtypes.pop(), shapes.pop()
    if dtype not in (np.float32, np.float64) or len(shape) != 1 or shape[0] == 0:
        return None
    matrix = np.stack(rows)
    return matrix if np.isfinite(matrix).all() else None


def _too_deep(value: object, limit: int) -> str | None:
    """Where a value nested deeper than ``limit`` levels of mappings and lists below
    ``value`` starts (its first step, ``.a`` or ``[0]``), or ``None``; iterative, so any
    depth is safe.  Only containers are visited: flat metadata costs one pass."""
    containers = (Mapping, list, tuple)
    if not isinstance(value, containers):
        return None
    if limit == 0:
        return ""
    pairs: Iterable[tuple[object, object]] = (
        value.items() if isinstance(value, Mapping) else enumerate(value))
    # (container, its depth, the root's key or index it is under)
    stack: list[tuple[Any, int, object]] = [
        (child, 1, key) for key, child in pairs if isinstance(child, containers)]
    while stack:
        item, depth, top = stack.pop()
        if depth == limit:
            return _step(value, top)
        children = item.values() if isinstance(item, Mapping) else item
        stack.extend((child, depth + 1, top) for child in children
                     if isinstance(child, containers))
    return None


def _step(root: object, key: object) -> str:
    """``.key``, ``['odd key']`` or ``[3]``: one step below ``root``."""
    if not isinstance(root, Mapping):
        return f"[{key}]"
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{key!r}]"


def _join(place: str, key: str, *, dot: bool = False) -> str:
    """``place.key`` for identifier-like keys, else ``place['key']``."""
    if dot or key.isidentifier():
        return f"{place}.{key}" if place else key
    return f"{place}[{key!r}]"


def check_vector_dimensions(parser: Parser, dataset_vectors: Vectors | None,
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
    """Validate a decoded file (a mapping in FORMAT v1) into a :class:`Dataset`.

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
    parser = Parser(source, base_dir, allow_outside_paths=allow_outside_paths,
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
    check_vector_dimensions(parser, vectors, run)
    expected = section("expected", parser.expected, None)
    chunks = parser.with_discovered(chunks)
    return Dataset(source, params, documents, chunks, expected_chunks, expected_metadata,
                   vectors, queries, run, expected)
