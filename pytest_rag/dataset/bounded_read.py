"""Read a whole file, but only a regular file and never more than a limit.

The size a file reports is no bound: ``/dev/zero``, a FIFO or a file that grows
while it is read report 0 or less than they give.  :func:`read_bounded`
opens without blocking (a FIFO with no writer would wait forever), checks on
the open descriptor that the file is a regular file, and reads at most one
byte past the limit, so memory stays bounded whatever the path points at.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UNREADABLE", "FileTooLarge", "NotARegularFile", "NotText", "read_bounded",
           "read_text"]

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
