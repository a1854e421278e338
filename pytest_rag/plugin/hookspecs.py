"""Hooks that pytest-rag adds to pytest (implement them in a ``conftest.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..dataset.model import Dataset
    from ..registry import MetricSpec
    from ..reports.scorecard import Scorecard
    from ..stages.report import Report


def pytest_rag_register_metrics(config: pytest.Config) -> list[MetricSpec] | None:
    """Declare custom metrics: their stage, key, direction and meaning.

    Declared metrics join the registry for this run: baselines, thresholds,
    the scorecard and ``assert_metric`` treat them like built-in ones.
    Compute their values with :func:`pytest_rag_compute_metrics`.

    :param config: The pytest config.

    Example::

        from pytest_rag import Direction, MetricSpec

        def pytest_rag_register_metrics(config):
            return [MetricSpec("generation", "answer_words", "Answer Words",
                               Direction.INFO, "mean words per answer",
                               "mean |t(A)|", ("answer",), unit="tokens", high=float("inf"))]
    """


def pytest_rag_compute_metrics(
    stage: str, report: Report, dataset: Dataset
) -> Mapping[str, float | None] | None:
    """Compute custom metrics of ``stage``, after the built-in ones.

    Called each time a test evaluates a stage with the ``rag`` fixture.  Return
    ``{key: value}`` for keys declared with :func:`pytest_rag_register_metrics`
    (``None`` for not measured), or ``None`` for nothing.

    :param stage: The stage key (``"retrieval"``, ...).
    :param report: The stage's built-in report.
    :param dataset: The data it was computed from (gold and run, with the
        test's inputs applied).

    Example::

        def pytest_rag_compute_metrics(stage, report, dataset):
            if stage == "generation":
                words = [len(e.answer.split()) for e in dataset.run.values() if e.answer]
                return {"answer_words": sum(words) / len(words) if words else None}
    """


def pytest_rag_scorecard(config: pytest.Config, scorecard: Scorecard) -> None:
    """Receive the finished scorecard, once per session (on the xdist controller).

    Use it to push the numbers to a dashboard.  ``scorecard.to_json()`` is the
    ``--rag-report`` document.

    :param config: The pytest config.
    :param scorecard: Every recorded test and stage, with thresholds and
        baseline diffs.
    """
