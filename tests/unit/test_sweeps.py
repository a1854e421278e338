"""Grouping parametrized variants into sweeps, and the sweep's verdict."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.sweeps import SweepRule, Variant, split_nodeid
from pytest_rag.compare.sweeps.verdict import decide, dominates, frontier
from pytest_rag.registry import REGISTRY
from pytest_rag.reports.scorecard import build_scorecard
from pytest_rag.reports.sweep_views import HEADER_LIMIT, header_lines


def _record(variant: str, recall: float, precision: float, p95: float) -> StageRecord:
    return StageRecord(f"t.py::test_sweep[{variant}]", "retrieval",
                       {"recall_at_k": recall, "precision_at_k": precision,
                        "p95_latency_ms": p95, "hit_at_k": 1.0, "token_recall": None})


def scorecard():
    records = [_record("small", 0.7, 0.5, 10.0), _record("large", 0.9, 0.4, 20.0),
               _record("mid", 0.9, 0.45, 15.0), StageRecord("t.py::test_other", "retrieval",
                                                              {"recall_at_k": 0.1})]
    return build_scorecard(records, {}, {}, REGISTRY)


def test_split_nodeid() -> None:
    assert split_nodeid("a.py::C::test[x-1]") == ("a.py::C::test", "x-1")
    assert split_nodeid("a.py::test") == ("a.py::test", None)


def test_variants_form_one_sweep_with_the_best_marked_by_direction() -> None:
    sweeps = scorecard().sweeps()
    assert len(sweeps) == 1
    sweep = sweeps[0]
    assert sweep.test == "t.py::test_sweep" and sweep.stages == ("retrieval",)
    assert sweep.variants == ("large", "mid", "small")  # entries are sorted by node id
    assert [c.key for c in sweep.columns] == ["recall_at_k", "precision_at_k", "p95_latency_ms"]
    assert sweep.same == 2  # hit_at_k equal, token_recall never measured
    best = {c.key: [sweep.variants[i] for i in c.best] for c in sweep.columns}
    assert best == {"recall_at_k": ["large", "mid"], "precision_at_k": ["small"],
                    "p95_latency_ms": ["small"]}  # lower latency is better
    # Latency is a cost of each variant.
    assert sweep.costs == (("retrieval.p95_latency_ms", (20.0, 15.0, 10.0)),)


def test_stages_come_in_pipeline_order_and_derived_grades_are_not_comparable() -> None:
    records = []
    for name, value in (("a", 0.5), ("b", 0.8)):
        nodeid = f"t.py::test[{name}]"
        records += [
            StageRecord(nodeid, "augmentation", {"context_sufficient": value},
                        {"context_sufficient": {"q1": value, "q2": value}}),
            StageRecord(nodeid, "retrieval", {"recall_at_k": 1 - value, "token_recall": value},
                        settings={"k": 5, "relevance_from_evidence": True}),
            StageRecord(nodeid, "chunking", {"coverage": value})]
    sweep = build_scorecard(records, {}, {}, REGISTRY).sweeps()[0]
    assert sweep.stages == ("chunking", "retrieval", "augmentation")
    comparable = {c.name: c.comparable for c in sweep.columns}
    assert comparable == {"chunking.coverage": True, "retrieval.recall_at_k": False,
                          "retrieval.token_recall": True,
                          "augmentation.context_sufficient": True}
    recall = next(c for c in sweep.columns if c.key == "recall_at_k")
    assert recall.best == ()  # shown, never starred
    assert sweep.verdict is not None
    assert sweep.verdict.objective == "augmentation.context_sufficient"
    lines = build_scorecard(records, {}, {}, REGISTRY).lines()
    assert any("recall_at_k~" in line for line in lines)


def _knobbed(rule: SweepRule | None = None) -> tuple[list[StageRecord], dict[str, Variant]]:
    records, variants = [], {}
    for size, overlap, values, tokens in ((200, 0, [1, 0] * 6, 40.0),
                                          (800, 100, [1] * 12, 160.0),
                                          (400, 50, [1] * 12, 80.0)):
        nodeid = f"t.py::test[{size}-{overlap}]"
        per_query = {f"q{i}": float(v) for i, v in enumerate(values)}
        records.append(StageRecord(nodeid, "augmentation",
                                   {"context_sufficient": sum(values) / len(values)},
                                   {"context_sufficient": per_query}))
        variants[nodeid] = Variant((("size", size), ("overlap", overlap)),
                                   {"chunks": 1000 / size, "context_tokens": tokens}, rule)
    return records, variants


def test_knobs_costs_and_verdict_in_every_report() -> None:
    records, variants = _knobbed()
    card = build_scorecard(records, {}, {}, REGISTRY, sweep_tests=frozenset({"t.py::test"}),
                           variants=variants)
    sweep = card.sweeps()[0]
    assert sweep.knob_names == ("size", "overlap")
    verdict = sweep.verdict
    assert verdict is not None
    # 800-100 and 400-50 are equal query by query: tied; 400-50 has the smaller context.
    assert sweep.variants == ("200-0", "400-50", "800-100")  # by node id: no order given
    assert [sweep.variants[i] for i, s in enumerate(verdict.standings) if s.tied] == [
        "400-50", "800-100"]
    assert sweep.variants[verdict.recommended] == "400-50"
    # 800-100 is as good and costs more: dominated, so 400-50 is the best outright.
    assert verdict.reason == "augmentation.context_sufficient 1.000, the best"
    data = json.loads(json.dumps(card.to_json()))["sweeps"]["t.py::test"]
    assert data["knobs"]["400-50"] == {"size": 400, "overlap": 50}
    assert data["costs"]["context_tokens"] == {"200-0": 40.0, "800-100": 160.0, "400-50": 80.0}
    assert data["verdict"]["recommended"] == "400-50"
    assert data["verdict"]["tied_with_best"] == ["400-50", "800-100"]
    assert data["verdict"]["frontier"] == ["200-0", "400-50"]
    lines = card.lines(width=120)
    text = "\n".join(lines)
    assert "recommended: 400-50" in text and "size" in text and "overlap" in text
    assert all(len(line) <= 120 for line in lines)
    markdown = card.markdown()
    assert markdown.index("### Sweep") < markdown.index("— augmentation")  # sweeps first
    assert "recommended: 400-50" in markdown and "`size` (knobs)" in markdown


def test_a_wide_terminal_gets_one_row_per_variant() -> None:
    keys = [spec.key for spec in REGISTRY.values() if spec.stage == "chunking"]
    records = [StageRecord(f"t.py::test[v{i}]", "chunking", dict.fromkeys(keys, i / 10))
               for i in range(3)]
    card = build_scorecard(records, {}, {}, REGISTRY)
    narrow = card.lines()
    assert sum(line.startswith("  variant") for line in narrow) >= 3
    assert all(len(line) <= 80 for line in narrow)
    wide = card.lines(sweep_width=400)
    assert sum(line.startswith("  variant") for line in wide) == 1
    assert sum(line.startswith("  v1 ") for line in wide) == 1


def test_every_metric_key_fits_a_sweep_header_without_being_cut() -> None:
    for spec in REGISTRY.values():
        top, bottom = header_lines(spec.key)
        assert top + bottom == spec.key, spec.key
        assert max(len(top), len(bottom)) <= HEADER_LIMIT, spec.key
    assert header_lines("average_precision_at_k") == ("average_", "precision_at_k")
    assert header_lines("recall_at_k") == ("", "recall_at_k")


def test_a_rule_names_a_known_metric_and_cost() -> None:
    rule = SweepRule.validated(REGISTRY, objective="augmentation.context_sufficient",
                               cost=["index_tokens", "retrieval.p95_latency_ms"], shipped="a")
    assert rule.cost == ("index_tokens", "retrieval.p95_latency_ms")
    with pytest.raises(ValueError, match="not a metric"):
        SweepRule.validated(REGISTRY, objective="recall")
    with pytest.raises(ValueError, match="informational"):
        SweepRule.validated(REGISTRY, objective="chunking.mean_chunk_tokens")
    with pytest.raises(ValueError, match="'tokens' is not a cost"):
        SweepRule.validated(REGISTRY, cost="tokens")
    with pytest.raises(ValueError, match="the variant's id"):
        SweepRule.validated(REGISTRY, shipped=3)


# -- the gate ---------------------------------------------------------------------
def _per_query(values: list[float]) -> dict[str, float | None]:
    return {f"q{i:02d}": v for i, v in enumerate(values)}


def test_the_gate_fails_a_shipped_variant_beaten_beyond_noise_at_no_higher_cost() -> None:
    worse, better = [0.0] * 20, [1.0] * 20
    verdict = decide(("shipped", "better"), "augmentation.context_sufficient", "higher",
                     (0.0, 1.0), (_per_query(worse), _per_query(better)),
                     ("index_tokens",), ((100.0,), (100.0,)), shipped="shipped")
    assert verdict.beaten_by == 1
    assert verdict.gate is not None and "beaten beyond noise by 'better'" in verdict.gate
    # At a higher cost it is a trade-off, not a defeat.
    costly = decide(("shipped", "better"), "augmentation.context_sufficient", "higher",
                    (0.0, 1.0), (_per_query(worse), _per_query(better)),
                    ("index_tokens",), ((100.0,), (101.0,)), shipped="shipped")
    assert costly.gate is None and costly.shipped == 0
    unknown = decide(("a", "b"), "x.y", "higher", (0.0, 1.0), ({}, {}), (), ((), ()),
                     shipped="c")
    assert unknown.gate is not None and "not one of" in unknown.gate


def test_the_gate_names_the_recommended_variant_when_it_beats_the_shipped_one() -> None:
    # "best" and "cheap" both beat "shipped" at no higher cost; "cheap" is within noise
    # of "best" and cheaper, so it is recommended: the gate names it, not "best".
    shipped, best, cheap = [0.0] * 20, [1.0] * 20, [1.0] * 19 + [0.0]
    verdict = decide(("shipped", "best", "cheap"), "o.k", "higher", (0.0, 1.0, 0.95),
                     (_per_query(shipped), _per_query(best), _per_query(cheap)),
                     ("chunks",), ((100.0,), (100.0,), (50.0,)), shipped="shipped")
    assert verdict.recommended == 2 and verdict.beaten_by == 2
    assert verdict.gate is not None and "beaten beyond noise by 'cheap'" in verdict.gate
    # Where the recommended variant does not beat it at no higher cost, the best does.
    costly = decide(("shipped", "best", "cheap"), "o.k", "higher", (0.0, 1.0, 0.95),
                    (_per_query(shipped), _per_query(best), _per_query(cheap)),
                    ("chunks",), ((40.0,), (40.0,), (50.0,)), shipped="shipped")
    assert costly.beaten_by == 1


def test_the_shipped_line_names_a_better_variant_at_a_higher_cost() -> None:
    # The cheapest variant cannot be beaten at no higher cost, but the line says what
    # is better beyond noise and what it costs more.
    worse, better = [0.0] * 20, [1.0] * 20
    verdict = decide(("20-0", "60-10", "40-0"), "o.k", "higher", (0.0, 1.0, 0.05),
                     (_per_query(worse), _per_query(better), _per_query([0.0] * 19 + [1.0])),
                     ("chunks",), ((80.0,), (120.0,), (100.0,)), shipped="20-0")
    assert verdict.gate is None
    assert verdict.shipped_note == ("no variant beats it beyond noise at no higher cost; "
                                    "60-10 is better beyond noise (1.000 vs 0.000), at a "
                                    "higher cost: chunks 120 vs 80")
    within = decide(("a", "b"), "o.k", "higher", (0.5, 0.55),
                    (_per_query([1.0] * 10 + [0.0] * 10), _per_query([1.0] * 11 + [0.0] * 9)),
                    ("chunks",), ((1.0,), (2.0,)), shipped="a")
    assert within.shipped_note == "no variant beats it beyond noise at no higher cost"
    # A cost not recorded is not "higher" for certain; an excluded variant is not weighed.
    unknown = decide(("20-0", "60-10"), "o.k", "higher", (0.0, 1.0),
                     (_per_query(worse), _per_query(better)), ("chunks",),
                     ((80.0,), (None,)), shipped="20-0")
    assert unknown.shipped_note is not None and unknown.shipped_note.endswith(
        "at a higher or unknown cost: chunks - vs 80")
    failed = decide(("20-0", "60-10"), "o.k", "higher", (0.0, 1.0),
                    (_per_query(worse), _per_query(better)), ("chunks",),
                    ((80.0,), (80.0,)), shipped="20-0", exclusions=("", "its test failed"))
    assert failed.gate is None
    assert failed.shipped_note == ("no variant that takes part beats it beyond noise at no "
                                   "higher cost")
    unsaid = decide(("a", "b"), "o.k", "higher", (0.5, 0.5), ({}, {}), (), ((), ()),
                    shipped="a", eligible=(False, True))
    assert unsaid.shipped_note == ("excluded (its test failed or it misses a requirement); "
                                   "no variant beats it beyond noise at no higher cost")


def test_when_every_variant_is_excluded_the_verdict_says_so() -> None:
    # Every test failed (an ini floor the gold cannot measure): the objective was
    # measured, so "no variant measured it" would be false.
    rule = SweepRule(shipped="60-10")
    records, variants = [], {}
    for name, sufficient in (("20-0", 0.5), ("60-10", 0.75)):
        nodeid = f"t.py::test[{name}]"
        records.append(StageRecord(nodeid, "augmentation", {"context_sufficient": sufficient},
                                   {"context_sufficient": {f"q{i}": sufficient
                                                           for i in range(8)}}))
        variants[nodeid] = Variant((("name", name),), {}, rule)
    outcomes = {f"t.py::test[{name}]": "failed" for name in ("20-0", "60-10")}
    card = build_scorecard(records, {}, {}, REGISTRY, outcomes, variants=variants)
    verdict = card.sweeps()[0].verdict
    assert verdict is not None and verdict.recommended is None and verdict.gate is None
    assert verdict.reason == ("every variant was excluded (its test failed or a requirement "
                              "was missed)")
    text = " ".join(line.strip() for line in card.lines())
    assert "no recommendation: every variant was excluded" in text
    assert text.count("20-0, 60-10") == 1  # the excluded are listed once
    assert ("shipped: 60-10 (excluded: its test failed; the failed test fails the run; "
            "no variant that takes part beats it beyond noise at no higher cost)") in text
    # A shipped variant that misses a requirement passes its test: the line says the
    # gate does not fail on that.
    missing = decide(("a", "b"), "o.k", "higher", (0.5, 0.5), ({}, {}), (), ((), ()),
                     shipped="a", exclusions=("it misses chunking.size_compliance >= 0.9", ""))
    assert missing.shipped_note == ("excluded: it misses chunking.size_compliance >= 0.9; "
                                    "the gate does not fail on that; no variant beats it "
                                    "beyond noise at no higher cost")
    some = decide(("a", "b"), "o.k", "higher", (0.5, None), ({}, {}), (), ((), ()),
                  exclusions=("its test failed", ""))
    assert some.reason == "no variant that takes part measured o.k"


def test_the_gate_passes_a_shipped_variant_within_noise() -> None:
    shipped = [1.0] * 10 + [0.0] * 10
    other = [1.0] * 11 + [0.0] * 9  # one query better: noise
    verdict = decide(("shipped", "other"), "o.k", "higher", (0.5, 0.55),
                     (_per_query(shipped), _per_query(other)), (), ((), ()),
                     shipped="shipped")
    assert verdict.gate is None and verdict.standings[0].tied


# -- properties -------------------------------------------------------------------
costs_st = st.tuples(st.integers(0, 5).map(float), st.integers(0, 5).map(float))
variant_st = st.tuples(st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=6,
                                max_size=6), costs_st)


def _inputs(variants: list[tuple[list[float], tuple[float, float]]]):
    names = tuple(f"v{i}" for i in range(len(variants)))
    per_query = tuple(_per_query(values) for values, _ in variants)
    means = tuple(sum(values) / len(values) for values, _ in variants)
    return names, means, per_query, tuple(costs for _, costs in variants)


@settings(deadline=None, max_examples=60)
@given(st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 4).map(float), costs_st)),
                min_size=1, max_size=7))
def test_the_frontier_is_exactly_the_non_dominated_set(points) -> None:
    marked = frontier(points)
    for i, point in enumerate(points):
        beaten = point is not None and any(
            other is not None and other[0] >= point[0]
            and all(o <= p for o, p in zip(other[1], point[1]))
            and (other[0] > point[0] or any(o < p for o, p in zip(other[1], point[1])))
            for other in points)
        assert marked[i] == (point is not None and not beaten)


@settings(deadline=None, max_examples=40)
@given(st.lists(variant_st, min_size=1, max_size=5), costs_st, st.sampled_from(["higher",
                                                                                "lower"]))
def test_a_copy_of_the_best_is_tied_with_it(variants, costs, direction) -> None:
    names, means, per_query, cost = _inputs(variants)
    verdict = decide(names, "o.k", direction, means, per_query, ("a", "b"), cost)
    assert verdict.best is not None
    copy = (list(variants[verdict.best][0]), costs)
    names, means, per_query, cost = _inputs([*variants, copy])
    again = decide(names, "o.k", direction, means, per_query, ("a", "b"), cost)
    assert again.standings[-1].tied and again.standings[verdict.best].tied


@settings(deadline=None, max_examples=40)
@given(st.lists(variant_st, min_size=1, max_size=5), st.data(),
       st.sampled_from(["higher", "lower"]))
def test_adding_a_dominated_variant_changes_no_recommendation(variants, data,
                                                              direction) -> None:
    names, means, per_query, cost = _inputs(variants)
    before = decide(names, "o.k", direction, means, per_query, ("a", "b"), cost)
    model = data.draw(st.integers(0, len(variants) - 1))
    values, (a, b) = variants[model]
    worse = 1.0 if direction == "higher" else -1.0
    drops = data.draw(st.lists(st.integers(0, 2).map(lambda v: v / 4), min_size=6, max_size=6))
    extra = data.draw(st.tuples(st.integers(0, 3), st.integers(1, 3)))
    dominated = ([v - worse * d for v, d in zip(values, drops)], (a + extra[0], b + extra[1]))
    names2, means2, per_query2, cost2 = _inputs([*variants, dominated])
    assert dominates(((means2[model] if direction == "higher" else -means2[model]), cost2[model]),
                     ((means2[-1] if direction == "higher" else -means2[-1]), cost2[-1]))
    after = decide(names2, "o.k", direction, means2, per_query2, ("a", "b"), cost2)
    assert after.recommended == before.recommended
    assert after.reason == before.reason


def test_a_variant_that_fails_its_test_or_a_requirement_is_shown_not_chosen() -> None:
    rule = SweepRule(require=("chunking.size_compliance >= 0.9",))
    records, variants = [], {}
    for name, sufficient, compliance, _outcome in (("a", 1.0, 0.5, "passed"),
                                                   ("b", 0.5, 1.0, "passed"),
                                                   ("c", 1.0, 1.0, "failed")):
        nodeid = f"t.py::test[{name}]"
        records += [StageRecord(nodeid, "augmentation", {"context_sufficient": sufficient},
                                {"context_sufficient": {f"q{i}": sufficient for i in range(9)}}),
                    StageRecord(nodeid, "chunking", {"size_compliance": compliance})]
        variants[nodeid] = Variant((("name", name),), {}, rule)
    card = build_scorecard(records, {}, {}, REGISTRY, {"t.py::test[c]": "failed"},
                           variants=variants)
    sweep = card.sweeps()[0]
    verdict = sweep.verdict
    assert verdict is not None
    assert [s.eligible for s in verdict.standings] == [False, True, False]
    assert sweep.variants[verdict.recommended] == "b"
    assert "excluded (test failed or a requirement missed): a, c" in "\n".join(card.lines())
    with pytest.raises(ValueError, match="require"):
        SweepRule.validated(REGISTRY, require=["chunking.nope >= 1"])


def test_the_scatter_joins_the_frontier_by_cost_and_marks_the_recommendation() -> None:
    import xml.etree.ElementTree as ET

    from pytest_rag.reports.svg import GOOD, Point, scatter

    svg = ET.fromstring(scatter([Point(300.0, 0.9, "b", True, True),
                                 Point(100.0, 0.5, "a<&>", True),
                                 Point(400.0, 0.7, "c")], title="t"))
    line = svg.find("polyline")
    assert line is not None
    xs = [float(pair.split(",")[0]) for pair in line.attrib["points"].split()]
    assert len(xs) == 2 and xs == sorted(xs)  # a then b: the frontier in order of cost
    dots = svg.findall("circle")
    assert [d.attrib["fill"] == GOOD for d in dots] == [True, False, False]
    assert [t.text for t in svg.findall("text")][-3:] == ["b", "a<&>", "c"]


def test_the_scatter_labels_of_near_points_do_not_overlap() -> None:
    """Four variants of almost the same cost and quality: each label gets a free place
    (a user read "150-3060-100-20" where four labels were drawn over each other)."""
    import xml.etree.ElementTree as ET

    from pytest_rag.reports.svg import Point, scatter

    points = [Point(100.0, 0.5, "20-0"), Point(101.0, 0.51, "150-30", True, True),
              Point(102.0, 0.5, "60-10", True), Point(900.0, 0.9, "far-away")]
    svg = ET.fromstring(scatter(points, title="t"))
    labels = {t.text: t for t in svg.findall("text")}

    def box(name: str) -> tuple[float, float, float, float]:
        text = labels[name]
        size = 5.5 * len(name)
        left = float(text.attrib["x"]) - (size if text.get("text-anchor") == "end" else 0)
        bottom = float(text.attrib["y"]) + 2
        return left, bottom - 11, left + size, bottom

    names = [point.label for point in points]
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a, b = box(first), box(second)
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (
                first, second)
    assert float(labels["far-away"].attrib["x"]) <= 560  # inside the chart


def test_an_objective_no_variant_recorded_fails_the_gate_instead_of_passing() -> None:
    rule = SweepRule(objective="augmentation.context_sufficient", shipped="a")
    records = [StageRecord(f"t.py::test[{name}]", "retrieval", {"token_recall": value})
               for name, value in (("a", 0.5), ("b", 0.9))]
    variants = {record.nodeid: Variant((), {}, rule) for record in records}
    sweep = build_scorecard(records, {}, {}, REGISTRY, variants=variants).sweeps()[0]
    assert sweep.verdict is not None and sweep.verdict.recommended is None
    assert sweep.verdict.gate == ("shipped variant 'a' did not measure "
                                  "augmentation.context_sufficient")


def test_a_long_sweep_lists_a_screenful_and_counts_the_rest() -> None:
    records = [StageRecord(f"t.py::test[v{i:02d}]", "augmentation",
                           {"context_sufficient": 1.0 if i == 27 else 0.5},
                           {"context_sufficient": {f"q{j}": 1.0 if i == 27 else 0.5
                                                   for j in range(5)}})
               for i in range(30)]
    card = build_scorecard(records, {}, {}, REGISTRY)
    lines = card.lines()
    rows = [line for line in lines if line.startswith("  v") and not line.startswith("  var")]
    assert len(rows) == 21  # the first 20 and the best, v27
    assert rows[-1].startswith("  v27")
    assert "  9 more variants (-v or --rag-report-md lists them)" in lines
    assert len([line for line in card.lines(full=True)
                if line.startswith("  v") and not line.startswith("  var")]) == 30


def test_costs_count_the_tokens_of_the_chunks_each_query_carries() -> None:
    from pytest_rag.compare.sweeps.costs import variant_costs
    from pytest_rag.stages.augmentation import AugmentationEvaluator
    from pytest_rag.stages.retrieval import RetrievalEvaluator

    text = "one two three four five six seven eight nine ten"  # 10 tokens
    inputs = {"documents": {"d": text},
              "chunks": [{"id": "a", "doc_id": "d", "start": 0, "end": 13},  # 3 tokens
                         {"id": "b", "doc_id": "d", "start": 14, "end": 27},  # 3 tokens
                         {"id": "c", "doc_id": "d", "start": 28, "end": 48}],  # 4 tokens
              "queries": [{"id": "q1"}, {"id": "q2"}, {"id": "q3"}]}
    retrieval = RetrievalEvaluator(k=2).evaluate(
        **inputs, relevant={"q1": ["a"]},
        retrieved_ids={"q1": ["c", "a", "b"], "q2": ["b", "x"]})  # q3: no run
    augmentation = AugmentationEvaluator().evaluate(
        **inputs, context_ids={"q1": ["a", "a", "c"], "q2": [], "q3": ["b"]})
    costs = variant_costs([augmentation, retrieval])
    assert costs == {"chunks": 3.0, "index_tokens": 10.0,
                     # the top 2: c and a (7), b and an unknown id (3)
                     "topk_tokens": (7 + 3) / 2,
                     # repeats count: a, a, c (10); none (0); b (3)
                     "context_tokens": (10 + 0 + 3) / 3}
