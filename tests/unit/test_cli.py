"""The command line: output formats, exit statuses and messages."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rag.cli import main
from pytest_rag.registry import REGISTRY, STAGES

SMALL = {
    "documents": [{"id": "d", "text": "Refunds take 30 days. Shipping takes 2 days."}],
    "chunks": [{"id": "c0", "start": 0, "end": 21}, {"id": "c1", "start": 22, "end": 44}],
    "queries": [{"id": "q1", "relevant": ["c0"],
                 "expected_evidence": [{"start": 0, "end": 21}]}],
    "run": {"q1": {"retrieved_ids": ["c1", "c0"]}},
}


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL), encoding="utf-8")
    return path


def test_evaluate_json_is_one_object_with_every_stage_and_key(small_file: Path) -> None:
    status, out, err = run_cli("evaluate", str(small_file), "--format", "json", "--k", "1")
    assert status == 0, err
    result = json.loads(out)
    assert list(result) == list(STAGES)
    for stage, values in result.items():
        assert sorted(values) == sorted(s.key for s in REGISTRY.values() if s.stage == stage)
    assert result["retrieval"]["precision_at_k"] == 0.0
    assert result["retrieval"]["mrr_at_k"] == 0.0
    assert result["retrieval"]["token_recall"] == 0.0
    assert result["embedding"]["zero_norm_rate"] is None


def test_evaluate_k_defaults_to_five(small_file: Path) -> None:
    status, out, _ = run_cli("evaluate", str(small_file), "--format", "json",
                             "--stage", "retrieval")
    assert status == 0
    result = json.loads(out)
    assert list(result) == ["retrieval"]
    assert result["retrieval"]["precision_at_k"] == 1 / 5
    assert result["retrieval"]["mrr_at_k"] == 1 / 2


def test_evaluate_table_shows_values_and_reasons(small_file: Path) -> None:
    status, out, _ = run_cli("evaluate", str(small_file), "--stage", "retrieval")
    assert status == 0
    assert "retrieval (k=5)" in out
    assert "recall_at_k" in out and "1.000" in out and "1.0000" not in out
    assert "not measured" in out and "needs retrieval_latency_ms" in out


def test_evaluate_table_names_stages_without_data(small_file: Path) -> None:
    status, out, _ = run_cli("evaluate", str(small_file))
    assert status == 0
    assert "not measured (no data):" in out and "embedding" in out.splitlines()[-1]


def test_bad_input_exits_2_with_the_place_and_no_traceback(tmp_path: Path) -> None:
    bad = dict(SMALL, queries=[{"id": "q1", "expected_evidnce": []}])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    status, out, err = run_cli("evaluate", str(path))
    assert status == 2
    assert out == ""
    assert err == (f"pytest-rag: error: {path}: queries[0].expected_evidnce (query 'q1', "
                   "line 1): unknown key (did you mean 'expected_evidence'?)\n")


def test_missing_file_exits_2(tmp_path: Path) -> None:
    status, _, err = run_cli("evaluate", str(tmp_path / "none.yaml"))
    assert status == 2
    assert err.endswith("none.yaml: file not found\n")


def test_unknown_chunk_in_top_k_is_an_error_for_token_metrics(tmp_path: Path) -> None:
    data = dict(SMALL, run={"q1": {"retrieved_ids": ["c9", "c0"]}})
    path = tmp_path / "unknown.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    status, _, err = run_cli("evaluate", str(path), "--stage", "retrieval")
    assert status == 2
    assert "run.q1.retrieved_ids[0]: unknown chunk 'c9'" in err


@pytest.mark.parametrize("argv", [["evaluate"], ["evaluate", "x.yaml", "--k", "0"],
                                  ["evaluate", "x.yaml", "--stage", "nope"], ["frobnicate"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage: pytest-rag" in capsys.readouterr().err


def test_metrics_lists_the_registry() -> None:
    status, out, _ = run_cli("metrics", "--stage", "generation")
    assert status == 0
    rows = [line.split() for line in out.splitlines()[2:]]
    assert {row[0] for row in rows} == {"generation"}
    assert [row[1] for row in rows] == [s.key for s in REGISTRY.values() if s.stage == "generation"]


def test_metrics_json_carries_direction_and_needs() -> None:
    status, out, _ = run_cli("metrics", "--format", "json")
    rows = json.loads(out)
    assert status == 0 and len(rows) == len(REGISTRY)
    recall = next(r for r in rows if r["stage"] == "retrieval" and r["key"] == "recall_at_k")
    assert recall["direction"] == "higher" and recall["needs"] == ["retrieved_ids", "relevant"]


def test_validate_summarises_a_valid_file(small_file: Path) -> None:
    status, out, _ = run_cli("validate", str(small_file))
    assert status == 0
    assert out == (f"{small_file}: valid pytest-rag/v1: 1 documents, 2 chunks, 1 queries, "
                   "1 run entries\n")


def test_python_dash_m_and_console_script_agree(small_file: Path) -> None:
    args = ["evaluate", str(small_file), "--format", "json"]
    module = subprocess.run([sys.executable, "-m", "pytest_rag", *args],
                            capture_output=True, text=True, check=True)
    assert json.loads(module.stdout)["retrieval"]["recall_at_k"] == 1.0
    broken = subprocess.run([sys.executable, "-m", "pytest_rag", "evaluate", "/no/such.yaml"],
                            capture_output=True, text=True)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr


def test_main_keeps_what_a_command_built_when_asked(small_file: Path) -> None:
    from pytest_rag import Dataset

    kept: list[object] = []
    status = main(["evaluate", str(small_file), "--format", "json"], out=io.StringIO(),
                  err=io.StringIO(), keep=kept)
    assert status == 0 and isinstance(kept[0], Dataset) and len(kept) == 2
    assert main(["validate", str(small_file)], out=io.StringIO(), keep=kept) == 0
    assert isinstance(kept[2], Dataset)


@pytest.mark.parametrize("command", [["-m", "pytest_rag"],
                                     ["-c", "import pytest_rag.cli as c; c.run()"]])
def test_the_process_ends_with_the_status_and_all_its_output(small_file: Path, tmp_path: Path,
                                                             command: list[str]) -> None:
    """:func:`run` ends the process without a teardown: its output, written to a file
    (fully buffered), is complete, and an error still ends with status 2 and its message."""
    out_path, err_path = tmp_path / "out.txt", tmp_path / "err.txt"
    with out_path.open("w") as out, err_path.open("w") as err:
        status = subprocess.run([sys.executable, *command, "validate", str(small_file)],
                                stdout=out, stderr=err).returncode
    assert status == 0
    assert out_path.read_text().endswith("1 queries, 1 run entries\n")
    with out_path.open("w") as out, err_path.open("w") as err:
        status = subprocess.run([sys.executable, *command, "evaluate", str(tmp_path / "no.json")],
                                stdout=out, stderr=err).returncode
    assert status == 2
    assert err_path.read_text() == f"pytest-rag: error: {tmp_path / 'no.json'}: file not found\n"


def test_a_closed_pipe_ends_quietly_with_status_141(small_file: Path) -> None:
    """``pytest-rag evaluate F | head -1``: the reader goes away; no traceback, and not
    exit 1, which means a regression."""
    process = subprocess.Popen([sys.executable, "-m", "pytest_rag", "metrics"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first line
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141, err
    assert err == "", err


def test_ctrl_c_ends_quietly_with_status_130(small_file: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_rag.cli as cli

    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_evaluate", interrupted)
    status, _out, err = run_cli("evaluate", str(small_file))
    assert status == 130
    assert err == "pytest-rag: interrupted\n"


def test_running_out_of_memory_is_an_error_not_a_traceback(
        small_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_rag.cli as cli

    def too_big(*args: object) -> int:
        raise MemoryError

    monkeypatch.setattr(cli, "_evaluate", too_big)
    status, _out, err = run_cli("evaluate", str(small_file))
    assert status == 2
    assert err == ("pytest-rag: error: out of memory: the input is too large for the memory "
                   "available\n")


def test_every_evaluator_setting_is_a_flag_of_evaluate_and_a_params_key() -> None:
    """A new setting cannot be forgotten on either side: the same data gives the same
    numbers from pytest, from the command line and from the file's params."""
    import dataclasses

    from pytest_rag.cli import _parser
    from pytest_rag.dataset.model import Params
    from pytest_rag.dataset.parser import PARAM_KEYS
    from pytest_rag.stages.evaluate import evaluator_settings

    settings = set(evaluator_settings())
    assert settings == {"k", "relevance_from_evidence", "size_limits", "boundary_tolerance",
                        "required_metadata", "max_context_tokens", "abstain_phrases"}
    evaluate = _parser()._subparsers._group_actions[0].choices["evaluate"]  # type: ignore[union-attr]
    flags = {action.dest for action in evaluate._actions}
    assert settings <= flags
    assert settings <= set(PARAM_KEYS)
    assert settings <= {field.name for field in dataclasses.fields(Params)}


