"""The plugin's part of pytest's terminal summary: the scorecard and the run's notes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..escaping import shown_id, terminal_lines, terminal_text
from .session import is_worker

if TYPE_CHECKING:
    from .session import RagSession

__all__ = ["GATE_STAT", "SCREENFUL", "Summary"]

#: The word of pytest's closing line that counts the sweeps whose gate failed.
GATE_STAT = "sweep gate failed"

#: The most lines the default scorecard takes (``-v`` and ``--rag-scorecard=full`` are
#: uncut).  Fixed, not the terminal's height: CI logs have none, and the same run
#: prints the same summary everywhere.
SCREENFUL = 40


#: Stage reports named in the "not compared" note; the rest are counted.
UNSETTLED_SHOWN = 10

class Summary:
    """Writes the "RAG scorecard" section and the ``pytest-rag:`` notes."""

    def __init__(self, session: RagSession) -> None:
        self.session = session
        self.options = session.options

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter,
                                exitstatus: int) -> None:
        run = self.session
        if is_worker(run.config):
            return
        scorecard = run.scorecard
        show = self.options.scorecard != "off" and scorecard is not None and scorecard.entries
        if show and scorecard is not None:
            full = self.options.scorecard == "full" or run.config.get_verbosity() > 0
            terminalreporter.write_sep("=", "RAG scorecard")
            width = run.config.get_terminal_writer().fullwidth
            for line in scorecard.lines(full=full, limit=SCREENFUL, sweep_width=width):
                terminalreporter.write_line(terminal_text(line))
            from ..reports.scorecard import LABELS

            counts = scorecard.counts()
            improved = sum(counts.get(label, 0) for label, row in LABELS.items() if row.better)
            worse = sum(counts.get(label, 0) for label, row in LABELS.items() if row.fails)
            # Only when nothing got worse: an update would also accept the regressions.
            if improved and not worse and self.options.compare and not self.options.update:
                terminalreporter.write_line(  # within 80 columns, like the scorecard
                    f"{improved} metric{'s' if improved != 1 else ''} improved: the baseline "
                    "can be tightened (--rag-update-baseline)")
        from .sweeps import gate_failures

        # Last: why a run whose tests all passed fails.
        failing = [sweep for sweep in (scorecard.sweeps() if scorecard is not None else [])
                   if sweep.verdict is not None and sweep.verdict.gate is not None]
        gates = gate_failures(failing)
        if gates:
            if exitstatus == pytest.ExitCode.OK:  # the status pytest had before the gate
                gates[-1] += " (the run fails: exit status 1, although every test passed)"
            # In pytest's closing line too ("5 passed, 1 sweep gate failed in 0.5s"), which
            # would otherwise read as a green run.  Reports, as other plugins read them.
            terminalreporter.stats.setdefault(GATE_STAT, []).extend(
                _gate_report(sweep.test, text) for sweep, text in zip(failing, gates))
        for note in [*run.results.notes, *self._unsettled(), *run.notes, *gates]:
            # ids of tests and queries in it: escaped like every line
            terminalreporter.write_line(terminal_lines(f"pytest-rag: {note}"))

    def _unsettled(self) -> list[str]:
        """Without ``--rag-strict``, the stage reports that were not compared like with like
        (other gold, other settings): they pass, so they are said loudly here."""
        if self.options.strict or self.options.update:
            return []
        entries = sorted({f"{shown_id(nodeid)} [{entry_key}]"
                          for (nodeid, entry_key), diffs in self.session.results.diffs.items()
                          if any(diff.unsettled for diff in diffs)})
        if not entries:
            return []
        more = len(entries) - UNSETTLED_SHOWN
        return [f"{len(entries)} stage report{'s' if len(entries) != 1 else ''} not compared "
                "with its baseline (different gold or settings; fails under --rag-strict): "
                + ", ".join(entries[:UNSETTLED_SHOWN]) + (f" (+{more} more)" if more > 0 else "")]


def _gate_report(nodeid: str, text: str) -> pytest.TestReport:
    """A failed report of the sweep ``nodeid`` (its test function) for pytest's counts."""
    path, _, name = nodeid.partition("::")
    return pytest.TestReport(nodeid, (path, None, name), {}, "failed", text, "call")
