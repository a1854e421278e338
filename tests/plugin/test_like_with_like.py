"""The gate compares like with like: no regression hides behind a changed comparison.

Each test is one way an ordinary action left the build green while the
pipeline got worse: queries that stopped being measured, a second call of a
stage, another dataset under the same parametrize id, a renamed metric, other
settings, routine updates that ratchet the baseline down, and a significance
verdict that did not say which rule decided.
"""

from __future__ import annotations

import json

import pytest
from ragproject import BASELINE, SAME, WORSE, baseline, scorecard_lines, set_inputs, write_ini

RUN = ("-p", "no:cacheprovider")
UPDATE = (*RUN, "--rag-update-baseline")
COMPARE = (*RUN, "--rag-baseline")
STRICT = (*COMPARE, "--rag-strict")
NODEID = "test_rag.py::test_retrieval"


def said(result: pytest.RunResult) -> str:
    """The output with every run of whitespace as one space (lines wrap at 80 columns)."""
    return " ".join(result.stdout.str().split())


# -- 1. lost queries -------------------------------------------------------------------
@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_queries_no_longer_measured_fail_and_are_named(rag_pytester: pytest.Pytester,
                                                       strict: bool) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    # A partial run: only q1 has a result (recall 1.0, the best query of the four).
    set_inputs(rag_pytester, retrieved_ids={"q1": SAME["q1"]})
    result = rag_pytester.runpytest(*(STRICT if strict else COMPARE))
    result.assert_outcomes(failed=1)
    assert ("precision_at_k, recall_at_k, f1_at_k, mrr_at_k, ndcg_at_k, hit_at_k, "
            "average_precision_at_k: 3 queries no longer measured: q2, q3, q4") in said(result)
    # Compared over q1 on both sides: no "improvement" from 0.667 to 1.0 is suggested.
    assert "can be tightened" not in said(result)
    rows = [line.split() for line in scorecard_lines(result)]
    assert ["recall_at_k", "1.000", "1.000", "+0.000", "LOST"] in rows


def test_an_unchanged_run_still_passes(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    rag_pytester.runpytest(*STRICT).assert_outcomes(passed=1)


# -- 3. every call of a stage is gated -----------------------------------------------
TWO_CALLS = """
import json
import pathlib

HERE = pathlib.Path(__file__).parent


def test_retrieval(rag):
    worse = json.loads((HERE / "worse.json").read_text()) if (HERE / "worse.json").exists() else {}
    rag.retrieval(retrieved_ids=worse.get("bm25") or {SAME}, name="bm25")
    rag.retrieval(name="hybrid")
"""


def test_each_named_call_is_gated(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=TWO_CALLS.replace("{SAME}", repr(SAME)))
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    assert sorted(baseline(rag_pytester)["tests"][NODEID]) == ["retrieval[bm25]",
                                                               "retrieval[hybrid]"]
    # The first call (bm25) gets worse; the last one (hybrid) does not.
    (rag_pytester.path / "worse.json").write_text(json.dumps({"bm25": WORSE}))
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    assert "retrieval[bm25]: " in said(result)
    assert f"{NODEID} [retrieval[bm25]]" in said(result)


UNNAMED = """
def test_retrieval(rag):
    rag.retrieval(retrieved_ids={WORSE})
    rag.retrieval()
"""


def test_unnamed_repeated_calls_get_a_stable_ordinal_and_a_hint(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=UNNAMED.replace("{WORSE}", repr(SAME)))
    result = rag_pytester.runpytest(*UPDATE)
    result.assert_outcomes(passed=1)
    assert sorted(baseline(rag_pytester)["tests"][NODEID]) == ["retrieval", "retrieval[#2]"]
    assert ("test_rag.py::test_retrieval called rag.retrieval() 2 times without name=: "
            "its calls are told apart by their order") in said(result)
    rag_pytester.makepyfile(test_rag=UNNAMED.replace("{WORSE}", repr(WORSE)))
    rag_pytester.runpytest(*COMPARE).assert_outcomes(failed=1)


def test_a_baseline_keyed_by_stage_only_still_reads(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    data = baseline(rag_pytester)
    assert list(data["tests"][NODEID]) == ["retrieval"]
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.runpytest(*COMPARE).assert_outcomes(failed=1)


# -- 5. which dataset an entry was measured on -----------------------------------------
PARAMETRIZED = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
DATASETS = json.loads((HERE / "datasets.json").read_text())


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.rag_dataset(p))
                                  for p in DATASETS], ids=[f"d{i}" for i in range(len(DATASETS))])
