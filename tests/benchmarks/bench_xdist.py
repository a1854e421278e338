"""Workload 10, pytest-xdist: a big gated suite runs faster on two workers than on one process.

At scale 1: 200 parametrized tests of 5,000 queries each (``bench_gate``'s suite:
one retrieval call a test, K = 10, three relevant documents a query), a
baseline recorded once, untimed.  Timed: ``--rag-baseline`` (nothing changed)
with ``-n 0`` and with ``-n 2``, each a fresh ``python -m pytest`` process (its
wall time and peak resident set measured inside it, as ``bench_gate`` does;
with ``-n 2`` the peak is the controller's), the two sides interleaved so that
a burst of load from a shared machine does not land on one side only; the best
of ``repeat`` runs per side.  The goal: ``-n 2`` faster than ``-n 0``.  The
outputs are checked alike: both sides pass every test and print the same
``pytest-rag:`` lines.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_gate import _SUITE_TEST, _pytest, _suite_dataset, _write  # noqa: E402
from bench_harness import Row  # noqa: E402

NAME = "xdist"
TESTS = 200
QUERIES = 5_000
WORKERS = "2"


def _rag_lines(output: str) -> list[str]:
    """What pytest-rag said at the end of the run (the same with and without xdist)."""
    return [line for line in output.splitlines() if line.startswith("pytest-rag:")]


def rows(scale: float, repeat: int) -> list[Row]:
    tests = max(int(TESTS * scale), 4)
    size = f"{tests:,} tests x {QUERIES:,} queries"
    with tempfile.TemporaryDirectory(prefix="rag-xdist-") as name:
        folder = Path(name)
        _write(folder, _suite_dataset(QUERIES),
               _SUITE_TEST.format(queries=QUERIES, docs=2 * QUERIES, tests=tests))
        _pytest(folder, "--rag-update-baseline")
        single, double = [], []
        for _ in range(max(repeat, 1)):  # interleaved: -n 0, -n 2, -n 0, ...
            single.append(_pytest(folder, "--rag-baseline", "-p", "xdist", "-n", "0"))
            double.append(_pytest(folder, "--rag-baseline", "-p", "xdist", "-n", WORKERS))
    best_single = min(run[0] for run in single)
    best_double = min(run[0] for run in double)
    passed = f"{tests} passed"
    same = (all(passed in run[2] for run in single + double)
            and _rag_lines(single[0][2]) == _rag_lines(double[0][2]))
    row = Row(f"{NAME}: compare, -n {WORKERS}", size, best_double, "-n 0", best_single,
              goal="< 1 (faster on 2 workers)",
              agreement=("agree (every test passed on both sides, the same pytest-rag lines)"
                         if same else "MISMATCH: the two sides' outcomes or pytest-rag "
                                      "lines differ"),
              rag_mib=max(run[1] for run in double), peer_mib=max(run[1] for run in single))
    row.status = "disagrees" if not same else "met" if best_double < best_single else "not met"
    row.notes.append(f"{size}: -n 0 runs {', '.join(f'{run[0]:.2f}' for run in single)} s; "
                     f"-n {WORKERS} runs {', '.join(f'{run[0]:.2f}' for run in double)} s "
                     "(interleaved)")
    return [row]


if __name__ == "__main__":
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
    for found in rows(scale, int(sys.argv[2]) if len(sys.argv) > 2 else 1):
        print(found, found.notes)
