"""The ``RAG scorecard`` section of the terminal summary."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from ragproject import BASELINE, MEASURED, QUICKSTART, WORSE, scorecard_lines, set_inputs, write_ini

RUN = ("-p", "no:cacheprovider")
SECTION = "=* RAG scorecard =*"


def test_summary_shows_checked_rows_only(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*RUN, "--rag-threshold", "retrieval.recall_at_k >= 0.5")
    result.assert_outcomes(passed=1)
    # Every threshold holds: nothing needs attention.
    assert scorecard_lines(result) == ["1 stage report with nothing to flag (-v lists them)",
                                       "1 stage report"]
    # A failing one shows the stage report, with its checked rows only.
    result = rag_pytester.runpytest(*RUN, "--rag-threshold", "retrieval.recall_at_k >= 0.5",
                                    "--rag-threshold", "retrieval.hit_at_k >= 0.9")
    assert scorecard_lines(result)[:4] == [
        "test_rag.py::test_retrieval [retrieval] (k=2)",
        "  metric       value  threshold  status",
        "  -----------  -----  ---------  ------",
        "  recall_at_k  0.667  >= 0.5     ok",
    ]


def test_summary_without_checks_lists_no_rows(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*RUN)
    result.stdout.fnmatch_lines([SECTION])
    # Nothing needs attention: one line says so, and -v lists it.
    assert scorecard_lines(result) == [
        "1 stage report with nothing to flag (-v lists them)",
        "1 stage report",
    ]


def test_summary_shows_changed_rows_against_the_baseline(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*RUN, "--rag-baseline", "--rag-threshold",
                                    "retrieval.hit_at_k >= 0.5")
    lines = scorecard_lines(result)
    assert lines[0] == "test_rag.py::test_retrieval [retrieval] (k=2)"
    assert lines[1].split() == ["metric", "value", "threshold", "baseline", "delta", "p",
                                "status"]
    assert [line.split()[0] for line in lines[3:9]] == [
        "precision_at_k", "recall_at_k", "f1_at_k", "ndcg_at_k", "hit_at_k",
        "average_precision_at_k"]
    # One query of four changed: the paired test cannot tell it from noise (p = 1).
    assert lines[4].split() == ["recall_at_k", "0.583", "0.667", "-0.083", "1.000", "REGRESSED"]
    assert lines[7].split() == ["hit_at_k", "0.750", ">=", "0.5", "0.750", "+0.000", "ok"]
    assert lines[9:] == ["  7 more metrics unchanged against the baseline (-v lists them)",
                         "1 stage report; metrics: 5 regressed"]


@pytest.mark.parametrize("args", [("-v",), ("--rag-scorecard=full",), ("-o", "rag_scorecard=full")],
                         ids=["verbose", "option", "ini"])
def test_full_lists_every_metric(rag_pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    result = rag_pytester.runpytest(*RUN, *args)
    lines = scorecard_lines(result)
    keys = [line.split()[0] for line in lines[3:-1]]
    assert keys[:7] == list(MEASURED[:7])
    assert len(keys) == 13
    assert ["token_recall", "-", "not", "measured"] in [line.split() for line in lines]
    assert lines[-1] == "1 stage report"


@pytest.mark.parametrize("args", [("--rag-scorecard=off",), ("-o", "rag_scorecard=off")])
def test_off_hides_the_scorecard_but_not_the_notes(rag_pytester: pytest.Pytester,
                                                   args: tuple[str, ...]) -> None:
    result = rag_pytester.runpytest(*RUN, "--rag-update-baseline", *args)
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*RAG scorecard*")
    result.stdout.no_fnmatch_line("*test_retrieval [[]retrieval[]]*")
    result.stdout.fnmatch_lines(["pytest-rag: baseline written to *"])


def test_command_line_beats_ini(rag_pytester: pytest.Pytester) -> None:
    write_ini(rag_pytester, "rag_scorecard = off")
    rag_pytester.runpytest(*RUN).stdout.no_fnmatch_line("*RAG scorecard*")
    rag_pytester.runpytest(*RUN, "--rag-scorecard=summary").stdout.fnmatch_lines([SECTION])


def test_bad_mode_is_a_usage_error(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest(*RUN, "--rag-scorecard=loud")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --rag-scorecard: invalid choice: 'loud'*"])


def test_shown_under_plain_pytest_with_capture(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([SECTION, "1 stage report with nothing to flag (-v lists them)",
                                 "1 stage report"])


def test_no_section_when_no_stage_was_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest(*RUN, "--rag-scorecard=full")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*RAG*")


WIDE = """
import pytest
from pytest_rag import assert_metric


@pytest.mark.parametrize("better", [False, True])
def test_every_stage(rag, better):
    if better:  # the first calls: compared with the entries of rag.evaluate()'s
        rag.reranking(reranked_ids={"q1": ["refunds#1"], "q2": ["refunds#1"]})
        rag.end_to_end(latency_ms={"q1": 1, "q2": 2, "q3": 1200.5})
    reports = rag.evaluate()
    assert_metric(reports["retrieval"].recall_at_k >= 0.5)
    assert_metric(reports["retrieval"].recall_at_k <= 0.9)
