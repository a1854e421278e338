"""A year of CI in one project: ten successive changes, each gated as CI gates it.

CI runs ``pytest --rag-baseline --rag-strict`` on every change; after a change
is reviewed, the team runs the routine update the README recommends
(``--rag-update-baseline --rag-prune-baseline`` on the full suite).  The
changes mix losses within the tolerance with routine updates, a renamed metric,
a retired dataset, a partial run, other settings and a test that fails during
an update.  Every real regression must fail CI at the step where it crosses its
tolerance, and no run of unchanged code may fail.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

RUN = ("-p", "no:cacheprovider")
CI = (*RUN, "--rag-baseline", "--rag-strict")
UPDATE = (*RUN, "--rag-update-baseline", "--rag-prune-baseline")
CHUNKS = 5  # relevant chunks per query; K = 5, so one lost chunk is 0.2 of a query's recall

TEST = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
STATE = json.loads((HERE / "state.json").read_text())
DATASETS = STATE["datasets"]


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.rag_dataset(p))
                                  for p in DATASETS], ids=[f"d{i}" for i in range(len(DATASETS))])
def test_retrieval(rag, rag_dataset, path):
    answered = STATE["answered"]
    retrieved = {}
    for query in rag_dataset.queries:
        if answered is not None and query.id not in answered:
            continue  # timed out: no result
        keep = len(query.relevant) - STATE["lost"].get(query.id, 0)
        retrieved[query.id] = sorted(query.relevant)[:keep] + [f"x{i}" for i in range(5 - keep)]
    rag.retrieval(retrieved_ids=retrieved, k=STATE["k"])
    if STATE["fail"]:
        raise RuntimeError("the index service timed out half way")
"""
CONFTEST = """
import json
import pathlib

from pytest_rag import Direction, MetricSpec

STATE = json.loads((pathlib.Path(__file__).parent / "state.json").read_text())


def pytest_rag_register_metrics(config):
    return [MetricSpec("retrieval", STATE["metric"], "Judge", Direction.HIGHER,
                       "an LLM judge's mean score", "mean judge score", ("retrieved_ids",))]


def pytest_rag_compute_metrics(stage, report, dataset):
    return {STATE["metric"]: STATE["score"]} if stage == "retrieval" else None
"""


def gold(prefix: str) -> str:
    """Ten queries ``{prefix}0`` ... ``{prefix}9``, each with five relevant chunks."""
    return json.dumps({"queries": [
        {"id": f"{prefix}{i}", "relevant": [f"{prefix}{i}-c{j}" for j in range(CHUNKS)]}
        for i in range(10)]})


