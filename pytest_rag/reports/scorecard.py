"""The RAG scorecard: every recorded test and stage with thresholds and baseline diffs.

Building and rendering are pure: :class:`Scorecard` turns into terminal lines
(tabulate, readable at 80 columns), Markdown (for a CI step summary) and JSON
(``--rag-report``); the plugin only writes them out.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compare.comparison import STATUSES, MetricDiff, StatusRow
from ..compare.gold import GoldChange
from ..compare.records import (
    REPORT_FORMAT,
    REPORT_VERSION,
    CheckOutcome,
    StageRecord,
    entry_key,
)
from ..compare.sweeps import Sweep, Variant, find_sweeps
from ..escaping import markdown_code, terminal_text
from ..formatting import delta_text, fitted, number_text, p_value_text, setting_text
from ..registry import REGISTRY, MetricSpec
from .sweep_views import sweep_brief, sweep_lines, sweep_markdown
from .tables import status_counts

__all__ = ["ATTENTION", "LABELS", "SUMMARY_WORDS", "ScoreEntry", "ScoreRow", "Scorecard",
           "build_scorecard"]

#: The statuses by the label a row shows (:attr:`ScoreRow.status`).
LABELS: Mapping[str, StatusRow] = {row.label: row for row in STATUSES.values() if row.label}


def _num(value: float | None) -> str:
    return "-" if value is None else number_text(value)


def _delta(value: float | None) -> str:
    return "" if value is None else delta_text(value)


_COLUMNS = ("metric", "value", "threshold", "baseline", "delta", "p", "status")
_OPTIONAL = frozenset({"threshold", "baseline", "delta", "p"})


def _table(rows: Sequence[tuple[str, ...]], width: int) -> list[str]:
    """``rows`` under :data:`_COLUMNS`, indented by two spaces, at most ``width`` wide.

    The look of tabulate's ``simple`` format, without its padding: columns two
    spaces apart under a dashed rule.  Threshold, baseline and delta are left
    out when no row has one, and metric keys are shortened with ``…`` only if
    the table would still be too wide.
    """
    keep = [i for i, name in enumerate(_COLUMNS)
            if name not in _OPTIONAL or any(row[i] for row in rows)]
    headers = [_COLUMNS[i] for i in keep]
    cells = [[row[i] for i in keep] for row in rows]
    widths = [max(len(header), *(len(line[j]) for line in cells))
              for j, header in enumerate(headers)]
    room = width - 2 - sum(widths[1:]) - 2 * (len(widths) - 1)
    if widths[0] > room:
        widths[0] = max(room, len(headers[0]))
        cells = [[fitted(line[0], widths[0]), *line[1:]] for line in cells]
    return ["  " + "  ".join(text.ljust(size) for text, size in zip(line, widths)).rstrip()
            for line in (headers, ["-" * size for size in widths], *cells)]


#: Variants a sweep table lists by default (``-v`` lists all): about a screenful.
SWEEP_ROWS = 20

def _fit(blocks: list[list[str]], room: int | None) -> list[list[str]]:
    """The leading ``blocks`` that fit in ``room`` lines with one line to spare (for the
    "N more" line); a first block taller than that is cut (none at all when not even
    its first line fits).  ``None``: all of them."""
    if room is None or sum(map(len, blocks)) <= room:
        return blocks
    room -= 1
    if room < 1:
        return []
    kept: list[list[str]] = []
    used = 0
    for block in blocks:
        if used + len(block) > room:
            if not kept:
                kept.append(block[:room])
            break
        kept.append(block)
        used += len(block)
    return kept


#: Row statuses that make the default scorecard show their stage report.
ATTENTION = frozenset(label for label, row in LABELS.items() if row.attention)


@dataclass(frozen=True)
class ScoreRow:
    """One metric of one recorded stage."""

    key: str
    value: float | None
    threshold: str | None
    baseline: float | None
    delta: float | None
    #: The status's label (:data:`LABELS`): ``REGRESSED``, ``within noise``, ``ok``, ...
    status: str
    direction: str
    reason: str = ""
    p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    #: The numbers of ``threshold``, in its order (for charts).
    threshold_values: tuple[float, ...] = ()
    #: Why the baseline comparison gave its status (:attr:`MetricDiff.note`), and which
    #: rule decided when a significance level was asked for and the test did not
    #: (:attr:`MetricDiff.rule`).
    note: str = ""
    rule: str = ""

    @property
    def failed(self) -> bool:
        """Fails its test (below a threshold, regressed, no longer measured)."""
        return LABELS[self.status].fails

    @property
    def worse(self) -> bool:
        """Got worse against the baseline (regressed, no longer measured, within noise)."""
        return LABELS[self.status].worse

    @property
    def p_text(self) -> str:
        """The p-value of a change worth a look (regressed, improved, within noise)."""
        if not LABELS[self.status].statistics:
            return ""
        if self.rule:  # the significance test did not decide: say what did
            return (f"{p_value_text(self.p_value)}, " if self.p_value is not None
                    else "") + f"by {self.rule.split(' (', 1)[0]}"
        return "" if self.p_value is None else p_value_text(self.p_value)

    @property
    def interesting(self) -> bool:
        """Shown in the summary scorecard: checked by a threshold, or changed."""
        return self.threshold is not None or LABELS[self.status].attention

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "threshold": self.threshold, "baseline": self.baseline,
                "delta": self.delta, "status": self.status, "direction": self.direction,
                "p_value": self.p_value, "ci95": (None if self.ci_low is None
                                                  else [self.ci_low, self.ci_high]),
                **({"not_measured": self.reason} if self.value is None and self.reason else {}),
                **({"note": self.note} if self.note else {}),
                **({"decided_by": self.rule} if self.rule else {})}


def _notes(rows: Iterable[ScoreRow]) -> list[str]:
    """The rows' notes for the lines under their table, each said once: a note about the
    whole entry (other gold, other settings) as it is, another one after the metrics it
    concerns."""
    keys: dict[str, list[str]] = {}
    for row in rows:
        if row.note:
            keys.setdefault(row.note, []).append(row.key)
    return [note if note.startswith(("settings changed", "different gold"))
            else f"{', '.join(names)}: {note}" for note, names in keys.items()]


@dataclass(frozen=True)
class ScoreEntry:
    """One stage recorded by one test, with its rows."""

    nodeid: str
    stage: str
    settings: Mapping[str, Any]
    rows: tuple[ScoreRow, ...]
    per_query: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    outcome: str = "passed"
    worse_queries: Mapping[str, Sequence[tuple[str, float | None, float | None]]] = field(
        default_factory=dict)
    #: The gold fingerprints of the record (``{"queries": ..., "documents": ...}``), kept in
    #: the JSON report so that ``pytest-rag diff`` sees gold changes too.
    gold: Mapping[str, Any] = field(default_factory=dict)
    #: How the gold changed since the baseline, when it did.
    gold_change: GoldChange | None = None
    #: The name of the call when the test recorded the stage more than once
    #: (:attr:`~pytest_rag.compare.records.StageRecord.name`).
    name: str | None = None

    @property
    def entry_key(self) -> str:
        """The stage, with the call's name in brackets when it has one (the baseline key)."""
        return entry_key(self.stage, self.name)

    @property
    def failed(self) -> bool:
        return any(row.failed for row in self.rows)


