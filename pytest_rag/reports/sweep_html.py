"""The Sweeps section of the HTML report: per sweep its verdict, the quality-against-cost
scatter of each deciding cost with the frontier, and the sweep table (the cells of
:func:`pytest_rag.reports.sweep_views.sweep_columns`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .html_parts import _attrs, _e, _number

if TYPE_CHECKING:
    from ..compare.sweeps import Sweep
    from .scorecard import Scorecard

__all__ = ["sweeps_section"]


def _sweep(sweep: Sweep) -> str:
    from .sweep_views import sweep_columns, verdict_lines

    head = [f'<h3><code>{_e(sweep.test)}</code>: {len(sweep.variants)} variants</h3>']
    columns = sweep_columns(sweep)
    if not columns:
        return "".join(head) + '<p class="none">Every metric is equal in every variant.</p>'
    groups, previous = ["<th></th>"], ""
    for column in columns:
        groups.append(f"<th>{_e(column.group if column.group != previous else '')}</th>")
        previous = column.group
    cells = ["<th>variant</th>"] + [
        f'<th class="{"num" if c.numeric else ""}"><code>{_e(c.header)}</code></th>'
        for c in columns]
    body = []
    for i, variant in enumerate(sweep.variants):
        row = [f"<th><code>{_e(variant)}</code></th>"]
        for column in columns:
            cell = column.cells[i]
            if column.group == "knobs" or not column.key:
                row.append(f'<td class="{"num" if column.numeric else ""}">{_e(cell.text)}</td>')
                continue
            field, stage, key = (
                ("sweep-objective", None, column.key) if column.group == "objective" else
                ("sweep-cost", None, column.key) if column.group == "cost" else
                ("sweep", column.group, column.key.partition(".")[2]))
            text = cell.text.rstrip("*") + (" ★" if cell.best else "")
            row.append(_number("td", cell.value, text=text,
                               css="num best" if cell.best else "num", data_field=field,
                               data_test=sweep.test, data_stage=stage, data_key=key,
                               data_variant=variant))
        verdict = sweep.verdict
        css = "recommended" if verdict is not None and verdict.recommended == i else None
        body.append(f"<tr{_attrs(class_=css, data_variant=variant)}>{''.join(row)}</tr>")
    notes = "".join(f"<li>{_e(line)}</li>" for line in verdict_lines(sweep))
    same = ""
    if sweep.same:
        count = _number("span", sweep.same, text=str(sweep.same), data_test=sweep.test,
                        data_field="equal_in_every_variant")
        same = (f'<p class="note">{count} more metric{"s" if sweep.same != 1 else ""} equal in '
                "every variant.</p>")
    return ("".join(head) + f'<ul class="verdict">{notes}</ul>{_sweep_chart(sweep)}'
            f'<div class="scroll"{_attrs(data_test=sweep.test)}><table class="sweep"><thead>'
            f'<tr>{"".join(groups)}</tr><tr>{"".join(cells)}</tr></thead><tbody>'
            f'{"".join(body)}</tbody></table>{same}</div>')


def _sweep_chart(sweep: Sweep) -> str:
    """The objective against each cost of the rule: a scatter with the frontier."""
    from .svg import Point, scatter

    verdict = sweep.verdict
    if verdict is None or not verdict.cost:
        return ""
    costs = dict(sweep.costs)
    charts = []
    for name in verdict.cost:
        values = costs.get(name)
        if values is None:
            continue
        points = [Point(cost, standing.mean, variant, standing.frontier,
                        verdict.recommended == i)
                  for i, (variant, standing, cost) in enumerate(
                      zip(sweep.variants, verdict.standings, values))
                  if standing.mean is not None and cost is not None]
        if not points:
            continue
        chart = scatter(points, title=f"{verdict.objective} against {name}", x_label=name,
                        y_label=verdict.objective)
        charts.append(f"<figure><figcaption><code>{_e(verdict.objective)}</code> against "
                      f"<code>{_e(name)}</code>: the frontier joined, the recommendation in "
                      f"green</figcaption>{chart}</figure>")
    return f'<div class="grid">{"".join(charts)}</div>' if charts else ""


def sweeps_section(scorecard: Scorecard) -> list[str]:
    out = ['<section id="sweeps"><h2>Sweeps</h2>']
    sweeps = scorecard.sweeps()
    if not sweeps:
        out.append('<p class="none">No sweep: no parametrized test recorded a stage in '
                   "two or more variants.</p></section>")
        return out
    out.append('<p class="note">Parametrized variants of one test side by side, one row per '
               "variant: its knobs, its objective against the best (paired difference and "
               "95% interval; tied when it holds 0), whether it is on the quality-against-cost "
               "frontier, its costs and the metrics that differ. ★ marks the best value of a "
               "comparable metric; ~ a metric that does not compare across the variants.</p>")
    out.extend(_sweep(sweep) for sweep in sweeps)
    out.append("</section>")
    return out