class Project:
    """The inner project and its state: what the pipeline and the tests do today."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.state: dict[str, Any] = {"datasets": ["gold_a.json", "gold_b.json"], "lost": {},
                                      "answered": None, "k": 5, "metric": "judge",
                                      "score": 0.9, "fail": False}
        pytester.makefile(".json", gold_a=gold("a"), gold_b=gold("b"))
        pytester.makefile(".ini", pytest="[pytest]\nrag_tolerance = 0.05\n")
        pytester.makeconftest(CONFTEST)
        pytester.makepyfile(test_rag=TEST)
        self.change()

    def change(self, **state: Any) -> None:
        self.state.update(state)
        (self.pytester.path / "state.json").write_text(json.dumps(self.state))

    def ci(self) -> pytest.RunResult:
        return self.pytester.runpytest(*CI)

    def update(self, *extra: str) -> pytest.RunResult:
        return self.pytester.runpytest(*UPDATE, *extra)

    def passes(self) -> None:
        """CI on this state passes (unchanged code never fails, whatever the updates did)."""
        result = self.ci()
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def said(result: pytest.RunResult) -> str:
    return " ".join((result.stdout.str() + result.stderr.str()).split())


def fails(result: pytest.RunResult, *texts: str) -> None:
    assert result.ret != pytest.ExitCode.OK, result.stdout.str()
    for text in texts:
        assert text in said(result), text


def test_a_year_of_ci(pytester: pytest.Pytester) -> None:
    project = Project(pytester)
    project.update().assert_outcomes(passed=2)
    project.passes()

    # 1. A loss within the tolerance (a0 loses a chunk: recall 1.00 -> 0.98), then the
    #    routine update: the accepted reference stays at 1.00.
    project.change(lost={"a0": 1})
    project.passes()
    assert "accepts" not in said(project.update())
    project.passes()

    # 2. Another one (0.96 against the kept 1.00): still within, still kept.
    project.change(lost={"a0": 1, "a1": 1})
    project.passes()
    project.update()
    project.passes()

    # 3. A third small loss crosses the tolerance against the kept reference (0.94): CI
    #    fails here, although each step lost only 0.02.  The team accepts it; the update
    #    names what it accepts.
    project.change(lost={"a0": 1, "a1": 1, "a2": 1})
    fails(project.ci(), "recall_at_k 1.000 0.940 -0.060")
    accepted = project.update()
    assert ("test_rag.py::test_retrieval[d0] [retrieval] recall_at_k 1.000 -> 0.940 "
            "(regressed)") in said(accepted)
    project.passes()

    # 4. The judge metric is renamed in the same change in which it drops 0.9 -> 0.2: the
    #    old key is no metric any more, which CI refuses with a suggestion.
    project.change(metric="judge_score", score=0.2)
    result = project.ci()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "retrieval.judge (did you mean 'judge_score'?)" in said(result)
    accepted = project.update()
    assert "judge 0.900 -> not measured (lost)" in said(accepted)
    project.passes()

    # 5. Dataset a is retired: "d0" is now dataset b, whose pipeline finds nothing better
    #    (recall 1.0 -> 0.6 on b's own queries would read as "gold changed" before).
    project.change(datasets=["gold_b.json"], lost={f"b{i}": 2 for i in range(10)})
    fails(project.ci(), "different gold: the baseline was measured on gold_a.json, this run "
                        "on gold_b.json")
    project.update()
    project.passes()

    # 6. A partial run: 6 of the 10 queries time out.  The 4 answered ones look perfect on
    #    their own, but queries no longer measured are a regression.
    project.change(answered=["b0", "b1", "b2", "b3"])
    fails(project.ci(), "6 queries no longer measured: b4, b5, b6, b7, b8, +1 more")
    project.change(answered=None)  # the service is fixed: unchanged code passes again
    project.passes()

    # 7. K goes from 5 to 10 in a change that also loses chunks: compared under other
    #    settings, it is no passing comparison until the baseline is updated.
    project.change(k=10, lost={f"b{i}": 3 for i in range(10)})
    fails(project.ci(), "settings changed (k 5 -> 10)")
    assert "settings changed (k 5 -> 10)" in said(project.update())
    project.passes()

    # 8. An update during which the test fails after recording a broken run (recall 0):
    #    its entry is not updated, so the next real drop still fails against the old one.
    project.change(lost={f"b{i}": 5 for i in range(10)}, fail=True)
    assert "not updated: test failed" in said(project.update())
    project.change(fail=False, lost={f"b{i}": 4 for i in range(10)})
    fails(project.ci(), "recall_at_k 0.400 0.200 -0.200")
    project.change(lost={f"b{i}": 3 for i in range(10)})
    project.passes()

    # 9. A loss within the tolerance (b0 loses one more chunk: 0.40 -> 0.38), updated.
    project.change(lost={**{f"b{i}": 3 for i in range(10)}, "b0": 4})
    project.passes()
    project.update()
    project.passes()

    # 10. And two more: 0.34 against the kept 0.40 crosses the tolerance; CI fails here.
    project.change(lost={**{f"b{i}": 3 for i in range(10)}, "b0": 4, "b1": 4, "b2": 4})
    fails(project.ci(), "recall_at_k 0.400 0.340 -0.060")
