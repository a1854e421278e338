"""Every file the project reads is a regular file read up to a limit: ``/dev/zero``, a
FIFO or a growing file end at once with a located error (issue: reads were bounded by
``st_size`` only, which is 0 for them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rag.dataset.bounded_read import FileTooLarge, NotARegularFile, read_bounded

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(),
                                 reason="needs POSIX FIFOs and /dev/zero")
#: Seconds a case may take; before the fix they hung or grew without bound.
LIMIT = 20


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_rag", *argv], capture_output=True,
                          text=True, timeout=LIMIT)


def test_a_regular_file_reads_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(FileTooLarge) as raised:
        read_bounded(path, 99)
    assert raised.value.size == 100
    assert raised.value.size_text() == "100 bytes"  # the size the file reports: exact


@needs_posix
def test_devices_and_fifos_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="a FIFO"):
        read_bounded(fifo, 10)  # no writer: a blocking open would wait forever
    with pytest.raises(NotARegularFile, match="a character device"):
        read_bounded("/dev/zero", 10)
    with pytest.raises(NotARegularFile, match="a directory"):
        read_bounded(tmp_path, 10)


@needs_posix
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_dataset_that_is_not_a_regular_file_exits_2(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "gold.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    done = cli("validate", str(path))
    assert done.returncode == 2, done.stderr
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert done.stderr == f"pytest-rag: error: {path}: is {what}, not a regular file\n"


@needs_posix
def test_a_document_path_that_is_a_fifo_exits_2(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "doc.txt")
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents:\n  - {id: d1, path: doc.txt}\n", encoding="utf-8")
    done = cli("evaluate", str(gold))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"pytest-rag: error: {gold}: documents[0].path (document 'd1', line 2): document file "
        f"'doc.txt' is a FIFO "
        f"(named pipe), not a regular file ({str(tmp_path / 'doc.txt')!r})\n")


@needs_posix
def test_diff_of_dev_zero_exits_2(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"format": "pytest-rag-baseline", "version": 1, "tests": {}}),
                    encoding="utf-8")
    done = cli("diff", str(good), "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert "'/dev/zero' is a character device, not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


@needs_posix
def test_a_baseline_linked_to_dev_zero_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    (pytester.path / "rag-baseline.json").symlink_to("/dev/zero")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rag-baseline",
                                           timeout=LIMIT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*baseline file '*rag-baseline.json' is a character device, "
                                 "not a regular file*"])
