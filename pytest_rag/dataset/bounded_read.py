"""Reading files: only regular files, never more than a limit, the limits, and JSON.

The size limits of every file pytest-rag reads (:data:`MAX_FILE_BYTES`,
:data:`MAX_JSON_BYTES`, :data:`MAX_YAML_BYTES`), the reading of a dataset's
``path:`` documents (:func:`read_document`) and the one JSON reader of
datasets, baselines and reports (:func:`decode_json`, :func:`read_json`) live
here, apart from the format's rules.

JSON is read strictly: a key written twice in one object, an escaped lone
surrogate (``"q\\ud800"``, which Python's decoder accepts but no UTF-8 file
can hold) and an integer of more digits than Python converts are refused, each
with its line and column.  The scans that find them are linear.

The size a file reports is no bound: ``/dev/zero``, a FIFO or a file that grows
while it is read report 0 or less than they give.  :func:`read_bounded`
opens without blocking (a FIFO with no writer would wait forever), checks on
the open descriptor that the file is a regular file, and reads at most one
byte past the limit, so memory stays bounded whatever the path points at.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import similar_file
from ..text.locate import line_column

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_FILE_BYTES",
    "MAX_JSON_BYTES",
    "MAX_YAML_BYTES",
    "MEMORY_PER_BYTE",
    "UNREADABLE",
    "DocumentUnreadable",
    "FileTooLarge",
    "InvalidJson",
    "NotARegularFile",
    "NotText",
    "big_integer_place",
    "dataset_kind",
    "dataset_limit",
    "decode_json",
    "lone_surrogate_place",
    "read_bounded",
    "read_document",
    "read_json",
    "read_text",
]

#: Files larger than this are refused rather than read into memory (baselines,
#: reports).
MAX_FILE_BYTES = 512 * 1024 * 1024
#: ``path:`` documents are held to less: evaluating every stage takes about 90
#: bytes of memory per byte of a document (measured: 10 MB, 0.9 GB; 40 MB,
#: 3.4 GB), so a document over this is refused when the dataset is read,
#: naming the file and the limit, instead of running out of memory later.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
#: Dataset files are held to less: loading takes about 10 bytes of memory per
#: byte of JSON (JSON Lines, CSV, TREC lines alike) and about 82 per byte of
#: YAML (measured), so any accepted dataset file loads within about 1.7 GiB.
MAX_JSON_BYTES = 160 * 1024 * 1024
MAX_YAML_BYTES = 20 * 1024 * 1024


#: Bytes of memory per byte of file while a dataset loads, measured (README "Reliability").
MEMORY_PER_BYTE = {"JSON": 10, "YAML": 82}


def dataset_kind(path: Path) -> str:
    """``"YAML"`` for ``.yaml``/``.yml``, else ``"JSON"`` (JSON Lines, CSV and TREC lines
    load like JSON)."""
    return "YAML" if path.suffix.lower() in (".yaml", ".yml") else "JSON"


def dataset_limit(path: Path) -> int:
    """The size limit of a dataset file (:data:`MAX_YAML_BYTES`, :data:`MAX_JSON_BYTES`)."""
    return MAX_YAML_BYTES if dataset_kind(path) == "YAML" else MAX_JSON_BYTES

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


class NotARegularFile(OSError):
    """The path is a device, FIFO, socket or directory; ``kind`` says which."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"is {kind}, not a regular file")
        self.kind = kind


class FileTooLarge(OSError):
    """The file holds more than ``limit`` bytes.

    ``size`` is the size the file reports when ``exact``; otherwise (a file that
    grew while it was read) a lower bound: what was read before stopping.
    """

    def __init__(self, size: int, limit: int, *, exact: bool) -> None:
        super().__init__(f"is over the limit of {limit} bytes")
        self.size = size
        self.limit = limit
        self.exact = exact

    def size_text(self) -> str:
        """The size for a message: ``"600 bytes"``, or ``"600 bytes or more"``."""
        return f"{self.size} bytes" if self.exact else f"{self.size} bytes or more"

    def __str__(self) -> str:
        return (f"is {self.size_text()}, over the limit of {self.limit} bytes "
                f"({self.limit / 2**20:g} MiB)")