def _evidence_file(tmp_path: Path, params: dict[str, object]) -> Path:
    data = {"params": params,
            "documents": [{"id": "d", "text": "alpha beta gamma delta epsilon zeta"}],
            "chunks": [{"id": "c0", "doc_id": "d", "start": 0, "end": 16},
                       {"id": "c1", "doc_id": "d", "start": 17, "end": 35}],
            "queries": [{"id": "q1", "expected_evidence": [{"doc_id": "d", "start": 0,
                                                           "end": 10}]}],
            "run": {"q1": {"retrieved_ids": ["c1", "c0"]}}}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_relevance_from_evidence_from_the_flag_and_from_params(tmp_path: Path) -> None:
    plain = json.loads(run_cli("evaluate", str(_evidence_file(tmp_path, {})), "--format",
                               "json")[1])
    assert plain["retrieval"]["recall_at_k"] is None  # needs relevant
    flag = json.loads(run_cli("evaluate", str(_evidence_file(tmp_path, {})), "--format", "json",
                              "--relevance-from-evidence")[1])
    params = json.loads(run_cli("evaluate", str(_evidence_file(
        tmp_path, {"relevance_from_evidence": True})), "--format", "json")[1])
    assert flag["retrieval"]["recall_at_k"] == 1.0
    assert flag == params
    # The Python API and the plugin's ini option give the same numbers.
    from pytest_rag import load_dataset
    from pytest_rag.stages.evaluate import evaluate_dataset

    reports = evaluate_dataset(load_dataset(_evidence_file(tmp_path, {})),
                               relevance_from_evidence=True)
    assert reports["retrieval"].values["recall_at_k"] == flag["retrieval"]["recall_at_k"]


