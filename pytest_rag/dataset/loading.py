"""Reading a dataset file: size and type checks, UTF-8, JSON or safe YAML, then the format's rules.

:func:`load_dataset` decodes a YAML or JSON file and hands the mapping to
:func:`~pytest_rag.dataset.parser.parse_dataset`; every problem is one
:class:`~pytest_rag.errors.DatasetError` naming the file and the place.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import DatasetError, similar_file
from ..escaping import quoted
from .bounded_read import InvalidJson, decode_json
from .caches import collector_paused
from .model import Dataset
from .parser import parse_dataset

__all__ = ["MAX_LOCATED_CHARACTERS", "load_dataset", "located", "with_run"]


def _decode(path: Path, text: str) -> object:
    source = str(path)
    if path.suffix.lower() != ".json":
        from .safe_yaml import load_yaml

        return load_yaml(text, source)
    try:
        return decode_json(text)
    except InvalidJson as error:
        raise DatasetError(source, error.place, f"invalid JSON: {error.problem}") from None


def load_dataset(path: str | os.PathLike[str], *, run: str | os.PathLike[str] | None = None,
                 allow_outside_paths: bool = False, split: str = "test",
                 relevance_level: int = 1) -> Dataset:
    """Read a gold dataset (and optional run) from a file or folder.

    ``.yaml``/``.yml`` files are read as YAML, ``.json`` as JSON, both UTF-8 (a
    byte order mark is ignored).  ``path:`` documents are read relative to the
    file's folder and must lie inside it unless ``allow_outside_paths`` is
    true.  YAML is read with a safe loader: no tag constructs an object.  An
    empty YAML file is an empty dataset.  Files of other tools are read as
    they are (:mod:`pytest_rag.dataset.sources`): a BEIR folder (the queries
    of ``split``), a ragas ``.jsonl`` or ``.csv`` file, TREC qrels (a document
    is relevant from grade ``relevance_level`` on, trec_eval's ``-l``; other
    files ignore it).

    ``run`` names a run file that replaces the dataset's run: a pytest-rag
    ``run`` section on its own (``.json``/``.yaml``, the bare mapping of query
    id to entry or one under ``run:``) or a TREC run file; errors in it name
    it.

    Raises
    ------
    DatasetError
        For a missing, unreadable or invalid file, naming the file and the place.
    """
    from ..settings import validate_setting
    from .sources import KINDS_TEXT, read_source, source_kind
    from .sources.lines import read_dataset_text

    validate_setting("relevance_level", relevance_level)
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
    # dataclasses) and no reference cycle: with the collector on, its repeated
    # full collections walk all of them (a quarter of decoding a large run).
    with collector_paused():
        raw = (_decode(file, read_dataset_text(file)) if kind == "format"
               else read_source(file, split=split, relevance_level=relevance_level,
                                allow_outside_paths=allow_outside_paths))
        try:
            dataset = parse_dataset(raw, source=source,
                                    base_dir=file if kind == "beir" else file.parent,
                                    allow_outside_paths=allow_outside_paths)
        except DatasetError as error:
            if kind != "format" or error.source != source:
                raise
            # The text again, only now: the line and the id of the item in error.

            raise located(error, raw, read_dataset_text(file)) from None
        return dataset if run is None else with_run(dataset, Path(run))


def with_run(dataset: Dataset, path: Path) -> Dataset:
    """``dataset`` with its run replaced by the run file ``path`` (see :func:`load_dataset`).

    Topics of a TREC run that the dataset has no query for are left out, as
    trec_eval leaves them out; in a pytest-rag run file they are an error.
    """
    import dataclasses

    from .parser import FormatRules, validate_vector_dimensions
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
    parser = FormatRules(source)
    run = parser.run_section({} if section is None else section, known, place)
    validate_vector_dimensions(parser, dataset.vectors, run)
    return dataclasses.replace(dataset, run=run, run_source=(source, place))


# -- where an error is, for a person -------------------------------------------------------
#
# The parser names a place by its path in the data (``queries[3].relevant``),
# which makes users count list items.  :func:`located` adds, after the path,
# the id of the query, document or chunk it is in and the line of the file
# where the innermost part of the path that exists starts:
# ``queries[3].relevant (query 'q4', line 12)``.  It runs only when an error
# is raised: the file is composed (not constructed) by the YAML reader, which
# also reads JSON, to find the line; a file it cannot compose, or one larger
# than :data:`MAX_LOCATED_CHARACTERS`, gets the id alone.

#: Beyond this size the line is not looked for (composing costs about a second per 20 MB).
MAX_LOCATED_CHARACTERS = 50_000_000
#: The sections whose items have ids, and what an item is called.
_ITEM_NAMES = {"queries": "query", "documents": "document", "chunks": "chunk"}
_HEAD = re.compile(r"(queries|documents|chunks|run|params)(?=[.\[]|$)")
_STEP = re.compile(r"\[(\d+)\]|\.([^.\[]+)")


def _steps(place: str) -> list[str | int] | None:
    """The path of ``place`` as keys and indexes, or ``None`` when it is not a data path."""
    head = _HEAD.match(place)
    if head is None:
        return None
    steps: list[str | int] = [head.group(1)]
    position = head.end()
    while position < len(place):
        step = _STEP.match(place, position)
        if step is None:
            break
        steps.append(int(step.group(1)) if step.group(1) is not None else step.group(2))
        position = step.end()
    return steps


def _line(text: str, steps: list[str | int]) -> int | None:
    """The line (from 1) where the innermost existing node of ``steps`` starts."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
    except Exception:  # noqa: BLE001 - any reader failure: no line, the message stands
        return None
    line = None
    for step in steps:
        if isinstance(node, yaml.MappingNode) and isinstance(step, str):
            node = next((value for key, value in node.value
                         if isinstance(key, yaml.ScalarNode) and key.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            node = node.value[step] if step < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def located(error: DatasetError, data: object, text: str) -> DatasetError:
    """``error`` with the item's id and the line after its place (see the module);
    ``error`` itself when its place is not a path into the data."""
    steps = _steps(error.place)
    if steps is None:
        return error
    notes = []
    if steps[0] in _ITEM_NAMES and len(steps) > 1 and isinstance(steps[1], int):
        section = data.get(steps[0]) if isinstance(data, dict) else None
        item = (section[steps[1]] if isinstance(section, list) and steps[1] < len(section)
                else None)
        item_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(item_id, str) and item_id:
            notes.append(f"{_ITEM_NAMES[str(steps[0])]} {quoted(item_id)}")
    line = _line(text, steps) if len(text) <= MAX_LOCATED_CHARACTERS else None
    if line is not None:
        notes.append(f"line {line}")
    if not notes:
        return error
    return DatasetError(error.source, f"{error.place} ({', '.join(notes)})", error.problem)