class NotText(OSError):
    """The bytes are not UTF-8 text; says where the first bad byte is."""

    def __init__(self, error: UnicodeDecodeError) -> None:
        super().__init__(f"is not UTF-8 text ({error.reason} at byte {error.start})")


#: What :func:`read_text` raises about the file itself; ``str(error)`` says it
#: (``"is a FIFO (named pipe), not a regular file"``), ready after the file's name.
UNREADABLE = (NotARegularFile, FileTooLarge, NotText)


def read_text(path: Path | str, limit: int, *, bom: bool = False) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bounded`); with ``bom``
    a byte order mark is dropped.

    Raises
    ------
    NotARegularFile, FileTooLarge, NotText
        About the file (:data:`UNREADABLE`).
    OSError
        Anything else opening or reading fails with.
    """
    data = read_bounded(path, limit)
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as error:
        raise NotText(error) from None


def read_bounded(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises
    ------
    NotARegularFile
        When ``path`` (after symlinks) is not a regular file.
    FileTooLarge
        When the file holds more than ``limit`` bytes, by its size or by what it gives.
    OSError
        Anything else opening or reading fails with (``FileNotFoundError``, ...).
    """
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise NotARegularFile(kind)
        if info.st_size > limit:
            raise FileTooLarge(info.st_size, limit, exact=True)
        chunks: list[bytes] = []
        remaining = limit + 1
        # The reported size (and one byte to see growth) in one read: one chunk,
        # which the join below returns without a copy.
        step = max(info.st_size + 1, 1 << 24)
        while remaining > 0:
            chunk = os.read(handle, min(remaining, step))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while being read
            raise FileTooLarge(len(data), limit, exact=False)
        return data
    finally:
        os.close(handle)


class DocumentUnreadable(Exception):
    """A ``path:`` document that cannot be read; ``str(error)`` is the message."""


def read_document(name: str, base: Path, *, allow_outside: bool) -> tuple[str, str]:
    """The text of the ``path:`` document ``name`` (relative to ``base``) and the file's
    absolute path.

    Raises
    ------
    DocumentUnreadable
        When the file is outside ``base``'s tree (unless ``allow_outside``),
        missing, not a regular file, too large or not UTF-8 text.
    """
    try:
        path = (base / name).resolve()
    except (OSError, ValueError, RuntimeError) as error:  # e.g. a symlink loop
        raise DocumentUnreadable(f"cannot resolve document file {name!r}: {error}") from None
    if not allow_outside:
        root = base.resolve()
        if path != root and root not in path.parents:
            raise DocumentUnreadable(
                f"{name!r} is outside the dataset's folder {str(root)!r} (allow it with "
                "allow_outside_paths=True, --allow-outside-paths on the command line, or the "
                "ini option rag_allow_outside_paths)")
    try:
        # Bytes, then decode: no newline translation, offsets refer to the exact text.
        return read_text(path, MAX_DOCUMENT_BYTES), str(path)
    except NotARegularFile as error:
        if error.kind == "a directory":
            raise DocumentUnreadable(
                f"document file {name!r} is a directory ({str(path)!r})") from None
        raise DocumentUnreadable(f"document file {name!r} {error} ({str(path)!r})") from None
    except UNREADABLE as error:
        raise DocumentUnreadable(f"document file {name!r} {error}") from None
    except (FileNotFoundError, NotADirectoryError):
        raise DocumentUnreadable(
            f"document file {name!r} not found (looked at {str(path)!r})"
            f"{similar_file(path, name)}") from None
    except OSError as error:
        raise DocumentUnreadable(
            f"cannot read document file {name!r}: {error.strerror or error}") from None


class InvalidJson(ValueError):
    """Text that is not JSON as pytest-rag reads it.

    ``place`` is ``"line L, column C"`` (or ``""`` when no place is known),
    ``problem`` what is wrong there (``"duplicate key 'k'"``).
    """

    def __init__(self, place: str, problem: str) -> None:
        super().__init__(f"{place}: {problem}" if place else problem)
        self.place = place
        self.problem = problem


def read_json(path: Path | str, limit: int) -> object:
    """The decoded JSON of the regular file ``path`` (:func:`read_text`, :func:`decode_json`).

    Raises
    ------
    NotARegularFile, FileTooLarge, NotText
        About the file (:data:`UNREADABLE`).
    InvalidJson
        When the text is not JSON (with the place).
    OSError
        Anything else opening or reading fails with.
    """
    return decode_json(read_text(path, limit))


def decode_json(text: str) -> object:
    """``json.loads(text)``, refusing what it lets through or reports without a place.

    Raises
    ------
    InvalidJson
        For invalid JSON, a key written twice in one object, an object nested
        too deeply, an integer of more digits than Python converts or an
        escaped lone surrogate; with the line and column where known.
    """

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            raise _DuplicateKey
        return result

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as error:
        raise InvalidJson(f"line {error.lineno}, column {error.colno}", error.msg) from None
    except _DuplicateKey:
        where = _json_duplicate_place(text)
        if where is None:  # pragma: no cover - the slow scanner finds what the fast one did
            raise InvalidJson("", "an object has a duplicate key") from None
        raise InvalidJson(where[1], f"duplicate key {where[0]!r}") from None
    except RecursionError:
        raise InvalidJson("", "nested too deeply") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        big = big_integer_place(text)
        if big is not None:
            raise InvalidJson(big[1], f"an integer of {big[0]} digits, more than Python "
                                      "converts") from None
        raise InvalidJson("", str(error)) from None
    place = lone_surrogate_place(text)
    if place is not None:
        raise InvalidJson(place, "a lone surrogate escape, which is not text and cannot be "
                                 "written as UTF-8")
    return data


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


# A string (skipped whole, so digits and escapes inside it are not numbers) or a number.
# An integer, not the digits of a float (``1.5``, ``1e5``), which convert at any length.
_STRING_OR_LONG_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\d.eE+])(-?\d{%d,})(?![\d.eE])')
# An escape sequence inside a string: \\ (skipped) or a \u escape of a surrogate.
_ESCAPE = re.compile(r"\\\\|\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
                     r"|\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def lone_surrogate_place(text: str) -> str | None:
    """Where the first ``\\u`` escape of a lone surrogate is, or ``None``.

    A high surrogate followed by a low one is a valid pair (one character
    beyond the Basic Multilingual Plane); either half alone is not text.
    """
    # One character is searched with memchr (1 ms in 24 MiB of JSON), two about
    # 20 times slower: the second search runs only when there is a backslash.
    if "\\" not in text or "\\u" not in text:
        return None
    for match in _ESCAPE.finditer(text):
        if match.group(0) == "\\\\" or (match.group(1) and match.group(2)):
            continue  # an escaped backslash, or a valid pair
        return line_column(text, match.start())
    return None


def big_integer_place(text: str) -> tuple[int, str] | None:
    """``(digits, "line L, column C")`` of the first integer with more digits than Python
    converts, or ``None`` (also when the interpreter has no such limit)."""
    get_limit = getattr(sys, "get_int_max_str_digits", None)
    limit = get_limit() if get_limit is not None else 0
    if not limit:
        return None
    pattern = re.compile(_STRING_OR_LONG_NUMBER.pattern % (limit + 1))
    for match in pattern.finditer(text):
        if match.group(1):
            return len(match.group(1).lstrip("-")), line_column(text, match.start(1))
    return None
