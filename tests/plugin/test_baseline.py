"""Baselines: ``--rag-update-baseline``, ``--rag-baseline``, stale entries, tolerances, bad files.
"""

from __future__ import annotations

import json

import pytest
from ragproject import (
    BASELINE,
    BETTER,
    MEASURED,
    QUICKSTART,
    SAME,
    WORSE,
    baseline,
    set_inputs,
    write_ini,
)

from pytest_rag.compare.baseline import Baseline

RUN = ("-p", "no:cacheprovider")
UPDATE = (*RUN, "--rag-update-baseline")
COMPARE = (*RUN, "--rag-baseline")

# Four tests in two files, all reading inputs.json like test_rag.py does.
SEVERAL = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def inputs():
    path = HERE / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_a(rag):
    rag.retrieval(**inputs())


@pytest.mark.slow
def test_b(rag):
    rag.retrieval(**inputs())


def test_c(rag):
    if (HERE / "skip-c").exists():
        pytest.skip("skipped on purpose")
    rag.retrieval(**inputs())
"""
OTHER = """
from test_rag import inputs


def test_d(rag):
    rag.retrieval(**inputs())
"""


@pytest.fixture
def several(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    write_ini(rag_pytester, "markers = slow")
    rag_pytester.makepyfile(test_rag=SEVERAL, test_other=OTHER)
    return rag_pytester


def recall(pytester: pytest.Pytester, nodeid: str) -> float:
    return baseline(pytester)["tests"][nodeid]["retrieval"]["metrics"]["recall_at_k"]["value"]


def test_update_writes_sorted_json_keyed_by_node_id_and_stage(
        rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*UPDATE)
    result.assert_outcomes(passed=1)
    path = rag_pytester.path / BASELINE
    result.stdout.fnmatch_lines([
        f"pytest-rag: baseline written to {path} (1 stage report updated)"])
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    # Sorted, two-space indents; the per-query rows one line each, at its start and
    # compact (see test_baseline_layout).
    rows = data["tests"]["test_rag.py::test_retrieval"]["retrieval"]["per_query"]["rows"]
    expected = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    for query, row in rows.items():
        spread = json.dumps(row, indent=2).replace("\n", "\n" + " " * 12)
        expected = expected.replace(f"{' ' * 12}{json.dumps(query)}: {spread}",
                                    f"{json.dumps(query)}:{json.dumps(row, separators=(',', ':'))}",
                                    1)
    assert text == expected
    assert data["format"] == "pytest-rag-baseline"
    assert data["version"] == 2
    assert list(data["tests"]) == ["test_rag.py::test_retrieval"]
    entry = Baseline.load(path).tests["test_rag.py::test_retrieval"]["retrieval"]
    assert entry["settings"] == {"k": 2}
    metrics = entry["metrics"]
    assert metrics["recall_at_k"] == {"value": pytest.approx(2 / 3), "direction": "higher",
                                      "tolerance": 0.01, "relative": False}
    # p95 of 100, 200, 300, 400 ms: 100 + 0.95 * 3 * 100 = 385; latency: 100% + 5 ms.
    assert metrics["p95_latency_ms"] == {"value": pytest.approx(385.0), "direction": "lower",
                                         "tolerance": 1.0, "relative": True, "slack": 5.0}
    assert metrics["token_recall"]["value"] is None
    assert entry["per_query"]["recall_at_k"] == pytest.approx(
        {"q1": 1.0, "q2": 2 / 3, "q3": 0.0, "q4": 1.0})


def test_update_without_changes_leaves_the_file_alone(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    path = rag_pytester.path / BASELINE
    path.write_text(path.read_text() + "\n")  # a byte that a rewrite would remove
    before = path.read_bytes()
    result = rag_pytester.runpytest(*UPDATE)
    result.stdout.fnmatch_lines([f"pytest-rag: baseline {path} unchanged"])
    assert path.read_bytes() == before


def test_entries_of_tests_that_did_not_run_are_kept(several: pytest.Pytester) -> None:
    several.runpytest(*UPDATE).assert_outcomes(passed=4)
    first = baseline(several)["tests"]
    assert sorted(first) == ["test_other.py::test_d", "test_rag.py::test_a",
                             "test_rag.py::test_b", "test_rag.py::test_c"]
    set_inputs(several, retrieved_ids=WORSE)
    (several.path / "skip-c").touch()
    # test_b is deselected by -m, test_c skips itself, test_d is in a file not targeted.
    result = several.runpytest(*UPDATE, "-m", "not slow", "test_rag.py")
    result.assert_outcomes(passed=1, skipped=1, deselected=1)
    after = baseline(several)["tests"]
    assert after["test_rag.py::test_a"] != first["test_rag.py::test_a"]
    assert recall(several, "test_rag.py::test_a") == pytest.approx(7 / 12)
    for kept in ("test_rag.py::test_b", "test_rag.py::test_c", "test_other.py::test_d"):
        assert after[kept] == first[kept]
    # A test that skips itself after recording did not run to the end either.
    several.makepyfile(test_other=OTHER + "    import pytest\n    pytest.skip('no service')\n")
    several.runpytest(*UPDATE, "test_other.py").assert_outcomes(skipped=1)
    assert baseline(several)["tests"]["test_other.py::test_d"] == first["test_other.py::test_d"]
    several.makepyfile(test_other=OTHER)
    # -k: only the selected test is written.
    several.runpytest(*UPDATE, "-k", "test_d").assert_outcomes(passed=1, deselected=3)
    assert recall(several, "test_other.py::test_d") == pytest.approx(7 / 12)
    assert baseline(several)["tests"]["test_rag.py::test_b"] == first["test_rag.py::test_b"]


STALE_NOTE = ("pytest-rag: baseline entries of tests that no longer exist (kept; remove them "
              "with --rag-prune-baseline): test_rag.py::test_b, test_rag.py::test_c")


def test_stale_entries_are_listed_and_pruned_only_on_a_full_run(
        several: pytest.Pytester) -> None:
    several.runpytest(*UPDATE).assert_outcomes(passed=4)
    several.makepyfile(test_rag=SEVERAL.split("@pytest.mark.slow")[0])  # keep test_a only
    result = several.runpytest(*COMPARE)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "pytest-rag: baseline entries of tests that no longer exist (remove with "
        "--rag-update-baseline --rag-prune-baseline on a full run): "
        "test_rag.py::test_b, test_rag.py::test_c",
    ])
    result = several.runpytest(*UPDATE)
    result.stdout.fnmatch_lines([STALE_NOTE])
    assert "test_rag.py::test_b" in baseline(several)["tests"]
    # Not a full run: -k, or only some files.
    result = several.runpytest(*UPDATE, "--rag-prune-baseline", "-k", "test_a")
    result.stdout.fnmatch_lines(["pytest-rag: --rag-prune-baseline refused: this run did not "
                                 "collect every test (-k); run the whole suite without test "
                                 "selection to prune"])
    assert "test_rag.py::test_b" in baseline(several)["tests"]
    several.runpytest(*UPDATE, "--rag-prune-baseline", "test_other.py").assert_outcomes(passed=1)
    assert "test_rag.py::test_b" in baseline(several)["tests"]
    # A full run prunes.
    result = several.runpytest(*UPDATE, "--rag-prune-baseline")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "pytest-rag: pruned baseline entries: test_rag.py::test_b, test_rag.py::test_c"])
    assert sorted(baseline(several)["tests"]) == ["test_other.py::test_d", "test_rag.py::test_a"]


FLAKY = """
import pathlib

