"""Write a file so that a reader (or a crash) sees the old content or the new, never half;
and serialize the read-modify-write of a file between processes.

The text goes to a temporary file in the same folder, is synced, then renamed
over the target; a file that is a symlink is written through (the link stays).

Every output of a run (baseline, reports, converted datasets) obeys one rule
about links, :func:`output_target`: a path named inside the run's root
(pytest's rootdir; the current folder for the command line) must lead, with
every link followed, to a place inside that root.  A link planted in the
project (``report.html -> ~/notes.txt``, or a linked folder) is refused with
:class:`OutsideRoot` and nothing is written; a path named outside the root
(``/tmp/report.html``, ``$GITHUB_STEP_SUMMARY``) is the user's explicit
choice and is written where it leads, and so is a link to a terminal, a pipe
or a device (``/dev/stdout``), which is written to, not replaced.

A failure (a full disk, a killed process) leaves the previous file as it was.
Temporary files have unique names, so concurrent writers never touch each
other's; one left behind by a killed writer is removed by a later write once
it is an hour old.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["OutsideRoot", "exclusive", "output_target", "write_atomically"]

#: Age after which a temporary file of this module is a leftover, not a write in progress.
STALE_SECONDS = 3600


class OutsideRoot(OSError):
    """An output path inside the run's root that links lead out of it (see the module)."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


#: Folders whose files are devices and this process's descriptors (``/dev/stdout``), never
#: a project's files, even when pytest takes ``/dev`` for the rootdir of such an argument.
_SYSTEM = ("/dev/", "/proc/")


def _stream(path: Path) -> bool:
    """Whether ``path`` leads to a terminal, a pipe or another device (``/dev/stdout``):
    written to, never replaced, so no file of the user is overwritten."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def output_target(path: Path, root: Path) -> Path:
    """The file that writing ``path`` changes: ``path`` itself, or the file its links
    lead to, which must stay inside ``root`` when ``path`` is named inside it.

    Raises
    ------
    OutsideRoot
        When ``path`` lies inside ``root`` but a link (the file's own or a folder's)
        leads out of it; the message names both places.
    """
    named = os.path.abspath(path)
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    # Named outside the root (or a descriptor of this process): where the user asked.
    asked = named.startswith(_SYSTEM) or not (_inside(named, os.path.abspath(root))
                                              or _inside(named, real_root))
    if not (asked or _inside(real, real_root) or _stream(path)):
        raise OutsideRoot(f"links lead it to {real}, outside {real_root} (outputs are "
                          "never written through a link that leaves the run's root)")
    return Path(real) if path.is_symlink() else path


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


def write_atomically(path: Path, data: bytes, *, root: Path) -> None:
    """Replace the content of ``path`` with ``data`` atomically (see the module docstring),
    ``root`` being the run's root for :func:`output_target`.

    Raises
    ------
    OutsideRoot
        When links lead ``path`` out of ``root``; nothing is written.
    IsADirectoryError
        When ``path`` is a folder.
    OSError
        When the folder cannot be created or the data cannot be written; the
        previous file is then untouched and no temporary file is left.
    """
    target = output_target(path, root)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
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
def exclusive(path: Path, *, root: Path) -> Iterator[None]:
    """Hold an exclusive lock for read-modify-write of ``path`` (symlinks followed, as
    :func:`output_target` allows within ``root``; :class:`OutsideRoot` otherwise).

    The lock is taken on the folder that holds the file (``flock`` on its
    descriptor), so no lock file is left in the project; another process
    asking for it waits.  Where ``fcntl`` does not exist (Windows), no lock
    is taken.
    """
    output_target(path, root)
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
