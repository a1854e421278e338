"""Workload 8, the gate at scale: a compare whose entry changed costs what one that did not.

Every run is ``python -m pytest`` in a fresh process on a generated project
(its peak resident set read by the process itself, ``ru_maxrss``):

* **one entry**: one test, ``rag.retrieval()`` over a dataset of 10k and 100k
  queries (at scale 1; K = 10, three relevant documents a query).  Timed: a
  plain run (no baseline), ``--rag-update-baseline``, ``--rag-baseline`` with
  nothing changed, and ``--rag-baseline`` after one query's ranking changed.
  The goal: the changed compare within 1.5x of the unchanged one, and the
  peak memory of compare and update within 1.5x of the plain run's.
* **a suite**: 1,000 parametrized tests of 100 queries (at scale 1), every
  entry changed (one query of each reversed: its reciprocal rank goes from 1
  to 0.25, each mean moves by less than the default tolerance), against the
  same suite unchanged.

Each row also gives the baseline's size in bytes and lines, and the lines a
one-query change touches (``difflib`` on the two baselines).  The terminal
output of every compare is checked against the one stored in
``gate_expected.json`` (``--record-outputs``, written with the engine before
this workload's changes): identical apart from the timing line.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_harness import Row

NAME = "gate"
#: Queries of the one-entry workload at scale 1.
ENTRY_QUERIES = (10_000, 100_000)
#: Tests (of :data:`SUITE_QUERIES` queries) of the suite at scale 1.
SUITE_TESTS = 1_000
SUITE_QUERIES = 100
RATIO_GOAL = 1.5
EXPECTED = Path(__file__).resolve().parent / "gate_expected.json"

_RUNNER = """\
import resource, sys, time
import pytest
start = time.perf_counter()
code = pytest.main(sys.argv[1:])
seconds = time.perf_counter() - start
print("GATE-BENCH", int(code), seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

_ENTRY_TEST = """\
def test_retrieval(rag):
    rag.retrieval()
"""

_SUITE_TEST = """\
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
QUERIES = [f"q{{i:04d}}" for i in range({queries})]


def ranked(query, test):
    n = int(query[1:])
    ids = [f"d{{(n * 7 + j) % {docs}}}" for j in range(10)]
    if (HERE / "changed").exists() and n == test % {queries}:
        ids.reverse()  # relevant at ranks 10, 7, 4 instead of 1, 4, 7
    return ids


@pytest.mark.parametrize("test", range({tests}))
def test_retrieval(rag, test):
    rag.retrieval(retrieved_ids={{q: ranked(q, test) for q in QUERIES}})
"""


def _dataset(queries: int, *, changed: bool = False) -> dict[str, Any]:
    """Gold (three relevant documents a query) and a run of 10 ids; ``changed``
    reverses the ranking of the query in the middle."""
    docs = max(queries // 2, 50)
    gold = []
    run = {}
    for n in range(queries):
        query = f"q{n:06d}"
        gold.append({"id": query, "relevant": [f"d{(n * 7 + j * 3) % docs}" for j in range(3)]})
        ids = [f"d{(n * 7 + j) % docs}" for j in range(10)]
        if changed and n == queries // 2:
            ids.reverse()
        run[query] = {"retrieved_ids": ids}
    return {"format": "pytest-rag/v1", "params": {"k": 10}, "queries": gold, "run": run}


def _suite_dataset(queries: int) -> dict[str, Any]:
    docs = 2 * queries
    return {"format": "pytest-rag/v1", "params": {"k": 10},
            "queries": [{"id": f"q{n:04d}",
                         "relevant": [f"d{(n * 7 + j * 3) % docs}" for j in range(3)]}
                        for n in range(queries)]}


def _write(folder: Path, dataset: dict[str, Any], test: str) -> None:
    (folder / "gold.json").write_text(json.dumps(dataset), encoding="utf-8")
    (folder / "test_gate.py").write_text(test, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\nrag_dataset = gold.json\n", encoding="utf-8")


def _pytest(folder: Path, *args: str) -> tuple[float, float, str]:
    """Seconds, peak MiB and terminal output of one run (its exit status must be 0)."""
    command = [sys.executable, "-c", _RUNNER, "-q", "-p", "no:cacheprovider", *args]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False,
                          env=env)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if not last.startswith("GATE-BENCH") or last.split()[1] != "0":
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    _, _, seconds, kib = last.split()
    return float(seconds), int(kib) / 1024, done.stdout.rsplit("GATE-BENCH", 1)[0]


def _shown(output: str) -> str:
    """The terminal output without what depends on the machine (times)."""
    return re.sub(r" in [0-9.]+s( \([0-9:]+\))?", " in Ns", output)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _changed_lines(old: str, new: str) -> int:
    """Lines removed plus lines added, as a review shows them: ``git diff --numstat``,
    else ``difflib`` without its "popular line" heuristic (which the many equal rows
    of a suite would trip)."""
    if shutil.which("git"):
        with tempfile.TemporaryDirectory(prefix="rag-gate-diff-") as name:
            before, after = Path(name) / "before.json", Path(name) / "after.json"
            before.write_text(old, encoding="utf-8")
            after.write_text(new, encoding="utf-8")
            done = subprocess.run(["git", "diff", "--no-index", "--numstat", str(before),
                                   str(after)], capture_output=True, text=True, check=False)
            added, removed = done.stdout.split()[:2] if done.stdout.strip() else ("0", "0")
            return int(added) + int(removed)
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
               if tag != "equal")


def _measure(label: str, size: str, folder: Path, change: Any, repeat: int,
             outputs: dict[str, str]) -> list[Row]:
    """Rows of one workload: update, unchanged compare, changed compare."""
    plain = min(_pytest(folder)[:2] for _ in range(max(repeat, 1)))
    update = _pytest(folder, "--rag-update-baseline")
    baseline = (folder / "rag-baseline.json").read_text(encoding="utf-8")
    same = [_pytest(folder, "--rag-baseline") for _ in range(max(repeat, 1))]
    change()
    moved = [_pytest(folder, "--rag-baseline") for _ in range(max(repeat, 1))]
    _pytest(folder, "--rag-update-baseline")
    after = (folder / "rag-baseline.json").read_text(encoding="utf-8")
    unchanged_s = min(run[0] for run in same)
    changed_s = min(run[0] for run in moved)
    outputs[f"{label} {size} unchanged"] = _digest(_shown(same[0][2]))
    outputs[f"{label} {size} changed"] = _digest(_shown(moved[0][2]))
    layout = (f"baseline {len(baseline.encode()):,} bytes, {baseline.count(chr(10)):,} lines; "
              f"one changed query: {_changed_lines(baseline, after)} changed lines")
    rows = []
    for what, seconds, mib in (("update", update[0], update[1]),
                               ("compare, one query changed", changed_s,
                                max(run[1] for run in moved))):
        reference = unchanged_s if what.startswith("compare") else plain[0]
        row = Row(f"{label}: {what}", size, seconds,
                  "unchanged compare" if what.startswith("compare") else "plain run",
                  reference, goal=f"<= {RATIO_GOAL}x" if what.startswith("compare") else "-",
                  rag_mib=mib, peer_mib=plain[1])
        if what.startswith("compare"):
            row.status = "met" if changed_s <= RATIO_GOAL * unchanged_s else "not met"
        if mib > RATIO_GOAL * plain[1]:
            row.notes.append(f"{label}: {what} at {size}: peak memory {mib / plain[1]:.2f}x "
                             "the plain run's, over 1.5x")
        row.notes.append(f"{label} at {size}: {layout}")
        rows.append(row)
    return rows


def entry_rows(queries: int, repeat: int, outputs: dict[str, str]) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="rag-gate-") as name:
        folder = Path(name)
        _write(folder, _dataset(queries), _ENTRY_TEST)

        def change() -> None:
            (folder / "gold.json").write_text(json.dumps(_dataset(queries, changed=True)),
                                              encoding="utf-8")

        return _measure("gate: one entry", f"{queries:,} queries", folder, change, repeat,
                        outputs)


