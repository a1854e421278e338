"""The HTML report's drill-down: per test, stage and query, what the stage saw.

The question, the ranked ids with the relevant ones marked (with their grade),
the context, the answer against the references and the per-query values, as
collected by :mod:`pytest_rag.reports.drilldown` (see :mod:`pytest_rag.reports.html`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .html_parts import _attrs, _e, _exact, _id, _status, format_number

if TYPE_CHECKING:
    from .scorecard import Scorecard, ScoreEntry

__all__ = ["drill_down_section"]


def _id_list(ids: Sequence[str], grades: Mapping[str, Any]) -> str:
    """A ranked list of ids, those with a grade above 0 marked relevant."""
    if not ids:
        return '<p class="none">none</p>'
    items = []
    for chunk_id in ids:
        grade = grades.get(chunk_id)
        if grade is not None and grade > 0:
            items.append(f'<li class="rel">{_id(chunk_id)} ✓ <span class="grade">grade '
                         f"{_e(grade)}</span></li>")
        else:
            items.append(f"<li>{_id(chunk_id)}</li>")
    return f'<ol class="ids">{"".join(items)}</ol>'


def _query(entry: ScoreEntry, query: Mapping[str, Any]) -> str:
    query_id = str(query.get("id"))
    worse = query.get("worse") or {}
    question = query.get("question")
    short = question if question is None or len(question) <= 110 else question[:109] + "…"
    summary = [f"<code>{_e(query_id)}</code> "]
    summary.append(_e(short) if short is not None else '<span class="nm">no question text</span>')
    if worse:
        summary.append(f' <span class="worse-in">worse in {_e(", ".join(worse))}</span>')
    body = ['<div class="qbody">']
    if question is not None and question != short:
        body.append(f'<p class="question">{_e(question)}</p>')
    if query.get("no_run"):
        body.append('<p class="note">No run entry for this query.</p>')
    grades = {str(item[0]): item[1] for item in query.get("relevant") or ()}
    columns = []
    ranked = query.get("ranked")
    k = query.get("k")
    if "before" in query:
        columns.append(f"<div><h4>Retrieved (before reranking)</h4>"
                       f"{_id_list(query['before'], grades)}</div>")
    if ranked is not None:
        label = {"retrieval": "Retrieved", "reranking": "Reranked",
                 "embedding": "ANN ids"}.get(entry.stage, "Ranked")
        columns.append(f"<div><h4>{label}, top {len(ranked) if k is None else k}</h4>"
                       f"{_id_list(ranked, grades)}</div>")
    if "context" in query:
        total = query.get("context_total", len(query["context"]))
        more = f", first {len(query['context'])}" if total > len(query["context"]) else ""
        columns.append(f"<div><h4>Context ids ({total}{more})</h4>"
                       f"{_id_list(query['context'], grades)}</div>")
    if grades:
        listed = set(ranked or ()) | set(query.get("context") or ())
        items = []
        for chunk_id, grade in grades.items():
            found = chunk_id in listed
            css = "rel" if found else ("missed" if grade and grade > 0 else "")
            mark = " ✓" if found else (" ✗" if grade and grade > 0 else "")
            items.append(f"<li{_attrs(class_=css or None)}>{_id(chunk_id)}{mark} "
                         f'<span class="grade">grade {_e(grade)}</span></li>')
        total = query.get("relevant_total", len(grades))
        more = f", first {len(grades)}" if total > len(grades) else ""
        columns.append(f"<div><h4>Gold grades ({total}{more})</h4>"
                       f'<ul class="ids">{"".join(items)}</ul></div>')
    if columns:
        body.append(f'<div class="cols">{"".join(columns)}</div>')
    if "answer" in query or "references" in query:
        answer = query.get("answer")
        body.append("<h4>Answer</h4>" + (f'<div class="text">{_e(answer)}</div>' if answer
                                         is not None else '<p class="nm">no answer</p>'))
        refs = query.get("references") or []
        if refs:
            body.append(f"<h4>Reference answer{'s' if len(refs) != 1 else ''}</h4>"
                        + "".join(f'<div class="text">{_e(ref)}</div>' for ref in refs))
    for key, title in (("required_facts", "Required facts"), ("cited", "Cited ids"),
                       ("expected_citations", "Expected citations")):
        if key in query:  # an empty list of cited ids: nothing was cited
            names = ", ".join(map(_id, query[key])) or "none"
            body.append(f"<h4>{title}</h4><p>{names}</p>")
    measured, missing = [], []
    for key, values in entry.per_query.items():
        if query_id not in values:
            continue
        value = values[query_id]
        if value is None:
            if key in worse:
                missing.append(f'<span class="worse" data-key="{_e(key)}" data-value="null" '
                               f'data-baseline="{_exact(worse[key])}">{_e(key)} '
                               f"(was {format_number(worse[key])})</span>")
            else:
                missing.append(f'<span data-key="{_e(key)}" data-value="null">{_e(key)}</span>')
            continue
        if key in worse:
            was = worse[key]
            measured.append(f'<li class="worse" data-key="{_e(key)}" data-value="{_exact(value)}"'
                            f' data-baseline="{_exact(was)}">{_e(key)} {format_number(value)} '
                            f'<span class="was">(was {format_number(was)})</span></li>')
        else:
            measured.append(f'<li data-key="{_e(key)}" data-value="{_exact(value)}">{_e(key)} '
                            f"{format_number(value)}</li>")
    body.append('<div data-field="per_query">')
    if measured:
        body.append(f'<h4>Per-query values</h4><ul class="pq">{"".join(measured)}</ul>')
    if missing:
        body.append(f'<p class="note">Not measured for this query: {", ".join(missing)}</p>')
    body.append("</div></div>")
    css = "query worse" if worse else "query"
    return (f'<details class="{css}"{_attrs(data_query=query_id)}><summary>{"".join(summary)}'
            f"</summary>{''.join(body)}</details>")


def drill_down_section(scorecard: Scorecard, details: Mapping[tuple[str, str], Mapping[str, Any]],
                ids: Mapping[int, str]) -> list[str]:
    out = ['<section id="drill-down"><h2>Drill-down</h2>']
    shown = 0
    for index, entry in enumerate(scorecard.entries):
        found = details.get((entry.nodeid, entry.stage))
        if not found or found.get("kind") != "queries":
            continue
        shown += 1
        queries = list(found.get("queries") or [])
        total = int(found.get("total", len(queries)))
        omitted = int(found.get("omitted", 0))
        worse = int(found.get("worse", sum(1 for query in queries if query.get("worse"))))
        k = found.get("k")
        head = (f"<code>{_e(entry.nodeid)}</code> <strong>{_e(entry.stage)}</strong> "
                f"{_status(entry.outcome)} <span class=\"settings\">{len(queries)} of {total} "
                f"quer{'y' if total == 1 else 'ies'}"
                f"{f', {worse} worse than the baseline' if worse else ''}</span>")
        out.append(f'<details class="drill" id="d-{ids[index]}"'
                   f'{_attrs(data_test=entry.nodeid, data_stage=entry.stage)}>'
                   f"<summary>{head}</summary><div>")
        if omitted:
            out.append(f'<p class="note">{omitted} quer{"y" if omitted == 1 else "ies"} left out: '
                       f"the drill-down keeps {len(queries)} per test and stage, those that got "
                       "worse against the baseline first, then in dataset order.</p>")
        for query in queries:
            out.append(_query(entry, {**query, "k": k}))
        out.append("</div></details>")
    if not shown:
        out.append('<p class="none">No per-query details were recorded'
                   f"{' (chunking has none: see chunk sizes)' if scorecard.entries else ''}."
                   "</p>")
    out.append("</section>")
    return out
