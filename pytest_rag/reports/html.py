"""The self-contained HTML report of ``--rag-html``: one file, no network, no JavaScript.

:func:`render_html` turns the :class:`~pytest_rag.reports.scorecard.Scorecard` (and
the drill-down details of :mod:`pytest_rag.reports.drilldown`) into an HTML5 page with
inline CSS and inline SVG (:mod:`pytest_rag.reports.svg`).  It is a pure function:
the same scorecard always gives the same bytes (no time stamps, no random
ids, stable order), so runs with and without pytest-xdist give the same file.

Sections, each with a stable ``id``: ``summary``, ``sweeps`` (first: the comparison a
reader came for), ``metrics`` (a bar per
metric with its baseline and thresholds), ``distributions`` (per-query
histograms of the metrics that got worse), ``chunk-sizes`` and
``drill-down`` (per query: the question, the ranked ids with the relevant
ones marked, the answer against the references and the per-query values).
Collapsing uses ``<details>``; the print stylesheet expands everything.

Machine-readable numbers
------------------------
Every number taken from the JSON report (``--rag-report``) sits in an element
with ``data-value``: the exact ``repr`` of the float (or the integer), or
``null`` where the report has ``null`` (shown as "not measured").  What the
number is comes from the attributes ``data-test``, ``data-stage``,
``data-key``, ``data-field``, ``data-query`` and ``data-variant``, each read
from the element itself or else from its closest ancestor that has it:

* ``data-field`` ``value``, ``baseline``, ``delta``, ``p_value``:
  ``tests[test][stage]["metrics"][key][field]``; ``ci_low`` / ``ci_high``:
  ``...["ci95"][0]`` / ``[1]``;
* ``per_query``: ``tests[test][stage]["per_query"][key][query]``;
* ``sweep``: ``sweeps[test]["stages"][stage]["metrics"][key]["values"][variant]``;
  ``sweep-cost``: ``sweeps[test]["costs"][key][variant]``; ``sweep-objective``:
  ``sweeps[test]["verdict"]["variants"][variant]["objective"]``;
  ``equal_in_every_variant``: ``sweeps[test]["equal_in_every_variant"]``;
* ``summary``: ``summary[key]``; ``outcomes``: how many tests have the
  outcome ``key``.

A threshold is text (``data-field="threshold"``, the report's string in
``data-text``) and a record's settings are ``data-field="settings"`` with the
report's object as JSON in ``data-json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..compare.comparison import STATUSES
from ..formatting import settings_text
from ..registry import REGISTRY, MetricSpec
from .html_drilldown import drill_down_section
from .html_parts import _attrs, _delta_text, _e, _number, _status, format_number
from .svg import BASELINE, CURRENT, WORSE, Marker, Series, bar, bin_counts, histogram
from .sweep_html import sweeps_section

if TYPE_CHECKING:
    from ..compare.baseline import Baseline
    from .scorecard import Scorecard, ScoreEntry, ScoreRow

__all__ = ["SECTIONS", "render_html"]

#: The page's sections: ``(id, title)``, in page order.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("sweeps", "Sweeps"),
    ("metrics", "Metrics"),
    ("distributions", "Distributions"),
    ("chunk-sizes", "Chunk sizes"),
    ("drill-down", "Drill-down"),
)
#: Statuses (their labels) in the order the summary lists them, worst first.
STATUS_ORDER = tuple(row.label for row in STATUSES.values() if row.label)
#: Histogram bins of per-query values.
VALUE_BINS = 10
#: Histogram bins of chunk sizes (at most; a bin is a whole number of tokens wide).
SIZE_BINS = 40
#: Headline metrics per record shown when nothing got worse.
HEADLINES = 2

_CSS = """
:root{--ink:#1f2933;--muted:#616e7c;--line:#d9e2ec;--bg:#f7f9fb;--bad:#c0392b;--badbg:#fdecea;
--good:#1e7e34;--goodbg:#e9f6ec;--warn:#b7791f;--warnbg:#fff6e0;--accent:#2f6fb3}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,
sans-serif;color:var(--ink);background:#fff}
header{background:var(--bg);border-bottom:1px solid var(--line);padding:14px 24px 8px}
header h1{margin:0 0 6px;font-size:22px}
nav a{margin-right:14px;color:var(--accent);text-decoration:none;font-weight:600}
main{max-width:1280px;margin:0 auto;padding:8px 24px 40px}
section{margin-top:26px}
h2{font-size:19px;border-bottom:2px solid var(--line);padding-bottom:4px;margin:0 0 10px}
h3{font-size:15px;margin:14px 0 6px}
h4{font-size:13px;margin:8px 0 4px;color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;unicode-bidi:isolate}
table{border-collapse:collapse;margin:4px 0 10px}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
thead th{font-size:12px;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 14px}
.tile{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:120px;
background:var(--bg)}
.tile .n{font-size:24px;font-weight:700;display:block}
.tile.bad{background:var(--badbg);border-color:#f5b7b1}.tile.bad .n{color:var(--bad)}
.tile.good{background:var(--goodbg);border-color:#b7dfc1}.tile.good .n{color:var(--good)}
.status{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;font-weight:600;
background:#eef2f6;color:var(--muted);white-space:nowrap}
.status.FAIL,.status.REGRESSED,.status.LOST,.status.failed{background:var(--badbg);
color:var(--bad)}
.status.improved,.status.passed{background:var(--goodbg);color:var(--good)}
.status.within-noise,.status.new,.status.skipped{background:var(--warnbg);color:var(--warn)}
tr.worse td,tr.worse th{background:var(--badbg)}
tr.worse th{color:var(--bad)}
.nm{color:var(--muted);font-style:italic}
.why{display:block;font-size:11.5px;color:var(--muted);font-style:normal}
details{margin:6px 0}
details>summary{cursor:pointer;padding:5px 8px;background:var(--bg);border:1px solid var(--line);
border-radius:4px}
details[open]>summary{border-radius:4px 4px 0 0}
details.entry>div,details.drill>div{border:1px solid var(--line);border-top:0;padding:6px 10px}
.settings{color:var(--muted);font-size:12px}
.legend svg{vertical-align:middle}
.legend span{margin-right:16px}
figure{margin:10px 0 16px;break-inside:avoid}
.grid figure{width:580px;max-width:100%}
figcaption{font-size:13px;margin-bottom:4px}
.grid{display:flex;flex-wrap:wrap;gap:8px 28px}
.best{font-weight:700;color:var(--good)}
table.sweep th,table.sweep td{white-space:nowrap}
tr.recommended th,tr.recommended td{background:var(--goodbg)}
ul.verdict{margin:4px 0 8px;padding-left:20px}
details.query{margin:4px 0}
details.query>summary{background:#fff;font-size:13px}
details.query.worse>summary{border-left:4px solid var(--bad)}
.qbody{padding:6px 10px 10px;border:1px solid var(--line);border-top:0}
.question{font-size:14px;margin:4px 0 8px}
.cols{display:flex;flex-wrap:wrap;gap:6px 32px}
ol.ids,ul.ids{margin:0;padding-left:24px}
ul.ids{list-style:none;padding-left:0}
.ids li{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.ids li.rel{color:var(--good);font-weight:600}
.ids li.missed{color:var(--bad)}
.grade{font-weight:400;color:var(--muted)}
.text{white-space:pre-wrap;background:var(--bg);border-left:3px solid var(--line);
padding:4px 8px;margin:2px 0 6px;max-width:100ch}
.pq{display:flex;flex-wrap:wrap;gap:2px 18px;margin:6px 0 0;padding:0;list-style:none}
.pq li{font-size:12.5px}
.pq li.worse,.note .worse{color:var(--bad);font-weight:600}
.worse-in{font-size:12px;font-weight:600;color:var(--bad);background:var(--badbg);
padding:0 6px;border-radius:3px}
.was{font-weight:400;color:var(--muted)}
.note{color:var(--muted);font-size:12.5px}
.none{color:var(--muted)}
@media print{
nav{display:none}
body{font-size:11px}
main{max-width:none;padding:0}
header{background:none}
details::details-content{content-visibility:visible;display:block}
details:not([open])>*:not(summary){display:block}
details>summary{list-style:none;border:0;background:none;padding:2px 0;font-weight:600}
details>summary::-webkit-details-marker{display:none}
.scroll{overflow:visible}
table,figure,tr,details.query,.tile{break-inside:avoid}
h2,h3{break-after:avoid}
section{break-before:auto}
}
"""


# -- formatting ------------------------------------------------------------------
def _count(tag: str, count: int, field: str, key: str, css: str = "") -> str:
    """A count of the report's ``summary`` (or of test outcomes), shown as it is."""
    return _number(tag, count, text=str(count), css=css, data_field=field, data_key=key)


def _settings(entry: ScoreEntry) -> str:
    shown = settings_text(entry.settings)
    if not shown:
        return ""
    data = json.dumps(dict(entry.settings), sort_keys=True, ensure_ascii=False)
    return (f'<span class="settings" data-field="settings" data-json="{_e(data)}">'
            f"({_e(shown)})</span>")


def _scale(spec: MetricSpec | None, values: Sequence[float | None],
           thresholds: Sequence[float]) -> tuple[float, float, list[float]]:
    """``(low, high, thresholds on the scale)`` of a metric's bar.

    A bounded metric (finite range in the registry: ratios, cosines, gains)
    uses its range.  An unbounded one (latency, tokens, cost, counts) runs
    from its lower bound (or 0) to the largest of the current value and the
    baseline, plus 10% headroom; a threshold up to twice that widens the
    scale, a farther one is left off the bar (the table still shows it).
    """
    low, high = (spec.low, spec.high) if spec is not None else (0.0, math.inf)
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if spec is None and finite and all(0.0 <= v <= 1.0 for v in finite):
        high = 1.0
    if math.isfinite(low) and math.isfinite(high) and high > low:
        return low, high, [t for t in thresholds if low <= t <= high]
    reach = max((abs(v) for v in finite), default=0.0)
    near = [t for t in thresholds if abs(t) <= 2 * reach] if reach else []
    reach = max([reach, *(abs(t) for t in near)]) or 1.0
    if not math.isfinite(low) and not math.isfinite(high):
        return -reach * 1.1, reach * 1.1, near
    if not math.isfinite(high):
        start = min([0.0, low, *finite, *near])
        top = max([*finite, *near], default=start)
        end = top + 0.1 * (top - start) if top > start else start + 1.0
        return start, end, near
    bottom = min([*finite, *near, high - 1.0])
    return bottom - 0.1 * (high - bottom), high, near


def _spec(specs: Mapping[str, MetricSpec], stage: str, key: str) -> MetricSpec | None:
    return specs.get(f"{stage}.{key}")


# -- sections ----------------------------------------------------------------------
def _summary(scorecard: Scorecard, ids: Mapping[int, str]) -> list[str]:
    from .scorecard import LABELS, SUMMARY_WORDS  # the words of the terminal's summary line

    counts = scorecard.counts()
    outcomes: dict[str, str] = {}
    for entry in scorecard.entries:
        outcomes.setdefault(entry.nodeid, entry.outcome)
    by_outcome: dict[str, int] = {}
    for outcome in outcomes.values():
        by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
    out = ['<section id="summary"><h2>Summary</h2>']
    if not scorecard.entries:
        out.append('<p class="none">No stage was evaluated: no test recorded a stage report.</p>'
                   "</section>")
        return out
    stages = counts["stages"]
    parts = [f"{_count('span', stages, 'summary', 'stages')} "
             f"stage report{'s' if stages != 1 else ''}"]
    for status, word in SUMMARY_WORDS:
        if counts.get(status):
            parts.append(f"{_count('span', counts[status], 'summary', status)} {_e(word)}")
    metrics = "; metrics: " + ", ".join(parts[1:]) if parts[1:] else ""  # as the terminal's
    out.append(f'<p class="line">{parts[0]}{metrics}</p>')
    out.append('<div class="tiles">')
    tiles: list[tuple[str, int, str, str]] = [
        (outcome, by_outcome.get(outcome, 0), "outcomes", f"tests {outcome}")
        for outcome in ("passed", "failed") if outcome in by_outcome or outcome == "passed"]
    tiles += [(outcome, count, "outcomes", f"tests {outcome}")
              for outcome, count in sorted(by_outcome.items())
              if outcome not in ("passed", "failed")]
    tiles += [(row.label, counts.get(row.label, 0), "summary", row.tile)
              for row in STATUSES.values()
              if row.tile and (counts.get(row.label) or row.tile_always)]
    for key, count, field, label in tiles:
        of_tests = field == "outcomes"
        worse = key == "failed" if of_tests else LABELS[key].fails
        better = key == "passed" if of_tests else LABELS[key].better
        tone = "bad" if count and worse else "good" if count and better else ""
        # A status the report's summary does not list has no count there: a plain 0.
        number = (_count("span", count, field, key, css="n") if field == "outcomes"
                  or key in counts else f'<span class="n">{count}</span>')
        out.append(f'<div class="tile {tone}">{number}{_e(label)}</div>')
    out.append("</div>")
    out.append('<table class="counts"><thead><tr><th>status</th><th class="num">metrics</th>'
               "</tr></thead><tbody>")
    for status in [label for label in STATUS_ORDER if label in counts]:
        out.append(f"<tr><th>{_status(status)}</th>"
                   f"{_count('td', counts[status], 'summary', status, css='num')}</tr>")
    out.append("</tbody></table>")
    out.append('<h3>Stage reports</h3><div class="scroll"><table class="overview"><thead><tr>'
               "<th>test</th><th>stage</th><th>outcome</th><th>worst status</th><th>metrics</th>"
               "</tr></thead><tbody>")
    for index, entry in enumerate(scorecard.entries):
        statuses = [row.status for row in entry.rows]
        worst = next((s for s in STATUS_ORDER if s in statuses), statuses[0] if statuses else "")
        bad = sum(1 for row in entry.rows if row.failed)
        failing = f" ({bad} failing)" if bad else ""
        out.append(f"<tr{_attrs(class_='worse' if entry.failed else None)}><td>"
                   f'<a href="#{ids[index]}">'
                   f"<code>{_e(entry.nodeid)}</code></a></td><td>{_e(entry.stage)}</td>"
                   f"<td>{_status(entry.outcome)}</td><td>{_status(worst) if worst else ''}</td>"
                   f'<td class="num">{len(entry.rows)}{failing}</td></tr>')
    out.append("</tbody></table></div></section>")
    return out


def _legend() -> str:
    sample = bar(0.6, low=0.0, high=1.0, baseline=0.75, thresholds=(0.4,), width=120,
                 title="example: value 0.6, baseline 0.75, threshold 0.4")
    worse = bar(0.5, low=0.0, high=1.0, worse=True, width=60, title="a metric that got worse")
    return (f'<p class="legend note">{sample} <span>bar: current value; dark tick: baseline; '
            f'dashed orange: threshold</span>{worse} <span>red: worse than the baseline or '
            "below its threshold</span><span>ratios on 0..1; latency, tokens and cost up to "
            "the larger of the current value and the baseline</span></p>")


def _metric_row(row: ScoreRow, spec: MetricSpec | None) -> str:
    thresholds = [t for t in row.threshold_values if math.isfinite(t)]
    low, high, shown = _scale(spec, [row.value, row.baseline], thresholds)
    worse = row.failed or row.worse
    title = (f"{row.key}: {format_number(row.value)}"
             + (f"; baseline {format_number(row.baseline)}" if row.baseline is not None else "")
             + (f"; threshold {row.threshold}" if row.threshold else "")
             + f"; scale {format_number(low)} to {format_number(high)}")
    chart = bar(row.value, low=low, high=high, baseline=row.baseline, thresholds=shown,
                worse=worse, title=title)
    cells = [f"<th><code>{_e(row.key)}</code></th><td>{chart}</td>"]
    if row.value is None:
        why = f'<span class="why">{_e(row.reason)}</span>' if row.reason else ""
        cells.append(f'<td class="num nm" data-field="value" data-value="null">not measured'
                     f"{why}</td>")
    else:
        cells.append(_number("td", row.value, css="num", data_field="value"))
    cells.append(f'<td class="num" data-field="threshold" data-text="{_e(row.threshold)}">'
                 f"{_e(row.threshold)}</td>" if row.threshold else "<td></td>")
    cells.append(_number("td", row.baseline, css="num", data_field="baseline")
                 if row.baseline is not None else "<td></td>")
    cells.append(_number("td", row.delta, text=_delta_text(row.delta), css="num",
                         data_field="delta") if row.delta is not None else "<td></td>")
    if row.p_text and row.p_value is not None:
        cells.append(_number("td", row.p_value, text=row.p_text, css="num", data_field="p_value"))
        if row.ci_low is not None and row.ci_high is not None:
            start = _number("span", row.ci_low, text=f"{row.ci_low:+.3f}", data_field="ci_low")
            end = _number("span", row.ci_high, text=f"{row.ci_high:+.3f}", data_field="ci_high")
            cells.append(f'<td class="num">[{start}, {end}]</td>')
        else:
            cells.append("<td></td>")
    else:
        cells.append("<td></td><td></td>")
    cells.append(f"<td>{_status(row.status)}</td>")
    return (f"<tr{_attrs(class_='worse' if worse else None, data_key=row.key)}>"
            f"{''.join(cells)}</tr>")


def _metrics(scorecard: Scorecard, specs: Mapping[str, MetricSpec],
             ids: Mapping[int, str]) -> list[str]:
    out = ['<section id="metrics"><h2>Metrics</h2>']
    if not scorecard.entries:
        out.append('<p class="none">No stage was evaluated.</p></section>')
        return out
    out.append(_legend())
    for index, entry in enumerate(scorecard.entries):
        opened = " open" if entry.failed or entry.outcome == "failed" else ""
        bad = sum(1 for row in entry.rows if row.failed)
        failing = " " + _status(f"{bad} failing") if bad else ""
        out.append(f'<details class="entry" id="{ids[index]}"{opened}'
                   f"{_attrs(data_test=entry.nodeid, data_stage=entry.stage)}>"
                   f"<summary><code>{_e(entry.nodeid)}</code> <strong>{_e(entry.stage)}</strong> "
                   f"{_status(entry.outcome)}{failing} {_settings(entry)}</summary><div>")
        if entry.gold_change is not None:
            out.append(f'<p class="gold-change">{_e(entry.gold_change.text())}</p>')
        out.append('<div class="scroll"><table class="metrics"><thead><tr><th>metric</th>'
                   '<th></th><th class="num">value</th><th class="num">threshold</th>'
                   '<th class="num">baseline</th><th class="num">delta</th><th class="num">p</th>'
                   '<th class="num">95% CI</th><th>status</th></tr></thead><tbody>')
        for row in entry.rows:
            out.append(_metric_row(row, _spec(specs, entry.stage, row.key)))
        out.append("</tbody></table></div></div></details>")
    out.append("</section>")
    return out


def _edges(spec: MetricSpec | None, values: Sequence[float]) -> list[float]:
    low, high = (spec.low, spec.high) if spec is not None else (math.inf, -math.inf)
    if not (math.isfinite(low) and math.isfinite(high) and high > low):
        low = min(values, default=0.0)
        high = max(values, default=1.0)
        if spec is not None and spec.low == 0.0 and low > 0.0:
            low = 0.0  # counts, latency, cost: from zero
        if high <= low:
            high = low + 1.0
    return [low + (high - low) * i / VALUE_BINS for i in range(VALUE_BINS + 1)]


def _distribution(entry: ScoreEntry, row: ScoreRow, spec: MetricSpec | None,
                  before: Mapping[str, float | None] | None) -> str:
    current = [v for v in entry.per_query.get(row.key, {}).values() if v is not None]
    old = [v for v in (before or {}).values() if v is not None]
    edges = _edges(spec, current + old)
    series = []
    if old:
        series.append(Series(f"baseline ({len(old)})", bin_counts(old, edges), BASELINE))
    worse = row.failed or row.worse
    series.append(Series(f"current ({len(current)})", bin_counts(current, edges),
                         WORSE if worse else CURRENT))
    markers = [Marker(t, f"threshold {t:g}") for t in row.threshold_values
               if edges[0] <= t <= edges[-1]]
    chart = histogram(series, edges, markers=markers,
                      title=f"{entry.nodeid} {entry.stage}.{row.key}: per-query values",
                      x_label=f"{row.key} per query")
    caption = [f"<code>{_e(entry.nodeid)}</code> {_e(entry.stage)}.<strong>{_e(row.key)}</strong>: "
               f"mean {_number('span', row.value, data_field='value')}"]
    if row.baseline is not None:
        caption.append(f" against {_number('span', row.baseline, data_field='baseline')} "
                       "in the baseline")
    caption.append(f" {_status(row.status)}")
    if row.p_text and row.p_value is not None:
        shown = row.p_text if row.p_text.startswith("<") else f"= {row.p_text}"
        caption.append(f" p {_number('span', row.p_value, text=shown, data_field='p_value')}")
    if not old and worse:
        caption.append(' <span class="note">(the baseline has no per-query values of it)</span>')
    return (f"<figure{_attrs(data_test=entry.nodeid, data_stage=entry.stage, data_key=row.key)}>"
            f"<figcaption>{''.join(caption)}</figcaption>{chart}</figure>")


def _distributions(scorecard: Scorecard, specs: Mapping[str, MetricSpec],
                   baseline: Baseline | None) -> list[str]:
    out = ['<section id="distributions"><h2>Distributions</h2>']
    worse: list[str] = []
    for entry in scorecard.entries:
        entry_base = baseline.entry(entry.nodeid, entry.entry_key) if baseline is not None else None
        for row in entry.rows:
            # A metric below its threshold shows FAIL, also when it regressed as well:
            # the baseline comparison's worse queries tell it.
            got_worse = row.worse or row.key in entry.worse_queries
            if got_worse and row.key in entry.per_query:
                before = (entry_base or {}).get("per_query", {}).get(row.key)
                worse.append(_distribution(entry, row, _spec(specs, entry.stage, row.key),
                                           before))
    if worse:
        out.append('<p class="note">Per-query values of every metric that got worse against '
                   "the baseline: the baseline's queries in grey, the current ones in red.</p>")
        out.append('<div class="grid">' + "".join(worse) + "</div>")
        out.append("</section>")
        return out
    if baseline is None:
        out.append('<p class="none">No baseline was compared (run with --rag-baseline), so no '
                   "metric can have got worse.</p>")
    else:
        out.append('<p class="none">No metric got worse against the baseline.</p>')
    headline: list[str] = []
    for entry in scorecard.entries:
        measured = [row for row in entry.rows
                    if any(v is not None for v in entry.per_query.get(row.key, {}).values())]
        chosen = [row for row in measured if row.threshold] + [
            row for row in measured if not row.threshold]
        for row in chosen[:HEADLINES]:
            headline.append(_distribution(entry, row, _spec(specs, entry.stage, row.key), None))
    if headline:
        out.append("<details><summary>Current per-query distributions of the headline metrics "
                   f"({len(headline)})</summary><div class=\"grid\">" + "".join(headline)
                   + "</div></details>")
    out.append("</section>")
    return out


def _on_axis(sizes: Sequence[int], limits: Sequence[int] | None) -> list[int]:
    """The limits drawn to scale: those within the sizes' span of the sizes.

    A limit far from every size (``[20, 10**6]`` for chunks of 100 tokens)
    would squeeze all chunks into one bar, so it is only named in the caption.
    """
    low, high = min(sizes), max(sizes) + 1
    reach = max(high - low, SIZE_BINS)
    return [limit for limit in limits or () if low - reach <= limit <= high + reach]


def _size_edges(sizes: Sequence[int], limits: Sequence[int] | None) -> list[float]:
    drawn = _on_axis(sizes, limits)
    low = min([*sizes, *drawn])
    high = max([*sizes, *drawn]) + 1
    width = max(1, -(-(high - low) // SIZE_BINS))  # integer ceiling: no float of a huge int
    count = max(1, -(-(high - low) // width))
    return [float(low + width * i) for i in range(count + 1)]


def _whole_number(number: int) -> str:
    """``number`` in digits, or its order of magnitude when it has more than 15."""
    if abs(number) < 10 ** 15:
        return str(number)
    size = abs(number)
    exponent = math.floor((size.bit_length() - 1) * math.log10(2))  # may be one short
    if 10 ** (exponent + 1) <= size:
        exponent += 1
    return f"about 10^{exponent}"


def _chunk_sizes(scorecard: Scorecard, details: Mapping[tuple[str, str], Mapping[str, Any]]
                 ) -> list[str]:
    out = ['<section id="chunk-sizes"><h2>Chunk sizes</h2>']
    entries = [entry for entry in scorecard.entries if entry.stage == "chunking"]
    if not entries:
        out.append('<p class="none">No test evaluated chunking.</p></section>')
        return out
    out.append('<p class="note">Tokens per chunk (the source tokens a chunk overlaps, as the '
               "chunking metrics count them), with the size limits as dashed lines.</p>")
    out.append('<div class="grid">')
    for entry in entries:
        found = details.get((entry.nodeid, entry.stage), {})
        rows = {row.key: row for row in entry.rows}
        pairs = found.get("chunk_sizes") or []
        caption = [f"<code>{_e(entry.nodeid)}</code>: "]
        if not pairs:
            caption.append('<span class="none">no chunk sizes recorded</span>')
            out.append(f"<figure{_attrs(data_test=entry.nodeid, data_stage=entry.stage)}>"
                       f"<figcaption>{''.join(caption)}</figcaption></figure>")
            continue
        sizes = [int(size) for size, _ in pairs]
        weights = [int(count) for _, count in pairs]
        total = sum(weights)
        limits = found.get("size_limits")
        caption.append(f"{total} chunks, {min(sizes)} to {max(sizes)} tokens")
        markers = []
        if limits:
            low, high = int(limits[0]), int(limits[1])
            outside = sum(w for s, w in zip(sizes, weights) if s < low or s > high)
            caption.append(f"; {outside} outside [{_whole_number(low)}, {_whole_number(high)}] "
                           f"({100 * outside / total:.1f}%)")
            drawn = _on_axis(sizes, (low, high))
            markers = [Marker(float(limit), f"{name} {limit}")
                       for name, limit in (("min", low), ("max", high)) if limit in drawn]
            if len(markers) < 2:
                caption.append('; <span class="note">a limit far from every size is not '
                               "drawn</span>")
        else:
            caption.append('; <span class="note">no size_limits set</span>')
        for key in ("size_compliance", "mean_chunk_tokens"):
            row = rows.get(key)
            if row is not None and row.value is not None:
                caption.append(f"; {_e(key)} "
                               f"{_number('span', row.value, data_key=key, data_field='value')}")
        edges = _size_edges(sizes, limits)
        counts = bin_counts(sizes, edges, weights)
        chart = histogram([Series("chunks", counts, CURRENT)], edges, markers=markers,
                          title=f"{entry.nodeid}: chunk sizes in tokens",
                          x_label="tokens per chunk")
        out.append(f"<figure{_attrs(data_test=entry.nodeid, data_stage=entry.stage)}>"
                   f"<figcaption>{''.join(caption)}</figcaption>{chart}</figure>")
    out.append("</div></section>")
    return out


def render_html(scorecard: Scorecard,
                details: Mapping[tuple[str, str], Mapping[str, Any]] | None = None, *,
                baseline: Baseline | None = None,
                specs: Mapping[str, MetricSpec] | None = None,
                title: str = "pytest-rag report") -> str:
    """The whole report as one HTML5 document (a string; write it as UTF-8).

    Parameters
    ----------
    scorecard:
        The run's scorecard (rows with baseline, delta, status, p-values; sweeps).
    details:
        ``{(nodeid, stage): details}`` from :func:`pytest_rag.reports.drilldown.build_details`;
        records without details get no drill-down or chunk-size histogram.
    baseline:
        The baseline the run compared with, for the baseline's per-query
        values of the metrics that got worse; ``None`` when none was compared.
    specs:
        The metric registry (with any custom metrics), for the bar scales;
        default :data:`pytest_rag.registry.REGISTRY`.
    """
    found = details or {}
    registry = specs if specs is not None else REGISTRY
    ids = {index: f"s{index + 1}" for index in range(len(scorecard.entries))}
    nav = "".join(f'<a href="#{section}">{_e(name)}</a>' for section, name in SECTIONS)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
             f"<header><h1>{_e(title)}</h1><nav>{nav}</nav></header><main>"]
    parts.extend(_summary(scorecard, ids))
    parts.extend(sweeps_section(scorecard))
    parts.extend(_metrics(scorecard, registry, ids))
    parts.extend(_distributions(scorecard, registry, baseline))
    parts.extend(_chunk_sizes(scorecard, found))
    parts.extend(drill_down_section(scorecard, found, ids))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
