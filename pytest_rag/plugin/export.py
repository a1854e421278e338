"""``--rag-export=DIR``: each recorded stage report written back as a dataset file.

``DIR/<test>/<stage>.json`` holds the documents, chunks, gold and run that the
stage read and its settings as ``params`` (:func:`pytest_rag.dataset.sources.export.dataset_json`),
so ``pytest-rag evaluate DIR/<test>/<stage>.json --stage <stage>`` gives the
numbers the test recorded.  Each file is read back and evaluated once after it
is written; a difference is reported, never hidden.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..stages.report import Report

__all__ = ["export_folder", "export_reports"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def export_folder(root: Path, nodeid: str) -> Path:
    """The folder of one test: its node id made a file name, with a short digest so
    that two ids that read alike stay apart."""
    digest = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:8]
    return root / f"{_UNSAFE.sub('_', nodeid).strip('_')[:80]}-{digest}"


def export_reports(root: Path, nodeid: str, reports: Mapping[str, Report]) -> list[str]:
    """Write the exports of one test's reports; the notes to show (problems only)."""
    from ..dataset.loading import load_dataset
    from ..dataset.sources import write_dataset
    from ..dataset.sources.export import UNSUPPORTED, dataset_json
    from ..errors import DatasetError
    from ..stages.evaluate import evaluate_dataset

    notes = []
    for stage, report in reports.items():
        if report.dataset is None:
            continue
        if stage in UNSUPPORTED:
            notes.append(f"--rag-export: {nodeid} [{stage}] not exported: {UNSUPPORTED[stage]}")
            continue
        path = export_folder(root, nodeid) / f"{stage}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_dataset(dataset_json(report.dataset, report.settings), path)
            again = evaluate_dataset(load_dataset(path), [stage])[stage]
        except (OSError, DatasetError) as error:
            notes.append(f"--rag-export: could not write {path}: {error}")
            continue
        differing = [key for key, value in report.values.items()
                     if again.values.get(key) != value]
        if differing:
            notes.append(f"--rag-export: {path} does not reproduce {nodeid} [{stage}]: "
                         + ", ".join(differing))
    return notes
