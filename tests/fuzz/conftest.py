"""The fuzz folder's example budget.

The profiles (``fast`` by default, ``ci``, ``deep``) are registered for the
whole suite by ``tests/conftest.py`` (see ``hypothesis_profiles``).  Each fuzz
test asks for ``examples(weight)`` (``fuzz_strategies.examples``): ``weight``
times the profile's ``max_examples``.  The weights add up to
``FUZZ_TOTAL_WEIGHT``, so the folder runs about 510 examples under ``fast``,
2,550 under ``ci`` and at least 100,000 under ``deep``::

    pytest tests/fuzz -p no:cacheprovider --hypothesis-profile=deep

``PYTEST_RAG_DEEP_SCALE=0.25`` runs a proportionally smaller deep run.  In
``fast`` and ``ci`` a failure is reported as found, not shrunk
(``PYTEST_RAG_SHRINK=1`` shrinks it).
"""
