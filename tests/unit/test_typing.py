"""The package type-checks under ``mypy --strict`` (the settings in pyproject.toml).

``py.typed`` tells users' type checkers to trust our annotations, so a wrong
one is a bug they meet in their own CI.  mypy, and the stubs of PyYAML and
tabulate, come with the ``test`` extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_type_checks_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache"), "pytest_rag"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
