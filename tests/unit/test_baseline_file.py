"""Baseline.save: permissions, leftovers of killed writers, compact per-query values."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pytest_rag.compare.baseline import Baseline
from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.registry import REGISTRY

RECORD = StageRecord("t.py::test", "retrieval", {"recall_at_k": 0.5, "token_recall": None},
                     {"recall_at_k": {"q1": 1.0, "q2": None}})


def test_new_file_gets_the_umask_mode_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        Baseline().updated([RECORD], REGISTRY, Tolerances()).save(tmp_path / "b.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o644


def test_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text("{}")
    path.chmod(0o640)
    Baseline().save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_old_leftovers_are_removed_but_not_another_writers_file(tmp_path: Path) -> None:
    """A killed writer's temporary file goes once it is an hour old; a fresh one may be a
    concurrent writer's work in progress and is left alone (it was deleted)."""
    import os
    import time

    leftover = tmp_path / ".b.json.abc123.tmp"
    leftover.write_text('{"half": ')
    two_hours_ago = time.time() - 7200
    os.utime(leftover, (two_hours_ago, two_hours_ago))
    in_progress = tmp_path / ".b.json.def456.tmp"
    in_progress.write_text('{"being written": ')
    Baseline().save(tmp_path / "b.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.json.def456.tmp", "b.json"]


def test_a_symlinked_baseline_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "shared" / "baseline.json"
    target.parent.mkdir()
    Baseline().save(target)
    link = tmp_path / "b.json"
    link.symlink_to(target)
    Baseline().updated([RECORD], REGISTRY, Tolerances()).save(link)
    assert link.is_symlink()
    assert "t.py::test" in json.loads(target.read_text())["tests"]


def test_not_measured_queries_are_left_out_and_read_back_as_none(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    Baseline().updated([RECORD], REGISTRY, Tolerances()).save(path)
    entry = json.loads(path.read_text())["tests"]["t.py::test"]["retrieval"]
    assert entry["per_query"] == {"columns": ["recall_at_k"], "rows": {"q1": [1.0]}}
    assert entry["metrics"]["token_recall"]["value"] is None
    loaded = Baseline.load(path)
    assert loaded.tests["t.py::test"]["retrieval"]["per_query"] == {"recall_at_k": {"q1": 1.0}}
    assert loaded.value("t.py::test", "retrieval", "recall_at_k") == 0.5
    assert loaded.value("t.py::test", "retrieval", "token_recall") is None
