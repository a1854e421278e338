"""Augmentation: what reaches the prompt, under the word budget."""

from __future__ import annotations

import pytest

from pytest_rag import assert_metric
from support import BOTH, Bench

#: dataset -> (context recall, context sufficiency) it must reach.
FLOORS = {"chroma": (0.8, 0.75), "clapnq": (0.9, 0.85)}


@pytest.mark.parametrize("bench", BOTH, indirect=True)
def test_context_holds_the_evidence(bench: Bench, rag) -> None:
    report = rag.augmentation(chunks=bench.chunk_records(),
                              context_ids=bench.run(lambda t: t.context_ids))
    recall, sufficient = FLOORS[bench.name]
    assert_metric(report.context_recall >= recall)
    assert_metric(report.context_sufficient >= sufficient)
    assert_metric(report.evidence_edge_placement >= 0.85)  # best chunks first and last
    # budget_compliant and duplicate_ratio are gated for every test in pytest.ini.
