"""The terminal's sweep table in the room it gets: the columns that explain the verdict
stay, the other metric columns go first (counted), then variant rows, then the table."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.sweeps import Sweep, SweepRule, Variant
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.scorecard import build_scorecard
from pytest_rag.reports.sweep_views import (
    _column_order,
    header_lines,
    sweep_brief,
    sweep_columns,
    sweep_lines,
    verdict_lines,
)

RULE = SweepRule(objective="augmentation.context_sufficient", cost=("chunks",),
                 require=("chunking.size_compliance >= 0.9",), shipped="v01")
KEYS = {stage: [spec.key for spec in REGISTRY.values() if spec.stage == stage
                and not spec.cost]
        for stage in ("chunking", "retrieval")}


def _records(count: int, rule: SweepRule, test: str = "t.py::test") -> tuple[
        list[StageRecord], dict[str, Variant]]:
    """``count`` chunkers, two knobs, three costs and every chunking and retrieval metric
    differing between them; ``v00`` is the best, ``v01`` ties with it at fewer chunks,
    ``v02`` misses the rule's requirement; each further one is worse and cheaper."""
    records, variants = [], {}
    for i in range(count):
        nodeid = f"{test}[v{i:02d}]"
        hits = [1.0] * 20 if i < 2 else [1.0] * (18 - i) + [0.0] * (i + 2)
        if i == 1:
            hits[0] = 0.0
        records += [
            StageRecord(nodeid, "augmentation", {"context_sufficient": sum(hits) / 20},
                        {"context_sufficient": {f"q{j:02d}": h for j, h in enumerate(hits)}}),
            StageRecord(nodeid, "chunking", {**dict.fromkeys(KEYS["chunking"], 0.5 + i / 100),
                                             "size_compliance": 0.5 if i == 2 else 1.0}),
            StageRecord(nodeid, "retrieval", dict.fromkeys(KEYS["retrieval"], 0.3 + i / 50)),
        ]
        variants[nodeid] = Variant((("chunker", f"splitter-{i}"), ("size", 100 * (i + 1))),
                                   {"chunks": 900.0 - 50 * i, "index_tokens": 8e4 + i,
                                    "context_tokens": 400.0 + i}, rule)
    return records, variants


@functools.cache
def _sweep(count: int = 7, rule: SweepRule = RULE) -> Sweep:
    records, variants = _records(count, rule)
    sweep = build_scorecard(records, {}, {}, REGISTRY, variants=variants).sweeps()[0]
    assert len(sweep.columns) > 20
    return sweep


def _headers(lines: list[str]) -> list[str]:
    """The column names of every part of the table (the lines starting with "variant")."""
    return [name for line in lines if line.startswith("  variant ")
            for name in line.split()[1:]]


def _rows(lines: list[str]) -> set[str]:
    return {line.split()[0] for line in lines if line.startswith("  v")
            and line.split()[0][1:].isdigit()}


def _names(count: int) -> set[str]:
    return {f"v{i:02d}" for i in range(count)}


def test_columns_go_before_rows_and_the_verdict_columns_stay() -> None:
    sweep = _sweep()
    columns = sweep_columns(sweep)
    full = sweep_lines(sweep)
    # every row of a table of every column: longer than a screenful at 80 columns
    assert len(full) > 60 and _rows(full) == _names(7)
    lines = sweep_lines(sweep, 80, room=40)
    assert len(lines) <= 40 and all(len(line) <= 80 for line in lines)
    assert _rows(lines) == _names(7)  # every variant row kept
    assert sum(line.startswith("  variant ") for line in lines) == 2  # two parts, not 7
    headers = _headers(lines)
    for name in ("chunker", "size", "sufficient", "vs", "best", "noise", "frontier",
                 "chunks"):
        assert name in headers
    # What else fits is taken in the order of _column_order, the rest counted.
    shown = len(headers) - 1  # "vs best" is one column of two words
    order = [header_lines(columns[i].header)[1] for i in _column_order(sweep, columns)]
    assert sorted(order[:shown]) == sorted(["vs best" if h == "vs" else h for h in headers
                                            if h != "best"])
    assert "size_compliance" in headers  # the rule's requirement: why v02 is excluded
    assert "recall_at_k~" not in headers
    assert (f"  {len(columns) - shown} more metric columns: -v or --rag-report-md lists "
            "them") in lines
    assert not any("more variant" in line for line in lines)
    # The verdict is whole under the table.
    text = " ".join(line.strip() for line in lines)
    assert all(line in text for line in verdict_lines(sweep))


