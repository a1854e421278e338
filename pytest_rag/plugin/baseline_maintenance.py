"""``--rag-update-baseline`` and ``--rag-prune-baseline``: the baseline file at the end of a run.

Only the controller writes, after every test's results are merged and before
the report files (so their notes follow the baseline's).  The file is updated
under a lock, applying this run's changes to the file as it is then, so that
concurrent updates (two CI jobs, ``-k a`` and ``-k b``) both survive.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pytest

from ..atomic import exclusive
from .session import is_worker

if TYPE_CHECKING:
    from ..compare.baseline import Baseline
    from .session import RagSession

__all__ = ["BaselineMaintenance"]


class BaselineMaintenance:
    """Writes the baseline at the end of the run; says which entries look stale."""

    def __init__(self, session: RagSession) -> None:
        self.session = session
        self.options = session.options

    @pytest.hookimpl(tryfirst=True)  # before the report files: the baseline's notes come first
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if is_worker(self.session.config):
            return
        self._write_baseline(session)

    def _note(self, text: str) -> None:
        self.session.notes.append(text)

    def _write_baseline(self, session: pytest.Session) -> None:
        options = self.options
        baseline = self.session.baseline
        if baseline is None or not (options.update or options.prune):
            if baseline is not None and options.compare:
                self._uncovered(session, baseline)
            return
        if self.session.scope.collection_errors or session.exitstatus in (
                pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                pytest.ExitCode.USAGE_ERROR):
            self._note(f"baseline {options.baseline_path} not written: the run was "
                       "interrupted or had collection errors")
            return
        # Concurrent updates (two CI jobs, `-k a` and `-k b`) take turns, and each applies
        # its own changes to the file as it is now, so both survive.
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(exclusive(options.baseline_path,
                                             root=self.session.config.rootpath))
            except OSError as error:  # the folder cannot be made or opened
                self._not_written(session, error)
                return
            self._update_baseline_file(session)

    def _uncovered(self, session: pytest.Session, baseline: Baseline) -> None:
        """Say what a compare run's gate did not cover; under ``--rag-strict`` that fails
        the run (a regression in an xfail test fails the test itself: :mod:`.gate`)."""
        results = self.session.results
        strict = self.options.strict
        failing = []
        stale = self.session.scope.stale_entries(baseline)
        if stale:
            failing.append("baseline entries of tests that no longer exist (remove with "
                           "--rag-update-baseline --rag-prune-baseline on a full run): "
                           + ", ".join(stale))
        skipped = sorted(nodeid for nodeid in baseline.tests
                         if results.outcomes.get(nodeid) == "skipped"
                         and nodeid not in results.xfailed)
        if skipped:
            failing.append("not gated in this run (skipped; their baseline entries were not "
                           "compared): " + ", ".join(skipped))
        for line in failing:
            self._note(line + (" (--rag-strict fails the run)" if strict else ""))
        if strict and failing and session.exitstatus in (pytest.ExitCode.OK,
                                                         pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        regressed = [f"{nodeid} [{stage}: {', '.join(d.key for d in diffs if d.failed)}]"
                     for (nodeid, stage), diffs in results.diffs.items()
                     if nodeid in results.xfailed and any(d.failed for d in diffs)]
        if regressed:
            self._note("regressions in xfail tests (they do not fail; --rag-strict fails "
                       "them): " + ", ".join(regressed))

    def _not_written(self, session: pytest.Session, error: OSError) -> None:
        self._note(f"could not write baseline {self.options.baseline_path}: "
                   f"{error.strerror or error}")
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def _update_baseline_file(self, session: pytest.Session) -> None:
        """Apply this run's changes to the baseline file as it is now (under the lock)."""
        from ..compare.baseline import Baseline, BaselineError
        from ..compare.references import plan_update

        options = self.options
        results = self.session.results
        scope = self.session.scope
        assert self.session.baseline is not None
        current = self.session.baseline
        if options.baseline_path.exists():
            try:
                current = Baseline.load(options.baseline_path)
            except BaselineError as error:
                self._note(f"baseline {options.baseline_path} not written: {error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
                return
        updated = current
        # A test that skipped itself after recording did not run to the end: keep its entry.
        # So does, unless --rag-update-failed, one that failed (or errored, or xfailed): its
        # numbers may be those of a broken run, and would hide the next real drop.
        records = [record for record in results.records
                   if results.outcomes.get(record.nodeid) != "skipped"
                   or record.nodeid in results.xfailed]
        if options.update and not options.update_failed:
            not_passed = results.failed | results.xfailed
            failed = list(dict.fromkeys(record.nodeid for record in records
                                        if record.nodeid in not_passed))
            if failed:
                records = [record for record in records if record.nodeid not in not_passed]
                self._note("baseline entries not updated: test failed (--rag-update-failed "
                           "records them anyway): " + ", ".join(failed))
        if options.update:
            # A test that ran to the end and no longer records a stage: its entry goes.
            recorded = {(record.nodeid, record.entry_key) for record in records}
            dropped = sorted((nodeid, stage) for nodeid, stages in updated.tests.items()
                             if results.passed(nodeid)
                             for stage in stages if (nodeid, stage) not in recorded)
            if dropped:
                updated = updated.without_stages(dropped)
                self._note("dropped baseline entries of stages the tests no longer "
                           "record: " + ", ".join(f"{nodeid} [{stage}]"
                                                  for nodeid, stage in dropped))

            try:
                # A failed test recorded on purpose (--rag-update-failed) is an explicit
                # acceptance: its numbers become the reference, even within the tolerance.
                plan = plan_update(updated, records, self.session.specs, options.tolerances,
                                   accept=options.accept,
                                   accept_tests=results.failed | results.xfailed)
            except BaselineError as error:
                self._note(f"baseline {options.baseline_path} not written: {error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
                return
            updated = plan.baseline
            if plan.accepted:
                count = len(plan.accepted)
                what = "flagged change" if plan.unlike else "regression"
                self._note(f"this update accepts {count} {what}{'s' if count != 1 else ''}"
                           " as the new baseline:" + "".join(f"\n  {line}"
                                                            for line in plan.accepted))
        stale = scope.stale_entries(self.session.baseline)
        if options.prune:
            if stale is None:
                reason = scope.selection() or "collection errors"
                self._note("--rag-prune-baseline refused: this run did not collect every "
                           f"test ({reason}); run the whole suite without test selection "
                           "to prune")
            else:
                if stale:
                    updated = updated.without(stale)
                    self._note("pruned baseline entries: " + ", ".join(stale))
                outside = sum(1 for nodeid in updated.tests if not scope.in_scope(nodeid))
                if outside:
                    self._note(f"--rag-prune-baseline kept {outside} entr"
                               f"{'ies' if outside != 1 else 'y'} outside the paths this run "
                               "collected from, which it cannot tell are gone (run from the "
                               "rootdir to prune them)")
        elif stale:
            self._note("baseline entries of tests that no longer exist (kept; remove them "
                       "with --rag-prune-baseline): " + ", ".join(stale))
        if updated == current and options.baseline_path.exists():
            self._note(f"baseline {options.baseline_path} unchanged")
            return
        try:
            updated.save(options.baseline_path, root=self.session.config.rootpath)
        except OSError as error:
            self._not_written(session, error)
            return
        except BaselineError as error:  # its reader would refuse it: the old file stays
            self._note(str(error))
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        stages = len(records) if options.update else 0
        self._note(f"baseline written to {options.baseline_path} "
                   f"({stages} stage report{'s' if stages != 1 else ''} updated)")