"""


@pytest.mark.parametrize("mode", ["summary", "full"])
def test_every_line_fits_in_80_columns(pytester: pytest.Pytester, mode: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Every line of the summary, not the first screenful (the inner run is in-process).
    monkeypatch.setattr("pytest_rag.plugin.summary.SCREENFUL", 1000)
    shutil.copy(QUICKSTART, pytester.path / "gold.yaml")
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_wide=WIDE)
    thresholds = ("retrieval.precision_at_k >= 0.25", "retrieval.precision_at_k <= 0.75",
                  "reranking.candidate_set_preservation_rate >= 0.5",
                  "reranking.first_relevant_rank_change >= 0.0",
                  "generation.unsupported_number_rate <= 0.05",
                  "end_to_end.p95_latency_ms <= 2000")
    write_ini(pytester, "rag_thresholds =", *("    " + line for line in thresholds))
    pytester.runpytest(*RUN, "--rag-update-baseline", "-k", "False")
    # Record the better run's numbers under the other test's node id, so that it regresses.
    path = pytester.path / BASELINE
    data = json.loads(path.read_text())
    data["tests"]["test_wide.py::test_every_stage[True]"] = data["tests"].pop(
        "test_wide.py::test_every_stage[False]")
    path.write_text(json.dumps(data))
    result = pytester.runpytest(*RUN, "--rag-baseline", f"--rag-scorecard={mode}")
    lines = scorecard_lines(result)
    assert len(lines) > 20
    assert "candidate_set_preservation_rate" in "\n".join(lines)
    assert {"REGRESSED", "improved", "new", "FAIL", "ok"} <= set(" ".join(lines).split())
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)


ORDERED = """
import pytest


@pytest.mark.rag_sweep
@pytest.mark.parametrize("size, overlap", [(200, 0), (1500, 200), (400, 50)],
                         ids=["200-0", "1500-200", "400-50"])
def test_sweep(rag, size, overlap):
    hits = {200: ["a"], 1500: ["x"], 400: ["a"]}[size]
    rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]}, retrieved_ids={"q1": hits},
                  k=1)
"""


@pytest.mark.parametrize("workers", [  # "xdist": slow, pytest-xdist workers
    pytest.param((), id="serial"), pytest.param(("-n", "2"), id="xdist", marks=pytest.mark.slow)])
def test_sweep_rows_keep_the_parametrize_order(pytester: pytest.Pytester,
                                               workers: tuple[str, ...]) -> None:
    pytester.makepyfile(test_order=ORDERED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rag-scorecard=full",
                                           *workers)
    result.assert_outcomes(passed=3)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines)
                 if line == "Sweep test_order.py::test_sweep: 3 variants")
    rule = next(i for i, line in enumerate(lines[start:]) if line.startswith("  -------"))
    rows = [line.split() for line in lines[start + rule + 1:start + rule + 4]]
    # One row per variant, with its knobs from the parametrize arguments.
    assert rows == [["200-0", "200", "0", "1.000", "+0.000", "best", "yes"],
                    ["1500-200", "1500", "200", "0.000", "-1.000", "worse", "-"],
                    ["400-50", "400", "50", "1.000", "+0.000", "tied", "yes"]]
    # The scorecard lists the tests in the same order.
    headers = [line for line in lines if line.startswith("test_order.py::test_sweep[")]
    assert [h.split("[")[1].split("]")[0] for h in headers] == ["200-0", "1500-200", "400-50"]


DATASETS = """
import pytest

{marker}
@pytest.mark.parametrize("bench", ["chroma", "clapnq"])
def test_across(rag, bench):
    hits = {{"chroma": ["a"], "clapnq": ["x"]}}[bench]
    rag.retrieval(queries=[{{"id": "q1"}}], relevant={{"q1": ["a"]}},
                  retrieved_ids={{"q1": hits}}, k=1)
"""


@pytest.mark.parametrize("marked", [False, True], ids=["datasets", "rag_sweep"])
def test_a_best_is_starred_only_in_a_marked_sweep(pytester: pytest.Pytester,
                                                  marked: bool) -> None:
    pytester.makepyfile(test_across=DATASETS.format(
        marker="@pytest.mark.rag_sweep" if marked else ""))
    result = pytester.runpytest("-p", "no:cacheprovider",
                                "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=2)
    if marked:
        result.stdout.fnmatch_lines(["Sweep test_across.py::test_across: 2 variants",
                                     "*chroma*1.000[*]*", "*recommended: chroma*"])
    else:  # datasets side by side: on request (-v) only
        result.stdout.fnmatch_lines(["1 parametrized test not a rag_sweep: variants side by "
                                     "side with -v"])
        result = pytester.runpytest("-p", "no:cacheprovider", "-v")
        result.stdout.fnmatch_lines(["Sweep test_across.py::test_across: 2 variants (not a "
                                     "rag_sweep)", "*not a rag_sweep: no best and no "
                                     "recommendation*"])
        assert "recommended" not in result.stdout.str()
        assert "1.000*" not in result.stdout.str()


QUIET_AND_LOUD = """
def test_quiet_{n}(rag):
    rag.retrieval(queries=[{{"id": "q1"}}], relevant={{"q1": ["a"]}},
                  retrieved_ids={{"q1": ["a"]}}, k=1)
