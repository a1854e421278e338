"""Parametrized variants of one test, side by side: the chunker-sweep table.

``test_chunking[markdown-160]``, ``test_chunking[tokens-160-32]``, ... record
the same stage under one test function.  :func:`find_sweeps` groups them into
one :class:`Sweep` per test function and stage: a row per variant, a column
per metric that differs between variants, and the best value of each column
(by the metric's direction; informational metrics have no best).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..escaping import markdown_code, terminal_text
from ..formatting import number_text

__all__ = ["Sweep", "find_sweeps", "split_nodeid"]

#: Longest metric name in a sweep column header before it is shortened.
HEADER_LIMIT = 17


def split_nodeid(nodeid: str) -> tuple[str, str | None]:
    """``("path::test", "param-id")`` for a parametrized node id, else ``(nodeid, None)``."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return nodeid, None
    base, _, variant = nodeid.partition("[")
    return base, variant[:-1]


@dataclass(frozen=True)
class Sweep:
    """One test function's variants of one stage.

    ``values[i][j]`` is metric ``metrics[j]`` of variant ``variants[i]``
    (``None``: not measured); ``best[j]`` holds the indices of the variants
    with the best value of metric ``j`` (empty for informational metrics).
    ``same`` counts the metrics equal in every variant (left out).
    """

    test: str
    stage: str
    variants: tuple[str, ...]
    metrics: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]
    best: tuple[tuple[int, ...], ...]
    same: int = 0
    #: Whether the variants sweep one knob (``@pytest.mark.rag_sweep``), so that a
    #: best value means something; without it no best is marked.
    starred: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "variants": list(self.variants),
            "metrics": {metric: {"values": dict(zip(self.variants, (row[j] for row in self.values))),
                                 "best": [self.variants[i] for i in self.best[j]]}
                        for j, metric in enumerate(self.metrics)},
            "equal_in_every_variant": self.same,
        }


def _best(values: Sequence[float | None], direction: str) -> tuple[int, ...]:
    measured = [(v, i) for i, v in enumerate(values) if v is not None]
    if direction not in ("higher", "lower") or not measured:
        return ()
    target = max(measured)[0] if direction == "higher" else min(measured)[0]
    return tuple(i for v, i in measured if v == target)


def find_sweeps(entries: Sequence[Any], directions: Mapping[str, str],
                marked: Collection[str] | None = None) -> list[Sweep]:
    """Group scorecard entries (with ``nodeid``, ``stage`` and ``rows``) into sweeps.

    ``directions`` maps ``"stage.key"`` to ``"higher"``, ``"lower"`` or ``"info"``.
    Only test functions with at least two variants of a stage form a sweep.
    ``marked``: the test functions (node ids without the parameter part) whose
    variants sweep one knob; the others (``[chroma]``, ``[clapnq]``: different
    datasets) are shown side by side with no best.  ``None``: all of them.
    """
    groups: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for entry in entries:
        base, variant = split_nodeid(entry.nodeid)
        if variant is not None:
            groups.setdefault((base, entry.stage), []).append((variant, entry))
    sweeps = []
    for (base, stage), members in groups.items():
        if len(members) < 2:
            continue
        variants = tuple(variant for variant, _ in members)
        tables = [{row.key: row.value for row in entry.rows} for _, entry in members]
        keys = list(dict.fromkeys(key for table in tables for key in table))
        varying = [key for key in keys
                   if len({table.get(key) for table in tables}) > 1
                   and any(table.get(key) is not None for table in tables)]
        values = tuple(tuple(table.get(key) for key in varying) for table in tables)
        starred = marked is None or base in marked
        best = tuple(_best([row[j] for row in values], directions.get(f"{stage}.{key}", "info"))
                     if starred else () for j, key in enumerate(varying))
        sweeps.append(Sweep(base, stage, variants, tuple(varying), values, best,
                            len(keys) - len(varying), starred))
    return sweeps


def _cell(value: float | None, best: bool) -> str:
    if value is None:
        return "-"
    return number_text(value) + ("*" if best else "")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def header_lines(key: str, limit: int = HEADER_LIMIT) -> tuple[str, str]:
    """A metric key as two header lines of at most ``limit`` characters, split after an
    underscore (``("average_", "precision_at_k")``); ``("", key)`` when it fits on one.
    A key that no split fits is shortened with ``…`` on the second line."""
    if len(key) <= limit:
        return "", key
    splits = [i + 1 for i, char in enumerate(key) if char == "_"
              and i + 1 <= limit and len(key) - i - 1 <= limit]
    if not splits:
        return "", _short(key, limit)
    cut = min(splits, key=lambda i: abs(len(key) - 2 * i))  # the most even split
    return key[:cut], key[cut:]


def sweep_lines(sweep: Sweep, width: int = 80) -> list[str]:
    """The sweep as terminal tables of at most ``width`` columns (metrics split across tables)."""
    out = [f"{terminal_text(sweep.test)} [{sweep.stage}]: {len(sweep.variants)} variants "
           + ("(* best per column)" if sweep.starred else
              "(not a rag_sweep)")]
    if not sweep.metrics:
        return [*out, "  every metric is equal in every variant"]
    names = [_short(terminal_text(v), 28) for v in sweep.variants]
    first = max(len("variant"), *(len(n) for n in names))
    columns = []
    for j, metric in enumerate(sweep.metrics):
        cells = [_cell(row[j], i in sweep.best[j]) for i, row in enumerate(sweep.values)]
        top, bottom = header_lines(metric)
        columns.append(((top, bottom), cells,
                        max(len(top), len(bottom), *(len(c) for c in cells))))
    start = 0
    while start < len(columns):
        used, end = 2 + first, start
        while end < len(columns) and (end == start or used + 2 + columns[end][2] <= width):
            used += 2 + columns[end][2]
            end += 1
        chunk = columns[start:end]
        rows = [["", *(c[0][0] for c in chunk)]] if any(c[0][0] for c in chunk) else []
        rows += [["variant", *(c[0][1] for c in chunk)],
                 ["-" * first, *("-" * c[2] for c in chunk)]]
        rows += [[names[i], *(c[1][i] for c in chunk)] for i in range(len(names))]
        sizes = [first, *(c[2] for c in chunk)]
        out.extend("  " + "  ".join(cell.ljust(size) for cell, size in zip(row, sizes)).rstrip()
                   for row in rows)
        start = end
    if sweep.same:
        out.append(f"  {sweep.same} metric{'s' if sweep.same != 1 else ''} equal in every variant")
    return out


def sweep_markdown(sweep: Sweep) -> str:
    """The sweep as one GitHub Markdown table; the best value per column in bold."""
    header = "| variant | " + " | ".join(f"`{m}`" for m in sweep.metrics) + " |"
    rule = "|---|" + "---:|" * len(sweep.metrics)
    body = []
    for i, (variant, row) in enumerate(zip(sweep.variants, sweep.values)):
        cells = []
        for j, value in enumerate(row):
            text = _cell(value, False)
            cells.append(f"**{text}**" if i in sweep.best[j] else text)
        body.append(f"| {markdown_code(variant)} | " + " | ".join(cells) + " |")
    return "\n".join([f"### Sweep {markdown_code(sweep.test)} — {sweep.stage}", "", header, rule,
                      *body])