def test_rows_go_when_the_verdict_columns_do_not_fit_and_the_verdict_rows_stay() -> None:
    sweep = _sweep(12, SweepRule(objective="augmentation.context_sufficient",
                                 cost=("chunks",), shipped="v11"))
    everything = sweep_lines(sweep, 80, room=200)
    assert everything == sweep_lines(sweep)
    # Columns go first: the least room that still lists every row...
    rooms = [room for room in range(len(everything)) if
             _rows(sweep_lines(sweep, 80, room=room)) == _names(12)]
    compact = sweep_lines(sweep, 80, room=rooms[0])
    assert sum(line.startswith("  variant ") for line in compact) == 2
    assert "frontier" in _headers(compact) and "chunks" in _headers(compact)
    # ... and one line less cuts rows (two parts of the table: a row takes two lines),
    # keeping the best (v00), the recommended (v01) and the shipped (v11).
    lines = sweep_lines(sweep, 80, room=rooms[0] - 3)
    assert len(lines) <= rooms[0] - 3
    assert _rows(lines) == _names(9) | {"v11"}
    assert _headers(lines) == _headers(compact)  # the columns that fit beside them
    columns = len(sweep_columns(sweep)) - (len(_headers(lines)) - 1)
    assert (f"  2 more variants and {columns} more metric columns: -v or --rag-report-md "
            "lists them") in lines


def test_the_brief_form_comes_last_and_without_room_every_column_is_there() -> None:
    sweep = _sweep()
    brief = sweep_brief(sweep)
    assert sweep_lines(sweep, 80, room=len(brief)) == brief
    assert sweep_lines(sweep, 80, limit=20) == sweep_lines(sweep)  # no room: every column
    assert not any("more metric column" in line for line in sweep_lines(sweep))


def test_the_required_metric_is_kept_before_the_others_and_the_objective_repeat_last(
        ) -> None:
    sweep = _sweep()
    columns = sweep_columns(sweep)
    order = [columns[i] for i in _column_order(sweep, columns)]
    groups = [column.group for column in order]
    assert groups[:6] == ["knobs", "knobs", "objective", "objective", "objective",
                          "objective"]
    assert order[6].key == "chunks" and order[7].key == "chunking.size_compliance"
    assert order[-1].key == "augmentation.context_sufficient"
    assert sorted(_column_order(sweep, columns)) == list(range(len(columns)))


def test_without_a_verdict_the_knobs_stay_and_metric_columns_go() -> None:
    records = [StageRecord(f"t.py::test[v{i:02d}]", "chunking",
                           dict.fromkeys(KEYS["chunking"], i / 10)) for i in range(4)]
    variants = {record.nodeid: Variant((("size", 10 * i),)) for i, record in enumerate(records)}
    card = build_scorecard(records, {}, {}, REGISTRY, variants=variants,
                           sweep_tests=frozenset())
    sweep = card.sweeps()[0]
    assert sweep.verdict is None
    lines = sweep_lines(sweep, 80, room=14)
    assert len(lines) <= 14 and _rows(lines) == _names(4)
    assert _headers(lines)[0] == "size"
    assert any(line.endswith("more metric columns: -v or --rag-report-md lists them")
               for line in lines)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(40, 200), room=st.integers(0, 90))
def test_any_room_and_width_hold_the_verdict_within_both(width: int, room: int) -> None:
    sweep = _sweep()
    lines = sweep_lines(sweep, width, 20, room)
    assert len(lines) <= max(room, len(sweep_brief(sweep, width)))
    assert all(len(line) <= width for line in lines)
    text = "\n".join(line.strip() for line in lines)
    assert "recommended: v01" in text and "shipped: v01" in text
    if len(lines) > len(sweep_brief(sweep, width)):
        assert {"v00", "v01"} <= _rows(lines)  # the best and the recommended



def test_every_sweep_gets_its_verdict_columns_before_one_gets_more() -> None:
    records, variants = _records(7, RULE, "t.py::test_a")
    more, more_variants = _records(7, RULE, "t.py::test_b")
    card = build_scorecard(records + more, {}, {}, REGISTRY,
                           variants={**variants, **more_variants})
    lines = card.lines(limit=60, sweep_width=150)
    assert len(lines) <= 60 and all(len(line) <= 150 for line in lines)
    second = lines.index("Sweep t.py::test_b: 7 variants")
    for part in (lines[:second], lines[second:]):
        assert _rows(part) == _names(7)
        assert "frontier" in _headers(part) and "chunks" in _headers(part)
        assert any(line.endswith("more metric columns: -v or --rag-report-md lists them")
                   for line in part)
    # Alone, the first sweep takes the room for more of its columns.
    alone = build_scorecard(records, {}, {}, REGISTRY, variants=variants)
    wider = alone.lines(limit=60, sweep_width=150)
    assert len(_headers(wider)) > len(_headers(lines[:second]))


def test_values_shown_alike_are_starred_alike() -> None:
    # 0.0312 and 0.0309 both read 0.031: both get the star, the JSON keeps the exact best.
    records, variants = [], {}
    for name, value in (("a", 0.0312), ("b", 0.0309), ("c", 0.02)):
        nodeid = f"t.py::test[{name}]"
        records.append(StageRecord(nodeid, "chunking", {"size_compliance": value}))
        variants[nodeid] = Variant((("name", name),), {}, SweepRule())
    sweep = build_scorecard(records, {}, {}, REGISTRY, variants=variants).sweeps()[0]
    column = next(c for c in sweep_columns(sweep)
                  if c.group == "chunking" and c.header == "size_compliance")
    assert [cell.text for cell in column.cells] == ["0.031*", "0.031*", "0.020"]
    assert sweep.to_json()["stages"]["chunking"]["metrics"]["size_compliance"]["best"] == ["a"]
