"""One status type: every list of statuses (failing, worth a look, the summary's words,
the HTML order, ...) derives from ``compare.comparison.STATUSES``, and the words users
see stay the ones they had."""

from __future__ import annotations

import itertools
import typing

import pytest

from pytest_rag.compare.comparison import (
    SHOWN_STATISTICS,
    STATUSES,
    UNSETTLED,
    MetricDiff,
    Status,
)
from pytest_rag.compare.diff import DiffRow
from pytest_rag.compare.records import CheckOutcome, StageRecord
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.html import STATUS_ORDER, render_html
from pytest_rag.reports.scorecard import ATTENTION, LABELS, SUMMARY_WORDS, build_scorecard
from pytest_rag.reports.tables import render_diff

NODE = "t.py::test_it"

#: What users read, per status: its label (scorecard, reports), whether it fails, and
#: the words of the summary line.  Pinned: a change here changes every output.
SEEN: dict[str, tuple[str, bool, str]] = {
    "fail": ("FAIL", True, "below threshold"),
    "regressed": ("REGRESSED", True, "regressed"),
    "lost": ("LOST", True, "no longer measured"),
    "within noise": ("within noise", False, "worse but within noise"),
    "improved": ("improved", False, "improved"),
    "new": ("new", False, "new"),
    "gold changed": ("gold changed", False, "not compared (gold changed)"),
    "not compared": ("not compared", False, "not compared (different gold)"),
    "settings changed": ("settings changed", False, "not compared (settings changed)"),
    "removed": ("", False, ""),
    "ok": ("ok", False, ""),
    "not measured": ("not measured", False, ""),
    "unchanged": ("", False, ""),
    "info": ("", False, ""),
}


def test_the_status_type_and_the_table_name_the_same_statuses_once() -> None:
    assert tuple(STATUSES) == typing.get_args(Status)
    assert all(word == row.word for word, row in STATUSES.items())
    labels = [row.label for row in STATUSES.values() if row.label]
    assert len(labels) == len(set(labels))
    assert {word: (row.label, row.fails, row.summary) for word, row in STATUSES.items()} == SEEN


def test_every_list_of_statuses_is_derived_from_the_table() -> None:
    assert SUMMARY_WORDS == tuple((label, words) for label, _, words in SEEN.values() if words)
    assert STATUS_ORDER == tuple(label for label, _, _ in SEEN.values() if label)
    assert ATTENTION == frozenset(STATUS_ORDER) - {"ok", "not measured"}
    assert set(LABELS) == set(STATUS_ORDER)
    assert UNSETTLED == ("not compared", "settings changed")
    assert SHOWN_STATISTICS == {"regressed", "within noise", "improved"}
    worse = {word for word, row in STATUSES.items() if row.worse}
    assert worse == {"regressed", "lost", "within noise"}  # what an update names as accepted


@pytest.mark.parametrize("word", [word for word in STATUSES if word not in ("fail", "ok",
                                                                            "not measured")])
def test_a_diff_and_its_scorecard_row_agree_on_failing(word: Status) -> None:
    diff = MetricDiff("retrieval", "recall_at_k", 0.5, 0.8, 0.0, "higher", word)
    assert diff.failed == SEEN[word][1] == DiffRow(NODE, diff).failed
    assert diff.fails(strict=True) == (diff.failed or word in UNSETTLED)
    record = StageRecord(NODE, "retrieval", {"recall_at_k": 0.5}, {}, {"k": 2}, {})
    scorecard = build_scorecard([record], {}, {(NODE, "retrieval"): [diff]}, REGISTRY)
    (row,) = scorecard.entries[0].rows
    assert row.status == (SEEN[word][0] or "ok")
    assert row.failed == diff.failed and row.worse == diff.worse
    shown = render_diff([DiffRow(NODE, diff)])
    assert (word in shown) == STATUSES[word].attention


def _summary(*words: Status, failing: bool = False) -> str:
    record = StageRecord(NODE, "retrieval", {"recall_at_k": 0.5, "mrr_at_k": 0.5,
                                             "precision_at_k": 0.5}, {}, {"k": 2}, {})
    diffs = [MetricDiff("retrieval", key, 0.5, 0.8, 0.0, "higher", word)
             for key, word in zip(("recall_at_k", "precision_at_k"), words)]
    checks = {(NODE, "retrieval"): [CheckOutcome("retrieval", "mrr_at_k", ">=", 0.9, "ini",
                                                not failing)]}
    scorecard = build_scorecard([record], checks, {(NODE, "retrieval"): diffs}, REGISTRY)
    return render_html(scorecard).split('id="summary"', 1)[1].split("</section>", 1)[0]


@pytest.mark.parametrize("word", ["gold changed", "not compared", "settings changed"])
def test_the_html_worst_status_names_a_comparison_that_was_not_made(word: Status) -> None:
    """The stage overview's "worst status" said ``ok`` for a stage whose metrics were
    not compared (its order left those statuses out); now the table's order decides."""
    summary = _summary(word)
    overview = summary.split('class="overview"', 1)[1]
    assert f'<span class="status {word.replace(" ", "-")}">{word}</span></td><td class="num"' \
        in overview
    counts = summary.split('class="counts"', 1)[1].split("</table>", 1)[0]
    assert counts.index(f">{word}<") < counts.index(">ok<")


def test_the_html_tiles_say_what_the_summary_line_says() -> None:
    """The within-noise tile read "worse, within noise" where the summary line (terminal
    and HTML) says "worse but within noise"."""
    summary = _summary("within noise", "regressed", failing=True)
    tiles = summary.split('<div class="tiles">', 1)[1].split('<table class="counts"', 1)[0]
    assert "worse but within noise</div>" in tiles and "worse, within noise" not in tiles
    # In the summary line's order, the failing ones red; regressed and improved always.
    order = [tiles.index(text) for text in ("below threshold</div>", "metrics regressed</div>",
                                            "worse but within noise</div>",
                                            "metrics improved</div>")]
    assert order == sorted(order)
    assert 'class="tile bad"><span class="n" data-field="summary" data-key="FAIL"' in tiles
    assert 'class="tile "><span class="n">0</span>metrics improved' in tiles


def test_the_readme_table_of_statuses_is_the_table() -> None:
    """Every label has its README row, with the comparison's word and whether it fails."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = text[text.index("| status | comparison | when | fails |"):]
    lines = itertools.takewhile(lambda line: line.startswith("|"), block.splitlines()[2:])
    rows = {cells[0].strip("`"): cells for line in lines
            if (cells := [cell.strip() for cell in line.strip("|").split("|")])}
    assert set(rows) == set(STATUS_ORDER) - {"not measured"}
    for word, row in STATUSES.items():
        if row.label not in rows:
            continue
        cells = rows[row.label]
        assert cells[-1].startswith("yes") == row.fails, word
        if word not in ("ok", "fail"):
            assert cells[1] == f"`{word}`", word
    assert rows["ok"][1].startswith("`unchanged`")