"""


def test_a_passing_run_prints_only_what_needs_attention(pytester: pytest.Pytester) -> None:
    """Nine quiet tests and one with a failing threshold: the default scorecard shows
    the one, and a single line for the nine (it printed ~110 lines for nine tests)."""
    pytester.makepyfile(test_many="".join(QUIET_AND_LOUD.format(n=n) for n in range(9)) + """
def test_loud(rag):
    rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]},
                  retrieved_ids={"q1": ["x"]}, k=1)
""")
    result = pytester.runpytest(*RUN, "--rag-threshold", "retrieval.recall_at_k >= 0.5")
    result.assert_outcomes(passed=9, failed=1)
    lines = scorecard_lines(result)
    assert lines[0] == "test_many.py::test_loud [retrieval] (k=1)"
    assert "9 more stage reports with nothing to flag (-v lists them)" in lines
    assert not any(line.startswith("test_many.py::test_quiet") for line in lines)
    assert len(lines) <= 10
    full = scorecard_lines(pytester.runpytest(*RUN, "-v", "--rag-threshold",
                                              "retrieval.recall_at_k >= 0.5"))
    assert sum(line.startswith("test_many.py::test_quiet") for line in full) == 9


LONG_HEADER = """
def test_a_retriever_with_a_rather_long_descriptive_name(rag):
    rag.retrieval(relevance_from_evidence=True)
"""


def test_a_long_header_wraps_between_words_not_inside_one(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=LONG_HEADER)
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-scorecard=full")
    result.assert_outcomes(passed=1)
    lines = scorecard_lines(result)
    assert "…" not in "\n".join(lines)
    assert "relevance_from_evidence=true)" in " ".join(lines)
    assert all(len(line) <= 80 for line in lines)


LONG_SETTING = """
def test_answers(rag):
    rag.generation(queries=[{"id": "q1"}], reference_answer={"q1": "Paris"},
                   answer={"q1": "Paris"},
                   abstain_phrases=["i do not know", "no answer in the context"])
"""


def test_a_long_word_in_a_header_is_not_cut_inside(pytester: pytest.Pytester) -> None:
    # One setting value with no space, longer than the terminal, under -v: one word.
    phrase = "no_answer_" * 12
    pytester.makepyfile(test_rag=LONG_SETTING.replace("no answer in the context", phrase))
    lines = scorecard_lines(pytester.runpytest("-p", "no:cacheprovider", "-v"))
    assert any(f'"{phrase}"' in line for line in lines)


def test_verbose_shows_a_long_setting_whole_and_the_default_cuts_it(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rag=LONG_SETTING)
    whole = '["i do not know", "no answer in the context"]'
    full = " ".join(scorecard_lines(pytester.runpytest("-p", "no:cacheprovider", "-v")))
    assert f"abstain_phrases={whole}" in re.sub(r" +", " ", full)  # wrapped: joined again
    short = " ".join(scorecard_lines(pytester.runpytest(
        "-p", "no:cacheprovider", "--rag-threshold", "generation.exact_match < 0.5")))
    assert f"abstain_phrases={whole[:23]}…" in re.sub(r" +", " ", short)


CHUNKER = """
TEXT = " ".join(f"w{{i}}" for i in range(40))


def test_chunks(rag):
    size = {size}
    ends = [(s, min(s + size, 40)) for s in range(0, 40, size)][:{keep}]
    words = TEXT.split()
    chunks = []
    for first, last in ends:
        start = len(" ".join(words[:first])) + (1 if first else 0)
        chunks.append({{"id": f"c{{first}}", "doc_id": "d", "start": start,
                        "end": start + len(" ".join(words[first:last]))}})
    rag.chunking(documents={{"d": TEXT}}, chunks=chunks)
"""


def test_informational_metrics_that_moved_are_not_counted_unchanged(
        pytester: pytest.Pytester) -> None:
    # Smaller chunks, the last one dropped (coverage regresses, so the report is
    # shown): mean_chunk_tokens and the like (informational, never a regression)
    # moved; the line counts them apart from the unchanged ones.
    pytester.makepyfile(test_chunks=CHUNKER.format(size=20, keep=2))
    pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    pytester.makepyfile(test_chunks=CHUNKER.format(size=5, keep=7))
    result = pytester.runpytest(*RUN, "--rag-baseline", "--rag-report=r.json")
    report = json.loads((pytester.path / "r.json").read_text())
    rows = report["tests"]["test_chunks.py::test_chunks"]["chunking"]["metrics"]
    moved = [key for key, row in rows.items() if row["direction"] == "info"
             and row["baseline"] is not None and row["value"] != row["baseline"]]
    assert "mean_chunk_tokens" in moved
    lines = scorecard_lines(result)
    assert max(map(len, lines)) <= 80
    assert lines[4] == (f"  15 more metrics unchanged, {len(moved)} informational changed "
                        "(-v lists them)")