def test_retrieval(rag, path):
    rag.retrieval()
"""
OTHER_GOLD = """\
params: {k: 2}
queries:
  - {id: b1, relevant: [a]}
  - {id: b2, relevant: [b]}
run:
  b1: {retrieved_ids: [x, y]}
  b2: {retrieved_ids: [x, y]}
"""


@pytest.fixture
def two_datasets(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    rag_pytester.makefile(".yaml", other=OTHER_GOLD)
    rag_pytester.makepyfile(test_rag=PARAMETRIZED)
    (rag_pytester.path / "datasets.json").write_text(json.dumps(["gold.yaml", "other.yaml"]))
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=2)
    entry = baseline(rag_pytester)["tests"]["test_rag.py::test_retrieval[d0]"]["retrieval"]
    assert entry["dataset"] == "gold.yaml"
    # Retire the first dataset: "d0" is now other.yaml, whose recall is 0.0.
    (rag_pytester.path / "datasets.json").write_text(json.dumps(["other.yaml"]))
    return rag_pytester


def test_another_dataset_under_the_same_id_is_not_compared(two_datasets: pytest.Pytester
                                                           ) -> None:
    result = two_datasets.runpytest(*STRICT)
    result.assert_outcomes(failed=1)
    assert ("different gold: the baseline was measured on gold.yaml, this run on other.yaml"
            in said(result))
    # Without --rag-strict it passes, but says so loudly in the summary.
    result = two_datasets.runpytest(*COMPARE)
    result.assert_outcomes(passed=1)
    assert "not compared (different gold)" in said(result)
    assert ("pytest-rag: 1 stage report not compared with its baseline (different gold or "
            "settings; fails under --rag-strict): test_rag.py::test_retrieval[d0] "
            "[retrieval]") in said(result)


# -- 6. metric keys that disappear -----------------------------------------------------
CUSTOM = """
import pathlib

from pytest_rag import Direction, MetricSpec

NAME = (pathlib.Path(__file__).parent / "metric.txt").read_text().strip()


def pytest_rag_register_metrics(config):
    return [MetricSpec("retrieval", NAME, "Found", Direction.HIGHER, "ids found",
                       "|R ∩ L|", ("retrieved_ids",), unit="score", high=float("inf"))]


def pytest_rag_compute_metrics(stage, report, dataset):
    score = float((pathlib.Path(__file__).parent / "score.txt").read_text())
    return {NAME: score} if score >= 0 else {}
