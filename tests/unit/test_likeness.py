"""Like with like: what a baseline entry is compared with (:mod:`pytest_rag.compare.likeness`),
and what an update keeps (:mod:`pytest_rag.compare.references`).

Each rule once failed the other way: lost queries read as an improvement, a
renamed metric vanished, another dataset or other settings compared as if equal,
and routine updates ratcheted the baseline down.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from pytest_rag.compare.baseline import Baseline
from pytest_rag.compare.comparison import MetricDiff, compare_record
from pytest_rag.compare.likeness import unknown_metrics
from pytest_rag.compare.records import StageRecord, dataset_identity
from pytest_rag.compare.references import plan_update
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.registry import REGISTRY

NODEID = "t.py::test"
QUERIES = tuple(f"q{i}" for i in range(1, 11))


def record(recall: dict[str, float | None], *, settings: dict[str, object] | None = None,
           dataset: str | None = "gold.yaml", name: str | None = None) -> StageRecord:
    measured = [value for value in recall.values() if value is not None]
    mean = sum(measured) / len(measured) if measured else None
    return StageRecord(NODEID, "retrieval", {"recall_at_k": mean}, {"recall_at_k": recall},
                       settings if settings is not None else {"k": 5},
                       gold=dict.fromkeys(recall, "g"), name=name, dataset=dataset)


def recorded(*records: StageRecord) -> Baseline:
    return Baseline().updated(records, REGISTRY, Tolerances())


def diff_of(base: Baseline, now: StageRecord, **kwargs: object) -> dict[str, object]:
    diffs = compare_record(now, base, REGISTRY, Tolerances(), **kwargs)  # type: ignore[arg-type]
    return {d.key: d for d in diffs}


def test_lost_queries_are_a_regression_not_an_improvement() -> None:
    # 10 queries, the last 6 measured 0.5; a partial run measures only the first 4 (1.0).
    before = {query: (1.0 if i < 4 else 0.5) for i, query in enumerate(QUERIES)}
    after = {query: (1.0 if i < 4 else None) for i, query in enumerate(QUERIES)}
    diff = diff_of(recorded(record(before)), record(after))["recall_at_k"]
    assert diff.status == "lost" and diff.failed
    assert diff.note == "6 queries no longer measured: q5, q6, q7, q8, q9, +1 more"
    # Compared over the same 4 queries on both sides: no "improvement" from 0.7 to 1.0.
    assert (diff.baseline, diff.current) == (1.0, 1.0)
    assert [q for q, _, after in diff.worse_queries] == ["q10", "q5", "q6", "q7", "q8", "q9"]


def test_a_query_removed_from_the_dataset_is_not_lost() -> None:
    before = {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    diff = diff_of(recorded(record(before)), record({"q1": 1.0, "q2": 0.5}))["recall_at_k"]
    assert diff.status != "lost"  # the gold changed (q3 removed): compared on q1, q2
    assert (diff.baseline, diff.current) == (0.75, 0.75)


@given(st.dictionaries(st.sampled_from(QUERIES), st.floats(0, 1), min_size=2),
       st.data())
def test_dropping_queries_never_raises_a_mean(values: dict[str, float], data: st.DataObject
                                              ) -> None:
    dropped = data.draw(st.sets(st.sampled_from(sorted(values)), min_size=1))
    after = {query: (None if query in dropped else value) for query, value in values.items()}
    diff = diff_of(recorded(record(dict(values))), record(after))["recall_at_k"]
    assert diff.status == "lost"
    if diff.current is not None and diff.baseline is not None:
        assert diff.current == diff.baseline  # the same queries, the same values


def test_a_metric_the_run_no_longer_produces_is_lost() -> None:
    base = recorded(record({"q1": 1.0, "q2": 0.5}))
    now = StageRecord(NODEID, "retrieval", {}, {}, {"k": 5}, gold={"q1": "g", "q2": "g"},
                      dataset="gold.yaml")
    diff = diff_of(base, now)["recall_at_k"]
    assert (diff.status, diff.baseline, diff.current) == ("lost", 0.75, None)
    assert diff.note == "no longer produced by this test (renamed or removed?)"


def test_another_dataset_or_no_query_in_common_is_not_compared() -> None:
    base = recorded(record({"q1": 1.0, "q2": 1.0}, dataset="a.yaml"))
    other = diff_of(base, record({"q1": 0.0, "q2": 0.0}, dataset="b.yaml"))["recall_at_k"]
    assert (other.status, other.failed, other.fails(strict=True)) == ("not compared", False,
                                                                      True)
    assert other.note == ("different gold: the baseline was measured on a.yaml, this run on "
                          "b.yaml")
    disjoint = diff_of(base, record({"x1": 0.0}, dataset="a.yaml"))["recall_at_k"]
    assert disjoint.status == "not compared"
    assert disjoint.note == ("different gold: no query in common with the baseline entry "
                             "(2 there, 1 here)")


def test_other_settings_are_named_and_not_a_pass() -> None:
    base = recorded(record({"q1": 1.0}, settings={"k": 5, "size_limits": [20, 100]}))
    now = record({"q1": 1.0}, settings={"k": 5, "size_limits": (20, 1000)})
    diff = diff_of(base, now)["recall_at_k"]
    assert diff.status == "settings changed" and diff.fails(strict=True) and not diff.failed
    assert diff.note == "settings changed (size_limits [20, 100] -> [20, 1000])"
    same = diff_of(base, record({"q1": 1.0}, settings={"k": 5, "size_limits": (20, 100)}))
    assert same["recall_at_k"].status == "unchanged"


def test_named_calls_are_entries_of_their_own() -> None:
    base = recorded(record({"q1": 1.0}, name="bm25"), record({"q1": 0.0}))
    assert sorted(base.tests[NODEID]) == ["retrieval", "retrieval[bm25]"]
    assert diff_of(base, record({"q1": 0.0}, name="bm25"))["recall_at_k"].status == "regressed"
    assert diff_of(base, record({"q1": 0.0}))["recall_at_k"].status == "unchanged"


def test_dataset_identity_is_the_file_relative_to_the_root() -> None:
    assert dataset_identity("/p/tests/gold.yaml", "/p") == "tests/gold.yaml"
    assert dataset_identity("/elsewhere/gold.yaml", "/p") == "gold.yaml"  # CI and laptops
    assert dataset_identity("/p/tests/../gold.yaml", "/p") == "gold.yaml"
    assert dataset_identity("<arguments>", "/p") is None


def test_unknown_baseline_keys_are_named_with_the_closest_known_one() -> None:
    tests = {NODEID: {"retrieval[bm25]": {"metrics": {"recal_at_k": 0.5, "recall_at_k": 0.5}}}}
    assert unknown_metrics(tests, REGISTRY) == [
        f"{NODEID} [retrieval[bm25]] retrieval.recal_at_k (did you mean 'recall_at_k'?)"]


def test_the_significance_row_says_when_the_tolerance_decided() -> None:
    base = recorded(record({"q1": 1.0}))
    diff = diff_of(base, record({"q1": 0.0}), alpha=0.05)["recall_at_k"]
    assert (diff.status, diff.p_value) == ("regressed", None)
    assert diff.rule == "tolerance (no p-value: fewer than 2 paired queries)"
    assert diff_of(base, record({"q1": 0.0}))["recall_at_k"].rule == ""  # no level asked


def test_updates_within_the_tolerance_do_not_move_the_reference() -> None:
    tolerance = Tolerances(absolute=0.05)
    values = dict.fromkeys(QUERIES, 0.8)
    base = Baseline().updated([record(values)], REGISTRY, tolerance)
    reference = base.tests[NODEID]["retrieval"]
    failed_at = None
    for step in range(1, 11):  # each change loses 0.02 on every query: half the tolerance
        now = record(dict.fromkeys(QUERIES, 0.8 - 0.02 * step))
        if compare_record(now, base, REGISTRY, tolerance)[0].failed:
            failed_at = step
            break
        plan = plan_update(base, [now], REGISTRY, tolerance)
        assert plan.accepted == () and plan.kept == 1
        base = plan.baseline
        assert base.tests[NODEID]["retrieval"] == reference
    assert failed_at == 3  # 0.06 below the kept reference, beyond 0.05


def test_an_update_names_the_regressions_it_accepts() -> None:
    base = recorded(record({"q1": 1.0, "q2": 1.0}))
    plan = plan_update(base, [record({"q1": 1.0, "q2": None})], REGISTRY, Tolerances())
    assert plan.accepted == (f"{NODEID} [retrieval] recall_at_k 1.000 -> 1.000 (lost): "
                             "1 query no longer measured: q2",)
    assert plan.baseline.tests[NODEID]["retrieval"]["per_query"]["recall_at_k"] == {"q1": 1.0}
    explicit = plan_update(base, [record({"q1": 0.99, "q2": 0.99})], REGISTRY, Tolerances(),
                           accept=True)
    assert explicit.baseline.value(NODEID, "retrieval", "recall_at_k") == 0.99


def test_pytest_rag_diff_names_entries_not_compared() -> None:
    from pytest_rag.compare.diff import diff_files
    from pytest_rag.reports.tables import render_diff

    old = recorded(record({"q1": 1.0, "q2": 0.0}))
    new = recorded(record({"q1": 1.0, "q2": 0.0}, settings={"k": 10}))
    rows = diff_files(old, new)
    assert {row.diff.status for row in rows} == {"settings changed"}
    assert render_diff(rows).splitlines()[-1] == (
        "0 regressed, 0 improved, 1 not compared (settings changed)")


# -- metrics the output can leave undefined (registry's undefined_when) ---------------
def generation(numbers: dict[str, float | None], f1: dict[str, float | None] | None = None
               ) -> StageRecord:
    """A generation record: ``unsupported_number_rate`` per query, and ``answer_f1``
    0.5 for every query answered (``f1``: other values, ``None`` where not run)."""
    f1 = dict.fromkeys(numbers, 0.5) if f1 is None else f1
    per_query = {"unsupported_number_rate": numbers, "answer_f1": f1}
    values = {key: (sum(v for v in found.values() if v is not None)
                    / max(1, sum(v is not None for v in found.values())))
              if any(v is not None for v in found.values()) else None
              for key, found in per_query.items()}
    return StageRecord(NODEID, "generation", values, per_query, {},
                       gold=dict.fromkeys(numbers, "g"), dataset="gold.yaml")


def number_diff(before: StageRecord, after: StageRecord, **kwargs: object) -> MetricDiff:
    diff = diff_of(recorded(before), after, **kwargs)["unsupported_number_rate"]
    assert isinstance(diff, MetricDiff)
    return diff


def test_a_query_measured_now_only_counts_on_its_side() -> None:
    diff = number_diff(generation({"q1": 0.0, "q2": None}), generation({"q1": 0.0, "q2": 1.0}))
    assert (diff.status, diff.baseline, diff.current) == ("regressed", 0.0, 0.5)
    assert diff.note == "1 query newly measured: q2"


def test_a_query_no_longer_measurable_is_not_lost() -> None:
    diff = number_diff(generation({"q1": 0.0, "q2": 0.0, "q3": 1.0}),
                       generation({"q1": 0.0, "q2": 0.0, "q3": None}))
    assert (diff.status, diff.baseline, diff.current) == ("improved", 1 / 3, 0.0)
    assert not diff.failed
    assert diff.note == "1 query no longer measurable (the answer has no number): q3"


def test_a_query_whose_run_input_is_gone_is_lost_for_such_a_metric_too() -> None:
    diff = number_diff(generation({"q1": 0.0, "q2": 1.0}),
                       generation({"q1": 0.0, "q2": None}, f1={"q1": 0.5, "q2": None}))
    assert (diff.status, diff.note) == ("lost", "1 query no longer measured: q2")
    assert (diff.baseline, diff.current) == (0.0, 0.0)  # the lost query left out of both
    assert diff.lost_share == 0.5


def test_an_empty_claim_list_is_no_lost_query() -> None:
    def claims(support: dict[str, float | None]) -> StageRecord:
        measured = [value for value in support.values() if value is not None]
        return StageRecord(NODEID, "generation",
                           {"annotated_claim_support": sum(measured) / len(measured)},
                           {"annotated_claim_support": support,
                            "abstention_accuracy": {"q1": 1.0, "q2": 1.0}}, {},
                           gold={"q1": "g", "q2": "g"}, dataset="gold.yaml")

    diff = diff_of(recorded(claims({"q1": 1.0, "q2": 0.0})),
                   claims({"q1": 1.0, "q2": None}))["annotated_claim_support"]
    assert (diff.status, diff.baseline, diff.current) == ("improved", 0.5, 1.0)
    assert diff.note == ("1 query no longer measurable (the answer has no verified claim): "
                         "q2")


def test_nothing_measured_now_with_every_query_run_is_not_lost() -> None:
    diff = number_diff(generation({"q1": 1.0, "q2": 0.0}),
                       generation({"q1": None, "q2": None}))
    assert (diff.status, diff.failed) == ("unchanged", False)
    assert diff.note == ("2 queries no longer measurable (the answer has no number): q1, q2")


def test_other_metrics_keep_the_lost_rule() -> None:
    diffs = diff_of(recorded(generation({"q1": 0.0, "q2": 1.0}, f1={"q1": 0.5, "q2": 0.5})),
                    generation({"q1": 0.0, "q2": 1.0}, f1={"q1": 0.5, "q2": None}))
    assert (diffs["answer_f1"].status, diffs["answer_f1"].note) == (
        "lost", "1 query no longer measured: q2")
    assert diffs["unsupported_number_rate"].status == "unchanged"


def test_the_paired_statistics_use_the_queries_measured_on_both_sides() -> None:
    before = generation(dict(zip(QUERIES, [0.0] * 6 + [None] * 4)))
    after = generation(dict(zip(QUERIES, [0.0] * 6 + [1.0] * 4)))
    diff = number_diff(before, after, alpha=0.05)
    assert (diff.baseline, diff.current) == (0.0, 0.4)
    # The 6 paired queries did not change: no significant change, within noise.
    assert (diff.status, diff.p_value, diff.ci_low, diff.ci_high) == ("within noise", 1.0,
                                                                      0.0, 0.0)
    none_paired = number_diff(generation({"q1": 0.0, "q2": None}),
                              generation({"q1": None, "q2": 1.0}), alpha=0.05)
    assert (none_paired.status, none_paired.p_value) == ("regressed", None)
    assert none_paired.rule == "tolerance (no p-value: fewer than 2 paired queries)"


@given(st.lists(st.sampled_from([None, 0.0, 0.5, 1.0]), min_size=4, max_size=4),
       st.lists(st.sampled_from([None, 0.0, 0.5, 1.0]), min_size=4, max_size=4))
def test_an_answered_query_is_never_lost(before: list[float | None],
                                         after: list[float | None]) -> None:
    queries = QUERIES[:4]
    diff = number_diff(generation(dict(zip(queries, before))),
                       generation(dict(zip(queries, after))))
    assert diff.status != "lost"
    measured = [value for value in after if value is not None]
    if diff.current is not None:  # each side's own mean over what it measured
        assert diff.current == sum(measured) / len(measured)


def test_lost_queries_rank_by_the_share_lost_not_before_every_drop() -> None:
    few_lost = MetricDiff("retrieval", "recall_at_k", 0.5, 0.5, 0.01, "higher", "lost",
                          note="1 query no longer measured: q4", lost_share=0.25)
    drop = MetricDiff("retrieval", "mrr_at_k", 0.4, 0.8, 0.01, "higher", "regressed")
    gone = MetricDiff("retrieval", "ndcg_at_k", None, 0.8, 0.0, "higher", "lost",
                      lost_share=1.0)
    from_zero = MetricDiff("retrieval", "hit_at_k", 0.0, 0.0, 0.0, "higher", "lost",
                           lost_share=0.5)
    assert (few_lost.effect, drop.effect, gone.effect, from_zero.effect) == (
        0.25, 0.5, float("inf"), 0.5)
    order = sorted([few_lost, drop, gone], key=lambda diff: diff.effect, reverse=True)
    assert [diff.key for diff in order] == ["ndcg_at_k", "mrr_at_k", "recall_at_k"]


def test_the_share_lost_crosses_from_an_xdist_worker() -> None:
    from pytest_rag.plugin.transport import _diff_from_json, _diff_json

    diff = number_diff(generation({"q1": 0.0, "q2": 1.0}),
                       generation({"q1": 0.0, "q2": None}, f1={"q1": 0.5, "q2": None}))
    assert _diff_from_json(json.loads(json.dumps(_diff_json(diff)))) == diff
