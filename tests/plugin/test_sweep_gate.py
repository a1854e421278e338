"""A sweep that decides and gates: knobs, costs, the verdict in every report, the gate."""

from __future__ import annotations

import json

import pytest
from ragproject import WORD_GRID

RUN = ("-p", "no:cacheprovider")

#: Two chunkers over one document of 40 words, 12 questions each on a 4-word span.
#: ``hits`` says per variant how many questions get their evidence into the context.
SWEEP = """

def chunks_of(size):
    out = []
    for first in range(0, len(WORDS), size):
        start, end = span(first, size)
        out.append({{"id": f"c{{first}}", "doc_id": "d", "start": start, "end": end}})
    return out


{marker}
@pytest.mark.parametrize("size, hits", {params}, ids={ids})
def test_chunker(rag, size, hits):
    chunks = chunks_of(size)
    context = {{}}
    for i, q in enumerate(QUERIES):
        holding = next(c["id"] for c in chunks
                       if int(c["id"][1:]) <= 4 * i < int(c["id"][1:]) + size)
        other = next(c["id"] for c in chunks if c["id"] != holding)
        context[q["id"]] = [holding if i < hits else other]
    rag.augmentation(documents=DOCS, chunks=chunks, queries=QUERIES,
                     expected_evidence=EVIDENCE, context_ids=context)
"""


def _project(pytester: pytest.Pytester, marker: str, params: str, ids: str) -> None:
    pytester.makepyfile(test_sweep=WORD_GRID + SWEEP.format(marker=marker, params=params, ids=ids))


def test_the_run_fails_when_the_shipped_variant_is_beaten_beyond_noise(
        pytester: pytest.Pytester) -> None:
    # "small" (4 words a chunk) gets every question's evidence whole into a context of
    # 4 tokens; the shipped "big" chunk (8 words) costs more context and gets only 2.
    _project(pytester, '@pytest.mark.rag_sweep(shipped="big")', "[(8, 2), (4, 12)]",
             '["big", "small"]')
    result = pytester.runpytest(*RUN, "--rag-report=report.json")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*GATE FAILED: shipped variant 'big' is beaten beyond noise by 'small' on",
        "pytest-rag: sweep gate failed for test_sweep.py::test_chunker: shipped variant 'big' "
        "is beaten beyond noise by 'small' on augmentation.context_sufficient: 1.000 vs "
        "0.167 (+0.833, 95% interval [+0.583, +1.000]) at no higher cost (context_tokens "
        "4 vs 8, index_tokens 48 vs 48) (the run fails: exit status 1, although every "
        "test passed)"])
    # The gate's note is the last pytest-rag line, and pytest's closing line says it too.
    lines = result.stdout.lines
    assert [line for line in lines if line.startswith("pytest-rag:")][-1].startswith(
        "pytest-rag: sweep gate failed for test_sweep.py::test_chunker:")
    result.stdout.re_match_lines([r"=+ 2 passed, 1 sweep gate failed in .* =+$"])
    report = json.loads((pytester.path / "report.json").read_text())
    verdict = report["sweeps"]["test_sweep.py::test_chunker"]["verdict"]
    assert verdict["shipped"] == "big" and verdict["beaten_by"] == "small"
    assert verdict["recommended"] == "small"


def test_the_run_passes_when_the_shipped_variant_is_tied(pytester: pytest.Pytester) -> None:
    # "small" is better on one question of 12: within noise, so the gate passes.
    _project(pytester, '@pytest.mark.rag_sweep(shipped="big")', "[(8, 11), (4, 12)]",
             '["big", "small"]')
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*shipped: big (no variant beats it beyond noise at no "
                                 "higher cost)"])
    assert "GATE FAILED" not in result.stdout.str()


def test_a_better_variant_at_a_higher_cost_does_not_fail_the_gate(
        pytester: pytest.Pytester) -> None:
    # "big" is better beyond noise but its context is twice the size: a trade-off.
    _project(pytester, '@pytest.mark.rag_sweep(shipped="small")', "[(8, 12), (4, 2)]",
             '["big", "small"]')
    result = pytester.runpytest(*RUN, "--rag-report=r.json")
    assert result.ret == pytest.ExitCode.OK
    # The line says the gate passes and names the better, costlier variant.
    note = ("no variant beats it beyond noise at no higher cost; big is better beyond noise "
            "(1.000 vs 0.167), at a higher cost: context_tokens 8 vs 4, index_tokens 48 vs 48")
    assert f"shipped: small ({note})" in " ".join(
        line.strip() for line in result.stdout.lines)
    verdict = json.loads((pytester.path / "r.json").read_text())["sweeps"][
        "test_sweep.py::test_chunker"]["verdict"]
    assert verdict["gate"] is None and verdict["shipped_note"] == note