from test_rag import inputs


def test_e(rag):
    rag.retrieval(**inputs())
    assert not (pathlib.Path(__file__).parent / "fail-e").exists()
"""


@pytest.mark.parametrize("selection", [
    ("--lf",), ("--last-failed",), ("--ignore", "test_other.py"),
    ("--ignore-glob", "*other*"), ("--deselect", "test_other.py::test_d"),
], ids=["lf", "last-failed", "ignore", "ignore-glob", "deselect"])
def test_prune_refuses_a_run_that_did_not_collect_every_test(
        several: pytest.Pytester, selection: tuple[str, ...]) -> None:
    several.makepyfile(test_flaky=FLAKY)
    (several.path / "fail-e").touch()
    # The cache stays on: --lf and --sw read it.
    several.runpytest("--rag-update-baseline").assert_outcomes(passed=4, failed=1)
    before = sorted(baseline(several)["tests"])
    result = several.runpytest("--rag-update-baseline", "--rag-prune-baseline", *selection)
    assert sorted(baseline(several)["tests"]) == before
    result.stdout.fnmatch_lines([
        "pytest-rag: --rag-prune-baseline refused: this run did not collect every test "
        f"({ {'--last-failed': '--lf'}.get(selection[0], selection[0])}); run the whole suite "
        "without test selection to prune"])
    result.stdout.no_fnmatch_line("*pruned baseline entries*")


def test_prune_is_skipped_after_a_collection_error(several: pytest.Pytester) -> None:
    several.runpytest(*UPDATE).assert_outcomes(passed=4)
    before = (several.path / BASELINE).read_bytes()
    several.makepyfile(test_other="import nonexistent_module_of_this_test\n")
    result = several.runpytest(*UPDATE, "--rag-prune-baseline")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["pytest-rag: baseline * not written: the run was interrupted "
                                 "or had collection errors"])
    assert (several.path / BASELINE).read_bytes() == before


REGRESSION_LINES = [
    # The worst regression leads (the largest change against its baseline value:
    # precision 25 %, f1 19 %, average precision 17 %, ndcg 13 %, recall 12.5 %).
    "RAG checks failed: retrieval.precision_at_k 0.500 -> 0.375, worse than the baseline "
    "(rag-baseline.json) (+4 more below)",
    "retrieval: 5 metrics worse than the baseline (rag-baseline.json), worst first:",
    "  metric                  baseline    current    delta    tolerance    direction",
    "  *",
    "  precision_at_k          0.500       0.375      -0.125   0.010        higher",
    "  f1_at_k                 0.533       0.433      -0.100   0.010        higher",
    "  average_precision_at_k  0.750       0.625      -0.125   0.010        higher",
    "  ndcg_at_k               0.750       0.653      -0.097   0.010        higher",
    "  recall_at_k             0.667       0.583      -0.083   0.010        higher",
    "  queries worse in precision_at_k: q2 1.000 -> 0.500",
    "  queries worse in f1_at_k: q2 0.800 -> 0.400",
]


def test_regression_fails_the_test_that_recorded_it(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    before = (rag_pytester.path / BASELINE).read_bytes()
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)  # failed, not an error
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(REGRESSION_LINES)
    result.stdout.fnmatch_lines(["*precision_at_k *0.375 *0.500 *-0.125 *REGRESSED",
                                 "1 stage report; metrics: 5 regressed"])
    assert (rag_pytester.path / BASELINE).read_bytes() == before  # comparing never writes


def test_update_with_compare_accepts_the_new_numbers(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.runpytest(*COMPARE, "--rag-update-baseline").assert_outcomes(passed=1)
    assert recall(rag_pytester, "test_rag.py::test_retrieval") == pytest.approx(7 / 12)
    rag_pytester.runpytest(*COMPARE).assert_outcomes(passed=1)


def test_improvement_is_reported_and_passes(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=BETTER)
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    # q3 now finds its chunk: recall (1 + 2/3 + 1 + 1) / 4 = 0.917.
    result.stdout.fnmatch_lines([
        "*recall_at_k *0.917 *0.667 *+0.250 *improved",
        "1 stage report; metrics: 7 improved",
        "7 metrics improved: the baseline can be tightened (--rag-update-baseline)",
    ])


def test_new_tests_and_metrics_are_new_and_pass(several: pytest.Pytester) -> None:
    several.runpytest(*UPDATE, "-k", "test_a").assert_outcomes(passed=1, deselected=3)
    path = several.path / BASELINE
    data = json.loads(path.read_text())
    del data["tests"]["test_rag.py::test_a"]["retrieval"]["metrics"]["hit_at_k"]
    path.write_text(json.dumps(data))
    result = several.runpytest(*COMPARE, "-k", "test_a or test_b")
    result.assert_outcomes(passed=2, deselected=2)
    result.stdout.fnmatch_lines([
        "test_rag.py::test_a [[]retrieval[]] (k=2)",
        "*hit_at_k *0.750 *new",
        "test_rag.py::test_b [[]retrieval[]] (k=2)",
        "*recall_at_k *0.667 *new",
        "2 stage reports; metrics: 10 new",
    ])


def test_strict_fails_a_test_without_an_entry(several: pytest.Pytester) -> None:
    several.runpytest(*UPDATE, "-k", "test_a").assert_outcomes(passed=1, deselected=3)
    result = several.runpytest(*COMPARE, "--rag-strict", "-k", "test_a or test_b")
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    result.stdout.fnmatch_lines([
        "RAG checks failed: retrieval: no baseline entry for this test in rag-baseline.json "
        "(--rag-strict); record one with --rag-update-baseline",
    ])
    several.runpytest(*COMPARE, "-k", "test_a or test_b").assert_outcomes(passed=2,
                                                                          deselected=2)


def test_metric_no_longer_measured_fails(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieval_latency_ms={})
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  p50_latency_ms  250.000     not measured*",
        "  p50_latency_ms is no longer measured: needs retrieval_latency_ms",
        "  p95_latency_ms is no longer measured: needs retrieval_latency_ms",
    ])
    result.stdout.fnmatch_lines(["*p95_latency_ms *- *385.000 *LOST"])


def test_informational_metrics_never_fail(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", gold=QUICKSTART.read_text())
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_chunks="def test_chunks(rag):\n    rag.chunking()\n")
    pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    path = pytester.path / BASELINE
    data = json.loads(path.read_text())
    metrics = data["tests"]["test_chunks.py::test_chunks"]["chunking"]["metrics"]
    for key in ("mean_chunk_tokens", "min_chunk_tokens", "max_chunk_tokens", "size_cv"):
        assert metrics[key]["direction"] == "info"
        metrics[key]["value"] = 1000.0
    path.write_text(json.dumps(data))
    result = pytester.runpytest(*COMPARE)
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*REGRESSED*")


LATENCIES_UP_20 = {"q1": 120, "q2": 240, "q3": 360, "q4": 480}


@pytest.mark.parametrize(("args", "ini", "outcome", "regressed"), [
    ((), (), "failed", MEASURED[:3]),
    (("--rag-tolerance", "0.2"), (), "passed", ()),
    ((), ("rag_tolerance = 0.2",), "passed", ()),
    (("--rag-tolerance=0.01",), ("rag_tolerance = 0.2",), "failed", MEASURED[:3]),
    ((), ("rag_tolerances =", "    retrieval.precision_at_k 0.2",
          "    retrieval.average_precision_at_k 0.2"), "failed", ("recall_at_k", "f1_at_k")),
])
def test_absolute_tolerance(rag_pytester: pytest.Pytester, args: tuple[str, ...],
                            ini: tuple[str, ...], outcome: str,
                            regressed: tuple[str, ...]) -> None:
    # WORSE changes precision and MAP by -0.125, recall by -0.083, f1 and nDCG by about -0.1.
    write_ini(rag_pytester, *ini)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*COMPARE, *args)
    result.assert_outcomes(**{outcome: 1})
    for key in regressed:
        result.stdout.fnmatch_lines([f"  {key} * 0.* *higher"])
    if outcome == "failed" and "precision_at_k" not in regressed:
        result.stdout.no_fnmatch_line("  precision_at_k *higher")


@pytest.mark.parametrize(("ini", "regressed", "kept"), [
    ((), (), ("p50_latency_ms", "p95_latency_ms")),   # default: 100% + 5 ms
    (("rag_latency_tolerance = 10%",), ("p50_latency_ms", "p95_latency_ms"), ()),
    # p50 250 -> 300 within 25 + 30 ms; p95 385 -> 462 beyond 38.5 + 30 ms.
    (("rag_latency_tolerance = 10% + 30",), ("p95_latency_ms",), ("p50_latency_ms",)),
    (("rag_latency_tolerance = 10%", "rag_tolerances = retrieval.p95_latency_ms 25%"),
     ("p50_latency_ms",), ("p95_latency_ms",)),
])
def test_relative_tolerance_for_latency(rag_pytester: pytest.Pytester, ini: tuple[str, ...],
                                        regressed: tuple[str, ...],
                                        kept: tuple[str, ...]) -> None:
    write_ini(rag_pytester, *ini)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    # 20% slower: p50 250 -> 300 ms, p95 385 -> 462 ms.
    set_inputs(rag_pytester, retrieval_latency_ms=LATENCIES_UP_20)
    result = rag_pytester.runpytest(*COMPARE, "--rag-scorecard=full")
    result.assert_outcomes(**{"failed" if regressed else "passed": 1})
    for key in regressed:
        result.stdout.fnmatch_lines([f"*{key} *[0-9.]* *[0-9.]* *+*REGRESSED"])
    for key in kept:
        result.stdout.fnmatch_lines([f"*{key} *[0-9.]* *[0-9.]* *+*ok"])


def test_baseline_records_the_tolerance_of_each_metric(rag_pytester: pytest.Pytester) -> None:
    write_ini(rag_pytester, "rag_tolerance = 0.05", "rag_latency_tolerance = 20% + 3",
              "rag_tolerances = retrieval.p95_latency_ms 25%")
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    metrics = baseline(rag_pytester)["tests"]["test_rag.py::test_retrieval"]["retrieval"]["metrics"]
    assert metrics["recall_at_k"]["tolerance"] == 0.05
    assert (metrics["p50_latency_ms"]["tolerance"], metrics["p50_latency_ms"]["slack"]) == (
        0.2, 3.0)
    assert (metrics["p95_latency_ms"]["tolerance"], metrics["p95_latency_ms"]["relative"]) == (
        0.25, True)
    assert "slack" not in metrics["p95_latency_ms"]


@pytest.mark.parametrize(("args", "ini", "message"), [
    (("--rag-tolerance", "-1"), (), "*argument --rag-tolerance: must be a finite number >= 0, "
                                     "got '-1'"),
    (("--rag-tolerance", "lots"), (), "*argument --rag-tolerance: expected a number, got 'lots'"),
    ((), ("rag_tolerance = -0.5",), "ERROR: ini rag_tolerance: must be a finite number >= 0, "
                                     "got '-0.5'"),
    ((), ("rag_relative_tolerance = x",), "ERROR: ini rag_relative_tolerance: expected a "
                                           "number, got 'x'"),
    ((), ("rag_tolerances = retrieval.p95_latency_ms fast",),
     "ERROR: pytest-rag: ini rag_tolerances: 'retrieval.p95_latency_ms fast': 'fast' is not a "
     "number"),
    ((), ("rag_tolerances = retrieval.p95 25%",),
     "ERROR: pytest-rag: ini rag_tolerances: 'retrieval.p95 25%': unknown metric 'p95' of stage "
     "'retrieval'; *"),
])
def test_bad_tolerance_is_a_usage_error(rag_pytester: pytest.Pytester, args: tuple[str, ...],
                                        ini: tuple[str, ...], message: str) -> None:
    write_ini(rag_pytester, *ini)
    result = rag_pytester.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_missing_baseline_is_a_usage_error(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*COMPARE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: pytest-rag: baseline file '{rag_pytester.path / BASELINE}' not found; "
        "if it was committed, restore it from version control (e.g. git checkout -- "
        f"{BASELINE}); to start a baseline, record one with --rag-update-baseline",
    ])
    assert not (rag_pytester.path / BASELINE).exists()


#: What a message about an unreadable baseline says first: restore it, or fix the problem.
RESTORE = (f"; restore it from version control (e.g. git checkout -- {BASELINE}) or fix the "
           "problem named here. Recording it anew with --rag-update-baseline would accept "
           "today's numbers of every test as the baseline, regressions included")
BAD_FILES = {
    "corrupt": ('{"format": "pytest-rag-baseline", "version": 1, "tests": {', " is not valid JSON "
                "(line 1, column 59: Expecting property name enclosed in double quotes)" + RESTORE),
    "format": ('{"format": "something-else", "version": 1, "tests": {}}',
               ": format: expected 'pytest-rag-baseline', got 'something-else'" + RESTORE),
    "newer": ('{"format": "pytest-rag-baseline", "version": 3, "tests": {}}',
              ": version: version 3 is newer than this pytest-rag reads (2); upgrade pytest-rag"),
    "shape": ('{"format": "pytest-rag-baseline", "version": 1, "tests": {"t": {"retrieval": '
              '{"metrics": {"recall_at_k": {"value": "high"}}}}}}',
              ": tests['t']['retrieval'].metrics.recall_at_k: expected a finite number or null, "
              "of magnitude at most 1e+300, got 'high'" + RESTORE),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("args", [
    ("--rag-baseline",), ("--rag-update-baseline",), ("--rag-baseline", "--rag-update-baseline"),
    ("--rag-update-baseline", "--rag-prune-baseline"),
], ids=["compare", "update", "compare-update", "prune"])
def test_bad_baseline_is_a_usage_error_and_never_overwritten(
        rag_pytester: pytest.Pytester, kind: str, args: tuple[str, ...]) -> None:
    text, message = BAD_FILES[kind]
    path = rag_pytester.path / BASELINE
    path.write_text(text, encoding="utf-8")
    before = path.read_bytes()
    result = rag_pytester.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: pytest-rag: baseline file '{path}'{message}" in result.stderr.lines
    assert path.read_bytes() == before
    assert sorted(p.name for p in rag_pytester.path.iterdir() if "baseline" in p.name) == [
        BASELINE]


def test_custom_path_on_the_command_line(rag_pytester: pytest.Pytester,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sub = rag_pytester.mkdir("sub")
    monkeypatch.chdir(sub)  # relative to the current folder
    test_file = str(rag_pytester.path / "test_rag.py")
    rag_pytester.runpytest(*UPDATE, "--rag-baseline=base/custom.json", test_file
                           ).assert_outcomes(passed=1)
    assert (sub / "base" / "custom.json").is_file()
    assert not (rag_pytester.path / BASELINE).exists()
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*RUN, "--rag-baseline=base/custom.json", test_file)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*5 metrics worse than the baseline (custom.json)*"])


def test_custom_path_in_ini(rag_pytester: pytest.Pytester,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    write_ini(rag_pytester, "rag_baseline = baselines/rag.json")
    monkeypatch.chdir(rag_pytester.mkdir("sub"))  # relative to the ini file, not the folder
    test_file = str(rag_pytester.path / "test_rag.py")
    rag_pytester.runpytest(*UPDATE, test_file).assert_outcomes(passed=1)
    assert (rag_pytester.path / "baselines" / "rag.json").is_file()
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.runpytest(test_file, *COMPARE).assert_outcomes(failed=1)
    set_inputs(rag_pytester, retrieved_ids=SAME)
    rag_pytester.runpytest(test_file, *COMPARE).assert_outcomes(passed=1)


@pytest.mark.parametrize("target", ["test_rag.py", "."])
def test_test_path_after_bare_rag_baseline_is_a_usage_error(rag_pytester: pytest.Pytester,
                                                            target: str) -> None:
    # argparse hands the next word to --rag-baseline[=PATH]; say so instead of reading it.
    result = rag_pytester.runpytest(*COMPARE, target)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: --rag-baseline: {target!r} is a test path, not a baseline file; write "
        "--rag-baseline=PATH for a file, or put the test paths before --rag-baseline",
    ])


HUGE_COST = """
def test_costly(rag):
    rag.end_to_end(queries=[{"id": "q1"}, {"id": "q2"}], cost_usd={"q1": COST, "q2": COST})
