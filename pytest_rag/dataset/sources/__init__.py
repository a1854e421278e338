"""Files people already have, read as FORMAT v1 data: TREC, BEIR and ragas.

:func:`read_source` tells them apart by what the path is:

- a folder: a BEIR dataset (``corpus.jsonl``, ``queries.jsonl``,
  ``qrels/<split>.tsv``);
- ``.json``, ``.yaml``, ``.yml``: a pytest-rag dataset file (not read here);
- ``.jsonl``, ``.csv``: ragas rows (``user_input``, ``retrieved_contexts``,
  ``reference_contexts``, ``response``, ``reference``);
- ``.qrels``, ``.txt``, or a name starting with ``qrels`` (``qrels.test``):
  TREC qrels (``topic iteration docno relevance`` per line);
- anything else is refused, naming these kinds.

A run file (:func:`read_run`) is a pytest-rag ``run`` section on its own (a
``.json``/``.yaml`` mapping of query id to entry, or one with a ``run:`` key),
or else a TREC run (``topic Q0 docno rank score tag`` per line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import DatasetError
from .beir import beir_dataset
from .ragas import ragas_dataset
from .trec import trec_dataset, trec_run

__all__ = ["FORMAT_SUFFIXES", "KINDS_TEXT", "beir_dataset", "ragas_dataset", "read_source",
           "source_kind", "trec_dataset", "trec_run", "write_dataset"]

#: Suffixes of pytest-rag's own dataset files.
FORMAT_SUFFIXES = (".json", ".yaml", ".yml")


#: What the loader reads, for the message about a file it does not.
KINDS_TEXT = ("a .yaml, .yml or .json dataset, a BEIR folder, a ragas .jsonl or .csv file, "
              "or TREC qrels (.qrels, .txt, qrels.*)")


def source_kind(path: Path) -> str | None:
    """``"beir"``, ``"format"``, ``"ragas"`` or ``"trec"``: how ``path`` is read;
    ``None`` for a file of none of these kinds."""
    if path.is_dir():
        return "beir"
    suffix = path.suffix.lower()
    if suffix in FORMAT_SUFFIXES:
        return "format"
    if suffix in (".jsonl", ".csv"):
        return "ragas"
    if suffix in (".qrels", ".txt") or path.name.lower().startswith("qrels"):
        return "trec"
    return None


def read_source(path: Path, *, split: str = "test", relevance_level: int = 1,
                allow_outside_paths: bool = False) -> dict[str, Any]:
    """FORMAT v1 data of a BEIR folder, a ragas file or TREC qrels (not of a
    ``.json``/``.yaml`` dataset file, which :func:`~pytest_rag.load_dataset` reads);
    ``relevance_level`` applies to TREC qrels; a BEIR folder's files must not be links
    out of it, unless ``allow_outside_paths``."""
    kind = source_kind(path)
    if kind == "beir":
        return beir_dataset(path, split=split, allow_outside_paths=allow_outside_paths)
    if kind == "ragas":
        return ragas_dataset(path)
    if kind == "trec":
        return trec_dataset(path, relevance_level=relevance_level)
    raise DatasetError(str(path), "", f"not a source to convert: expected {KINDS_TEXT}")


def write_dataset(data: dict[str, Any], path: Path, *, root: Path | None = None) -> None:
    """Write FORMAT v1 ``data`` to ``path``, as YAML or JSON by its extension, atomically,
    after checking it the way :func:`~pytest_rag.load_dataset` would read it back.

    Raises
    ------
    DatasetError
        When ``data`` breaks a rule of the format (named in the output file),
        ``path`` has another extension, or cannot be written (a folder, a link
        out of the current folder: :func:`~pytest_rag.atomic.output_target`).
    """
    import json

    from ...atomic import write_atomically
    from ..parser import parse_dataset

    if path.suffix.lower() not in FORMAT_SUFFIXES:
        raise DatasetError(str(path), "", "write to a .yaml, .yml or .json file")
    parse_dataset(data, source=str(path), base_dir=path.parent)
    if path.suffix.lower() == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    try:
        write_atomically(path, text.encode("utf-8"), root=Path.cwd() if root is None else root)
    except OSError as error:  # a folder, a link out of the current folder, /proc, a full disk
        raise DatasetError(str(path), "", f"cannot write: {error.strerror or error}") from None
