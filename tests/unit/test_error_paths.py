"""Every documented error path through the command line, with the exact message.

The cases are shared with ``tests/plugin/test_plugin_error_paths.py``
(``tests/error_cases.py``), so the same cause gives the same message through
``pytest-rag`` and through pytest.  README "## Command line": exit status 0 on
success, 1 when ``diff`` finds a regression, 2 for bad input or usage, with the
message on stderr and no traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from error_cases import (
    BASELINE_CASES,
    DATASET_CASES,
    GOOD_BASELINE,
    BaselineCase,
    DatasetCase,
    write_baseline,
)

from pytest_rag.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in process: status, stdout, stderr (argparse writes to sys.stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# -- dataset files: evaluate and validate ----------------------------------------------------
@pytest.mark.parametrize("case", DATASET_CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("command", ["evaluate", "validate"])
def test_bad_dataset_exits_2_with_the_place(tmp_path: Path, case: DatasetCase,
                                            command: str) -> None:
    path = case.write(tmp_path)
    status, out, err = run(command, str(path))
    assert (status, out) == (2, "")
    assert err == f"pytest-rag: error: {case.expected(path)}\n"


@pytest.mark.parametrize("case", [case for case in DATASET_CASES if case.allowed_by_outside_paths],
                         ids=lambda case: case.id)
@pytest.mark.parametrize("command", ["evaluate", "validate"])
def test_allow_outside_paths_accepts_the_document(tmp_path: Path, case: DatasetCase,
                                                  command: str) -> None:
    path = case.write(tmp_path)
    status, out, err = run(command, str(path), "--allow-outside-paths")
    assert (status, err) == (0, "")
    assert out.strip()


# -- usage errors -------------------------------------------------------------------------
EVALUATE_USAGE = ("usage: pytest-rag evaluate [-h] [--run RUN] [--stage STAGE]\n"
                  "                           [--format {table,json}] [--size-limits MIN MAX]\n"
                  "                           [--boundary-tolerance CHARACTERS]\n"
                  "                           [--required-metadata KEY] [--k K]\n"
                  "                           [--relevance-from-evidence]\n"
                  "                           [--max-context-tokens TOKENS]\n"
                  "                           [--abstain-phrase PHRASE] [--relevance-level N]\n"
                  "                           [--allow-outside-paths]\n"
                  "                           FILE\n")
DIFF_USAGE = ("usage: pytest-rag diff [-h] [--significance ALPHA] [--tolerance AMOUNT]\n"
              "                       [--relative-tolerance FRACTION]\n"
              "                       [--latency-tolerance 'PERCENT% + MS'] [--all]\n"
              "                       OLD NEW\n")
STAGES_SAID = ("the stages: chunking, embedding, retrieval, reranking, augmentation, "
                 "generation, end_to_end")

USAGE_CASES = [
    pytest.param([], "usage: pytest-rag [-h] COMMAND ...\n"
                 "pytest-rag: error: the following arguments are required: COMMAND\n",
                 id="no-command"),
    pytest.param(["frobnicate"], "usage: pytest-rag [-h] COMMAND ...\npytest-rag: error: "
                 "argument COMMAND: invalid choice: 'frobnicate' (choose from 'evaluate', "
                 "'metrics', 'diff', 'convert', 'validate')\n", id="unknown-command"),
    pytest.param(["evaluate"], EVALUATE_USAGE + "pytest-rag evaluate: error: the following "
                 "arguments are required: FILE\n", id="evaluate-without-file"),
    pytest.param(["evaluate", "{gold}", "--k", "0"], EVALUATE_USAGE + "pytest-rag evaluate: error: "
                 "argument --k: must be >= 1, got 0\n", id="k-zero"),
    pytest.param(["evaluate", "{gold}", "--k", "2.5"], EVALUATE_USAGE + "pytest-rag evaluate: "
                 "error: argument --k: expected a whole number, got '2.5'\n", id="k-not-whole"),
    pytest.param(["evaluate", "{gold}", "--size-limits", "5", "3"], EVALUATE_USAGE + "pytest-rag "
                 "evaluate: error: argument --size-limits: min 5 is greater than max 3\n",
                 id="size-limits-min-over-max"),
    pytest.param(["evaluate", "{gold}", "--size-limits", "5", "x"], EVALUATE_USAGE + "pytest-rag "
                 "evaluate: error: argument --size-limits: MAX: expected a whole number, got 'x'\n",
                 id="size-limits-not-whole"),
    pytest.param(["evaluate", "{gold}", "--relevance-level", "0"], EVALUATE_USAGE + "pytest-rag "
                 "evaluate: error: argument --relevance-level: must be >= 1, got 0\n",
                 id="relevance-level-zero"),
    pytest.param(["evaluate", "{gold}", "--stage", "retreival"], EVALUATE_USAGE + "pytest-rag "
                 "evaluate: error: argument --stage: unknown stage 'retreival' (did you mean "
                 "'retrieval'?); " + STAGES_SAID + "\n", id="unknown-stage"),
    pytest.param(["evaluate", "{gold}", "--format", "xml"], EVALUATE_USAGE + "pytest-rag evaluate: "
                 "error: argument --format: invalid choice: 'xml' (choose from 'table', 'json')\n",
                 id="unknown-format"),
    pytest.param(["diff", "{old}", "{old}", "--significance", "1"], DIFF_USAGE + "pytest-rag diff: "
                 "error: argument --significance: must be between 0 and 1, got '1'\n",
                 id="significance-out-of-range"),
    pytest.param(["diff", "{old}", "{old}", "--significance", "x"], DIFF_USAGE + "pytest-rag diff: "
                 "error: argument --significance: expected a number, got 'x'\n",
                 id="significance-not-a-number"),
    pytest.param(["diff", "{old}", "{old}", "--tolerance", "-1"], DIFF_USAGE + "pytest-rag diff: "
                 "error: argument --tolerance: must be a finite number >= 0, got '-1'\n",
                 id="negative-tolerance"),
    pytest.param(["diff", "{old}", "{old}", "--relative-tolerance", "nan"], DIFF_USAGE
                 + "pytest-rag diff: error: argument --relative-tolerance: must be a finite "
                 "number >= 0, got 'nan'\n", id="nan-relative-tolerance"),
]


@pytest.mark.parametrize(("argv", "message"), USAGE_CASES)
def test_usage_error_exits_2_with_usage_and_message(tmp_path: Path, argv: list[str],
                                                    message: str) -> None:
    names = {"{gold}": tmp_path / "gold.yaml", "{old}": tmp_path / "old.json"}
    names["{gold}"].write_text("queries: [{id: q1}]\n", encoding="utf-8")
    names["{old}"].write_text(GOOD_BASELINE, encoding="utf-8")
    status, out, err = run(*[str(names.get(arg, arg)) for arg in argv])
    assert (status, out) == (2, "")
    assert err == message


@pytest.mark.parametrize("k", [str(2**63), str(10**30)])
def test_a_huge_k_is_fine(tmp_path: Path, k: str) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("queries: [{id: q1, relevant: [a]}]\nrun: {q1: {retrieved_ids: [b, a]}}\n",
                    encoding="utf-8")
    status, out, err = run("evaluate", str(path), "--k", k, "--stage", "retrieval",
                           "--format", "json")
    assert (status, err) == (0, "")
    assert json.loads(out)["retrieval"]["recall_at_k"] == 1.0


# -- diff: bad baseline and report files --------------------------------------------------
@pytest.mark.parametrize("case", BASELINE_CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("side", ["old", "new"])
def test_bad_baseline_file_exits_2_naming_it(tmp_path: Path, case: BaselineCase,
                                              side: str) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(GOOD_BASELINE, encoding="utf-8")
    write_baseline(bad, case.text)
    status, out, err = run("diff", *map(str, (bad, good) if side == "old" else (good, bad)))
    assert (status, out) == (2, "")
    where = f"{case.cli_kind} {str(bad)!r}"
    assert err == f"pytest-rag: error: {case.cli.replace('{where}', where)}\n"


REPORT = {"format": "pytest-rag-report", "version": 1, "summary": {},
          "tests": {"t.py::test": {"retrieval": {"metrics": {"recall_at_k": 0.5}}}}}


@pytest.mark.parametrize(("change", "message"), [
    ({"version": 2}, "version: version 2 is newer than this pytest-rag reads (1); upgrade "
                     "pytest-rag"),
    ({"version": "1"}, "version: expected a whole number, got '1'"),
    ({"tests": None}, "tests: expected a JSON object"),
], ids=["newer-version", "version-not-a-number", "no-tests"])
def test_bad_report_file_is_named_a_report_file(tmp_path: Path, change: dict[str, object],
                                                message: str) -> None:
    good, report = tmp_path / "good.json", tmp_path / "report.json"
    good.write_text(GOOD_BASELINE, encoding="utf-8")
    report.write_text(json.dumps({**REPORT, **change}), encoding="utf-8")
    status, out, err = run("diff", str(good), str(report))
    assert (status, out) == (2, "")
    assert err == f"pytest-rag: error: report file {str(report)!r}: {message}\n"


def test_a_report_and_a_baseline_compare(tmp_path: Path) -> None:
    good, report = tmp_path / "good.json", tmp_path / "report.json"
    good.write_text(GOOD_BASELINE, encoding="utf-8")
    report.write_text(json.dumps(REPORT), encoding="utf-8")
    status, out, err = run("diff", str(good), str(report))
    assert (status, err) == (0, "")
    assert out == "no differences; 0 regressed, 0 improved\n"


def test_a_regression_exits_1(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(GOOD_BASELINE, encoding="utf-8")
    new.write_text(GOOD_BASELINE.replace("0.5", "0.25"), encoding="utf-8")
    status, out, err = run("diff", str(old), str(new))
    assert (status, err) == (1, "")
    assert out.splitlines()[-1] == "1 regressed, 0 improved"


# -- the real exit status, through a process ----------------------------------------------
def module(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_rag", *argv], capture_output=True,
                          text=True, timeout=120)


def test_python_dash_m_exits_2_on_a_bad_dataset_without_a_traceback(tmp_path: Path) -> None:
    case = next(case for case in DATASET_CASES if case.id == "python-object-tag")
    path = case.write(tmp_path)
    result = module("validate", str(path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"pytest-rag: error: {case.expected(path)}\n"


def test_python_dash_m_exits_1_on_a_regression_and_2_on_a_corrupt_baseline(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(GOOD_BASELINE, encoding="utf-8")
    new.write_text(GOOD_BASELINE.replace("0.5", "0.25"), encoding="utf-8")
    result = module("diff", str(old), str(new))
    assert (result.returncode, result.stderr) == (1, "")
    new.write_text("{", encoding="utf-8")
    result = module("diff", str(old), str(new))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"pytest-rag: error: baseline or report file {str(new)!r} is not "
                             "valid JSON (line 1, column 2: Expecting property name enclosed in "
                             "double quotes)\n")
