"""The latency default: unchanged code passes on a busy machine, a real slowdown fails.

A stage of 40 queries takes about 4 ms per query: 3.5 ms of waiting (a network
call, a database) and about 0.5 ms of Python work.  Its baseline is recorded on
an idle core, as on a developer's machine; then 8 unchanged runs go on the same
core while another process keeps it busy, as on a shared CI runner, and must
pass.  The same stage made 5x slower (20 ms per query) must fail.  Every run is
a separate pytest process pinned to one core, so the load is the same for each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ragproject import FEWER_PLUGINS

STAGE = """
import time

QUERIES = [f"q{{i}}" for i in range(40)]


def work(scale):
    time.sleep(0.0035 * scale)
    total = 0
    for _ in range({rounds} * scale):   # about 0.5 ms of Python on an idle core
        total += sum(range(1000))
    return total


def test_stage(rag):
    latency = {{}}
    for query in QUERIES:
        start = time.perf_counter()
        work({scale})
        latency[query] = (time.perf_counter() - start) * 1000
    rag.retrieval(retrieved_ids={{q: ["c1"] for q in QUERIES}},
                  relevant={{q: {{"c1": 1}} for q in QUERIES}}, retrieval_latency_ms=latency)
"""

UNCHANGED_RUNS = 8

needs_affinity = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                    reason="pinning to one core needs os.sched_setaffinity")


def _rounds_per_millisecond() -> int:
    """How many ``sum(range(1000))`` take 1 ms here, measured on an idle core."""
    rounds = 50
    while True:
        start = time.perf_counter()
        for _ in range(rounds):
            sum(range(1000))
        took = time.perf_counter() - start
        if took > 0.005:
            return max(1, round(rounds * 0.001 / took))
        rounds *= 2


@pytest.fixture
def one_core() -> Callable[[], None]:
    core = min(os.sched_getaffinity(0))
    return lambda: os.sched_setaffinity(0, {core})


@pytest.fixture
def busy(one_core: Callable[[], None]) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                        preexec_fn=one_core))
        return started[-1]

    yield start
    for process in started:
        process.kill()
        process.wait()


def _pytest(folder: Path, pin: Callable[[], None], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           *FEWER_PLUGINS, *args], cwd=folder, capture_output=True, text=True,
                          preexec_fn=pin, timeout=120)


@needs_affinity
def test_unchanged_runs_on_a_busy_core_pass_and_a_5x_slowdown_fails(
        pytester: pytest.Pytester, one_core: Callable[[], None],
        busy: Callable[[], subprocess.Popen[bytes]]) -> None:
    rounds = max(1, _rounds_per_millisecond() // 2)
    pytester.makepyfile(test_stage=STAGE.format(rounds=rounds, scale=1))
    recorded = _pytest(pytester.path, one_core, "--rag-update-baseline")
    assert recorded.returncode == 0, recorded.stdout
    busy()
    for run in range(UNCHANGED_RUNS):
        result = _pytest(pytester.path, one_core, "--rag-baseline", "--rag-scorecard=full")
        assert result.returncode == 0, f"unchanged run {run + 1} failed:\n{result.stdout}"
    pytester.makepyfile(test_stage=STAGE.format(rounds=rounds, scale=5))
    result = _pytest(pytester.path, one_core, "--rag-baseline")
    assert result.returncode == 1, result.stdout
    assert "p50_latency_ms" in result.stdout and "REGRESSED" in result.stdout
