"""Reading the text files of other tools: bounded, UTF-8, with each line's number."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import DatasetError, similar_file
from ..bounded_read import (
    MEMORY_PER_BYTE,
    UNREADABLE,
    FileTooLarge,
    dataset_kind,
    dataset_limit,
    read_text,
)

__all__ = ["ASCII_SPACE", "json_lines", "numbered_lines", "read_dataset_text"]


def read_dataset_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (a byte order mark is dropped), a dataset file or a file
    of another tool, within its size limit (:func:`~pytest_rag.dataset.bounded_read.dataset_limit`).

    Raises
    ------
    DatasetError
        Naming the file: missing, not a regular file, too large, not UTF-8.
    """
    source = str(path)
    try:
        return read_text(path, dataset_limit(path), bom=True)
    except (FileNotFoundError, NotADirectoryError):
        raise DatasetError(source, "", "file not found" + similar_file(path, source)) from None
    except FileTooLarge as error:
        kind = dataset_kind(path)
        raise DatasetError(source, "", f"{error} for {kind} (each MiB takes about "
                                       f"{MEMORY_PER_BYTE[kind]} MiB of memory to load)"
                           ) from None
    except UNREADABLE as error:
        raise DatasetError(source, "", str(error)) from None
    except OSError as error:
        raise DatasetError(source, "", f"cannot read: {error.strerror or error}") from None


#: The whitespace of C's ``isspace`` (trec_eval's field separators) but the line break.
ASCII_SPACE = " \t\r\v\f"


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number from 1, line without its end)`` of every line that is not blank.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped) and nowhere else: U+2028,
    U+2029 and U+0085 are characters of a JSON string, not line breaks, in JSON
    Lines as in TREC files.
    """
    for number, line in enumerate(read_dataset_text(path).split("\n"), start=1):
        if line.strip(ASCII_SPACE):
            yield number, line.removesuffix("\r")


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every line of a JSON Lines file that is not blank.

    Raises
    ------
    DatasetError
        At the line that is not valid JSON or not a JSON object.
    """
    for number, line in numbered_lines(path):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise DatasetError(str(path), f"line {number}", f"invalid JSON: {error}") from None
        if not isinstance(obj, dict):
            raise DatasetError(str(path), f"line {number}", "expected a JSON object")
        yield number, obj