"""


def test_a_value_beyond_the_comparable_range_is_never_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_costly=HUGE_COST.replace("COST", "1.5"))
    assert pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").ret == 0
    kept = (pytester.path / "rag-baseline.json").read_text(encoding="utf-8")
    pytester.makepyfile(test_costly=HUGE_COST.replace("COST", "1.7e308"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline",
                                "--rag-report", "report.json")
    assert result.ret != 0
    result.stdout.fnmatch_lines([
        "*baseline *rag-baseline.json not written: test_costly.py::test_costly ?end_to_end? "
        "mean_cost_usd = 1.7e+308: a baseline holds only a finite number or null, of "
        "magnitude at most 1e+300*"])
    assert "Traceback" not in result.stdout.str()
    assert (pytester.path / "rag-baseline.json").read_text(encoding="utf-8") == kept


LOST_STAGE = """
import pathlib

HERE = pathlib.Path(__file__).parent


def test_two(rag):
    rag.end_to_end(queries=[{"id": "q1"}, {"id": "q2"}], latency_ms={"q1": 5.0, "q2": 6.0})
    if not (HERE / "drop").exists():
        rag.generation(answer={"q1": "a b", "q2": "c d"},
                       reference_answer={"q1": "a b", "q2": "c e"})


def test_one(rag):
    if not (HERE / "drop").exists():
        rag.end_to_end(queries=[{"id": "q1"}], latency_ms={"q1": 5.0})