def _row(record: StageRecord, key: str, spec: MetricSpec | None,
         checks: Sequence[CheckOutcome], diff: MetricDiff | None) -> ScoreRow:
    value = record.values.get(key)
    mine = [check for check in checks if check.key == key]
    threshold = ", ".join(dict.fromkeys(f"{c.op} {c.value:g}" for c in mine)) or None
    status = STATUSES["not measured" if value is None else "ok"].label
    if diff is not None:
        status = STATUSES[diff.status].label or status
    if any(not check.passed for check in mine):
        status = STATUSES["fail"].label
    return ScoreRow(key, value, threshold, diff.baseline if diff else None,
                    diff.delta if diff else None, status,
                    spec.direction.value if spec else "info", record.missing.get(key, ""),
                    diff.p_value if diff else None, diff.ci_low if diff else None,
                    diff.ci_high if diff else None,
                    tuple(dict.fromkeys(check.value for check in mine)),
                    diff.note if diff else "", diff.rule if diff else "")


def build_scorecard(records: Iterable[StageRecord], checks: Iterable[CheckOutcome] | Mapping[
        tuple[str, str], Sequence[CheckOutcome]],
        diffs: Mapping[tuple[str, str], Sequence[MetricDiff]],
        specs: Mapping[str, MetricSpec], outcomes: Mapping[str, str] | None = None,
        order: Sequence[str] = (), sweep_tests: frozenset[str] | None = None,
        gold_changes: Mapping[tuple[str, str], GoldChange] | None = None,
        variants: Mapping[str, Variant] | None = None) -> Scorecard:
    """Assemble the scorecard; ``checks``, ``diffs`` and ``gold_changes`` (the entries
    whose gold changed) are keyed by ``(nodeid, stage)``; ``variants`` (knobs, costs
    and sweep rule) by node id.

    Entries follow ``order`` (the session's collection order, so parametrized
    variants keep the order they were written in); tests not in it come after,
    by node id.
    """
    position = {nodeid: index for index, nodeid in enumerate(order)}
    check_map: Mapping[tuple[str, str], Sequence[CheckOutcome]] = (
        checks if isinstance(checks, Mapping) else {})
    entries = []
    for record in sorted(records, key=lambda r: (position.get(r.nodeid, len(position)),
                                                 r.nodeid, r.stage)):
        ident = (record.nodeid, record.entry_key)
        by_key = {diff.key: diff for diff in diffs.get(ident, ())}
        rows = tuple(_row(record, key, specs.get(f"{record.stage}.{key}"),
                          check_map.get(ident, ()), by_key.get(key))
                     for key in record.values)
        worse = {key: diff.worse_queries for key, diff in by_key.items() if diff.worse_queries}
        change = (gold_changes or {}).get(ident)
        entries.append(ScoreEntry(record.nodeid, record.stage, dict(record.settings), rows,
                                  dict(record.per_query),
                                  (outcomes or {}).get(record.nodeid, "passed"), worse,
                                  record.gold_json(), change, record.name))
    return Scorecard(tuple(entries), sweep_tests, dict(variants or {}), specs)


#: The statuses a summary counts, in this order, and the words it says them with (the
#: terminal's summary line and the HTML report's summary).
SUMMARY_WORDS: tuple[tuple[str, str], ...] = tuple(
    (label, row.summary) for label, row in LABELS.items() if row.summary)


#: The characters a setting's value takes in an entry's header (``abstain_phrases=[...]``),
#: cut beyond with ``…``; under ``-v`` (``full``) the longer room, which only a hostile
#: value fills.
SETTING_ROOM = 24
SETTING_ROOM_FULL = 400


def _moved(row: ScoreRow) -> bool:
    """An informational metric (never a regression) whose value changed against the
    baseline: not "unchanged", though it passes."""
    return row.direction == "info" and row.baseline is not None and row.value != row.baseline


def _hidden_text(entry: ScoreEntry, shown: Sequence[ScoreRow]) -> str:
    """The count of an entry's metrics not shown: unchanged against the baseline (or
    not checked), and the informational ones that changed, counted apart."""
    listed = {row.key for row in shown}
    hidden = [row for row in entry.rows if row.key not in listed]
    moved = sum(map(_moved, hidden))
    rest = len(hidden) - moved
    parts = []
    if rest:
        baselined = any(row.baseline is not None for row in entry.rows)
        what = ("not checked" if not baselined else "unchanged" if moved
                else "unchanged against the baseline")
        parts.append(f"{rest} {'more ' if shown else ''}metric{'s' if rest != 1 else ''} {what}")
    if moved:
        parts.append(f"{moved} informational changed" if rest else
                     f"{moved} {'more ' if shown else ''}informational "
                     f"metric{'s' if moved != 1 else ''} changed")
    return ", ".join(parts) + " (-v lists them)"


