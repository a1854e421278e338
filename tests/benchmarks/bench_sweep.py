"""Workload 6, a chunker sweep: the pytest session a user waits for while tuning a chunker.

At scale 1: one corpus of 100 documents and about 1 million words (with
punctuation, sentences and Markdown headings), 5,000 queries with one gold
evidence span each, and a test module of 10 parametrized word-window chunkers
(window and overlap in words).  Each test builds its chunks from the
documents, makes a retrieval run from them (deterministic: the chunks around
each query's evidence, in a fixed rotated order) and calls
``rag.chunking(chunks=...)`` and ``rag.retrieval(chunks=..., retrieved_ids=...)``
with grades derived from the evidence (``rag_relevance_from_evidence``).

The test is a ``rag_sweep`` (default rule), so each variant's costs are
counted and the session ends with the sweep decided: the paired comparison of
every variant with the best, the frontier, the recommendation and the sweep
table.  The session runs as a fresh ``python -m pytest`` process with pytest's own
plugins and pytest-rag's only (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the other
plugins of the environment (hypothesis, xdist, ...) are not part of what is
measured, and their hooks ran inside the timed session end before.
pytest-rag's share is measured, not guessed: the test times each ``rag`` call
with ``time.perf_counter`` and writes the times with the results, and the
project's ``conftest.py`` times the end of each test (the call phase's
``pytest_runtest_makereport``: thresholds, the records, the variant's costs)
and the end of the session (``pytest_sessionfinish``: the scorecard, the
sweep's decision, the terminal summary).  The first row's pytest-rag time is
the sum of the ``rag`` calls over the 10 tests, the second adds the ends of
the tests and of the session; the peer is the whole session's wall clock.
With ``repeat`` > 1 the session runs that many times and the medians are
kept.

Outputs are checked identical to the previous engine's: the aggregate values
and a SHA-256 digest of every per-query array of both stages, per variant,
are compared with ``sweep_expected.json`` (written by the engine before the
sweep was made fast, for the scales the suite and ``run.py`` use; another
scale is reported as not checked).  ``python bench_sweep.py --record SCALE``
writes the entry of a scale from the engine installed;
``python bench_sweep.py --previous FOLDER SCALE RUNS`` times sessions of this
engine and of the ``pytest_rag`` package in ``FOLDER`` (``git archive REV
pytest_rag | tar -x -C FOLDER``) interleaved, and compares their outputs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_harness import Row

NAME = "sweep"
DOCUMENTS = 100
WORDS = 1_000_000
QUERIES = 5_000
SEED = 16016
#: (window, overlap) in words of the 10 chunkers.
VARIANTS = ((64, 0), (96, 0), (128, 0), (128, 32), (192, 0), (192, 48), (256, 0), (256, 64),
            (384, 0), (512, 128))
#: The issue's goal: pytest-rag's share of the session at scale 1.
GOAL_SECONDS = 1.5
HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "sweep_expected.json"

_SYLLABLES = ("ka", "lo", "mi", "ne", "po", "ru", "si", "ta", "vu", "xe", "ba", "de", "fo", "gu",
              "hy", "jo", "qua", "ze", "wi", "cha")
#: About 8,000 words, drawn with Zipf frequencies as in prose.
_VOCABULARY = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "n", "st", "r",
                                                                           "l", "m", "th", "ck",
                                                                           "s", "x", "d", "ng",
                                                                           "sh", "p", "v", "z",
                                                                           "t", "g", "k", "w")]
#: Sentences of about 12 words, a line break now and then.
_GAPS = [" "] * 40 + [", "] * 4 + [". ", ". ", "? ", ".\n"]

_TEST_MODULE = '''\
"""The sweep: 10 word-window chunkers over one corpus, timed around the rag calls."""

import hashlib
import json
import os
import re
import time

import numpy as np
import pytest

VARIANTS = {variants!r}
OUT = os.environ["RAG_SWEEP_OUT"]
_words = {{}}


def word_offsets(document):
    """Each word's start and end (the user's own tokenizer, cached by the user)."""
    if document.id not in _words:
        found = [(m.start(), m.end()) for m in re.finditer(r"\\S+", document.text)]
        _words[document.id] = (np.array([s for s, _ in found]), np.array([e for _, e in found]))
    return _words[document.id]


def digest(values):
    return hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()


@pytest.mark.rag_sweep
@pytest.mark.parametrize("window,overlap", VARIANTS)
def test_chunker(rag, window, overlap):
    dataset = rag.dataset
    step = window - overlap
    chunks, first = [], {{}}
    for document in dataset.documents:
        starts, ends = word_offsets(document)
        first[document.id] = (len(chunks), step, len(starts))
        for c, lo in enumerate(range(0, len(starts), step)):
            hi = min(lo + window, len(starts))
            chunks.append({{"id": f"{{document.id}}:{{c}}", "doc_id": document.id,
                           "start": int(starts[lo]), "end": int(ends[hi - 1])}})
            if hi == len(starts):
                break
    retrieved = {{}}
    for q, query in enumerate(dataset.queries):
        span = query.expected_evidence[0]
        offset, step_, count = first[span.doc_id]
        starts, _ = word_offsets(dataset.documents[int(span.doc_id[3:])])
        home = min(int(np.searchsorted(starts, span.start, side="right")) - 1, count - 1) // step_
        order = [home + d for d in (-2, 0, 3, -1, 1, 5, 2, -3, 4, 6)]
        rotated = order[q % 7:] + order[:q % 7]
        last = (len(chunks) if span.doc_id == dataset.documents[-1].id
                else first[dataset.documents[int(span.doc_id[3:]) + 1].id][0]) - offset
        retrieved[query.id] = [f"{{span.doc_id}}:{{c}}" for c in rotated if 0 <= c < last]
    start = time.perf_counter()
    chunking = rag.chunking(chunks=chunks)
    middle = time.perf_counter()
    retrieval = rag.retrieval(chunks=chunks, retrieved_ids=retrieved)
    end = time.perf_counter()
    result = {{"variant": f"{{window}}/{{overlap}}", "chunking_s": middle - start,
              "retrieval_s": end - middle, "chunks": len(chunks)}}
    for report in (chunking, retrieval):
        result[report.stage] = {{
            "values": dict(report.values),
            "per_query": {{key: digest(values)
                          for key, values in sorted(report.query_values.items())}},
        }}
    with open(OUT, "a", encoding="utf-8") as out:
        out.write(json.dumps(result) + "\\n")
'''


#: Times pytest-rag's work after each test's call and at the end of the session (the hook
#: implementations of pytest itself and of pytest-rag inside: no other plugin is loaded).
_CONFTEST = '''\
import json
import os
import time

import pytest


def _log(part, seconds):
    with open(os.environ["RAG_SWEEP_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"part": part, "seconds": seconds}) + "\\n")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        if call.when == "call":
            _log("end_of_test", time.perf_counter() - start)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        _log("end_of_session", time.perf_counter() - start)
'''


def make(scale: float) -> dict[str, Any]:
    """The corpus and queries at ``scale`` (1 = 1 million words), as a dataset file's content."""
    rng = np.random.default_rng(SEED)
    words_per_doc = max(int(WORDS * scale) // DOCUMENTS, 600)
    documents: list[dict[str, str]] = []
    offsets: list[tuple[np.ndarray, np.ndarray]] = []
    vocabulary = np.array(_VOCABULARY)
    for d in range(DOCUMENTS):
        ranks = (rng.zipf(1.1, size=words_per_doc) - 1) % len(_VOCABULARY)
        chosen = vocabulary[ranks].tolist()
        capital = (rng.random(words_per_doc) < 0.08).tolist()
        chosen = [word.capitalize() if up else word for word, up in zip(chosen, capital)]
        gaps = [_GAPS[g] for g in rng.integers(0, len(_GAPS), size=words_per_doc).tolist()]
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        for w, (word, gap) in enumerate(zip(chosen, gaps)):
            if w % 400 == 0:  # a Markdown heading every 400 words
                heading = f"## Part {w // 400}\n\n"
                parts.append(heading)
                at += len(heading)
            parts.append(word)
            starts.append(at)
            ends.append(at + len(word))
            parts.append(gap)
            at += len(word) + len(gap)
        documents.append({"id": f"doc{d}", "text": "".join(parts)})
        offsets.append((np.array(starts), np.array(ends)))
    queries = []
    for q in range(max(int(QUERIES * scale), 10)):
        d = int(rng.integers(0, DOCUMENTS))
        starts, ends = offsets[d]
        lo = int(rng.integers(0, len(starts) - 60))
        hi = lo + int(rng.integers(5, 60))
        queries.append({"id": f"q{q}", "expected_evidence": [
            {"doc_id": f"doc{d}", "start": int(starts[lo]), "end": int(ends[hi - 1])}]})
    return {"format": "pytest-rag/v1", "documents": documents, "queries": queries}


def _session(folder: Path, previous: str | None = None
             ) -> tuple[float, list[dict[str, Any]], dict[str, float]]:
    """One ``python -m pytest`` session: its wall time, each test's record and the
    seconds of the ends of the tests and of the session (with the ``pytest_rag``
    package of the folder ``previous`` when given)."""
    out = folder / "results.jsonl"
    out.unlink(missing_ok=True)
    env = dict(os.environ, RAG_SWEEP_OUT=str(out), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTEST_ADDOPTS", None)
    if previous is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [previous, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "pytest_rag.plugin", str(folder)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False,
                          env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the sweep session failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    records = [line for line in lines if "variant" in line]
    ends = {part: sum(line["seconds"] for line in lines if line.get("part") == part)
            for part in ("end_of_test", "end_of_session")}
    return seconds, sorted(records, key=lambda record: VARIANTS.index(
        tuple(int(n) for n in record["variant"].split("/")))), ends


def _prepare(folder: Path, scale: float) -> dict[str, Any]:
    corpus = make(scale)
    (folder / "corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\nrag_dataset = corpus.json\n"
                                       "rag_relevance_from_evidence = true\nrag_k = 10\n",
                                       encoding="utf-8")
    (folder / "test_sweep.py").write_text(_TEST_MODULE.format(variants=list(VARIANTS)),
                                          encoding="utf-8")
    (folder / "conftest.py").write_text(_CONFTEST, encoding="utf-8")
    return corpus


def outputs(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What must stay identical: per variant, each stage's values and per-query digests."""
    return {record["variant"]: {stage: record[stage] for stage in ("chunking", "retrieval")}
            for record in records}


def _key(scale: float) -> str:
    return f"{scale:g}"


def _agreement(scale: float, found: dict[str, Any]) -> tuple[bool, str]:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    if _key(scale) not in expected:
        return True, f"not checked: no stored outputs for scale {_key(scale)}"
    wanted = expected[_key(scale)]
    differing = [f"{variant} {stage}" for variant in wanted for stage in wanted[variant]
                 if found.get(variant, {}).get(stage) != wanted[variant][stage]]
    if differing:
        return False, "MISMATCH with the previous engine: " + ", ".join(differing[:4])
    return True, (f"agree (identical to the previous engine: values and per-query digests "
                  f"of {len(wanted)} variants)")


def rows(scale: float, repeat: int) -> list[Row]:
    """Two rows against the whole session: pytest-rag's ``rag`` calls, and its whole
    share (the calls, the ends of the tests and the end of the session)."""
    runs = max(repeat, 1)
    with tempfile.TemporaryDirectory(prefix="rag-sweep-") as name:
        folder = Path(name)
        corpus = _prepare(folder, scale)
        words = sum(len(doc["text"].split()) for doc in corpus["documents"])
        walls, shares, chunking, retrieval, tests, ends, wholes = [], [], [], [], [], [], []
        for _ in range(runs):
            wall, records, parts = _session(folder)
            walls.append(wall)
            chunking.append(sum(record["chunking_s"] for record in records))
            retrieval.append(sum(record["retrieval_s"] for record in records))
            shares.append(chunking[-1] + retrieval[-1])
            tests.append(parts["end_of_test"])
            ends.append(parts["end_of_session"])
            wholes.append(shares[-1] + tests[-1] + ends[-1])
    goal = GOAL_SECONDS * scale
    size = (f"{len(VARIANTS)} chunkers x {words / 1e6:.2g}M words, "
            f"{len(corpus['queries']):,} queries")
    found = [Row("sweep: rag calls / session", size, statistics.median(shares),
                 "whole pytest session", statistics.median(walls),
                 goal=f"rag share <= {goal:.3g} s ({GOAL_SECONDS} s at 1M words)"),
             Row("sweep: whole rag share / session", size, statistics.median(wholes),
                 "whole pytest session", statistics.median(walls),
                 goal=f"rag share <= {goal:.3g} s ({GOAL_SECONDS} s at 1M words)")]
    agree, agreement = _agreement(scale, outputs(records))
    for row in found:
        row.agreement = agreement
        met = row.rag_seconds is not None and row.rag_seconds <= goal
        row.status = "disagrees" if not agree else ("met" if met else "not met")
    found[0].notes.append(f"rag share: chunking {statistics.median(chunking):.2f} s, "
                          f"retrieval {statistics.median(retrieval):.2f} s (medians of {runs})")
    found[1].notes.append(f"whole rag share: the rag calls {statistics.median(shares):.2f} s, "
                          f"the ends of the 10 tests {statistics.median(tests):.2f} s (records, "
                          f"thresholds, the variants' costs), the end of the session "
                          f"{statistics.median(ends):.2f} s (the sweep decided: paired "
                          f"comparisons, frontier, verdict; the scorecard) (medians of {runs})")
    return found


def record(scale: float) -> None:
    """Store the outputs of the installed engine at ``scale`` in ``sweep_expected.json``."""
    with tempfile.TemporaryDirectory(prefix="rag-sweep-") as name:
        folder = Path(name)
        _prepare(folder, scale)
        _, records, _ = _session(folder)
    stored = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    stored[_key(scale)] = outputs(records)
    EXPECTED.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def against_previous(previous: Path, scale: float, runs: int) -> dict[str, Any]:
    """Sessions of this engine and of the one whose ``pytest_rag`` package is in the
    folder ``previous`` (put first on ``PYTHONPATH``), interleaved: the medians of
    pytest-rag's share (the ``rag`` calls, and the whole share) and of the session, and
    whether the outputs are identical."""
    times: dict[str, dict[str, list[float]]] = {side: {"share": [], "whole": [], "session": []}
                                               for side in ("previous", "current")}
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="rag-sweep-") as name:
        folder = Path(name)
        _prepare(folder, scale)
        for _ in range(runs):
            for side, path in (("previous", str(previous)), ("current", None)):
                wall, records, parts = _session(folder, path)
                times[side]["session"].append(wall)
                times[side]["share"].append(sum(r["chunking_s"] + r["retrieval_s"]
                                                for r in records))
                times[side]["whole"].append(times[side]["share"][-1] + sum(parts.values()))
                found[side] = outputs(records)
    medians = {side: {key: statistics.median(values) for key, values in sides.items()}
               for side, sides in times.items()}
    return {"scale": scale, "runs": runs, "medians": medians,
            "share_ratio": medians["current"]["share"] / medians["previous"]["share"],
            "whole_ratio": medians["current"]["whole"] / medians["previous"]["whole"],
            "identical": found["previous"] == found["current"]}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        record(float(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == "--previous":
        print(json.dumps(against_previous(Path(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])),
                         indent=1))
    else:
        sys.exit("usage: python bench_sweep.py --record SCALE | --previous FOLDER SCALE RUNS")
