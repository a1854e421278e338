"""Reading LangChain, LlamaIndex and Haystack chunk objects (and plain strings) as chunks.

Objects are recognised by their attributes, never by importing a framework:

==================  ========================  ===========================  ======================
object              text                      offsets                      parent document
==================  ========================  ===========================  ======================
LlamaIndex node     ``get_content()``         ``start_char_idx``,          ``ref_doc_id``
                                              ``end_char_idx``
``NodeWithScore``   its ``node``'s, as above
LangChain Document  ``page_content``          ``metadata["start_index"]``  (metadata, below)
Haystack Document   ``content``               ``meta["split_idx_start"]``  ``meta["source_id"]``
==================  ========================  ===========================  ======================

The parent document: the framework's own parent id where it has one, then
the metadata keys ``doc_id``, ``source`` and ``file_path``, the first that
names a document; a ``doc_id_key`` setting names the one metadata key to use
instead.  Each value is matched against the documents' ids, then against the
file each document was read from (``path:``), then by file name where exactly
one document has that name.  With a single document and none of these, the
chunk is in that document.  Offsets are used when the
document's text between them is the chunk's text; otherwise (and without
offsets) the text is located as a chunk's ``text`` is.

A chunk's id is the framework's (``node_id``, ``id``) where it sets one, else
``"<doc_id>[<start>:<end>]"`` from its document and offsets.  In a ranked list
(``retrieved_ids=``, ...), an object, an ``(object, score)`` pair or a
``NodeWithScore`` stands for the chunk with its framework id, else for the
chunk with its document and offsets, so that a retriever's copy of a chunk
names the same chunk; failing both, it gets the id above.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import DatasetError
from ..escaping import quoted
from ..settings import validate_setting
from ..text.locate import locate
from .model import Chunk, Document

if TYPE_CHECKING:
    from ..text.occurrences import FirstOccurrences

__all__ = ["FrameworkReader", "Piece", "derived_id", "read_object", "validate_doc_id_key"]

#: Metadata keys that may name a chunk's document, after the framework's parent id.
DOC_ID_KEYS = ("doc_id", "source", "file_path")
#: Documents at least this long get an index of first occurrences for placing
#: objects by their text (shorter ones are scanned with ``str.find``).
_INDEXED_LENGTH = 1 << 14


@dataclass(frozen=True)
class Piece:
    """What a framework object says about its chunk, before it is placed in a document."""

    kind: str
    text: str
    id: str | None
    parent: tuple[str, object] | None
    start: int | None
    end: int | None
    metadata: Mapping[str, Any] | None


def _text_attribute(value: object, name: str) -> str | None:
    text = getattr(value, name, None)
    return text if isinstance(text, str) else None


def _metadata(value: object, name: str) -> Mapping[str, Any] | None:
    metadata = getattr(value, name, None)
    return metadata if isinstance(metadata, Mapping) else None


def _offset(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _id(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def read_object(value: object) -> Piece | None:
    """The :class:`Piece` of a framework chunk object, or ``None`` for anything else.

    Plain data (strings, mappings, sequences, numbers) is never an object here.
    """
    if isinstance(value, (str, bytes, Mapping, list, tuple, int, float, Chunk)) or value is None:
        return None
    node = getattr(value, "node", None)
    if node is not None and hasattr(value, "score"):  # LlamaIndex NodeWithScore
        return read_object(node)
    get_content = getattr(value, "get_content", None)
    if callable(get_content) and hasattr(value, "node_id"):  # LlamaIndex BaseNode / TextNode
        text = get_content()
        if not isinstance(text, str):
            return None
        parent = getattr(value, "ref_doc_id", None)
        return Piece("LlamaIndex node", text, _id(getattr(value, "node_id", None)),
                     None if parent is None else ("ref_doc_id", parent),
                     _offset(getattr(value, "start_char_idx", None)),
                     _offset(getattr(value, "end_char_idx", None)), _metadata(value, "metadata"))
    text = _text_attribute(value, "page_content")
    metadata = _metadata(value, "metadata")
    if text is not None and metadata is not None:  # LangChain Document
        start = _offset(metadata.get("start_index"))
        return Piece("LangChain Document", text, _id(getattr(value, "id", None)), None,
                     start, None if start is None else start + len(text), metadata)
    text = _text_attribute(value, "content")
    meta = _metadata(value, "meta")
    if text is not None and meta is not None:  # Haystack Document
        start = _offset(meta.get("split_idx_start"))
        parent = meta.get("source_id")
        return Piece("Haystack Document", text, _id(getattr(value, "id", None)),
                     None if parent is None else ('meta["source_id"]', parent),
                     start, None if start is None else start + len(text), meta)
    return None


def validate_doc_id_key(value: object) -> str | None:
    """Validate ``doc_id_key``: a metadata key (a non-empty string) or ``None``, by the
    one rule of the settings table (:mod:`pytest_rag.settings`)."""
    key: str | None = validate_setting("doc_id_key", value)
    return key


def derived_id(doc_id: str, start: int, end: int) -> str:
    """The id of a chunk whose framework set none: ``"faq[120:480]"``."""
    return f"{doc_id}[{start}:{end}]"


def _score_pair(value: object) -> object:
    """The object of an ``(object, score)`` pair, or ``value`` itself."""
    if (type(value) is tuple or type(value) is list) and len(value) == 2:
        first, score = value
        if isinstance(score, numbers.Real) and not isinstance(score, bool) and not isinstance(
                first, numbers.Number):
            return first
    return value


class FrameworkReader:
    """Places framework objects in the documents of a dataset being built.

    Parameters
    ----------
    documents:
        Document id to document; read when an object is placed, so that it may
        still be filled after the reader is made.
    fail:
        Raises the located error: ``fail(place, problem)``.
    doc_id_key:
        The metadata key naming a chunk's document, instead of the defaults.
    """

    def __init__(self, documents: Mapping[str, Document], fail: Callable[[str, str], NoReturn],
                 doc_id_key: str | None = None) -> None:
        self._documents = documents
        self._fail = fail
        self.doc_id_key = doc_id_key
        self._paths: dict[str, list[str]] | None = None
        self._names: dict[str, list[str]] | None = None
        self._span_ids: dict[tuple[str, int, int], str] | None = None
        self._chunk_ids: set[str] | None = None
        self._chunks: Sequence[Chunk] = ()
        #: Chunks of ranked-list objects that are not among the chunks, by id.
        self.discovered: dict[str, Chunk] = {}
        # A value's match, once per value: resolving a file path asks the file system.
        self._matches: dict[str, tuple[str | None, list[str]]] = {}
        self._occurrence_index: dict[str, FirstOccurrences] = {}

    def _occurrences(self, doc_id: str) -> FirstOccurrences:
        """The index of first occurrences of a document's text, made once."""
        index = self._occurrence_index.get(doc_id)
        if index is None:
            from ..text.occurrences import FirstOccurrences

            index = self._occurrence_index[doc_id] = FirstOccurrences(
                self._documents[doc_id].text)
        return index

    def use_chunks(self, chunks: Sequence[Chunk]) -> None:
        """The chunks that objects in ranked lists are matched against (indexed when
        the first object is)."""
        if chunks is not self._chunks:
            self._chunks = chunks
            self._span_ids = self._chunk_ids = None
            self.discovered = {}

    # -- documents ----------------------------------------------------------
    def _references(self, piece: Piece) -> list[tuple[str, object]]:
        """Where the piece may name its document, in the order they are tried."""
        metadata = piece.metadata or {}
        if self.doc_id_key is not None:
            keys: tuple[str, ...] = (self.doc_id_key,)
            found = []
        else:
            keys = DOC_ID_KEYS
            found = [piece.parent] if piece.parent is not None else []
        found += [(f"metadata[{key!r}]", metadata[key]) for key in keys
                  if metadata.get(key) is not None]
        return found

    def _path_maps(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        if self._paths is None or self._names is None:
            paths: dict[str, list[str]] = {}
            names: dict[str, list[str]] = {}
            for document in self._documents.values():
                if document.path is not None:
                    paths.setdefault(document.path, []).append(document.id)
                    names.setdefault(Path(document.path).name, []).append(document.id)
            self._paths, self._names = paths, names
        return self._paths, self._names

    def _match(self, value: str) -> tuple[str | None, list[str]]:
        """The document ``value`` names, or ``None`` and the ways that were tried."""
        if value in self._documents:
            return value, []
        if value not in self._matches:
            self._matches[value] = self._match_file(value)
        return self._matches[value]

    def _match_file(self, value: str) -> tuple[str | None, list[str]]:
        paths, names = self._path_maps()
        tried = ["as a document id"]
        if not paths:
            tried.append("as a file (no document was read from a file)")
            return None, tried
        try:
            resolved: str | None = str(Path(value).resolve())
        except (OSError, ValueError, RuntimeError):
            resolved = None
        found = paths.get(resolved, []) if resolved is not None else []
        if len(found) == 1:
            return found[0], []
        tried.append("as the file a document was read from ('path:')")
        found = names.get(Path(value).name, [])
        if len(found) == 1:
            return found[0], []
        tried.append("by file name" if not found else
                     f"by file name (ambiguous: documents {', '.join(map(repr, found))})")
        return None, tried

    def document_of(self, piece: Piece, place: str) -> str:
        """The id of the document ``piece`` belongs to (see the module's rules)."""
        references = self._references(piece)
        documents = self._documents
        if not references:
            if len(documents) == 1:
                return next(iter(documents))
            keys = (f"metadata[{self.doc_id_key!r}]" if self.doc_id_key is not None else
                    " or ".join(([piece.parent[0]] if piece.parent else [])
                                + [f"metadata[{key!r}]" for key in DOC_ID_KEYS]))
            self._fail(place, f"a {piece.kind} without {keys}: its document is not known "
                              f"(there are {len(documents)} documents; set doc_id_key to the "
                              "metadata key that names it)")
        failures = []
        for what, raw in references:
            value = os.fspath(raw) if isinstance(raw, os.PathLike) else raw
            if not isinstance(value, str):
                failures.append(f"{what} is {type(raw).__name__} {raw!r}, not a document id "
                                "or a file name")
                continue
            found, tried = self._match(value)
            if found is not None:
                return found
            failures.append(f"{what} {quoted(value)} matches no document (tried "
                            f"{', '.join(tried)})")
        self._fail(place, f"the {piece.kind}'s document is not known: {'; '.join(failures)}; "
                          f"{self._known()}{self._hint(piece)}")

    def _known(self) -> str:
        ids = list(self._documents)
        if not ids:
            return "there are no documents"
        return ("known documents: " + ", ".join(map(repr, ids[:5]))
                + (", ..." if len(ids) > 5 else ""))

    def _hint(self, piece: Piece) -> str:
        """A ``doc_id_key`` that would work, when a metadata key holds a document id."""
        for key, value in (piece.metadata or {}).items():
            if isinstance(value, str) and value in self._documents and key != self.doc_id_key:
                return f" (metadata[{key!r}] is a document id: set doc_id_key={key!r})"
        return ""

    # -- chunks -------------------------------------------------------------
    def span(self, piece: Piece, doc_id: str, place: str, search_from: int = 0
             ) -> tuple[int, int]:
        """The chunk's ``[start, end)`` in its document: the framework's offsets when
        the text between them is the chunk's text, else where the text is located."""
        text = self._documents[doc_id].text
        start, end = piece.start, piece.end
        if (start is not None and end is not None and 0 <= start <= end <= len(text)
                and text[start:end] == piece.text):
            return start, end
        if not piece.text:
            self._fail(place, f"an empty {piece.kind} cannot be located in document {doc_id!r}")
        found = None
        if not search_from and len(text) >= _INDEXED_LENGTH:
            # The first exact occurrence, from an index of the document made once:
            # text.find over a long document for every object is quadratic.
            position = self._occurrences(doc_id).find(piece.text)
            if position >= 0:
                found = position, position + len(piece.text)
        if found is None:
            found = locate(text, piece.text, search_from)
        if found is None and search_from:
            found = locate(text, piece.text)
        if found is None:
            shown = piece.text if len(piece.text) <= 40 else piece.text[:37] + "..."
            self._fail(place, f"the {piece.kind}'s text {shown!r} is not in document {doc_id!r}")
        return found

    def chunk(self, item: object, place: str, search_from: Mapping[str, int]) -> Chunk | None:
        """The chunk of a framework object or a plain string (its text), or ``None`` for
        anything else (a mapping or a :class:`Chunk` is the parser's)."""
        if isinstance(item, str):
            if not item:
                self._fail(place, "an empty string cannot be located; give a mapping with "
                                  "'start' and 'end'")
            piece = Piece("string", item, None, None, None, None, None)
            doc_id = self._document_holding(item, place, search_from)
        else:
            read = read_object(item)
            if read is None:
                return None
            piece = read
            doc_id = self.document_of(piece, place)
        start, end = self.span(piece, doc_id, place, search_from.get(doc_id, 0))
        metadata = dict(piece.metadata) if piece.metadata else None
        return Chunk(piece.id or derived_id(doc_id, start, end), doc_id, start, end, metadata)

    def _document_holding(self, text: str, place: str, search_from: Mapping[str, int]) -> str:
        for doc_id, document in self._documents.items():
            if locate(document.text, text, search_from.get(doc_id, 0)) is not None:
                return doc_id
        shown = text if len(text) <= 40 else text[:37] + "..."
        self._fail(place, f"the string {shown!r} is in no document ({self._known()})")

    def ranked_id(self, item: object, place: str) -> str | None:
        """The chunk id an entry of a ranked list stands for (see the module's rules), or
        ``None`` when the entry is neither an id, a chunk object nor such a pair.

        An object whose chunk is not among the chunks adds it to :attr:`discovered`.
        """
        value = _score_pair(item)
        if isinstance(value, str):
            return value
        piece = read_object(value)
        if piece is None:
            return None
        chunk_ids, span_ids = self._indexes()
        if piece.id is not None and (piece.id in chunk_ids or not self._documents):
            return piece.id
        try:
            doc_id = self.document_of(piece, place)
        except DatasetError:
            if piece.id is not None:  # an id the gold may know (``relevant``), without a span
                return piece.id
            raise
        start, end = self.span(piece, doc_id, place)
        known = span_ids.get((doc_id, start, end))
        if known is not None:
            return known
        chunk = Chunk(piece.id or derived_id(doc_id, start, end), doc_id, start, end,
                      dict(piece.metadata) if piece.metadata else None)
        self.discovered[chunk.id or ""] = chunk
        chunk_ids.add(chunk.id or "")
        span_ids[(doc_id, start, end)] = chunk.id or ""
        return chunk.id

    def _indexes(self) -> tuple[set[str], dict[tuple[str, int, int], str]]:
        """The ids of the known chunks, and the id of each span (the first chunk's)."""
        if self._chunk_ids is None or self._span_ids is None:
            self._chunk_ids = {chunk.id for chunk in self._chunks if chunk.id is not None}
            self._span_ids = {}
            for chunk in reversed(self._chunks):
                if chunk.id is not None:
                    self._span_ids[(chunk.doc_id, chunk.start, chunk.end)] = chunk.id
        return self._chunk_ids, self._span_ids
