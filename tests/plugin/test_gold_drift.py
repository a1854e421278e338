"""Gold drift: a gold file that grows or gets corrected is not a regression.

A 40-query gold and a pipeline that answers them; the baseline is recorded,
then the gold changes under an unchanged pipeline.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from ragproject import BASELINE, write_ini

from pytest_rag.compare.baseline import Baseline

TEST = """
import json
import pathlib

HERE = pathlib.Path(__file__).parent


def test_pipeline(rag, rag_dataset):
    answers = json.loads((HERE / "answers.json").read_text())
    retrieved = {q.id: answers.get(q.id, []) for q in rag_dataset.queries}
    # A question the pipeline does not know takes longer: 50 ms instead of 1 ms.
    latency = {q.id: 1.0 if q.id in answers else 50.0 for q in rag_dataset.queries}
    rag.retrieval(retrieved_ids=retrieved, retrieval_latency_ms=latency)
"""


def gold(queries: int = 40, *, unanswered: int = 0, edit: str | None = None,
         drop: tuple[str, ...] = (), extra: dict[str, Any] | None = None) -> str:
    """``queries`` answered queries (q00 finds c00 of c00 and x00 ...), then ``unanswered``
    queries the pipeline knows nothing about; ``extra``: fields added to every query."""
    items: list[dict[str, Any]] = []
    for i in range(queries + unanswered):
        query_id = f"q{i:02d}"
        if query_id in drop:
            continue
        relevant = {f"c{i:02d}": 1, f"x{i:02d}": 1}
        if query_id == edit:
            relevant = {f"c{i:02d}": 1}  # a corrected gold: x was not relevant after all
        items.append({"id": query_id, "question": f"question {i}", "relevant": relevant,
                      **(extra or {})})
    return json.dumps({"queries": items})


def answers(queries: int = 40, *, worse: int = 0) -> str:
    """The pipeline finds c_i for every query; for the first ``worse`` it finds nothing."""
    return json.dumps({f"q{i:02d}": ([] if i < worse else [f"c{i:02d}"])
                       for i in range(queries)})


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".json", gold=gold(), answers=answers())
    write_ini(pytester)
    (pytester.path / "pytest.ini").write_text("[pytest]\nrag_dataset = gold.json\n")
    pytester.makepyfile(test_pipeline=TEST)
    pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    return pytester


def said(result: pytest.RunResult) -> str:
    """The output with every run of whitespace as one space (lines wrap at 80 columns)."""
    return " ".join(result.stdout.str().split())


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline", *args)


def test_twenty_new_unanswered_queries_pass_and_are_counted(recorded: pytest.Pytester) -> None:
    recorded.makefile(".json", gold=gold(unanswered=20))
    result = run(recorded)
    result.assert_outcomes(passed=1)
    assert ("test_pipeline.py::test_pipeline [retrieval] (k=5) gold changed since the "
            "baseline: 20 queries added (q40, q41, q42, q43, q44, +15 more); per-query metrics "
            "compared on the 40 unchanged queries (baseline and delta over those), the others "
            "not compared") in said(result)
    # Over all 60 queries recall fell to 0.333; over the 40 unchanged ones it did not move.
    result = run(recorded, "--rag-scorecard=full")
    result.stdout.fnmatch_lines(["  recall_at_k  * 0.333 * 0.500 * +0.000 * ok"])


def test_an_edited_query_passes_and_is_named(recorded: pytest.Pytester) -> None:
    recorded.makefile(".json", gold=gold(edit="q07"))
    result = run(recorded)
    result.assert_outcomes(passed=1)
    assert "gold changed since the baseline: 1 query edited (q07); per-query" in said(result)


def test_removed_queries_pass_and_are_named(recorded: pytest.Pytester) -> None:
    recorded.makefile(".json", gold=gold(drop=("q03", "q09")))
    result = run(recorded)
    result.assert_outcomes(passed=1)
    assert ("gold changed since the baseline: 2 queries removed (q03, q09); per-query metrics "
            "compared on the 38 unchanged queries") in said(result)


def test_a_regression_on_the_unchanged_queries_still_fails(recorded: pytest.Pytester) -> None:
    """Gold grew and the pipeline got worse on 8 old queries: the gate must see it."""
    recorded.makefile(".json", gold=gold(unanswered=20), answers=answers(worse=8))
    result = run(recorded)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "RAG checks failed: retrieval.* -> *, worse than the baseline (rag-baseline.json) (+6 "
        "more below)",
        "  recall_at_k             0.500       0.400      -0.100   0.010        higher",
        "  retrieval: gold changed since the baseline: 20 queries added*"])


@pytest.mark.parametrize("extra", [{"reference_answer": "an answer"},
                                   {"required_facts": ["a fact"], "answerable": True}],
                         ids=["reference_answer", "generation gold"])
def test_gold_that_retrieval_does_not_read_leaves_its_gate_on(
        recorded: pytest.Pytester, extra: dict[str, Any]) -> None:
    """Issue 24 item 4: answers added to every query are no retrieval gold edit, so a
    recall drop in the same change still fails, compared on every query."""
    recorded.makefile(".json", gold=gold(extra=extra), answers=answers(worse=8))
    result = run(recorded)
    result.assert_outcomes(failed=1)
    assert "gold changed" not in said(result)
    result.stdout.fnmatch_lines([
        "  recall_at_k             0.500       0.400      -0.100   0.010        higher"])


def test_an_edited_question_is_no_retrieval_gold_edit(recorded: pytest.Pytester) -> None:
    """No metric reads the question: rewording it leaves the gate comparing every query."""
    items = json.loads(gold())
    items["queries"][3]["question"] = "a reworded question"
    recorded.makefile(".json", gold=json.dumps(items))
    result = run(recorded)
    result.assert_outcomes(passed=1)
    assert "gold changed" not in said(result)


def test_metrics_without_per_query_values_are_not_compared(recorded: pytest.Pytester) -> None:
    recorded.makefile(".json", gold=gold(unanswered=20))
    result = run(recorded, "--rag-scorecard=full")
    result.assert_outcomes(passed=1)
    # p95 latency went from 1 to 50 ms with the 20 new questions: not comparable, not failed.
    result.stdout.fnmatch_lines(["  p95_latency_ms  * 50.000 * 1.000 * +49.000 * gold changed",
                                 "*1 stage report; metrics: 2 not compared (gold changed)"])


def test_the_baseline_and_the_report_record_the_fingerprints(recorded: pytest.Pytester) -> None:
    entry = Baseline.load(recorded.path / BASELINE).tests[
        "test_pipeline.py::test_pipeline"]["retrieval"]
    assert sorted(entry["gold"]["queries"]) == [f"q{i:02d}" for i in range(40)]
    recorded.makefile(".json", gold=gold(edit="q07"))
    run(recorded, "--rag-report=report.json", "--rag-report-md=report.md",
        "--rag-html=report.html").assert_outcomes(passed=1)
    for name in ("report.md", "report.html"):
        text = (recorded.path / name).read_text(encoding="utf-8")
        assert "gold changed since the baseline: 1 query edited (q07)" in text, name
    report = json.loads((recorded.path / "report.json").read_text())
    stage = report["tests"]["test_pipeline.py::test_pipeline"]["retrieval"]
    assert stage["gold_change"] == {"added": [], "removed": [], "edited": ["q07"],
                                    "documents_edited": False, "compared_on": 39}
    assert stage["gold"]["queries"]["q07"] != entry["gold"]["queries"]["q07"]
    # pytest-rag diff reads the same fingerprints: the same verdict.
    diff = recorded.run("pytest-rag", "diff", BASELINE, "report.json")
    assert diff.ret == 0, diff.stdout.str()


@pytest.mark.parametrize("workers", [  # "xdist": slow, pytest-xdist workers
    pytest.param(None, id="one process"), pytest.param("2", id="xdist", marks=pytest.mark.slow)])
def test_an_entry_of_whole_gold_fingerprints_still_compares_every_query(
        recorded: pytest.Pytester, workers: str | None) -> None:
    """Entries written before the fingerprints were per stage hold a digest of all of a
    query's gold: while none of it changed, the query compares (in the gate and in the
    end-of-run summary, which reads what the workers send)."""
    from pytest_rag import load_dataset

    if workers is not None:
        pytest.importorskip("xdist")
    from pytest_rag.compare.baseline_layout import unpack_entry

    def refuse(place: str, problem: str) -> Exception:
        raise AssertionError(f"{place}: {problem}")

    path = recorded.path / BASELINE
    data = json.loads(path.read_text(encoding="utf-8"))
    gold_file = load_dataset(recorded.path / "gold.json")
    # Such entries are in files of version 1: one line per query and metric.
    data["version"] = 1
    for stages in data["tests"].values():
        for stage, packed in stages.items():
            stages[stage] = unpack_entry(packed, stage, refuse)
    entry = data["tests"]["test_pipeline.py::test_pipeline"]["retrieval"]
    entry["gold"]["queries"] = {query.id: query.fingerprint for query in gold_file.queries}
    path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    args = () if workers is None else ("-n", workers)
    recorded.makefile(".json", answers=answers(worse=8))
    result = recorded.runpytest_subprocess("-p", "no:cacheprovider", "--rag-baseline", *args)
    result.assert_outcomes(failed=1)
    assert "gold changed" not in said(result)
    # One field edited: which one is not known from a whole digest, so the query is edited.
    recorded.makefile(".json", gold=gold(extra={"reference_answer": "an answer"}),
                      answers=answers())
    result = recorded.runpytest_subprocess("-p", "no:cacheprovider", "--rag-baseline", *args)
    result.assert_outcomes(passed=1)
    assert "40 queries edited" in said(result)
