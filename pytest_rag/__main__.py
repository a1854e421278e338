"""``python -m pytest_rag``: the same command line as ``pytest-rag``."""

from pytest_rag.cli import run

run()
