"""Two ``--rag-update-baseline`` runs at once (``-k a`` and ``-k b``) both keep their update.

Each run read the baseline when it started and wrote it when it ended, so the
second writer put back the first one's old entries: one update was lost while
both said "baseline written".  Updates now take turns and apply their changes to
the file as it is when their turn comes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = """
import json
import pathlib
import time

HERE = pathlib.Path(__file__).parent


def record(rag, name):
    value = json.loads((HERE / "round.json").read_text())[name]
    rag.end_to_end(queries=[{"id": "q1"}], cost_usd={"q1": value})
    time.sleep(0.4)  # both runs are past their start before either writes


def test_a(rag):
    record(rag, "a")


def test_b(rag):
    record(rag, "b")
"""


@pytest.mark.parametrize("rounds", [1, pytest.param(5, marks=pytest.mark.slow)])  # 5: slow
def test_pairs_of_overlapping_updates_keep_every_entry(pytester: pytest.Pytester,
                                                       rounds: int) -> None:
    pytester.makepyfile(test_pair=TESTS)
    baseline = pytester.path / "rag-baseline.json"
    for round_ in range(1, rounds + 1):
        (pytester.path / "round.json").write_text(json.dumps({"a": round_, "b": 10 * round_}))
        runs = [subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                  "--rag-update-baseline", "-k", name],
                                 cwd=pytester.path, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
                for name in ("test_a", "test_b")]
        outputs = [run.communicate(timeout=120)[0] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        tests = json.loads(baseline.read_text(encoding="utf-8"))["tests"]
        costs = {nodeid.rsplit("::", 1)[1]: entry["end_to_end"]["metrics"]["mean_cost_usd"]
                 ["value"] for nodeid, entry in tests.items()}
        assert costs == {"test_a": round_, "test_b": 10 * round_}, (round_, outputs)
    assert sorted(p.name for p in Path(pytester.path).iterdir() if p.suffix == ".tmp") == []