def test_knobs_costs_and_verdict_reach_every_report(pytester: pytest.Pytester) -> None:
    _project(pytester, "@pytest.mark.rag_sweep", "[(8, 2), (4, 12), (16, 12)]",
             '["8", "4", "16"]')
    result = pytester.runpytest(*RUN, "--rag-report=r.json", "--rag-report-md=r.md",
                                "--rag-html=r.html")
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    assert "recommended: 4 (augmentation.context_sufficient 1.000" in text
    sweep = json.loads((pytester.path / "r.json").read_text())["sweeps"][
        "test_sweep.py::test_chunker"]
    assert sweep["knobs"] == {"8": {"size": 8, "hits": 2}, "4": {"size": 4, "hits": 12},
                              "16": {"size": 16, "hits": 12}}
    assert sweep["costs"]["chunks"] == {"8": 6.0, "4": 12.0, "16": 3.0}
    assert sweep["costs"]["index_tokens"] == {"8": 48.0, "4": 48.0, "16": 48.0}
    assert sweep["costs"]["context_tokens"] == {"8": 8.0, "4": 4.0, "16": 16.0}
    assert sweep["verdict"]["recommended"] == "4"
    assert sweep["verdict"]["tied_with_best"] == ["4", "16"]
    markdown = (pytester.path / "r.md").read_text()
    assert "- recommended: 4 (augmentation.context&#95;sufficient 1.000" in markdown  # prose
    assert "`size` (knobs)" in markdown
    html = (pytester.path / "r.html").read_text()
    assert "recommended: 4 (augmentation.context_sufficient 1.000" in html
    assert html.count('<svg class="scatter"') == 2  # against context_tokens, index_tokens


def test_explicit_knobs_and_a_wrong_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_knobs="""
import pytest
from ragproject import WORD_GRID


@pytest.mark.rag_sweep(objective="retrieval.recall")
@pytest.mark.parametrize("name", [
    pytest.param("a", marks=pytest.mark.rag_knobs(size=100, overlap=10)),
    pytest.param("b", marks=pytest.mark.rag_knobs(size=200, overlap=20))])
def test_knobs(rag, name):
    rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]},
                  retrieved_ids={"q1": [name]}, k=1)
""")
    result = pytester.runpytest(*RUN, "--rag-report=r.json")
    # One collection error for the function, not a failure of every variant.
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["pytest-rag: @pytest.mark.rag_sweep(objective="
                                 "'retrieval.recall'): not a metric (did you mean "
                                 "'retrieval.recall_at_k'?)*(on test_knobs.py::test_knobs)"])
    assert result.stdout.str().count("not a metric") == 1
    pytester.makepyfile(test_knobs=pytester.path.joinpath("test_knobs.py").read_text().replace(
        'objective="retrieval.recall"', 'objective="retrieval.recall_at_k"'))
    pytester.runpytest(*RUN, "--rag-report=r.json").assert_outcomes(passed=2)
    sweep = json.loads((pytester.path / "r.json").read_text())["sweeps"][
        "test_knobs.py::test_knobs"]
    assert sweep["knobs"] == {"a": {"size": 100, "overlap": 10},
                              "b": {"size": 200, "overlap": 20}}


@pytest.mark.parametrize(("argument", "message"), [
    ('cost="contex_tokens"', "*'contex_tokens' is not a cost (did you mean 'context_tokens'?)*"),
    ('require="retrieval.recal_at_k >= 0.5"',
     "*unknown metric 'recal_at_k' (did you mean 'recall_at_k'?)*"),
    ('objective="retrieval.recall_at_k", shiped="a"',
     "*not 'shiped' (did you mean 'shipped'?)*"),
])
def test_a_misspelled_sweep_argument_is_one_error_with_a_suggestion(
        pytester: pytest.Pytester, argument: str, message: str) -> None:
    pytester.makepyfile(test_knobs=f"""
import pytest
from ragproject import WORD_GRID


@pytest.mark.rag_sweep({argument})
@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_knobs(rag, name):
    rag.retrieval(queries=[{{"id": "q1"}}], relevant={{"q1": ["a"]}},
                  retrieved_ids={{"q1": [name]}}, k=1)
""")
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_a_misspelled_shipped_variant_gets_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_knobs="""
import pytest
from ragproject import WORD_GRID


@pytest.mark.rag_sweep(objective="retrieval.recall_at_k", shipped="alpha")
@pytest.mark.parametrize("name", ["alpa", "b"])
def test_knobs(rag, name):
    rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]},
                  retrieved_ids={"q1": [name]}, k=1)
""")
    result = pytester.runpytest(*RUN)
    result.stdout.fnmatch_lines(["*shipped variant 'alpha' is not one of this sweep's "
                                 "variants (did you mean 'alpa'?): alpa, b*"])


