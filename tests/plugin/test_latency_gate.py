"""The latency default: noise of a busy machine passes, a real slowdown fails.

The latencies are data, not timings taken while the test runs, so the outcome
never depends on how fast or how busy this machine is.  They are the numbers
``tests/benchmarks/latency_on_a_busy_core.py`` measured for a stage of 40
queries of about 4 ms each (3.5 ms of waiting, 0.5 ms of Python): recorded on
an idle core, p50 4.10 ms and p95 4.15 ms; on the same core kept busy by
another process, up to 1.8x that (p95 7.65 ms); made 5x slower, above 20 ms.
"""

from __future__ import annotations

import pytest

STAGE = """
QUERIES = [f"q{{i}}" for i in range(40)]


def test_stage(rag):
    # 40 latencies from {low} to {high} ms, evenly spread.
    latency = {{q: {low} + ({high} - {low}) * i / 39 for i, q in enumerate(QUERIES)}}
    rag.retrieval(retrieved_ids={{q: ["c1"] for q in QUERIES}},
                  relevant={{q: {{"c1": 1}} for q in QUERIES}}, retrieval_latency_ms=latency)
"""

IDLE = {"low": 4.05, "high": 4.16}


def _stage(pytester: pytest.Pytester, low: float, high: float) -> None:
    pytester.makepyfile(test_stage=STAGE.format(low=low, high=high))


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> pytest.Pytester:
    _stage(pytester, **IDLE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline")
    assert result.ret == 0, result.stdout.str()
    return pytester


@pytest.mark.parametrize("busy", [(4.10, 4.22), (4.2, 7.65), (5.0, 8.3)],
                         ids=["hardly-busy", "busy-1.8x", "busy-2x"])
def test_busy_machine_noise_passes_by_default(recorded: pytest.Pytester,
                                             busy: tuple[float, float]) -> None:
    _stage(recorded, *busy)
    result = recorded.runpytest("-p", "no:cacheprovider", "--rag-baseline")
    assert result.ret == 0, result.stdout.str()


def test_busy_machine_noise_fails_a_ten_percent_relative_tolerance(
        recorded: pytest.Pytester) -> None:
    _stage(recorded, 4.2, 7.65)
    result = recorded.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                "-o", "rag_latency_tolerance=10%")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*p95_latency_ms*REGRESSED*"])


def test_a_five_times_slower_stage_fails(recorded: pytest.Pytester) -> None:
    _stage(recorded, 20.25, 20.8)
    result = recorded.runpytest("-p", "no:cacheprovider", "--rag-baseline")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*p50_latency_ms*REGRESSED*"])
