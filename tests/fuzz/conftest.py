"""Hypothesis profiles of the fuzz tests.

- ``ci`` (the default under pytest): derandomized (a fixed seed: every run
  draws the same examples), no deadline, no example database, 100 examples per
  unit of weight.  Each fuzz test asks for ``examples(weight)``
  (``fuzz_strategies.examples``); the weights add up to ``TOTAL_WEIGHT``, so
  the folder runs about 2,550 examples, about a minute on two cores
  (``pytest tests/fuzz -n 2``).  In CI a failure is reported as found, not
  shrunk (``PYTEST_RAG_SHRINK=1`` shrinks it).
- ``deep``: random (not derandomized), with the example database and
  shrinking, at least 100,000 examples over the folder (``DEEP_EXAMPLES``)::

      pytest tests/fuzz -p no:cacheprovider --hypothesis-profile=deep

  ``PYTEST_RAG_DEEP_SCALE=0.25`` runs a proportionally smaller deep run.

How the option is honoured: hypothesis's pytest plugin loads the profile named
by ``--hypothesis-profile`` in its ``pytest_configure``, which runs after the
conftest files of the paths given on the command line are imported, and
before the test modules are (their ``examples(weight)`` read the profile then).
So this file registers both profiles and loads ``ci`` only while no profile
has been chosen (the current one is still hypothesis's ``default``); the
plugin then replaces it by the one asked for.  Give the option together with
the ``tests/fuzz`` path, as above: with ``pytest tests --hypothesis-profile=deep``
the plugin looks the name up before pytest has imported this file.

Loading ``ci`` is global, like any profile: other folders that run in the
same session (``pytest tests``) are also derandomized, without deadline or
database.  Their example counts do not change: ``max_examples`` stays
hypothesis's default of 100.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: Sum of the weights given to ``examples()`` in this folder.
TOTAL_WEIGHT = 25.5
#: Examples asked for over the whole folder in the deep profile: 5% above the
#: 100,000 the deep run must reach, because a test whose strategy runs out of
#: distinct examples stops early (one such run reached 98,863 of 100,000).
DEEP_EXAMPLES = 105_000

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                 HealthCheck.large_base_example]

settings.register_profile(
    "ci", max_examples=100, derandomize=True, deadline=None, database=None,
    suppress_health_check=_SLOW_IS_FINE,
)
settings.register_profile(
    "deep",
    max_examples=max(1, round(DEEP_EXAMPLES / TOTAL_WEIGHT
                              * float(os.environ.get("PYTEST_RAG_DEEP_SCALE", "1")))),
    derandomize=False, deadline=None, suppress_health_check=_SLOW_IS_FINE,
)

if settings.get_current_profile_name() == "default":
    settings.load_profile("ci")
