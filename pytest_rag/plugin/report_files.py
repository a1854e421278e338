"""The scorecard and the report files: ``--rag-report`` (JSON), ``--rag-report-md``
(Markdown, appended) and ``--rag-html``.

Built on the controller once every test's results are merged, after the
baseline is written; the ``pytest_rag_scorecard`` hook then receives it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..atomic import write_atomically
from .session import is_worker

if TYPE_CHECKING:
    from ..reports.scorecard import Scorecard
    from .session import RagSession

__all__ = ["ReportFiles"]


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
        scorecard = build_scorecard(results.records, results.checks, results.diffs, run.specs,
                                    results.outcomes, run.scope.order,
                                    frozenset(results.sweep_tests), gold_changes)
        run.scorecard = scorecard
        writers = ((self.options.report_json, _write_json_report),
                   (self.options.report_md, _append_markdown_report),
                   (self.options.report_html, self._write_html_report))
        for path, write in writers:
            if path is None:
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write(path, scorecard)
                run.notes.append(f"wrote {path}")
            except OSError as error:
                run.notes.append(f"could not write {path}: {error.strerror or error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        run.config.hook.pytest_rag_scorecard(config=run.config, scorecard=scorecard)

    def _write_html_report(self, path: Path, scorecard: Scorecard) -> None:
        from ..reports.html import render_html

        run = self.session
        details = {(record.nodeid, record.stage): record.details
                   for record in run.results.records if record.details}
        baseline = run.baseline if self.options.compare else None
        text = render_html(scorecard, details, baseline=baseline, specs=run.specs)
        write_atomically(path, text.encode("utf-8"))

    def _scorecard_wanted(self) -> bool:
        """Whether anything was recorded, or a report or a hook wants even an empty scorecard."""
        results = self.session.results
        return bool(results.records or results.checks or results.diffs
                    or self.session.reports_wanted())


def _write_json_report(path: Path, scorecard: Scorecard) -> None:
    import json

    text = json.dumps(scorecard.to_json(), indent=2, sort_keys=True, allow_nan=False)
    write_atomically(path, (text + "\n").encode("utf-8"))


def _append_markdown_report(path: Path, scorecard: Scorecard) -> None:
    """Append, as a CI step summary expects (a new or empty file is simply written); what
    the file held stays, whatever happens to the append, and a device such as
    ``/dev/stdout`` works, so this one is not replaced atomically."""
    with path.open("a", encoding="utf-8") as stream:
        stream.write(scorecard.markdown() + "\n")
