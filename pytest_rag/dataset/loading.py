"""Reading a dataset file: size and type checks, UTF-8, JSON or safe YAML, then the format's rules.

:func:`load_dataset` decodes a YAML or JSON file and hands the mapping to
:func:`~pytest_rag.dataset.parser.parse_dataset`; every problem is one
:class:`~pytest_rag.errors.DatasetError` naming the file and the place.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DatasetError, similar_file
from ..text.locate import line_column
from .gc_pause import collector_paused
from .json_text import big_integer_place, lone_surrogate_place
from .model import Dataset
from .parser import parse_dataset

__all__ = ["load_dataset", "with_run"]


class _DuplicateKey(Exception):
    pass


def _json_duplicate_place(text: str) -> tuple[str, str] | None:
    """Where the first duplicate key of a JSON text is: ``(key, "line L, column C")``.

    Only called once a duplicate is known: it re-reads the text with the pure
    Python scanner, which lets each object's start be seen.
    """
    import json.decoder
    import json.scanner

    # Private helpers of the json package that typeshed does not declare.
    json_decoder: Any = json.decoder
    json_scanner: Any = json.scanner
    whitespace = json_decoder.WHITESPACE.match
    found: list[tuple[str, str]] = []

    def keys_of(s: str, start: int) -> Iterable[tuple[str, int]]:
        pos = whitespace(s, start + 1).end()
        while s[pos] != "}":
            key, after = json_decoder.scanstring(s, pos + 1)
            yield key, pos
            pos = whitespace(s, whitespace(s, after).end() + 1).end()   # past ':'
            pos = whitespace(s, scan_once(s, pos)[1]).end()
            if s[pos] == ",":
                pos = whitespace(s, pos + 1).end()

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan: Any, object_hook: Any,
                     object_pairs_hook: Any, memo: Any = None) -> tuple[Any, int]:
        s, end = s_and_end
        pairs, new_end = json_decoder.JSONObject(s_and_end, strict, scan, None, list, memo)
        if len({key for key, _ in pairs}) != len(pairs):
            seen: set[str] = set()
            for key, pos in keys_of(s, end - 1):
                if key in seen:
                    found.append((key, line_column(s, pos)))
                    raise _DuplicateKey
                seen.add(key)
        return dict(pairs), new_end

    decoder: Any = json.JSONDecoder()
    decoder.parse_object = parse_object
    decoder.scan_once = scan_once = json_scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except (_DuplicateKey, ValueError, RecursionError):
        pass
    return found[0] if found else None


def _decode(path: Path, text: str) -> object:
    source = str(path)
    if path.suffix.lower() != ".json":
        from .safe_yaml import load_yaml

        return load_yaml(text, source)

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            raise _DuplicateKey
        return result

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as error:
        raise DatasetError(source, f"line {error.lineno}, column {error.colno}",
                           f"invalid JSON: {error.msg}") from None
    except _DuplicateKey:
        where = _json_duplicate_place(text)
        if where is None:  # pragma: no cover - the slow scanner finds what the fast one did
            raise DatasetError(source, "", "invalid JSON: an object has a duplicate key") from None
        raise DatasetError(source, where[1], f"invalid JSON: duplicate key {where[0]!r}") from None
    except RecursionError:
        raise DatasetError(source, "", "invalid JSON: nested too deeply") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        big = big_integer_place(text)
        if big is not None:
            raise DatasetError(source, big[1], f"invalid JSON: an integer of {big[0]} digits, "
                                               "more than Python converts") from None
        raise DatasetError(source, "", f"invalid JSON: {error}") from None
    place = lone_surrogate_place(text)
    if place is not None:
        raise DatasetError(source, place, "invalid JSON: a lone surrogate escape, which is not "
                                          "text and cannot be written as UTF-8") from None
    return data


def load_dataset(path: str | os.PathLike[str], *, run: str | os.PathLike[str] | None = None,
                 allow_outside_paths: bool = False, split: str = "test") -> Dataset:
    """Read a gold dataset (and optional run) from a file or folder.

    ``.yaml``/``.yml`` files are read as YAML, ``.json`` as JSON, both UTF-8 (a
    byte order mark is ignored).  ``path:`` documents are read relative to the
    file's folder and must lie inside it unless ``allow_outside_paths`` is
    true.  YAML is read with a safe loader: no tag constructs an object.  An
    empty YAML file is an empty dataset.  Files of other tools are read as
    they are (:mod:`pytest_rag.dataset.sources`): a BEIR folder (the queries
    of ``split``), a ragas ``.jsonl`` or ``.csv`` file, TREC qrels.

    ``run`` names a run file that replaces the dataset's run: a pytest-rag
    ``run`` section on its own (``.json``/``.yaml``, the bare mapping of query
    id to entry or one under ``run:``) or a TREC run file; errors in it name
    it.

    Raises
    ------
    DatasetError
        For a missing, unreadable or invalid file, naming the file and the place.
    """
    from .sources import KINDS_TEXT, read_source, source_kind
    from .sources.lines import read_dataset_text

    file = Path(path)
    source = str(path)
    try:
        file.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise DatasetError(source, "", "file not found" + similar_file(file, source)) from None
    except (OSError, ValueError) as error:
        raise DatasetError(source, "", f"cannot read: {getattr(error, 'strerror', None) or error}"
                           ) from None
    kind = source_kind(file)
    if kind is None:
        raise DatasetError(source, "", f"unknown file type {file.suffix or '(no extension)'!r}: "
                                       f"expected {KINDS_TEXT}")
    # Decoding and parsing make millions of tracked objects (lists, dicts, ids,
    # records) and no reference cycle: with the collector on, its repeated
    # full collections walk all of them (a quarter of decoding a large run).
    with collector_paused():
        raw = (_decode(file, read_dataset_text(file)) if kind == "format"
               else read_source(file, split=split, allow_outside_paths=allow_outside_paths))
        try:
            dataset = parse_dataset(raw, source=source,
                                    base_dir=file if kind == "beir" else file.parent,
                                    allow_outside_paths=allow_outside_paths)
        except DatasetError as error:
            if kind != "format" or error.source != source:
                raise
            from .places import located  # the text again, only now: the line and the id

            raise located(error, raw, read_dataset_text(file)) from None
        return dataset if run is None else with_run(dataset, Path(run))


def with_run(dataset: Dataset, path: Path) -> Dataset:
    """``dataset`` with its run replaced by the run file ``path`` (see :func:`load_dataset`).

    Topics of a TREC run that the dataset has no query for are left out, as
    trec_eval leaves them out; in a pytest-rag run file they are an error.
    """
    import dataclasses

    from .parser import Parser, check_vector_dimensions
    from .sources import FORMAT_SUFFIXES, trec_run
    from .sources.lines import read_dataset_text

    source = str(path)
    known = [query.id for query in dataset.queries]
    place = ""
    if path.suffix.lower() in FORMAT_SUFFIXES:
        section = _decode(path, read_dataset_text(path))
        # Wrapped: only "run" (and "format") at the top; else the bare section, whose
        # keys are query ids (one may be "run").
        if isinstance(section, dict) and "run" in section and set(section) <= {"run", "format"}:
            place, section = "run", section["run"]
    else:
        wanted = set(known)
        section = {topic: {"retrieved_ids": docs} for topic, docs in trec_run(path).items()
                   if topic in wanted}
    parser = Parser(source)
    run = parser.run_section({} if section is None else section, known, place)
    check_vector_dimensions(parser, dataset.vectors, run)
    return dataclasses.replace(dataset, run=run, run_source=(source, place))
