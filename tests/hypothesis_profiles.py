"""How many examples the property tests draw: one budget for the whole suite.

Three hypothesis profiles, registered by ``tests/conftest.py`` before any test
module is imported:

- ``fast`` (the default): derandomized (a fixed seed: every run draws the same
  examples), no deadline, no example database; a fifth of each test's full
  example count.  This is what the README's test command runs.
- ``ci``: the same, with each test's full count.  CI runs every property test
  this way: ``pytest tests -m hypothesis --hypothesis-profile=ci``.
- ``deep``: random, with the example database and shrinking, and at least
  100,000 examples over ``tests/fuzz`` (``fuzz_strategies.examples``);
  ``PYTEST_RAG_DEEP_SCALE=0.25`` runs a proportionally smaller one.

A test with a fixed count writes ``@settings(max_examples=budget(300))``: 300
under ``ci`` and ``deep``, 60 under ``fast``.  Choose a profile with
``--hypothesis-profile=NAME`` on any path below ``tests/``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: The share of each test's full example count that the ``fast`` profile draws.
FAST_SHARE = 0.2
#: ``max_examples`` of the ``ci`` profile: the unit of ``fuzz_strategies.examples``.
FULL = 100
#: Sum of the weights given to ``fuzz_strategies.examples()`` in tests/fuzz.
FUZZ_TOTAL_WEIGHT = 25.5
#: Examples asked for over tests/fuzz in the deep profile: 5% above the
#: 100,000 the deep run must reach, because a test whose strategy runs out of
#: distinct examples stops early (one such run reached 98,863 of 100,000).
DEEP_EXAMPLES = 105_000

SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                HealthCheck.large_base_example]


def register() -> None:
    """Register the three profiles and load ``fast`` unless one was chosen."""
    steady = {"derandomize": True, "deadline": None, "database": None,
              "suppress_health_check": SLOW_IS_FINE}
    settings.register_profile("fast", max_examples=round(FULL * FAST_SHARE), **steady)
    settings.register_profile("ci", max_examples=FULL, **steady)
    scale = float(os.environ.get("PYTEST_RAG_DEEP_SCALE", "1"))
    settings.register_profile(
        "deep", max_examples=max(1, round(DEEP_EXAMPLES / FUZZ_TOTAL_WEIGHT * scale)),
        derandomize=False, deadline=None, suppress_health_check=SLOW_IS_FINE)
    # hypothesis's plugin loads the profile named by --hypothesis-profile in
    # its pytest_configure, after this runs: it replaces ``fast`` then.
    if settings.get_current_profile_name() == "default":
        settings.load_profile("fast")


def budget(full: int) -> int:
    """``full`` examples under ``ci`` and ``deep``; ``FAST_SHARE`` of it under ``fast``."""
    if settings.get_current_profile_name() == "fast":
        return max(1, round(full * FAST_SHARE))
    return full
