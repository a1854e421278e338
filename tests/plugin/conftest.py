from __future__ import annotations

import pytest

import pytest_rag.dataset.loading

# Import the core once in this process.  In-process ``runpytest`` removes the
# modules an inner run imported for the first time; re-importing PyYAML after
# that pairs its C parser with new node classes and breaks every later load.
# The same holds for hypothesis, whose plugin imports it at the end of every
# inner run: importing (and assertion-rewriting) it again costs a second a run.
import pytest_rag.dataset.safe_yaml
import pytest_rag.stages.evaluate  # noqa: F401

try:
    import hypothesis.internal.observability  # noqa: F401
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass

from ragproject import GOLD, INI, TEST_RAG

XDIST_ENVIRONMENT = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``; inner runs never think they are xdist workers of this run."""
    for name in XDIST_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return pytester


@pytest.fixture
def rag_pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with ``gold.yaml``, ``pytest.ini`` naming it, and ``test_rag.py``."""
    pytester.makefile(".yaml", gold=GOLD)
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(test_rag=TEST_RAG)
    return pytester
