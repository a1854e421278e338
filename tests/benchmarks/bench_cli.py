"""Workload 7, the command line: ``pytest-rag evaluate`` on a JSON file, whole process.

At scale 1: one JSON dataset file of 20,000 queries, each with its graded
gold ids (``relevant``) and a run of 100 retrieved ids (the ranking
workload's data, :func:`bench_ranking.make`), evaluated at K = 10.

pytest-rag's side is the whole process a user waits for: ``python -m
pytest_rag evaluate FILE --stage retrieval --k 10 --format json``, start-up
and imports included.  The peer is a plain script that loads the same file
with ``json`` into pytrec_eval (``{query: {doc: score}}``, rank ``r`` scored
``100 - r``, a repeated id keeping its first rank) and prints the means.
Each side runs in a fresh process, the sides interleaved, and the medians of
the timed runs are kept (after one warm-up run of each, which writes the byte
code caches as an installed package has them).

Outputs: the means of P, R, hit and AP at 10 must agree with pytrec_eval's
(to 1e-9), and pytest-rag's whole JSON output must be identical to the one the
engine before this workload existed gave on the same file
(``cli_expected.json``, for the scales the suite and ``run.py`` use;
``python bench_cli.py --record SCALE`` writes a scale's entry).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_ranking
from bench_harness import TOLERANCE, Row

NAME = "cli"
QUERIES = 20_000
K = 10
MAX_RATIO = 0.5
HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "cli_expected.json"
#: pytest-rag's key -> pytrec_eval's measure, for the means compared.
_SHARED = {"precision_at_k": "P_10", "recall_at_k": "recall_10", "hit_at_k": "success_10",
           "average_precision_at_k": "map_cut_10"}

_SCRIPT = """\
import json, sys
import pytrec_eval

with open(sys.argv[1], encoding="utf-8") as handle:
    data = json.load(handle)
qrels = {query["id"]: query["relevant"] for query in data["queries"]}
run = {}
for query_id, entry in data["run"].items():
    ids = entry["retrieved_ids"]
    run[query_id] = dict(zip(reversed(ids), map(float, range(1, len(ids) + 1))))
measures = {"P_10", "recall_10", "success_10", "map_cut_10", "ndcg_cut_10", "recip_rank"}
results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = ("P_10", "recall_10", "success_10", "map_cut_10")
print(json.dumps({name: sum(r[name] for r in results.values()) / len(results) for name in names}))
"""


def make(scale: float) -> dict[str, Any]:
    """The dataset file's content at ``scale`` (1 = 20,000 queries x 100 ids)."""
    inputs = bench_ranking.make(QUERIES / bench_ranking.QUERIES * scale)
    return {"format": "pytest-rag/v1", "params": {"k": K},
            "queries": [{"id": query, "relevant": inputs.qrels[query]}
                        for query in inputs.query_ids],
            "run": {query: {"retrieved_ids": inputs.run[query]} for query in inputs.query_ids}}


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package: byte code cached
    return env


def _timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          env=_environment())
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, done.stdout


def _rag_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "pytest_rag", "evaluate", str(path), "--stage", "retrieval",
            "--k", str(K), "--format", "json"]


def _key(scale: float) -> str:
    return f"{scale:g}"


def _write(folder: Path, scale: float) -> tuple[Path, int]:
    content = make(scale)
    path = folder / "run.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return path, len(content["queries"])


def _agreement(scale: float, rag: dict[str, Any], peer: dict[str, float]) -> tuple[bool, str]:
    values = rag["retrieval"]
    differences = {key: abs(values[key] - peer[name]) for key, name in _SHARED.items()}
    worst = max(differences.values())
    if worst > TOLERANCE:
        return False, f"MISMATCH with pytrec_eval: {differences}"
    expected = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    if _key(scale) not in expected:
        previous = f"not checked against the previous engine (no stored output for {_key(scale)})"
    elif expected[_key(scale)] != rag:
        return False, "MISMATCH with the previous engine's output"
    else:
        previous = "output identical to the previous engine's"
    return True, f"agree (P, R, hit, AP means within {worst:.1g}; {previous})"


def rows(scale: float, repeat: int) -> list[Row]:
    """One row: the whole ``evaluate`` process against the plain pytrec_eval script."""
    runs = max(3, repeat)
    with tempfile.TemporaryDirectory(prefix="rag-cli-") as name:
        folder = Path(name)
        path, count = _write(folder, scale)
        row = Row("cli: evaluate, whole process", f"{count:,} queries x 100 ids, JSON "
                  f"{path.stat().st_size / 2**20:.0f} MiB", None, "pytrec_eval script",
                  goal=f"<= {MAX_RATIO} x")
        if importlib.util.find_spec("pytrec_eval") is None:
            row.status, row.agreement = "not installed", "pytrec_eval not installed"
            return [row]
        script = folder / "plain.py"
        script.write_text(_SCRIPT, encoding="utf-8")
        peer_command = [sys.executable, str(script), str(path)]
        _, rag_out = _timed(_rag_command(path))  # warm-up: byte code, file cache
        _, peer_out = _timed(peer_command)
        rag_times, peer_times = [], []
        for _ in range(runs):
            rag_times.append(_timed(_rag_command(path))[0])
            peer_times.append(_timed(peer_command)[0])
    row.rag_seconds, row.peer_seconds = statistics.median(rag_times), statistics.median(peer_times)
    agree, row.agreement = _agreement(scale, json.loads(rag_out), json.loads(peer_out))
    ratio = row.ratio
    row.status = ("disagrees" if not agree else
                  "met" if ratio is not None and ratio <= MAX_RATIO else "not met")
    row.notes.append(f"medians of {runs} interleaved runs per side")
    return [row]


def record(scale: float) -> None:
    """Store the installed engine's ``evaluate`` output at ``scale`` in ``cli_expected.json``."""
    with tempfile.TemporaryDirectory(prefix="rag-cli-") as name:
        path, _ = _write(Path(name), scale)
        _, out = _timed(_rag_command(path))
    stored = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    stored[_key(scale)] = json.loads(out)
    EXPECTED.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        record(float(sys.argv[2]))
    else:
        sys.exit("usage: python bench_cli.py --record SCALE")
