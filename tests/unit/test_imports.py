"""Import boundaries: the core never imports pytest; the package imports numpy lazily."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pytest_rag


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_import_pytest_rag_does_not_import_numpy() -> None:
    assert _run("import pytest_rag, sys; print('numpy' in sys.modules)") == "False"


def test_core_never_imports_pytest() -> None:
    code = ("import sys, pytest_rag, pytest_rag.stages.evaluate, pytest_rag.dataset.loading, "
            "pytest_rag.cli, pytest_rag.reports.tables, pytest_rag.reports.drilldown, "
            "pytest_rag.reports.html, pytest_rag.reports.svg; "
            "d = pytest_rag.load_dataset; "
            "print(sorted(m for m in sys.modules if m == 'pytest' or m.startswith('_pytest')))")
    assert _run(code) == "[]"


@pytest.mark.parametrize("name", pytest_rag.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(pytest_rag, name) is not None


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pytest_rag.nope  # noqa: B018


def test_the_html_report_modules_do_not_import_numpy() -> None:
    code = ("import sys, pytest_rag.reports.drilldown, pytest_rag.reports.html, "
            "pytest_rag.reports.svg; "
            "print('numpy' in sys.modules)")
    assert _run(code) == "False"


def test_evaluate_with_json_output_does_not_import_tabulate(tmp_path: Path) -> None:
    """Tables are drawn only when a table is printed: the JSON output skips the import."""
    path = tmp_path / "gold.json"
    path.write_text('{"queries": [{"id": "q1", "relevant": ["c1"]}], '
                    '"run": {"q1": {"retrieved_ids": ["c1", "c2"]}}}', encoding="utf-8")
    code = ("import io, sys; from pytest_rag.cli import main; "
            f"status = main(['evaluate', {str(path)!r}, '--format', 'json'], out=io.StringIO()); "
            "print(status, 'tabulate' in sys.modules)")
    assert _run(code) == "0 False"