def test_skips(rag):
    rag.end_to_end(queries=[{"id": "q1"}], latency_ms={"q1": 5.0})
    if (HERE / "drop").exists():
        import pytest
        pytest.skip("not today")
"""


@pytest.mark.parametrize("strict", [(), ("--rag-strict",)], ids=["default", "strict"])
def test_a_stage_no_longer_recorded_fails_and_an_update_drops_it(
        pytester: pytest.Pytester, strict: tuple[str, ...]) -> None:
    pytester.makepyfile(test_lost=LOST_STAGE)
    pytester.runpytest(*UPDATE).assert_outcomes(passed=3)
    assert sorted(baseline(pytester)["tests"]["test_lost.py::test_two"]) == [
        "end_to_end", "generation"]
    (pytester.path / "drop").touch()
    result = pytester.runpytest(*COMPARE, *strict)
    result.assert_outcomes(failed=2, skipped=1)
    result.stdout.fnmatch_lines([
        "*generation: recorded in rag-baseline.json but not by this test: its gate is gone "
        "(run --rag-update-baseline to drop it, if that is intended)*",
        "*end_to_end: recorded in rag-baseline.json but not by this test: its gate is gone "
        "(run --rag-update-baseline to drop it, if that is intended)*",
    ])
    result = pytester.runpytest(*UPDATE)
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines([
        "pytest-rag: dropped baseline entries of stages the tests no longer record: "
        "test_lost.py::test_one ?end_to_end?, test_lost.py::test_two ?generation?"])
    tests = baseline(pytester)["tests"]
    assert "test_lost.py::test_one" not in tests
    assert sorted(tests["test_lost.py::test_two"]) == ["end_to_end"]
    assert sorted(tests["test_lost.py::test_skips"]) == ["end_to_end"]  # did not finish: kept
    pytester.runpytest(*COMPARE, *strict).assert_outcomes(passed=2, skipped=1)


@pytest.mark.parametrize("factor, verdict", [(3.0, 0), (8.0, 1)])
def test_diff_of_the_plugin_files_gives_the_plugin_verdict(
        rag_pytester: pytest.Pytester, factor: float, verdict: int) -> None:
    """A stored 500 % latency tolerance: --rag-baseline and pytest-rag diff agree."""
    import subprocess
    import sys

    write_ini(rag_pytester, "rag_tolerances = retrieval.p95_latency_ms 500%",
              "    retrieval.p50_latency_ms 500%")
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieval_latency_ms={
        query: latency * factor for query, latency in
        {"q1": 100, "q2": 200, "q3": 300, "q4": 400}.items()})
    result = rag_pytester.runpytest(*COMPARE, "--rag-report", "new.json")
    assert result.ret == (pytest.ExitCode.OK if verdict == 0 else pytest.ExitCode.TESTS_FAILED)
    done = subprocess.run([sys.executable, "-m", "pytest_rag", "diff", BASELINE, "new.json"],
                          cwd=rag_pytester.path, capture_output=True, text=True, timeout=60)
    assert done.returncode == verdict, done.stdout + done.stderr


@pytest.mark.parametrize(("value", "message"), [
    ("fast", "'fast': 'fast' is not a number"),
    ("5 % +", "'5 % +': expected 'PERCENT% + MS', 'PERCENT%' or 'MS', e.g. '100% + 5'"),
    ("5 + 2", "'5 + 2': a slack ('+ AMOUNT') goes with a percentage, e.g. '50% + 2'"),
])
def test_a_bad_latency_tolerance_is_a_usage_error_naming_it(rag_pytester: pytest.Pytester,
                                                           value: str, message: str) -> None:
    write_ini(rag_pytester, f"rag_latency_tolerance = {value}")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: pytest-rag: ini rag_latency_tolerance: {message}" in result.stderr.lines
