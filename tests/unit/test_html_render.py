"""The HTML report's renderer, its charts and the drill-down details, on hand-built data."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from htmlcheck import Page, mismatches, svgs

from pytest_rag.compare.baseline import Baseline
from pytest_rag.compare.comparison import MetricDiff, compare_record
from pytest_rag.compare.records import CheckOutcome, StageRecord
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.dataset.loading import load_dataset
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.drilldown import build_details, worse_keys
from pytest_rag.reports.html import SECTIONS, format_number, render_html
from pytest_rag.reports.scorecard import Scorecard, build_scorecard
from pytest_rag.reports.svg import Marker, Series, bar, bin_counts, histogram
from pytest_rag.stages.chunking import ChunkingEvaluator
from pytest_rag.stages.embedding import EmbeddingEvaluator
from pytest_rag.stages.generation import GenerationEvaluator
from pytest_rag.stages.reranking import RerankingEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator

QUICKSTART = Path(__file__).resolve().parents[1] / "data" / "quickstart.yaml"
NODE = "t.py::test_retrieval"
SCRIPT = "<script>alert('x')</script>"
#: Recall@2 per query: now, and in the baseline (q2 and q3 were better).
NOW = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": None}
BEFORE = {"q1": 1.0, "q2": 1.0, "q3": 0.5}


def _record(values: dict[str, float | None], per_query: dict[str, dict[str, float | None]],
            nodeid: str = NODE, **extra: Any) -> StageRecord:
    return StageRecord(nodeid, "retrieval", values, per_query, {"k": 2},
                       {"token_recall": "needs expected_evidence, chunks"}, **extra)


def _baseline() -> Baseline:
    old = _record({"recall_at_k": 2.5 / 3, "token_recall": None, "p95_latency_ms": 40.0},
                  {"recall_at_k": BEFORE})
    return Baseline().updated([old], REGISTRY, Tolerances())


def _regressed(details: dict[str, Any] | None = None) -> tuple[Scorecard, StageRecord, Baseline]:
    record = _record({"recall_at_k": 0.5, "token_recall": None, "p95_latency_ms": 42.0},
                     {"recall_at_k": NOW}, details=details or {})
    baseline = _baseline()
    diffs = compare_record(record, baseline, REGISTRY, Tolerances(), permutations=200)
    checks = {(NODE, "retrieval"): [CheckOutcome("retrieval", "recall_at_k", ">=", 0.4, "ini",
                                                True)]}
    scorecard = build_scorecard([record], checks, {(NODE, "retrieval"): diffs}, REGISTRY,
                                {NODE: "failed"})
    return scorecard, record, baseline


def _details(scorecard: Scorecard, *records: StageRecord) -> dict[tuple[str, str], Any]:
    return {(r.nodeid, r.stage): r.details for r in records if r.details}


# -- the page -----------------------------------------------------------------------
def test_every_section_and_every_number_matches_the_json_report() -> None:
    scorecard, _record, baseline = _regressed()
    page_text = render_html(scorecard, baseline=baseline)
    page = Page(page_text)
    assert page.mismatched == []
    for section, _ in SECTIONS:
        assert page.ids.count(section) == 1, section
    assert mismatches(scorecard.to_json(), page) == []
    fields = {number.get("data-field", "value") for number in page.numbers}
    assert {"value", "baseline", "delta", "p_value", "summary", "outcomes"} <= fields
    # The regressed metric's value carries its exact repr, not the 3 decimals shown.
    recall = [n for n in page.numbers if n.get("data-key") == "recall_at_k"
              and n.get("data-field") == "value"]
    assert recall and all(n["data-value"] == "0.5" for n in recall)
    baseline_cells = [n for n in page.numbers if n.get("data-key") == "recall_at_k"
                      and n.get("data-field") == "baseline"]
    assert baseline_cells[0]["data-value"] == repr(2.5 / 3)


def test_not_measured_is_shown_as_such_never_as_zero() -> None:
    scorecard, _, _ = _regressed()
    page = Page(render_html(scorecard))
    cells = [n for n in page.numbers if n.get("data-key") == "token_recall"]
    assert cells and all(n["data-value"] == "null" for n in cells)
    row = re.search(r'<tr data-key="token_recall">.*?</tr>', render_html(scorecard))
    assert row is not None
    assert "not measured" in row.group(0) and "needs expected_evidence, chunks" in row.group(0)
    assert ">0.000<" not in row.group(0)
    assert 'class="value"' not in row.group(0)  # an empty track, no bar
    assert format_number(None) == "not measured"
    assert format_number(0.0) == "0.000"


def test_user_text_is_escaped() -> None:
    details = {"kind": "queries", "total": 1, "omitted": 0, "k": 2, "queries": [
        {"id": "q<1>", "question": f"Why {SCRIPT}?", "ranked": ["<b>c1</b>"],
         "answer": "a & b", "references": ['"quoted"']}]}
    record = _record({"recall_at_k": 0.5}, {"recall_at_k": {"q<1>": 0.5}},
                     nodeid=f"t.py::test[{SCRIPT}]", details=details)
    scorecard = build_scorecard([record], {}, {}, REGISTRY)
    text = render_html(scorecard, _details(scorecard, record))
    assert "<script" not in text.lower()
    assert "<b>" not in text
    page = Page(text)
    assert f"Why {SCRIPT}?" in page.text
    assert f"t.py::test[{SCRIPT}]" in page.text
    assert "<b>c1</b>" in page.text and "a & b" in page.text
    assert mismatches(scorecard.to_json(), page) == []
    queries = [n for n in page.numbers if n.get("data-field") == "per_query"]
    assert [n["data-query"] for n in queries] == ["q<1>"]


def test_empty_scorecard() -> None:
    text = render_html(Scorecard())
    page = Page(text)
    assert [section for section, _ in SECTIONS if section not in page.ids] == []
    assert "No stage was evaluated" in page.text
    assert "No test evaluated chunking." in page.text
    assert "No sweep" in page.text
    assert page.numbers == [] and svgs(text) == []


def test_self_contained_and_deterministic() -> None:
    scorecard, _, baseline = _regressed()
    text = render_html(scorecard, baseline=baseline)
    assert text == render_html(scorecard, baseline=baseline)
    lowered = text.lower()
    for needle in ("http:", "https:", "<script", " src=", "url(", "@import", "<link",
                   "<img", "<iframe"):
        assert needle not in lowered, needle
    assert text.startswith("<!DOCTYPE html>")
    assert "@media print" in text


def test_every_svg_is_well_formed_xml() -> None:
    _scorecard, record, baseline = _regressed()
    dataset = load_dataset(QUICKSTART)
    report = ChunkingEvaluator(size_limits=(5, 15)).evaluate(dataset)
    chunking = dataclasses.replace(StageRecord.from_report("t.py::test_chunks", report),
                                   details=build_details(report))
    both = build_scorecard([record, chunking], {}, {}, REGISTRY)
    text = render_html(both, _details(both, chunking), baseline=baseline)
    found = svgs(text)
    assert len(found) >= 5
    assert {svg.get("class") for svg in found} == {"bar", "histogram"}
    assert all(svg.find("title") is not None for svg in found)


def test_bars_scale_ratios_to_one_and_unbounded_metrics_to_their_values() -> None:
    scorecard, _, _ = _regressed()
    text = render_html(scorecard)
    recall = re.search(r'<tr class="worse" data-key="recall_at_k">.*?</tr>', text)
    latency = re.search(r'<tr data-key="p95_latency_ms">.*?</tr>', text)
    assert recall is not None and latency is not None
    assert "scale 0.000 to 1.000" in recall.group(0)
    assert "#c0392b" in recall.group(0)  # regressed: a red bar
    # 42 ms now, 40 ms in the baseline: up to 42 plus 10% headroom.
    assert "scale 0.000 to 46.200" in latency.group(0)


def test_distribution_of_a_regressed_metric_current_against_baseline() -> None:
    scorecard, _, baseline = _regressed()
    text = render_html(scorecard, baseline=baseline)
    section = text[text.index('id="distributions"'):text.index('id="chunk-sizes"')]
    assert 'data-key="recall_at_k"' in section
    assert "baseline (3)" in section and "current (3)" in section  # q4 is not measured
    assert "No metric got worse" not in section
    histogram_svg = svgs(section)[0]
    counts = [rect.find("title").text for rect in histogram_svg.iter("rect")
              if rect.find("title") is not None]
    assert "current (3): 1 in [0, 0.1)" in counts and "current (3): 1 in [0.9, 1]" in counts
    assert "baseline (3): 2 in [0.9, 1]" in counts


def test_nothing_regressed_says_so() -> None:
    record = _record({"recall_at_k": 0.5}, {"recall_at_k": NOW})
    scorecard = build_scorecard([record], {}, {}, REGISTRY)
    text = render_html(scorecard)
    section = text[text.index('id="distributions"'):text.index('id="chunk-sizes"')]
    assert "No baseline was compared" in section
    assert "Current per-query distributions of the headline metrics (1)" in section
    baseline = Baseline().updated([record], REGISTRY, Tolerances())
    diffs = compare_record(record, baseline, REGISTRY, Tolerances(), permutations=200)
    same = build_scorecard([record], {}, {(NODE, "retrieval"): diffs}, REGISTRY)
    assert "No metric got worse against the baseline." in render_html(same, baseline=baseline)


def test_chunk_sizes_with_the_size_limits() -> None:
    dataset = load_dataset(QUICKSTART)
    report = ChunkingEvaluator(size_limits=(5, 12)).evaluate(dataset)
    details = build_details(report)
    sizes = [size for size, count in details["chunk_sizes"] for _ in range(count)]
    # The sizes are |C_i| of the chunking metrics.
    assert min(sizes) == report["min_chunk_tokens"] and max(sizes) == report["max_chunk_tokens"]
    assert sum(sizes) / len(sizes) == pytest.approx(report["mean_chunk_tokens"])
    assert details["size_limits"] == [5, 12] and details["chunks"] == 3
    record = dataclasses.replace(StageRecord.from_report("t.py::test_chunks", report),
                                 details=details)
    scorecard = build_scorecard([record], {}, {}, REGISTRY)
    text = render_html(scorecard, _details(scorecard, record))
    section = text[text.index('id="chunk-sizes"'):text.index('id="drill-down"')]
    outside = sum(1 for size in sizes if not 5 <= size <= 12)
    assert f"{outside} outside [5, 12]" in section
    assert (3 - outside) / 3 == report["size_compliance"]
    labels = [t.text for svg in svgs(section) for t in svg.iter("text")]
    assert "min 5" in labels and "max 12" in labels
    assert mismatches(scorecard.to_json(), Page(text)) == []


@pytest.mark.parametrize(("limits", "shown"), [
    ((5, 10**6), "outside [5, 1000000]"),
    ((0, 10**400), "outside [0, about 10^400]"),
])
def test_a_limit_far_from_every_size_is_named_not_drawn(limits: tuple[int, int],
                                                        shown: str) -> None:
    report = ChunkingEvaluator(size_limits=limits).evaluate(load_dataset(QUICKSTART))
    record = dataclasses.replace(StageRecord.from_report("t.py::test_chunks", report),
                                 details=build_details(report))
    scorecard = build_scorecard([record], {}, {}, REGISTRY)
    section = render_html(scorecard, _details(scorecard, record))
    section = section[section.index('id="chunk-sizes"'):section.index('id="drill-down"')]
    assert shown in section and "a limit far from every size is not drawn" in section
    labels = [t.text for svg in svgs(section) for t in svg.iter("text")]
    assert f"min {limits[0]}" in labels and not any(label.startswith("max") for label in labels)
    # The axis spans the sizes, not the far limit.
    assert max(float(t.text) for svg in svgs(section) for t in svg.iter("text")
               if t.text and t.text.isdigit()) < 1000


def test_no_chunking_record_is_said() -> None:
    scorecard, _, _ = _regressed()
    assert "No test evaluated chunking." in render_html(scorecard)


def test_sweep_table_marks_the_best_variant() -> None:
    records = [StageRecord(f"t.py::test_sweep[{name}]", "retrieval",
                           {"recall_at_k": recall, "p95_latency_ms": latency, "hit_at_k": 1.0})
               for name, recall, latency in (("small", 0.7, 10.0), ("large", 0.9, 20.0))]
    scorecard = build_scorecard(records, {}, {}, REGISTRY)
    text = render_html(scorecard)
    # The sweeps come first, right after the summary.
    assert text.index('id="summary"') < text.index('id="sweeps"') < text.index('id="metrics"')
    section = text[text.index('id="sweeps"'):text.index('id="metrics"')]
    best = re.findall(r'<td class="num best"[^>]*data-key="([^"]+)"[^>]*>([^<]+)</td>', section)
    # The objective (recall, the only comparable quality metric) and its column; latency
    # is a cost: shown, never starred.
    assert best == [("retrieval.recall_at_k", "0.900 ★"), ("recall_at_k", "0.900 ★")]
    page = Page(text)
    sweep = [n for n in page.numbers if n.get("data-field") == "sweep"]
    assert {(n["data-variant"], n["data-key"]) for n in sweep} == {
        (v, "recall_at_k") for v in ("small", "large")}
    costs = [n for n in page.numbers if n.get("data-field") == "sweep-cost"]
    assert {(n["data-variant"], n["data-key"]) for n in costs} == {
        (v, "retrieval.p95_latency_ms") for v in ("small", "large")}
    assert "recommended: large" in page.text
    assert mismatches(scorecard.to_json(), page) == []


# -- the details ------------------------------------------------------------------
def test_retrieval_details_rank_at_k_and_mark_the_gold() -> None:
    report = RetrievalEvaluator(k=2).evaluate(load_dataset(QUICKSTART))
    assert report.dataset is not None
    details = build_details(report)
    assert details["kind"] == "queries" and details["k"] == 2
    assert (details["total"], details["omitted"]) == (3, 0)
    first = details["queries"][0]
    assert first["question"] == "How long do I have to return an item?"
    assert first["ranked"] == ["shipping#0", "refunds#0"]
    assert first["relevant"] == [["refunds#0", 2], ["refunds#1", 1]]
    assert "answer" not in first
    text = render_html(build_scorecard([dataclasses.replace(
        StageRecord.from_report(NODE, report), details=details)], {}, {}, REGISTRY),
        {(NODE, "retrieval"): details})
    assert ('<li class="rel"><bdi>refunds#0</bdi> ✓ <span class="grade">grade 2</span></li>'
            in text)
    assert ('<li class="missed"><bdi>refunds#1</bdi> ✗ <span class="grade">grade 1</span></li>'
            in text)


def test_repeated_ids_count_once_at_their_first_rank() -> None:
    report = RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q1": ["a", "a", "b", "c"]},
                                              relevant={"q1": ["b"]})
    assert build_details(report)["queries"][0]["ranked"] == ["a", "b"]
    assert report["recall_at_k"] == 1.0


def test_reranking_keeps_both_lists_and_derived_grades_are_marked() -> None:
    dataset = load_dataset(QUICKSTART)
    report = RerankingEvaluator(k=2).evaluate(dataset)
    first = build_details(report)["queries"][0]
    assert first["before"] == ["shipping#0", "refunds#0"]
    assert first["ranked"] == ["refunds#0", "refunds#1"]
    derived = RetrievalEvaluator(k=2, relevance_from_evidence=True).evaluate(
        dataset, relevant={"q1": {}})  # an empty mapping is no gold: derived from evidence
    grades = dict(map(tuple, build_details(derived)["queries"][0]["relevant"]))
    assert grades == {"refunds#0": 2}


def test_generation_and_embedding_details() -> None:
    dataset = load_dataset(QUICKSTART)
    generation = build_details(GenerationEvaluator().evaluate(dataset))["queries"]
    assert generation[1]["answer"] == "9.50 EUR."
    assert generation[1]["references"] == ["9.50 EUR", "EUR 9.50"]
    assert generation[0]["context"] == ["refunds#0", "refunds#1"]
    assert generation[0]["cited"] == ["refunds"]
    assert "answer" in generation[2] and "references" not in generation[2]
    embedding = build_details(EmbeddingEvaluator(k=1).evaluate(dataset))["queries"]
    assert embedding[0]["ranked"] == ["refunds#0"]  # the ANN list at K
    assert "ranked" not in embedding[2] and "no_run" not in embedding[2]  # no ann_ids


def test_queries_that_got_worse_come_first_and_the_cap_is_said() -> None:
    report = RetrievalEvaluator(k=2).evaluate(
        retrieved_ids={f"q{i}": ["a", "b"] for i in range(1, 6)},
        relevant={f"q{i}": (["a"] if i != 4 else ["z"]) for i in range(1, 6)})
    before = {"recall_at_k": {f"q{i}": 1.0 for i in range(1, 6)},
              "mrr_at_k": {"q5": 1.0, "q2": 0.5}}
    directions = {"recall_at_k": "higher", "mrr_at_k": "higher"}
    details = build_details(report, baseline_per_query=before, directions=directions,
                            regressed=["recall_at_k"], limit=3)
    ids = [query["id"] for query in details["queries"]]
    assert ids == ["q4", "q1", "q2"]  # q4 got worse; the rest in dataset order
    # q2's MRR rose from 0.5 to 1: not worse.
    assert details["queries"][0]["worse"] == {"recall_at_k": 1.0}
    assert all("worse" not in query for query in details["queries"][1:])
    assert (details["total"], details["omitted"], details["worse"]) == (5, 2, 1)
    record = dataclasses.replace(StageRecord.from_report(NODE, report), details=details)
    text = render_html(build_scorecard([record], {}, {}, REGISTRY), {(NODE, "retrieval"): details})
    assert "2 queries left out" in text
    assert "3 of 5 queries, 1 worse than the baseline" in text
    page = Page(text)
    was = [n for n in page.numbers if "data-baseline" in n]
    assert [(n["data-query"], n["data-key"], n["data-baseline"]) for n in was] == [
        ("q4", "recall_at_k", "1.0")]


def test_worse_keys_ignore_rounding_and_informational_metrics() -> None:
    before = {"a": {"q": 0.30945630067010343}, "b": {"q": 0.2}, "c": {"q": 1.0},
              "d": {"q": 5.0}}
    after = {"a": {"q": 0.3094563006701034}, "b": {"q": None}, "c": {"q": 0.0},
             "d": {"q": 6.0}}
    directions = {"a": "higher", "b": "higher", "c": "info", "d": "lower"}
    assert worse_keys(before, after, "q", directions) == {"b": 0.2, "d": 5.0}


def test_a_report_without_data_has_no_details() -> None:
    report = RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q1": ["a"]}, relevant={"q1": ["a"]})
    assert build_details(dataclasses.replace(report, dataset=None)) == {}
    assert dataclasses.replace(report, dataset=None) == report  # not part of equality
    assert "dataset" not in repr(report)


# -- records and the baseline ---------------------------------------------------
def test_details_travel_in_records_but_never_into_the_baseline() -> None:
    details = {"kind": "queries", "total": 1, "omitted": 0, "k": 2,
               "queries": [{"id": "q1", "question": "?"}]}
    record = _record({"recall_at_k": 0.5}, {"recall_at_k": {"q1": 0.5}}, details=details)
    data = record.to_json()
    assert data["details"] == details
    assert StageRecord.from_json(data) == record
    plain = dataclasses.replace(record, details={})
    assert "details" not in plain.to_json()
    assert StageRecord.from_json(plain.to_json()).details == {}
    baseline = Baseline().updated([record], REGISTRY, Tolerances())
    assert "details" not in str(baseline.to_json())
    assert baseline == Baseline().updated([plain], REGISTRY, Tolerances())


# -- the charts -------------------------------------------------------------------
def test_bar_parts() -> None:
    import xml.etree.ElementTree as ET

    drawn = ET.fromstring(bar(0.5, low=0.0, high=1.0, baseline=0.8, thresholds=(0.6, 0.9),
                              worse=True, title="x < y & z"))
    assert drawn.find("title").text == "x < y & z"
    assert [line.get("class") for line in drawn.iter("line")] == [
        "threshold", "threshold", "baseline"]
    value = next(rect for rect in drawn.iter("rect") if rect.get("class") == "value")
    assert value.get("fill") == "#c0392b" and float(value.get("width")) == pytest.approx(97.0)
    empty = ET.fromstring(bar(None, low=0.0, high=1.0))
    assert [rect.get("class") for rect in empty.iter("rect")] == [None]
    with pytest.raises(ValueError, match="high > low"):
        bar(1.0, low=1.0, high=1.0)


def test_bin_counts_and_histogram() -> None:
    import xml.etree.ElementTree as ET

    edges = [0.0, 0.1, 0.2, 0.30000000000000004, 0.4]
    assert bin_counts([0.0, 0.1, 0.3, 0.30000000000000004, 0.4, 9.0, -1.0], edges) == (
        2, 1, 1, 3)
    assert bin_counts([1, 2], [0, 1, 2, 3], weights=[5, 7]) == (0, 5, 7)
    with pytest.raises(ValueError, match="two bin edges"):
        bin_counts([1.0], [0.0])
    chart = ET.fromstring(histogram([Series("a<b", (1, 0, 3), "#000")], [0, 1, 2, 3],
                                    markers=[Marker(3, "max 3")], x_label="tokens"))
    texts = [t.text for t in chart.iter("text")]
    assert "a<b" in texts and "max 3" in texts and "tokens" in texts
    with pytest.raises(ValueError, match="2 counts for 3 bins"):
        histogram([Series("s", (1, 2), "#000")], [0, 1, 2, 3])


def test_threshold_markers_sit_at_the_exact_threshold() -> None:
    # The scorecard's text shows 6 significant digits; the chart uses the number itself.
    record = _record({"recall_at_k": 0.5}, {"recall_at_k": NOW})
    checks = {(NODE, "retrieval"): [CheckOutcome("retrieval", "recall_at_k", ">=", 0.123456789,
                                                "ini", True)]}
    row = build_scorecard([record], checks, {}, REGISTRY).entries[0].rows[0]
    assert row.threshold == ">= 0.123457"
    assert row.threshold_values == (0.123456789,)


@pytest.mark.parametrize(("status", "words"), [
    ("gold changed", "not compared (gold changed)"),
    ("not compared", "not compared (different gold)"),
    ("settings changed", "not compared (settings changed)")])
def test_the_summary_counts_what_was_not_compared_as_the_terminal_does(
        status: str, words: str) -> None:
    """The HTML summary says what the terminal's summary line says (it left out "gold
    changed" and every status that is not a like-with-like comparison)."""
    record = _record({"p95_latency_ms": 42.0}, {})
    diffs = [MetricDiff("retrieval", "p95_latency_ms", 42.0, 40.0, 5.0, "lower", status)]
    scorecard = build_scorecard([record], {}, {(NODE, "retrieval"): diffs}, REGISTRY)
    assert words in scorecard.summary_line()
    summary = render_html(scorecard).split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert words in summary