def test_the_export_of_a_run_is_reproduced_by_the_command_line(
        pytester: pytest.Pytester) -> None:
    import subprocess
    import sys

    from pytest_rag.plugin.report_files import export_folder

    _project(pytester, "@pytest.mark.rag_sweep", "[(8, 2), (4, 12)]", '["8", "4"]')
    pytester.makepyfile(test_more="""
def test_retrieval(rag):
    rag.retrieval(queries=[{"id": "q1", "question": "why?"}, {"id": "q2"}],
                  relevant={"q1": {"a": 2, "b": 1}, "q2": ["c"]},
                  retrieved_ids={"q1": ["b", "x", "a"], "q2": ["c"]},
                  retrieval_latency_ms={"q1": 1.5, "q2": 2.25}, k=2)
""")
    result = pytester.runpytest(*RUN, "--rag-export=exported", "--rag-report=r.json")
    result.assert_outcomes(passed=3)
    assert "--rag-export" not in result.stdout.str()  # every file reproduced its report
    # Said like the report files: where, and how many dataset files.
    result.stdout.fnmatch_lines([f"pytest-rag: wrote {pytester.path / 'exported'} (3 dataset "
                                 "files, a folder per test)"])
    report = json.loads((pytester.path / "r.json").read_text())
    checked = 0
    for nodeid, stages in report["tests"].items():
        for stage, entry in stages.items():
            path = export_folder(pytester.path / "exported", nodeid) / f"{stage}.json"
            done = subprocess.run([sys.executable, "-m", "pytest_rag", "evaluate", str(path),
                                   "--stage", stage, "--format", "json"],
                                  capture_output=True, text=True, check=True)
            values = json.loads(done.stdout)[stage]
            assert values == {key: metric["value"] for key, metric in entry["metrics"].items()}
            checked += 1
    assert checked == 3


@pytest.mark.parametrize("workers", [  # "xdist": slow, pytest-xdist workers
    pytest.param((), id="serial"), pytest.param(("-n", "2"), id="xdist", marks=pytest.mark.slow)])
def test_vectors_are_exported_and_a_problem_would_be_named(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        workers: tuple[str, ...]) -> None:
    pytester.makepyfile(test_vectors="""
def test_embedding(rag):
    rag.embedding(chunk_vectors={"a": [0.1, 0.7], "b": [1 / 3, 1.0]}, indexed_ids=["a"],
                  query_vector={"q1": [0.2, 0.9]}, relevant={"q1": ["a"]},
                  queries=[{"id": "q1"}], k=1)
""")
    result = pytester.runpytest_subprocess(*RUN, "--rag-export=exported", *workers)
    result.assert_outcomes(passed=1)
    assert "--rag-export" not in result.stdout.str()
    result.stdout.fnmatch_lines(["pytest-rag: wrote *exported (1 dataset file, a folder per "
                                 "test)"])  # counted on the controller under xdist too
    # A stage the export could not hold is named at the end of the run, under xdist too.
    pytester.makeconftest("""
import pytest_rag.dataset.sources.export as export
export.UNSUPPORTED["embedding"] = "not today"
""")
    result = pytester.runpytest_subprocess(*RUN, "--rag-export=exported", *workers)
    result.stdout.fnmatch_lines(["pytest-rag: --rag-export: test_vectors.py::test_embedding "
                                 "[[]embedding[]] not exported: not today"])


#: Six chunkers of one 48-word document measured on three stages: about 30 metric
#: columns differ between the variants, more than a screenful holds at 80 columns.
WIDE = WORD_GRID + """

@pytest.mark.rag_sweep
@pytest.mark.parametrize("size", [2, 3, 4, 6, 8, 12])
def test_chunker(rag, size):
    chunks = [dict(zip(("start", "end"), span(first, size)), id=f"c{first}", doc_id="d")
              for first in range(0, len(WORDS), size)]
    ranked = {q["id"]: [c["id"] for c in chunks[i % len(chunks):] + chunks[:i % len(chunks)]]
              for i, q in enumerate(QUERIES)}
    gold = dict(documents={"d": TEXT}, chunks=chunks, queries=QUERIES,
                expected_evidence=EVIDENCE)
    rag.chunking(**gold)
    rag.retrieval(**gold, retrieved_ids=ranked, relevance_from_evidence=True, k=3)
    rag.augmentation(**gold, context_ids={q: ids[:2] for q, ids in ranked.items()})
"""


def test_a_wide_sweep_keeps_its_rows_and_leaves_metric_columns_out(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """When not even one row of every column fits the screenful, the table keeps each
    variant's knobs, objective and costs and counts the metric columns it leaves out,
    instead of showing no row at all."""
    from ragproject import scorecard_lines

    from pytest_rag.plugin.summary import SCREENFUL

    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_wide=WIDE)
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=6)
    lines = scorecard_lines(result)
    assert len(lines) <= SCREENFUL
    assert not any("left out for room" in line for line in lines), lines
    rows = [line.split() for line in lines if line.startswith("  ") and line.split()[0] in
            {"2", "3", "4", "6", "8", "12"}]
    assert sorted(row[0] for row in rows if row[1] == row[0]) == sorted(
        ["2", "3", "4", "6", "8", "12"])  # each variant's row, its knob beside it
    more = [line for line in lines if "more metric columns" in line]
    assert len(more) == 1 and more[0].endswith(": -v or --rag-report-md lists them"), lines
    assert any(line.startswith("  recommended: ") for line in lines)
    # -v: every column, no count
    full = scorecard_lines(pytester.runpytest(*RUN, "-v"))
    assert not any("more metric columns" in line for line in full)
    assert any("evidence_" in line for line in full)
