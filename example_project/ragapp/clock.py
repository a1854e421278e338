"""The pipeline's stopwatch: real time, or a fixed tick per reading (``RAGAPP_CLOCK=ticks``).

The example measures its latencies for real: that is what its latency
thresholds and baseline show.  Its reproducibility check in pytest-rag's own
suite (``tests/plugin/test_example_baseline.py``) runs it with
``RAGAPP_CLOCK=ticks``, where every reading of the clock moves it on by
0.01 ms, so what that check decides cannot depend on how busy the machine is.
"""

from __future__ import annotations

import itertools
import os
import time

#: Seconds a reading of the ticking clock adds.
TICK = 1e-5
_readings = itertools.count()


def now() -> float:
    """Seconds on a monotonic clock (the ticking one under ``RAGAPP_CLOCK=ticks``)."""
    if os.environ.get("RAGAPP_CLOCK") == "ticks":
        return next(_readings) * TICK
    return time.perf_counter()


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a reading of :func:`now`)."""
    return (now() - start) * 1000.0
