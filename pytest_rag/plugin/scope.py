"""What a run covered: the tests it collected and selected.

A baseline entry whose test was not collected is only provably stale when the
run collected everything its arguments name: no selection option, no
deselected test, no collection error.  With pytest-xdist the controller does
not collect; the workers tell it what they collected and deselected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..compare.baseline import Baseline

__all__ = ["RunScope", "ScopePlugin"]

#: Set in an xdist worker's ``workeroutput`` when it deselected tests.
PARTIAL = "rag_partial"


class RunScope:
    """The tests a run collected, and whether it left any out."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.collected: set[str] = set()
        self.order: list[str] = []  # node ids in collection order
        self.partial = bool(config.option.keyword or config.option.markexpr)
        self.collection_errors = False

    def in_scope(self, nodeid: str) -> bool:
        """Whether the paths this run collected from cover the test ``nodeid``.

        Those are the path arguments; without any, the ini's ``testpaths`` (from the
        rootdir) or the folder pytest was started in: ``cd tests/retrieval && pytest``
        covers ``tests/retrieval`` only.  Node id arguments (``file.py::test``) and
        package names (``--pyargs``) cover nothing here.
        """
        args = self.config.args
        path = (self.config.rootpath / nodeid.split("::", 1)[0]).resolve()
        for arg in args:
            if "::" in arg:
                continue
            target = (self.config.invocation_params.dir / arg).resolve()
            if target == path or target in path.parents:
                return True
        return False

    def selection(self) -> str | None:
        """The option by which this run left tests out of collection or selection, if any.

        A test that was not collected is only provably gone when nothing but the
        file arguments (see :meth:`in_scope`) narrowed the run.
        """
        option = self.config.option
        for flag, dest in (("--lf", "lf"), ("--sw", "stepwise"), ("--ignore", "ignore"),
                           ("--ignore-glob", "ignore_glob"), ("--deselect", "deselect"),
                           ("-k", "keyword"), ("-m", "markexpr")):
            if getattr(option, dest, None):
                return flag
        return "deselected tests" if self.partial else None

    def stale_entries(self, baseline: Baseline | None) -> list[str] | None:
        """Baseline entries of tests that no longer exist; ``None`` when a run can't tell."""
        if baseline is None or self.selection() or self.collection_errors:
            return None
        return sorted(nodeid for nodeid in baseline.tests
                      if nodeid not in self.collected and self.in_scope(nodeid))


class ScopePlugin:
    """Follows collection and selection into the run's :class:`RunScope`."""

    def __init__(self, scope: RunScope) -> None:
        self.scope = scope

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.scope.collected.update(item.nodeid for item in session.items)
        self.scope.order.extend(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.scope.order:  # every worker collects the same tests in the same order
            self.scope.order.extend(ids)
        self.scope.collected.update(ids)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.scope.partial = True
            output = getattr(self.scope.config, "workeroutput", None)
            if output is not None:  # an xdist worker; the controller does not collect: tell it
                output[PARTIAL] = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if getattr(node, "workeroutput", {}).get(PARTIAL):
            self.scope.partial = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.scope.collection_errors = True
