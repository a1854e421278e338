"""The paired statistics are computed where they are shown or decide, and nowhere else.

``compare_record(all_statistics=False)`` (what a run without ``--rag-report``
asks for) gives every metric the verdict of the full comparison, and the
p-value and interval of a regressed or improved metric; the others, which no
scorecard shows, get none.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.compare.baseline import Baseline
from pytest_rag.compare.comparison import SHOWN_STATISTICS, compare_record
from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.registry import REGISTRY

QUERIES = tuple(f"q{i}" for i in range(6))
KEYS = ("recall_at_k", "precision_at_k", "mrr_at_k")
ratio = st.sampled_from([0.0, 0.25, 0.5, 1 / 3, 0.75, 1.0])


@st.composite
def records(draw: st.DrawFn) -> StageRecord:
    per_query = {key: {q: draw(ratio) for q in QUERIES} for key in KEYS}
    values: dict[str, float | None] = {key: sum(v.values()) / len(v)
                                       for key, v in per_query.items()}
    return StageRecord("t.py::test", "retrieval", values, per_query)


@settings(max_examples=60, deadline=None)
@given(records(), records(), st.sampled_from([None, 0.05, 0.5]))
def test_only_shown_statuses_get_statistics(before: StageRecord, after: StageRecord,
                                            alpha: float | None) -> None:
    baseline = Baseline().updated([before], REGISTRY, Tolerances())
    full = compare_record(after, baseline, REGISTRY, Tolerances(), alpha=alpha,
                          permutations=200)
    shown = compare_record(after, baseline, REGISTRY, Tolerances(), alpha=alpha,
                           permutations=200, all_statistics=False)
    assert [d.status for d in shown] == [d.status for d in full]
    for lazy, every in zip(shown, full):
        if every.status in SHOWN_STATISTICS or every.status == "within noise":
            assert (lazy.p_value, lazy.ci_low, lazy.ci_high) == (
                every.p_value, every.ci_low, every.ci_high)
        else:
            assert (lazy.p_value, lazy.ci_low, lazy.ci_high) == (None, None, None)


def test_a_small_change_within_tolerance_gets_no_statistics() -> None:
    before = StageRecord("t.py::test", "retrieval", {"recall_at_k": 0.5},
                         {"recall_at_k": {f"q{i}": 0.5 for i in range(200)}})
    moved = dict(before.per_query["recall_at_k"], q7=1.0)
    after = StageRecord("t.py::test", "retrieval", {"recall_at_k": 0.5025},
                        {"recall_at_k": moved})
    baseline = Baseline().updated([before], REGISTRY, Tolerances())
    full, = compare_record(after, baseline, REGISTRY, Tolerances())
    lazy, = compare_record(after, baseline, REGISTRY, Tolerances(), all_statistics=False)
    assert full.status == lazy.status == "unchanged"
    assert full.p_value is not None and lazy.p_value is None