def suite_rows(tests: int, repeat: int, outputs: dict[str, str]) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="rag-gate-") as name:
        folder = Path(name)
        _write(folder, _suite_dataset(SUITE_QUERIES),
               _SUITE_TEST.format(queries=SUITE_QUERIES, docs=2 * SUITE_QUERIES, tests=tests))
        return _measure("gate: suite, every entry changed", f"{tests:,} tests x "
                        f"{SUITE_QUERIES} queries", folder,
                        lambda: (folder / "changed").write_text("", encoding="utf-8"), repeat,
                        outputs)


def rows(scale: float, repeat: int) -> list[Row]:
    """The one-entry rows at every size, then the suite's; outputs checked when stored."""
    outputs: dict[str, str] = {}
    result = []
    for queries in ENTRY_QUERIES:
        result.extend(entry_rows(max(int(queries * scale), 100), repeat, outputs))
    result.extend(suite_rows(max(int(SUITE_TESTS * scale), 10), repeat, outputs))
    stored = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    if os.environ.get("RAG_GATE_RECORD"):
        stored.update(outputs)
        EXPECTED.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n",
                            encoding="utf-8")
    for row in result:
        label, size = row.workload.rsplit(":", 1)[0], row.size
        runs = [key for key in outputs if key.startswith(f"{label} {size} ")]
        checked = [key for key in runs if key in stored]
        wrong = [key for key in checked if stored[key] != outputs[key]]
        if wrong:
            row.agreement = "MISMATCH: terminal output differs from the engine before"
            row.status = "disagrees"
        elif checked and len(checked) == len(runs):
            row.agreement = "agree (terminal output as the engine before)"
        else:
            row.agreement = "output not checked (none stored at this size)"
    return result


def main() -> None:  # pragma: no cover - a convenience for profiling one size
    start = time.perf_counter()
    for row in rows(float(sys.argv[1]) if len(sys.argv) > 1 else 0.1, 1):
        print(row)
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
