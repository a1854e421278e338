"""The files a run writes on request: the scorecard as ``--rag-report`` (JSON),
``--rag-report-md`` (Markdown, appended) and ``--rag-html``, and the stage
reports as dataset files (``--rag-export``).

The scorecard is built on the controller once every test's results are merged,
after the baseline is written; the ``pytest_rag_scorecard`` hook then receives
it.  ``--rag-export=DIR`` writes ``DIR/<test>/<stage>.json`` where the test ran:
the documents, chunks, gold and run that the stage read and its settings as
``params`` (:func:`pytest_rag.dataset.sources.export.dataset_json`), so
``pytest-rag evaluate DIR/<test>/<stage>.json --stage <stage>`` gives the
numbers the test recorded.  Each file is read back and evaluated once after it
is written; a difference is reported, never hidden.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..atomic import output_target, write_atomically
from .session import is_worker

if TYPE_CHECKING:
    from ..reports.scorecard import Scorecard
    from ..stages.report import Report
    from .session import RagSession

__all__ = ["ReportFiles", "export_folder", "export_reports"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ReportFiles:
    """Builds the scorecard at the end of the run and writes the report files asked for."""

    def __init__(self, session: RagSession) -> None:
        self.session = session
        self.options = session.options

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if is_worker(self.session.config) or not self._scorecard_wanted():
            return  # nothing recorded, nothing asked for: a run that did not use the plugin
        from ..reports.scorecard import build_scorecard

        run = self.session
        results = run.results
        gold_changes = {}
        if run.baseline is not None and self.options.compare:
            for record in results.records:
                change = run.baseline.gold_change(record)
                if change is not None:
                    gold_changes[(record.nodeid, record.stage)] = change
        from ..compare.sweeps import Variant
        from .sweeps import gate_failures

        scorecard = build_scorecard(results.records, results.checks, results.diffs, run.specs,
                                    results.outcomes, run.scope.order,
                                    frozenset(results.sweep_tests), gold_changes,
                                    {nodeid: Variant.from_json(data)
                                     for nodeid, data in results.variants.items()})
        run.scorecard = scorecard
        beaten = gate_failures(scorecard.sweeps())  # said last in the summary
        if beaten and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        writers = ((self.options.report_json, _write_json_report),
                   (self.options.report_md, _append_markdown_report),
                   (self.options.report_html, self._write_html_report))
        for path, write in writers:
            if path is None:
                continue
            try:
                output_target(path, run.config.rootpath)  # before a folder is made
                path.parent.mkdir(parents=True, exist_ok=True)
                write(path, scorecard, run.config.rootpath)
                run.notes.append(f"wrote {path}")
            except OSError as error:
                run.notes.append(f"could not write {path}: {error.strerror or error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if self.options.export_dir is not None:  # written by the tests, counted here
            count = len(results.exported)
            run.notes.append(f"wrote {self.options.export_dir} ({count} dataset "
                             f"file{'s' if count != 1 else ''}, a folder per test)" if count
                             else f"--rag-export: no dataset file written to "
                             f"{self.options.export_dir}")
        run.config.hook.pytest_rag_scorecard(config=run.config, scorecard=scorecard)

    def _write_html_report(self, path: Path, scorecard: Scorecard, root: Path) -> None:
        from ..reports.html import render_html

        run = self.session
        details = {(record.nodeid, record.stage): record.details
                   for record in run.results.records if record.details}
        baseline = run.baseline if self.options.compare else None
        text = render_html(scorecard, details, baseline=baseline, specs=run.specs)
        write_atomically(path, text.encode("utf-8"), root=root)

    def _scorecard_wanted(self) -> bool:
        """Whether anything was recorded, or a report or a hook wants even an empty scorecard."""
        results = self.session.results
        return bool(results.records or results.checks or results.diffs
                    or self.session.reports_wanted())


def _write_json_report(path: Path, scorecard: Scorecard, root: Path) -> None:
    import json

    text = json.dumps(scorecard.to_json(), indent=2, sort_keys=True, allow_nan=False)
    write_atomically(path, (text + "\n").encode("utf-8"), root=root)


def _append_markdown_report(path: Path, scorecard: Scorecard, root: Path) -> None:
    """Append, as a CI step summary expects (a new or empty file is simply written); what
    the file held stays, whatever happens to the append, and a device such as
    ``/dev/stdout`` works, so this one is not replaced atomically."""
    output_target(path, root)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(scorecard.markdown() + "\n")


def export_folder(root: Path, nodeid: str) -> Path:
    """The folder of one test: its node id made a file name, with a short digest so
    that two ids that read alike stay apart."""
    digest = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:8]
    return root / f"{_UNSAFE.sub('_', nodeid).strip('_')[:80]}-{digest}"


def export_reports(root: Path, nodeid: str, reports: Mapping[str, Report], *,
                   run_root: Path) -> tuple[list[str], list[str]]:
    """Write the exports of one test's reports under ``root``; the notes to show (problems
    only) and the paths of the files written.  Every file is an output of the run: no
    link may lead it out of ``run_root`` (:func:`~pytest_rag.atomic.output_target`),
    checked before its folder is made."""
    from ..dataset.loading import load_dataset
    from ..dataset.sources import write_dataset
    from ..dataset.sources.export import UNSUPPORTED, dataset_json
    from ..errors import DatasetError
    from ..stages.evaluate import evaluate_dataset

    notes, written = [], []
    for stage, report in reports.items():
        if report.dataset is None:
            continue
        if stage in UNSUPPORTED:
            notes.append(f"--rag-export: {nodeid} [{stage}] not exported: {UNSUPPORTED[stage]}")
            continue
        path = export_folder(root, nodeid) / f"{stage}.json"
        try:
            output_target(path, run_root)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_dataset(dataset_json(report.dataset, report.settings), path, root=run_root)
            again = evaluate_dataset(load_dataset(path), [stage])[stage]
        except (OSError, DatasetError) as error:
            notes.append(f"--rag-export: could not write {path}: {error}")
            continue
        written.append(str(path))
        differing = [key for key, value in report.values.items()
                     if again.values.get(key) != value]
        if differing:
            notes.append(f"--rag-export: {path} does not reproduce {nodeid} [{stage}]: "
                         + ", ".join(differing))
    return notes, written
