"""Options, markers and hypothesis profiles shared by every folder of the suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib.metadata import entry_points

import pytest
from hypothesis_profiles import register

pytest_plugins = ["pytester"]

register()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (the benchmark harness, killed and "
                          "racing writers, inner runs with pytest-xdist workers, real "
                          "framework pipelines); CI runs them")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (CI does)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


#: The autoloaded pytest plugins the suite's own pytest processes use; tests that
#: must run without one of them say so (``-p no:xdist``, ``-p no:rag``).
SUITE_PLUGINS = frozenset({"rag", "xdist", "xdist.looponfail", "hypothesispytest", "benchmark"})
#: ``-p no:NAME`` for every other installed plugin.  The integration extra brings
#: LangSmith's and anyio's, which cost 1.3 s at every start of a process: the inner
#: runs the tests start made the README's test command minutes slower, and a plugin
#: of the developer's own environment must not change what an inner run prints.
OTHER_PLUGINS = " ".join(sorted(f"-p no:{point.name}" for point in entry_points(group="pytest11")
                                if point.name not in SUITE_PLUGINS))


@pytest.fixture(scope="session", autouse=True)
def _subprocesses_load_only_the_suites_plugins() -> Iterator[None]:
    """``python -m pytest`` started by a test loads none of :data:`OTHER_PLUGINS`, unless
    the developer set ``PYTEST_ADDOPTS``: that is left as it is, since it may hold an
    option of one of those plugins (``--cov``, ``--timeout``), which blocking the
    plugin would make an error."""
    with pytest.MonkeyPatch.context() as patch:
        if OTHER_PLUGINS and not os.environ.get("PYTEST_ADDOPTS", "").strip():
            patch.setenv("PYTEST_ADDOPTS", OTHER_PLUGINS)
        yield


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, whose runs (in-process and in a subprocess) load none of
    :data:`OTHER_PLUGINS` either: it clears ``PYTEST_ADDOPTS``, then this sets only that.
    A test of a real user's environment (every installed plugin) deletes it again."""
    if OTHER_PLUGINS:
        monkeypatch.setenv("PYTEST_ADDOPTS", OTHER_PLUGINS)
    return pytester
