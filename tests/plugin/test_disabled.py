"""``-p no:rag`` turns the plugin off; installed but unused, it costs nothing visible.

The plugin's own messages start with ``pytest-rag: ``; the tests look for that
prefix, not for the bare name, which is also the folder ``git clone`` makes and
so appears in paths of a checkout's tracebacks.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

USES_RAG = """
import pytest


@pytest.mark.rag_threshold("retrieval.recall_at_k >= 0.5")
def test_uses_rag(rag):
    rag.retrieval()


def test_plain():
    pass
"""


def test_options_are_unknown_without_the_plugin(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest_subprocess("-p", "no:rag", "--rag-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*error: unrecognized arguments: --rag-baseline*"])


def test_fixtures_and_markers_are_absent_and_nothing_is_printed(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=USES_RAG)
    result = rag_pytester.runpytest_subprocess("-p", "no:rag", "-p", "no:cacheprovider",
                                               "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*fixture 'rag' not found*"])
    result.stdout.no_fnmatch_line("*RAG*")
    result.stdout.no_fnmatch_line("*pytest-rag: *")
    assert "<property" not in (rag_pytester.path / "junit.xml").read_text()
    result = rag_pytester.runpytest_subprocess("-p", "no:rag", "-p", "no:cacheprovider",
                                               "--strict-markers")
    result.stdout.fnmatch_lines(["*'rag_threshold' not found in `markers` configuration option*"])


NUMPY_PROBE = """
import sys


def test_numpy_is_not_imported():
    assert "numpy" not in sys.modules
"""
NUMPY_CONFTEST = """
import sys


def pytest_unconfigure(config):
    print("numpy imported at the end:", "numpy" in sys.modules)
"""


@pytest.mark.parametrize("args", [(), ("--rag-report=r.json", "--rag-scorecard=full")],
                         ids=["plain", "options"])
def test_unused_plugin_prints_nothing_and_does_not_import_numpy(
        pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    pytester.makepyfile(test_probe=NUMPY_PROBE)
    pytester.makeconftest(NUMPY_CONFTEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["numpy imported at the end: False"])
    result.stdout.no_fnmatch_line("*RAG scorecard*")
    if not args:
        result.stdout.no_fnmatch_line("*pytest-rag: *")


def test_symbolic_metrics_import_neither_pytest_nor_numpy() -> None:
    code = ("import sys, pytest_rag.metrics, pytest_rag.stages.checks; "
            "print(sorted(m for m in sys.modules if m in ('pytest', 'numpy') "
            "or m.startswith('_pytest')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
