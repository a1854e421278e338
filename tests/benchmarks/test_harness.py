"""Smoke tests of the benchmark harness (``run.py``): no timing is asserted.

The first runs every workload at a fiftieth of the full size, without the
peak-memory processes (the quick mode's tenth takes about a minute, too long
for the suite), and needs every peer: it skips, naming them, when one is
missing (``pip install -e '.[bench]'``).  The second needs no peer: it hides
them, checks that the harness reports each as "not installed" instead of
failing, and measures peak memory for the sides that remain.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RUN = HERE / "run.py"
PEERS = ("ranx", "pytrec_eval", "rouge_score", "faiss", "threadpoolctl")
WORKLOADS = ("ranking", "evidence", "embedding", "answers", "plugin", "sweep", "cli", "gate",
             "merge", "xdist")


def _run(args: list[str], tmp_path: Path, prelude: str = ""
         ) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "rows.json"
    code = (f"import sys, runpy; {prelude}"
            f"sys.argv = [{str(RUN)!r}, *{[*args, '--json', str(out)]!r}]; "
            f"runpy.run_path({str(RUN)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          cwd=HERE.parent.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_every_workload_runs_and_every_peer_agrees(tmp_path: Path) -> None:
    missing = [name for name in PEERS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"benchmark peers not installed: {', '.join(missing)} "
                    "(pip install -e '.[bench]')")
    done, result = _run(["--scale", "0.02", "--repeat", "1", "--no-memory"], tmp_path)
    rows = result["rows"]
    assert {row["workload"].split(":")[0] for row in rows} == set(WORKLOADS)
    # The gate's rows compare pytest-rag with itself (its outputs are checked at the
    # sizes gate_expected.json holds, not this one); the merge's and xdist's check their
    # own outputs (the merged records, the two sides' outcomes), an update's merge has
    # no budget to compare with.
    own = [row for row in rows if row["workload"].startswith(("merge", "xdist"))]
    assert len(own) == 3 and all(row["agreement"].startswith("agree (") for row in own), own
    compared = [row for row in rows
                if not row["workload"].startswith(("plugin", "gate", "merge", "xdist"))]
    assert compared and all(row["agreement"].startswith("agree (") for row in compared), [
        (row["workload"], row["peer"], row["agreement"]) for row in compared]
    assert all(row["rag_seconds"] and row["peer_seconds"] for row in compared)
    # The one-thread pair is compared with itself only, and judged.
    single = [(row["workload"], row["peer"]) for row in rows
              if "1 thread" in row["workload"] or "1 thread" in row["peer"]]
    assert single == [("embedding: pytest-rag, 1 thread", "faiss IndexFlatIP, 1 thread")]
    assert next(row for row in rows if "1 thread" in row["peer"])["goal"]
    table = done.stdout
    for name in WORKLOADS:
        assert f"| {name}" in table
    assert "| ratio " in table and "MISMATCH" not in table
    # pytest-rag's per-query values are those of the engine before issue 16, bit for bit.
    checks = [line for line in table.splitlines() if " / pytest-rag at " in line]
    assert {line.split(" / ")[0][2:] for line in checks} == {"ranking", "evidence", "embedding",
                                                              "answers"}
    assert all("identical to the previous engine (" in line for line in checks), checks


def test_a_missing_peer_is_a_row_not_a_crash(tmp_path: Path) -> None:
    hide = "".join(f"sys.modules[{name!r}] = None; " for name in PEERS)
    done, result = _run(["--scale", "0.005", "--repeat", "1", "--only",
                         "ranking,embedding,answers"], tmp_path, prelude=hide)
    rows = {(row["workload"], row["peer"]): row for row in result["rows"]}
    for peer in ("pytrec_eval", "ranx", "faiss IndexFlatIP", "rouge-score rougeL",
                 "faiss IndexFlatIP, 1 thread"):
        row = next(row for (_, name), row in rows.items() if name == peer)
        assert row["status"] == "not installed" and row["peer_seconds"] is None
    numpy_row = rows[("embedding", "numpy blocked matmul")]
    assert numpy_row["agreement"].startswith("agree (")
    assert numpy_row["rag_mib"] is not None and numpy_row["peer_mib"] is not None
    assert rows[("answers", "SQuAD v1.1 logic (EM + F1)")]["agreement"].startswith("agree (")
    assert "not installed" in done.stdout


def test_a_changed_output_is_a_mismatch_with_the_previous_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored digests tell a value that moved in its last bit."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    try:
        import run
    finally:
        sys.path.remove(str(HERE))
    metrics = {"P@10": np.array([0.1, 0.2, 0.3]), "R@10": np.array([1.0, float("nan"), 0.5])}
    monkeypatch.setattr(run, "EXPECTED", tmp_path / "outputs_expected.json")
    assert run.previous_engine("ranking", 0.5, metrics)[1].startswith("not checked")
    run.EXPECTED.write_text(json.dumps({"ranking": {"0.5": run.digests(metrics)}}))
    assert run.previous_engine("ranking", 0.5, metrics)[0]
    moved = {**metrics, "P@10": np.nextafter(metrics["P@10"], 1.0)}
    same, said = run.previous_engine("ranking", 0.5, moved)
    assert not same and said == "MISMATCH with the previous engine: P@10"
    assert not run.previous_engine("ranking", 0.5, {"P@10": metrics["P@10"]})[0]