"""


@pytest.fixture
def custom(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    rag_pytester.makeconftest(CUSTOM)
    (rag_pytester.path / "metric.txt").write_text("found_ids")
    (rag_pytester.path / "score.txt").write_text("0.9")
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    return rag_pytester


def test_a_renamed_metric_is_a_usage_error_with_a_suggestion(custom: pytest.Pytester) -> None:
    (custom.path / "metric.txt").write_text("found_id")
    (custom.path / "score.txt").write_text("0.2")
    result = custom.runpytest(*COMPARE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"{NODEID} [retrieval] retrieval.found_ids (did you mean 'found_id'?)"
            in " ".join(result.stderr.str().split()))


def test_unknown_keys_of_tests_outside_the_run_are_not_its_concern(custom: pytest.Pytester
                                                                   ) -> None:
    # The custom metric is registered by another folder's conftest in the real project;
    # a run of this folder cannot know it, and does not judge that folder's entries.
    (custom.path / "metric.txt").write_text("found_id")
    (custom.path / "other").mkdir()
    (custom.path / "other" / "test_other.py").write_text("def test_plain():\n    pass\n")
    custom.runpytest("other", *COMPARE).assert_outcomes(passed=1)


def test_a_metric_the_run_no_longer_produces_is_lost(custom: pytest.Pytester) -> None:
    (custom.path / "score.txt").write_text("-1")  # still declared, no longer computed
    result = custom.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    assert ("found_ids: no longer produced by this test (renamed or removed?)"
            in said(result))


# -- 7. settings ---------------------------------------------------------------------
def test_other_settings_are_named_and_fail_strict(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, k=3)
    result = rag_pytester.runpytest(*STRICT)
    result.assert_outcomes(failed=1)
    assert "settings changed (k 2 -> 3)" in said(result)
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(passed=1)
    assert "not compared (settings changed)" in said(result)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    rag_pytester.runpytest(*STRICT).assert_outcomes(passed=1)


# -- 9. no ratchet -------------------------------------------------------------------
TOLERANT = "rag_tolerance = 0.15"


def test_routine_updates_do_not_ratchet_the_baseline_down(rag_pytester: pytest.Pytester
                                                          ) -> None:
    write_ini(rag_pytester, TOLERANT)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    before = baseline(rag_pytester)
    # q2 finds 1 of its 3 instead of 2: average precision 0.750 -> 0.625, within 0.15.
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.runpytest(*COMPARE).assert_outcomes(passed=1)
    result = rag_pytester.runpytest(*UPDATE)
    result.assert_outcomes(passed=1)
    assert baseline(rag_pytester) == before  # the reference stays
    assert f"baseline {rag_pytester.path / BASELINE} unchanged" in said(result)
    # q4 ranks its chunk second: 0.625 -> 0.500, within 0.15 of the last run, but 0.25
    # below the kept reference: it fails now (a ratcheted baseline would pass it).
    set_inputs(rag_pytester, retrieved_ids={**WORSE, "q4": ["a", "d"]})
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    assert "average_precision_at_k 0.750 -> 0.500" in said(result)
    result = rag_pytester.runpytest(*UPDATE)
    result.stdout.fnmatch_lines([
        "pytest-rag: this update accepts 2 regressions as the new baseline:",
        "  test_rag.py::test_retrieval [retrieval] ndcg_at_k 0.750 -> 0.561 (regressed)",
        "  test_rag.py::test_retrieval [retrieval] average_precision_at_k 0.750 -> 0.500 "
        "(regressed)"])
    rag_pytester.runpytest(*COMPARE).assert_outcomes(passed=1)


def test_an_explicit_acceptance_moves_the_reference_within_the_tolerance(
        rag_pytester: pytest.Pytester) -> None:
    """``--rag-accept``: the one way besides a change beyond the tolerance to move it."""
    write_ini(rag_pytester, TOLERANT)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    before = baseline(rag_pytester)
    set_inputs(rag_pytester, retrieved_ids=WORSE)  # 0.750 -> 0.625, within 0.15
    rag_pytester.runpytest(*UPDATE, "--rag-accept").assert_outcomes(passed=1)
    assert baseline(rag_pytester) != before
    # The next loss of 0.125 is measured from the accepted 0.625: within, so it passes.
    set_inputs(rag_pytester, retrieved_ids={**WORSE, "q4": ["a", "d"]})
    rag_pytester.runpytest(*COMPARE).assert_outcomes(passed=1)


def test_accept_without_an_update_is_a_usage_error(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-accept")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rag-accept*--rag-update-baseline*"])


# -- 15. which rule decided ------------------------------------------------------------
def test_a_verdict_not_from_the_significance_test_says_which_rule(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieval_latency_ms={"q1": 900, "q2": 900, "q3": 900,
                                                   "q4": 900})
    result = rag_pytester.runpytest(*COMPARE, "--rag-significance=0.05")
    result.assert_outcomes(failed=1)
    rows = [line.split() for line in scorecard_lines(result)]
    latency = next(row for row in rows if row and row[0] == "p95_latency_ms")
    assert latency[-3:] == ["by", "tolerance", "REGRESSED"]
    assert BASELINE


def test_a_few_lost_queries_rank_by_their_effect_not_before_a_real_drop(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    # q4 no longer run (1 of 4 queries: the ranking metrics are lost, equal on the other
    # three), and the latency ten times the baseline's: the latency leads.
    set_inputs(rag_pytester, retrieved_ids={q: SAME[q] for q in ("q1", "q2", "q3")},
               retrieval_latency_ms=dict.fromkeys(("q1", "q2", "q3"), 4000))
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "worst first:" in line)
    order = [line.split()[0] for line in lines[start + 3:start + 12]]
    assert order[:2] == ["p50_latency_ms", "p95_latency_ms"]
    assert "recall_at_k" in order[2:]
    assert "retrieval.p50_latency_ms 250.000 -> 4000.0, worse" in said(result)
