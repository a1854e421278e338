"""Write a file so that a reader (or a crash) sees the old content or the new, never half;
and serialize the read-modify-write of a file between processes.

The text goes to a temporary file in the same folder, is synced, then renamed
over the target; a file that is a symlink is written through (the link stays).
A failure (a full disk, a killed process) leaves the previous file as it was.
Temporary files have unique names, so concurrent writers never touch each
other's; one left behind by a killed writer is removed by a later write once
it is an hour old.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["exclusive", "write_atomically"]

#: Age after which a temporary file of this module is a leftover, not a write in progress.
STALE_SECONDS = 3600


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_stale(folder: Path, name: str) -> None:
    now = time.time()
    for leftover in folder.glob(f".{name}.*.tmp"):
        try:
            if now - leftover.stat().st_mtime > STALE_SECONDS:
                leftover.unlink()
        except OSError:
            pass


def write_atomically(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` with ``data`` atomically (see the module docstring).

    Raises
    ------
    OSError
        When the folder cannot be created or the data cannot be written; the
        previous file is then untouched and no temporary file is left.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target.parent, target.name)
    mode = _mode_for(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                         dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fchmod(stream.fileno(), mode)
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    try:
        folder = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for read-modify-write of ``path`` (symlinks followed).

    The lock is taken on the folder that holds the file (``flock`` on its
    descriptor), so no lock file is left in the project; another process
    asking for it waits.  Where ``fcntl`` does not exist (Windows), no lock
    is taken.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(target.parent, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock
