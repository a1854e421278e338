"""A sweep as a table of cells shared by the terminal, Markdown and HTML views.

One row per variant; the columns in this order: the variant's knobs, its
objective (value, paired difference to the best with its 95% interval, best /
tied / worse, on the frontier), its costs, then the metrics that differ, stages
in pipeline order.  ``*`` marks the best value of a comparable metric, ``~`` a
metric that does not compare across the variants.  The verdict lines under the
table say the rule, the recommendation and why, and the shipped variant's gate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..compare.sweeps import COSTS, Sweep
from ..escaping import markdown_code, markdown_text, terminal_text
from ..formatting import delta_text, fitted, number_text, setting_text

__all__ = ["HEADER_LIMIT", "SweepCell", "SweepTableColumn", "header_lines", "sweep_brief",
           "sweep_columns", "sweep_lines", "sweep_markdown", "verdict_lines"]

#: Longest metric name in a sweep column header before it is split over two lines.
HEADER_LIMIT = 17
#: Widest knob value shown in the terminal before it is shortened.
KNOB_LIMIT = 24
NOT_COMPARABLE = "~"
#: The metric a requirement of the rule names (``"chunking.size_compliance >= 0.9"``).
_REQUIRED = re.compile(r"\s*([\w.]+)")


@dataclass(frozen=True)
class SweepCell:
    text: str
    value: float | None = None
    best: bool = False


@dataclass(frozen=True)
class SweepTableColumn:
    """``group`` (``knobs``, ``objective``, ``cost`` or a stage), ``header`` and
    ``key`` (the metric or cost name, for the HTML data attributes; empty for
    derived columns) and one cell per variant."""

    group: str
    header: str
    cells: tuple[SweepCell, ...]
    key: str = ""
    numeric: bool = True


def header_lines(key: str, limit: int = HEADER_LIMIT) -> tuple[str, str]:
    """A metric key as two header lines of at most ``limit`` characters, split after an
    underscore (``("average_", "precision_at_k")``); ``("", key)`` when it fits on one.
    A key that no split fits is shortened with ``…`` on the second line."""
    if len(key) <= limit:
        return "", key
    splits = [i + 1 for i, char in enumerate(key) if char == "_"
              and i + 1 <= limit and len(key) - i - 1 <= limit]
    if not splits:
        return "", fitted(key, limit)
    cut = min(splits, key=lambda i: abs(len(key) - 2 * i))  # the most even split
    return key[:cut], key[cut:]


def _number(value: float | None, whole: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if whole else number_text(value)


def _numbers(values: Sequence[float | None], whole: bool = False) -> list[str]:
    """A column's values with the same decimals, so that they line up: whole numbers
    as such, one decimal when one of them reaches 1000, else three; a value too
    small for that (below 0.0005, not 0) keeps its significant digits."""
    if whole:
        return [_number(value, True) for value in values]
    decimals = 1 if any(v is not None and abs(v) >= 1000 for v in values) else 3
    return ["-" if v is None else number_text(v) if 0 < abs(v) < 0.0005
            else f"{v:.{decimals}f}" for v in values]


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{delta_text(low)}, {delta_text(high)}]"


def sweep_columns(sweep: Sweep) -> list[SweepTableColumn]:
    """The sweep's columns (see the module's order)."""
    count = len(sweep.variants)
    columns = [SweepTableColumn("knobs", name, tuple(
        SweepCell(setting_text(sweep.knob(i, name)) if sweep.knob(i, name) is not None
                  else "-") for i in range(count)), name, numeric=False)
        for name in sweep.knob_names]
    verdict = sweep.verdict
    if verdict is not None:
        standings = verdict.standings
        texts = _numbers([s.mean for s in standings])
        columns.append(SweepTableColumn("objective", verdict.objective.partition(".")[2], tuple(
            SweepCell(texts[i], s.mean, i == verdict.best)
            for i, s in enumerate(standings)), verdict.objective))
        columns.append(SweepTableColumn("objective", "vs best", tuple(
            SweepCell("" if s.delta is None else
                      (delta_text(s.delta) + " " + _interval(s.ci_low, s.ci_high)).strip(),
                      s.delta) for s in standings)))
        columns.append(SweepTableColumn("objective", "noise", tuple(
            SweepCell("best" if i == verdict.best else "tied" if s.tied else
                      "-" if s.mean is None else "worse" if s.eligible else "excluded")
            for i, s in enumerate(standings)),
            numeric=False))
        columns.append(SweepTableColumn("objective", "frontier", tuple(
            SweepCell("yes" if s.frontier else "-") for s in standings), numeric=False))
    for name, values in sweep.costs:
        whole = all(v is None or float(v).is_integer() for v in values) and name in COSTS
        label = name if name in COSTS else name.partition(".")[2] + f" ({name.partition('.')[0]})"
        columns.append(SweepTableColumn("cost", label, tuple(
            SweepCell(text, v) for text, v in zip(_numbers(values, whole), values)), name))
    shown_costs = {name for name, _ in sweep.costs}
    for column in sweep.columns:
        if column.name in shown_costs:
            continue
        mark = "" if column.comparable else NOT_COMPARABLE
        texts = _numbers(column.values)
        # A value shown as the best one is starred too: two cells that read 0.031 are
        # not one best and one not (the JSON report keeps the exact best).
        best_texts = {texts[i] for i in column.best}
        starred = [text in best_texts for text in texts]
        columns.append(SweepTableColumn(column.stage, column.key + mark, tuple(
            SweepCell(texts[i] + ("*" if starred[i] else ""), v, starred[i])
            for i, v in enumerate(column.values)), column.name))
    return columns


def verdict_lines(sweep: Sweep) -> list[str]:
    """The rule, the recommendation with its reason, and the gate, as sentences."""
    verdict = sweep.verdict
    if verdict is None:
        if not sweep.starred:
            return [("not a rag_sweep: no best and no recommendation (mark the test "
                     "@pytest.mark.rag_sweep when its variants sweep one knob on the same "
                     "data)")]
        return ["no recommendation: no comparable metric with a direction was measured"]
    rule = verdict.rule
    if sweep.rule.require:
        rule += "; a variant must pass its test and meet " + ", ".join(sweep.rule.require)
    out = [f"rule: {rule}"]
    excluded = [v for v, s in zip(sweep.variants, verdict.standings) if not s.eligible]
    if excluded:
        out.append("excluded (test failed or a requirement missed): " + ", ".join(excluded))
    if verdict.recommended is None:
        out.append(f"no recommendation: {verdict.reason}")
    else:
        out.append(f"recommended: {sweep.variants[verdict.recommended]} ({verdict.reason})")
    if verdict.gate is not None:
        out.append(f"GATE FAILED: {verdict.gate}")
    elif verdict.shipped is not None:
        out.append(f"shipped: {sweep.variants[verdict.shipped]} ({verdict.shipped_note})")
    return out


def _legend(sweep: Sweep, columns: Sequence[SweepTableColumn]) -> str:
    parts = []
    if any(cell.best for column in columns for cell in column.cells if column.group not in (
            "objective", "knobs")):
        parts.append("* best comparable value")
    if any(column.header.endswith(NOT_COMPARABLE) for column in columns):
        parts.append("~ not comparable across the variants (grades derived from each "
                     "variant's own chunks)")
    if sweep.verdict is not None:
        parts.append("vs best: paired difference to the best and its 95% interval; tied: "
                     "the interval holds 0")
    return "; ".join(parts)


def _shown_rows(sweep: Sweep, limit: int | None) -> list[int]:
    """The variants listed: all, or the first ``limit`` plus the best, the recommended
    and the shipped one wherever they are."""
    count = len(sweep.variants)
    if limit is None or count <= limit:
        return list(range(count))
    verdict = sweep.verdict
    keep = set(range(limit))
    if verdict is not None:
        keep |= {i for i in (verdict.best, verdict.recommended, verdict.shipped,
                             verdict.beaten_by) if i is not None}
    return sorted(keep)


def _explaining(sweep: Sweep, columns: Sequence[SweepTableColumn]) -> list[int]:
    """The columns that explain the verdict: the knobs, the objective (its value, the
    difference to the best with its interval, best / tied / worse / excluded, on the
    frontier) and the costs the rule decides by."""
    deciding = set(sweep.verdict.cost) if sweep.verdict is not None else set()
    return [i for i, column in enumerate(columns) if column.group in ("knobs", "objective")
            or (column.group == "cost" and column.key in deciding)]


def _column_order(sweep: Sweep, columns: Sequence[SweepTableColumn]) -> list[int]:
    """The order in which ``columns`` are kept when room is short: those that explain
    the verdict, then the metrics the rule requires (they explain ``excluded``), then
    the others in table order, the objective's own metric column (a repeat) last."""
    first = _explaining(sweep, columns)
    required = {found.group(1) for found in map(_REQUIRED.match, sweep.rule.require) if found}
    objective = sweep.verdict.objective if sweep.verdict is not None else None
    rest = sorted((i for i in range(len(columns)) if i not in first), key=lambda i: (
        columns[i].key not in required, columns[i].key == objective))
    return [*first, *rest]


