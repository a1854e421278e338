"""``documents: {glob: "corpus/**/*.md"}``: every file a pattern matches as a document.

The patterns (one, or a list) are relative to the dataset's folder and use
:meth:`pathlib.Path.glob` syntax (``*``, ``?``, ``[...]``, ``**`` for any depth).
Each matched file becomes ``{"id": <its path relative to the folder, with
/>, "path": <the same>}``, in the order of those ids, and is then read as a
``path:`` document: the same folder rule, encoding and per-file size limit.
All matched files together are held to the same limit as one file
(:data:`~pytest_rag.dataset.bounded_read.MAX_FILE_BYTES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, Protocol

__all__ = ["GLOB_KEYS", "glob_documents"]

GLOB_KEYS = ("glob",)


class _Reader(Protocol):
    """What this module uses of :class:`~pytest_rag.dataset.parser.FormatRules`."""

    base_dir: Path | None

    def mapping(self, value: object, place: str, allowed: Sequence[str] | None = ...,
                required: Sequence[str] = ...) -> Mapping[str, Any]: ...

    def strings(self, value: object, place: str) -> tuple[str, ...]: ...

    def fail(self, place: str, problem: str) -> NoReturn: ...


def glob_documents(parser: _Reader, value: Mapping[str, Any], place: str,
                   limit: int) -> list[dict[str, str]]:
    """The ``documents`` entries of a ``{glob: ...}`` section (all files together at most
    ``limit`` bytes); errors at ``place``."""
    raw = parser.mapping(value, place, GLOB_KEYS, required=("glob",))
    patterns = raw["glob"]
    where = f"{place}.glob"
    listed = [patterns] if isinstance(patterns, str) else parser.strings(patterns, where)
    base = parser.base_dir if parser.base_dir is not None else Path.cwd()
    found: dict[str, Path] = {}
    for i, pattern in enumerate(listed):
        spot = where if isinstance(patterns, str) else f"{where}[{i}]"
        if not pattern or "\0" in pattern or Path(pattern).is_absolute():
            parser.fail(spot, f"{pattern!r}: give a pattern relative to the dataset's folder, "
                              "e.g. 'docs/**/*.md'")
        try:
            matches = [path for path in base.glob(pattern) if path.is_file()]
        except (OSError, ValueError, NotImplementedError) as error:
            parser.fail(spot, f"{pattern!r}: not a usable pattern ({error})")
        if not matches:
            parser.fail(spot, f"{pattern!r} matches no file in {str(base)!r}")
        for path in matches:
            found.setdefault(path.relative_to(base).as_posix(), path)
    total = 0
    for name, path in found.items():
        try:
            total += path.stat().st_size
        except OSError as error:
            parser.fail(where, f"cannot read document file {name!r}: {error.strerror or error}")
    if total > limit:
        parser.fail(where, f"the {len(found)} matched files hold {total:,} bytes, more than the "
                           f"{limit / 2**20:g} MiB all documents may hold together")
    return [{"id": name, "path": name} for name in sorted(found)]