@dataclass(frozen=True)
class Scorecard:
    """Every recorded stage of the session, in collection order, then by stage."""

    entries: tuple[ScoreEntry, ...] = ()
    #: Test functions marked ``@pytest.mark.rag_sweep`` (node ids without the
    #: parameter part); ``None``: every group of variants is a sweep.
    sweep_tests: frozenset[str] | None = None
    #: Knobs, costs and rule of each parametrized test (node id).
    variants: Mapping[str, Variant] = field(default_factory=dict)
    #: The metrics (the registry with any custom metrics).
    specs: Mapping[str, MetricSpec] = field(default_factory=lambda: REGISTRY)

    def sweeps(self) -> list[Sweep]:
        """Parametrized variants of one test, grouped for comparison; bests and a verdict
        only in sweeps of one knob (see :attr:`sweep_tests`).  Computed once."""
        return list(self._sweeps)

    @functools.cached_property
    def _sweeps(self) -> tuple[Sweep, ...]:
        directions = {f"{entry.stage}.{row.key}": row.direction
                      for entry in self.entries for row in entry.rows}
        return tuple(find_sweeps(self.entries, directions, self.sweep_tests, self.variants,
                                 self.specs))

    def counts(self) -> dict[str, int]:
        """How many rows have each status, plus ``stages``."""
        counts: dict[str, int] = {"stages": len(self.entries)}
        for entry in self.entries:
            for row in entry.rows:
                counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    def summary_line(self) -> str:
        """``20 stage reports; metrics: 17 regressed, 1 no longer measured, 11 new``:
        the counts after ``metrics:`` are of metrics, in the words of ``pytest-rag diff``."""
        counts = self.counts()
        stages = f"{counts['stages']} stage report{'s' if counts['stages'] != 1 else ''}"
        by_word: dict[str, int] = {LABELS[label].word: count for label, count in counts.items()
                   if label in LABELS}
        metrics = status_counts(by_word)
        return stages + ("; metrics: " + ", ".join(metrics) if metrics else "")

    # -- terminal ---------------------------------------------------------------
    def lines(self, *, full: bool = False, width: int = 80,
              sweep_width: int | None = None, limit: int | None = None) -> list[str]:
        """The terminal scorecard; ``full`` lists every stage report, metric and group
        of parametrized variants.

        Otherwise only what needs attention: stage reports of failed tests and
        those with a metric below its threshold, regressed, no longer measured,
        within noise, improved or new (shown with their checked or changed
        metrics, the others counted in one line), and the sweep tables of tests
        marked ``rag_sweep``; the rest is counted in one line each.  ``limit``
        (not with ``full``): at most that many lines in all, what does not fit
        counted in an "N more" line; a sweep table short of room keeps the
        columns that explain its verdict (:func:`~.sweep_views.sweep_lines`).  Every
        line fits in ``width`` columns; the sweep tables use ``sweep_width`` (the
        terminal's width; default ``width``).
        """
        import textwrap

        blocks: list[list[str]] = []  # what needs attention, then the sweeps
        setting_room = SETTING_ROOM_FULL if full else SETTING_ROOM  # per value
        quiet = 0
        for entry in self.entries:
            if not full and entry.outcome != "failed" and entry.gold_change is None and not any(
                    row.status in ATTENTION for row in entry.rows):
                quiet += 1
                continue
            out: list[str] = []
            settings = ", ".join(f"{k}={fitted(setting_text(v), setting_room)}"
                                 for k, v in entry.settings.items() if v is not None)
            header = terminal_text(f"{entry.nodeid} [{entry.entry_key}]"
                                   + (f" ({settings})" if settings else ""))
            # Too wide: wrapped between words (settings), never cut inside one.
            out.extend(textwrap.wrap(header, width, subsequent_indent="    ",
                                     break_on_hyphens=False, break_long_words=False)
                       or [header])
            if entry.gold_change is not None:
                out.extend(textwrap.wrap(entry.gold_change.text(), width,
                                         initial_indent="  ", subsequent_indent="    "))
            rows = [row for row in entry.rows if full or row.interesting]
            hidden = len(entry.rows) - len(rows)
            if rows:
                table = [(row.key, _num(row.value), row.threshold or "",
                          _num(row.baseline) if row.baseline is not None else "",
                          _delta(row.delta), row.p_text, row.status) for row in rows]
                out.extend(_table(table, width))
            for note in _notes(rows):
                out.extend(textwrap.wrap(terminal_text(note), width, initial_indent="  ",
                                         subsequent_indent="    "))
            if hidden:
                out.extend(textwrap.wrap(_hidden_text(entry, rows), width, initial_indent="  ",
                                         subsequent_indent="    "))
            blocks.append(out)
        counted = []  # one line each, always shown
        if quiet:
            counted.append(f"{quiet} {'more ' if len(self.entries) > quiet else ''}stage "
                           f"report{'s' if quiet != 1 else ''} with nothing to flag "
                           "(-v lists them)")
        # Variants of a test not marked rag_sweep (datasets side by side, or a test
        # parametrized for coverage): their table is there on request only.
        sweeps = self.sweeps()
        shown = [sweep for sweep in sweeps if full or sweep.starred]
        if len(shown) < len(sweeps):
            unmarked = len(sweeps) - len(shown)
            counted.append(f"{unmarked} parametrized test{'s' if unmarked != 1 else ''} not "
                           "a rag_sweep: variants side by side with -v")
        sweep_width = max(sweep_width or width, 40)
        summary = textwrap.wrap(self.summary_line(), width) if self.entries else []
        room = None if full or limit is None else limit - len(counted) - len(summary)
        tables = [sweep_lines(sweep, sweep_width, None if full else SWEEP_ROWS)
                  for sweep in shown]
        if room is not None and sum(map(len, blocks + tables)) > room:
            # Too long: every sweep keeps its verdict (the metric columns that do not
            # explain it go first, in every sweep, then its rows), the stage reports
            # get the room the sweeps' briefest form leaves.
            briefs = [sweep_brief(sweep, sweep_width) for sweep in shown]
            kept = _fit(blocks, room - sum(map(len, briefs)))
            more = len(kept) < len(blocks) or kept != blocks[:len(kept)]  # an "N more" line
            left = room - sum(map(len, kept)) - more
            tables = []
            for index, sweep in enumerate(shown):  # the columns that explain each verdict
                later = sum(map(len, briefs[index + 1:]))
                tables.append(sweep_lines(sweep, sweep_width, SWEEP_ROWS, left - later,
                                          others=False))
                left -= len(tables[-1])
            for index, sweep in enumerate(shown):  # then, in the room left, the others
                if left > 0:
                    wider = sweep_lines(sweep, sweep_width, SWEEP_ROWS,
                                        len(tables[index]) + left)
                    left -= len(wider) - len(tables[index])
                    tables[index] = wider
        else:
            kept = blocks
        out = [line for block in kept for line in block]
        out.extend(counted[:1] if quiet else [])
        out.extend(line for table in tables for line in table)
        cut = bool(kept) and len(kept[-1]) < len(blocks[len(kept) - 1])
        if len(kept) < len(blocks) or cut:
            left_out = len(blocks) - len(kept)
            parts = ([f"{left_out} more stage report{'s' if left_out != 1 else ''}"]
                     if left_out else []) + (["the last table cut"] if cut else [])
            out.append(", ".join(parts) + " (-v lists everything)")
        out.extend(counted[1:] if quiet else counted)
        out.extend(summary)
        return out

    # -- markdown ---------------------------------------------------------------
    def markdown(self) -> str:
        """The scorecard as GitHub Markdown, e.g. for ``$GITHUB_STEP_SUMMARY``."""
        from tabulate import tabulate

        parts = ["## RAG scorecard", "", self.summary_line() if self.entries else
                 "No stage was evaluated.", ""]
        for sweep in self.sweeps():  # first: the comparison a reader came for
            parts.extend([sweep_markdown(sweep), ""])
        for entry in self.entries:
            parts.append(f"### {markdown_code(entry.nodeid)} — {entry.entry_key}")
            parts.append("")
            if entry.gold_change is not None:
                parts.extend([f"_{markdown_code(entry.gold_change.text())}_", ""])
            table = [(f"`{row.key}`", _num(row.value), row.threshold or "",
                      _num(row.baseline) if row.baseline is not None else "", _delta(row.delta),
                      row.p_text, "" if row.ci_low is None or not row.p_text
                      else f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}]",
                      f"**{row.status}**" if row.failed else row.status)
                     for row in entry.rows]
            parts.append(tabulate(table, headers=("metric", "value", "threshold", "baseline",
                                                  "delta", "p", "95% CI", "status"),
                                  tablefmt="github", disable_numparse=True))
            parts.append("")
        return "\n".join(parts)

    # -- json ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        tests: dict[str, dict[str, Any]] = {}
        for entry in self.entries:
            tests.setdefault(entry.nodeid, {})[entry.entry_key] = {
                "outcome": entry.outcome,
                "settings": dict(entry.settings),
                "metrics": {row.key: row.to_json() for row in entry.rows},
                "per_query": {k: dict(v) for k, v in entry.per_query.items()},
                **({"gold": dict(entry.gold)} if entry.gold else {}),
                **({"gold_change": entry.gold_change.to_json()} if entry.gold_change else {}),
            }
        sweeps = {sweep.test: sweep.to_json() for sweep in self.sweeps()}
        return {"format": REPORT_FORMAT, "version": REPORT_VERSION,
                "summary": self.counts(), "tests": tests, "sweeps": sweeps}