def sweep_lines(sweep: Sweep, width: int = 80, limit: int | None = None,
                room: int | None = None, others: bool = True) -> list[str]:
    """The sweep for a terminal of ``width`` columns: one row per variant, columns in
    order while they fit, the rest in continuation tables (the variant repeated).
    ``limit``: list at most that many variants (and the ones the verdict names), the
    others counted.  ``room``: at most that many lines: first the columns that do
    not explain the verdict are left out, the last first (:func:`_column_order`;
    counted in one line), then variant rows (counted); the title and the verdict
    lines are always there (:func:`sweep_brief` when not even one row of the
    verdict's columns fits).  Without ``room``, every column.  ``others=False``: only
    the columns that explain the verdict (the others counted)."""
    head = _title(sweep, width)
    columns = sweep_columns(sweep)
    if not columns:
        return [*head, "  every metric is equal in every variant"]
    tail = _notes(verdict_lines(sweep), width) + (
        _notes([f"{sweep.same} metric{'s' if sweep.same != 1 else ''} equal in every variant"],
               width) if sweep.same else [])

    def table(kept: Sequence[int], rows: int) -> list[str]:
        shown = [columns[i] for i in sorted(kept)]
        legend = _legend(sweep, shown)
        return [*head, *_table_lines(sweep, shown, width, _shown_rows(sweep, rows),
                                     len(columns) - len(shown)),
                *_notes([legend] if legend else [], width), *tail]

    most = min([len(sweep.variants), *(n for n in (limit, room) if n is not None)])
    order = _column_order(sweep, columns)
    least = max(len(_explaining(sweep, columns)), 1)
    if room is None:
        return table(order if others else order[:least], most)
    rows = next((rows for rows in range(most, -1, -1)  # the most rows of those columns
                 if len(table(order[:least], rows)) <= room), None)
    if rows is None:
        return sweep_brief(sweep, width)
    widest = len(columns) if others else least
    for count in range(widest, least, -1):  # and the most columns beside them
        lines = table(order[:count], rows)
        if len(lines) <= room:
            return lines
    return table(order[:least], rows)