def test_settings_flags_of_evaluate(tmp_path: Path, small_file: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = run_cli("evaluate", str(small_file), "--format", "json",
                                "--size-limits", "1", "3", "--max-context-tokens", "2",
                                "--required-metadata", "source", "--boundary-tolerance", "1",
                                "--abstain-phrase", "no idea")
    assert status == 0, err
    status, _out, err = run_cli("evaluate", str(small_file), "--size-limits", "5", "3")
    # Refused while parsing the flags, by the one setting validation.
    assert status == 2 and capsys.readouterr().err.endswith(
        "pytest-rag evaluate: error: argument --size-limits: min 5 is greater than max 3\n")


def test_settings_print_one_way_in_every_output(small_file: Path) -> None:
    """``size_limits`` printed as ``(1, 3)`` from the command line and ``[1, 3]`` in the
    scorecard; one rule now (JSON notation), from one module."""
    from pytest_rag.formatting import settings_text

    status, out, err = run_cli("evaluate", str(small_file), "--size-limits", "1", "3",
                               "--abstain-phrase", "no idea")
    assert status == 0, err
    assert "chunking (size_limits=[1, 3], boundary_tolerance=0)" in out
    assert settings_text({"size_limits": (1, 3), "abstain_phrases": ("no idea",),
                          "k": 5, "x": None}) == \
        'size_limits=[1, 3], abstain_phrases=["no idea"], k=5'


@pytest.mark.parametrize("flag", ["--k", "--max-context-tokens", "--boundary-tolerance",
                                  "--relevance-level"])
def test_a_blank_setting_is_refused_not_taken_as_the_default(
        small_file: Path, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--k "$K"`` with ``K`` unset must not evaluate at the default K without a word."""
    assert main(["evaluate", str(small_file), flag, ""]) == 2
    assert f"argument {flag}: expected a value, got ''" in capsys.readouterr().err
