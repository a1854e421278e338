"""Reading a dataset file: size and type checks, UTF-8, JSON or safe YAML, then the format's rules.

:func:`load_dataset` decodes a YAML or JSON file and hands the mapping to
:func:`~pytest_rag.dataset.parser.parse_dataset`; every problem is one
:class:`~pytest_rag.errors.DatasetError` naming the file and the place.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DatasetError
from .bounded_read import InvalidJson, decode_json
from .caches import collector_paused
from .model import Dataset
from .parser import parse_dataset

__all__ = ["load_dataset", "with_run"]


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
    from ..settings import check_setting
    from .sources import KINDS_TEXT, read_source, source_kind
    from .sources.lines import read_dataset_text

    check_setting("relevance_level", relevance_level)
    file = Path(path)
    source = str(path)
    try:
        file.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise DatasetError(source, "", "file not found") from None
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
               else read_source(file, split=split, relevance_level=relevance_level))
        dataset = parse_dataset(raw, source=source,
                                base_dir=file if kind == "beir" else file.parent,
                                allow_outside_paths=allow_outside_paths)
        return dataset if run is None else with_run(dataset, Path(run))


def with_run(dataset: Dataset, path: Path) -> Dataset:
    """``dataset`` with its run replaced by the run file ``path`` (see :func:`load_dataset`).

    Topics of a TREC run that the dataset has no query for are left out, as
    trec_eval leaves them out; in a pytest-rag run file they are an error.
    """
    import dataclasses

    from .parser import FormatChecks, check_vector_dimensions
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
    parser = FormatChecks(source)
    run = parser.run_section({} if section is None else section, known, place)
    check_vector_dimensions(parser, dataset.vectors, run)
    return dataclasses.replace(dataset, run=run, run_source=(source, place))