def sweep_brief(sweep: Sweep, width: int = 80) -> list[str]:
    """The sweep in the fewest lines: its title, the variants counted, and its verdict."""
    count = len(sweep.variants)
    return [*_title(sweep, width), *_notes([
        f"{count} variant row{'s' if count != 1 else ''} left out for room (-v or "
        "--rag-report-md lists them)", *verdict_lines(sweep)], width)]


def _title(sweep: Sweep, width: int) -> list[str]:
    import textwrap

    title = (f"Sweep {terminal_text(sweep.test)}: {len(sweep.variants)} variants"
             + ("" if sweep.starred else " (not a rag_sweep)"))
    return textwrap.wrap(title, width, subsequent_indent="    ",
                         break_on_hyphens=False) or [title]


def _notes(texts: Sequence[str], width: int) -> list[str]:
    """Sentences under the table, indented, wrapped between words."""
    import textwrap

    return [line for text in texts for line in textwrap.wrap(
        terminal_text(text), width, initial_indent="  ", subsequent_indent="    ",
        break_on_hyphens=False)]


def _table_lines(sweep: Sweep, columns: Sequence[SweepTableColumn], width: int,
                 shown: list[int], left_out: int = 0) -> list[str]:
    """The table of the ``shown`` variants, the others and the ``left_out`` columns
    counted in a line under it."""
    out: list[str] = []
    names = [fitted(terminal_text(v), 28) for v in sweep.variants]
    first = max([len("variant"), *(len(names[i]) for i in shown)])
    laid = []
    for column in columns:
        cells = [terminal_text(fitted(c.text, KNOB_LIMIT) if not column.numeric else c.text)
                 for c in column.cells]
        listed = set(shown)
        cells = [cells[i] if i in listed else "" for i in range(len(cells))]
        top, bottom = header_lines(terminal_text(column.header))
        laid.append((column, (top, bottom), cells,
                     max(len(top), len(bottom), *(len(c) for c in cells))))
    start = 0
    while start < len(laid):
        used, end = 2 + first, start
        while end < len(laid):
            column, size = laid[end][0], laid[end][3]
            if end == start or column.group != laid[end - 1][0].group:
                size = max(size, len(column.group))  # the group's label sits above it
            if end > start and used + 2 + size > width:
                break
            used += 2 + size
            end += 1
        chunk = laid[start:end]
        groups, previous = [], None
        for column, *_ in chunk:
            groups.append(column.group if column.group != previous else "")
            previous = column.group
        sizes = [first, *(max(size, len(group)) for (_, _, _, size), group in zip(chunk, groups))]
        rows = [["", *groups]]
        if any(c[1][0] for c in chunk):
            rows.append(["", *(c[1][0] for c in chunk)])
        rows += [["variant", *(c[1][1] for c in chunk)], ["-" * s for s in sizes]]
        rows += [[names[i], *(c[2][i] for c in chunk)] for i in shown]
        numeric = [False, *(c[0].numeric for c in chunk)]
        for row in rows:
            cells = [text.rjust(size) if right else text.ljust(size)
                     for text, size, right in zip(row, sizes, numeric)]
            out.append(_fit(("  " + "  ".join(cells)).rstrip(), width))
        start = end
    hidden = len(sweep.variants) - len(shown)
    variants = f"{hidden} more variant{'s' if hidden != 1 else ''}"
    more = f"{left_out} more metric column{'s' if left_out != 1 else ''}"
    if hidden and left_out:
        out += _notes([f"{variants} and {more}: -v or --rag-report-md lists them"], width)
    elif hidden or left_out:
        out += _notes([f"{variants} (-v or --rag-report-md lists them)" if hidden
                       else f"{more}: -v or --rag-report-md lists them"], width)
    return out


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


