"""The baseline layout through pytest: old files are read and rewritten by the next
update, and an update never writes a file its reader would refuse."""

from __future__ import annotations

import json

import pytest
from ragproject import BASELINE, WORSE, set_inputs

from pytest_rag.compare import baseline as baseline_module
from pytest_rag.compare.baseline import Baseline

RUN = ("-p", "no:cacheprovider")


def _as_version_1(pytester: pytest.Pytester) -> dict[str, object]:
    """Rewrite the baseline in the layout of version 1 (one line per query per metric)."""
    path = pytester.path / BASELINE
    tests = Baseline.load(path).tests
    path.write_text(json.dumps({"format": "pytest-rag-baseline", "version": 1, "tests": tests},
                               indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return dict(tests)


def test_a_version_1_baseline_gates_and_the_next_update_rewrites_it(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    tests = _as_version_1(rag_pytester)
    rag_pytester.runpytest(*RUN, "--rag-baseline").assert_outcomes(passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*RUN, "--rag-baseline")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*recall_at_k*REGRESSED*"])
    (rag_pytester.path / "inputs.json").unlink()
    result = rag_pytester.runpytest(*RUN, "--rag-update-baseline")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*baseline written to*"])
    data = json.loads((rag_pytester.path / BASELINE).read_text(encoding="utf-8"))
    assert data["version"] == 2
    assert Baseline.load(rag_pytester.path / BASELINE).tests == tests


def test_an_update_over_the_readers_limit_keeps_the_old_file(
        rag_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    rag_pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    path = rag_pytester.path / BASELINE
    kept = path.read_bytes()
    # The reader accepts the file as it is; a second test's entry would take it over.
    monkeypatch.setattr(baseline_module, "MAX_FILE_BYTES", len(kept) + 10)
    rag_pytester.makepyfile(test_more="def test_more(rag):\n    rag.retrieval()\n")
    result = rag_pytester.runpytest(*RUN, "--rag-update-baseline")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines([(f"*baseline file '{path}' not written: it would be * bytes, "
                                 "more than the * bytes * the old file is kept*")])
    assert "Traceback" not in result.stdout.str()
    assert path.read_bytes() == kept