def sweep_markdown(sweep: Sweep) -> str:
    """The sweep as one GitHub Markdown table (best comparable values in bold) and its
    verdict."""
    columns = sweep_columns(sweep)
    title = f"### Sweep {markdown_code(sweep.test)}: {len(sweep.variants)} variants"
    if not columns:
        return f"{title}\n\nEvery metric is equal in every variant."
    header = "| variant | " + " | ".join(
        f"{'' if c.group in ('knobs', 'objective', 'cost') else c.group + ' '}"
        f"`{c.header}`" + (f" ({c.group})" if c.group in ("knobs", "objective", "cost") else "")
        for c in columns) + " |"
    rule = "|---|" + "".join("---:|" if c.numeric else "---|" for c in columns)
    body = []
    for i, variant in enumerate(sweep.variants):
        cells = []
        for column in columns:
            cell = column.cells[i]
            text = markdown_code(cell.text) if not column.numeric else cell.text.rstrip("*")
            cells.append(f"**{text}**" if cell.best else text)
        body.append(f"| {markdown_code(variant)} | " + " | ".join(cells) + " |")
    notes = [_legend(sweep, columns).replace("* best comparable value",
                                               "bold: best comparable value"),
             *verdict_lines(sweep)]
    if sweep.same:
        notes.append(f"{sweep.same} more metric{'s' if sweep.same != 1 else ''} equal in "
                     "every variant")
    return "\n".join([title, "", header, rule, *body, "",
                      *(f"- {markdown_text(note)}" for note in notes if note)])
