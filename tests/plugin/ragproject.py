"""The small inner project that the plugin tests run with ``pytester``.

``gold.yaml`` holds four queries and their run (K = 2).  Per query, the
recall@2 of that run is q1 1, q2 2/3, q3 0 and q4 1, so the mean is
(1 + 2/3 + 0 + 1) / 4 = 0.667.  :data:`WORSE` lowers q2 to 1/3, so the mean
falls to (1 + 1/3 + 0 + 1) / 4 = 0.583.  The inner test ``test_rag.py``
evaluates the retrieval stage with the inputs of ``inputs.json`` when that
file exists, so a test changes the numbers between two runs without
rewriting a module.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

#: /work/shared (the conformance data), beside the checkout.
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
QUICKSTART = Path(__file__).resolve().parents[1] / "data" / "quickstart.yaml"

GOLD = """\
params: {k: 2}
queries:
  - {id: q1, relevant: [a]}
  - {id: q2, relevant: [b, c, d]}
  - {id: q3, relevant: [c]}
  - {id: q4, relevant: [d]}
run:
  q1: {retrieved_ids: [a, x], retrieval_latency_ms: 100}
  q2: {retrieved_ids: [b, c], retrieval_latency_ms: 200}
  q3: {retrieved_ids: [x, y], retrieval_latency_ms: 300}
  q4: {retrieved_ids: [d, a], retrieval_latency_ms: 400}
"""

INI = "[pytest]\nrag_dataset = gold.yaml\n"

TEST_RAG = """\
import json
import pathlib

HERE = pathlib.Path(__file__).parent


def inputs():
    path = HERE / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_retrieval(rag):
    rag.retrieval(**inputs())
"""

#: The inner test with its own check: ``assert_metric(recall_at_k >= 0.8)``.
ASSERTING_TEST = """\
import json
import pathlib

from pytest_rag import assert_metric


def test_retrieval(rag):
    inputs = json.loads((pathlib.Path(__file__).parent / "inputs.json").read_text())
    report = rag.retrieval(**inputs)
    assert_metric(report.recall_at_k >= 0.8)
"""

#: The dataset's run, and one where q2 finds 1 of its 3 relevant chunks instead of 2.
SAME = {"q1": ["a", "x"], "q2": ["b", "c"], "q3": ["x", "y"], "q4": ["d", "a"]}
WORSE = {**SAME, "q2": ["b", "x"]}
BETTER = {**SAME, "q3": ["c", "x"]}
#: The retrieval metrics with a value on gold.yaml (the token metrics need evidence).
MEASURED = ("precision_at_k", "recall_at_k", "f1_at_k", "mrr_at_k", "ndcg_at_k", "hit_at_k",
            "average_precision_at_k", "p50_latency_ms", "p95_latency_ms")
BASELINE = "rag-baseline.json"

#: The head of an inner sweep module: ``pytest`` imported, one document ``d`` of 48
#: words (``WORDS``, ``TEXT``, ``DOCS``), ``span(first, count)`` (the characters of
#: ``count`` words from word ``first``) and twelve questions (``QUERIES``), question
#: ``i`` with its evidence (``EVIDENCE``) on words ``4i`` to ``4i + 3``.
WORD_GRID = """
import pytest

WORDS = [f"w{i}" for i in range(48)]
TEXT = " ".join(WORDS)
DOCS = {"d": TEXT}


def span(first, count):
    start = len(" ".join(WORDS[:first])) + (1 if first else 0)
    return start, start + len(" ".join(WORDS[first:first + count]))


QUERIES = [{"id": f"q{i:02d}"} for i in range(12)]
EVIDENCE = {q["id"]: [dict(zip(("start", "end"), span(4 * i, 4)), doc_id="d")]
            for i, q in enumerate(QUERIES)}
"""
#: For subprocess runs: the other installed plugins cost half a second a process.
FEWER_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:benchmark")


def write_ini(pytester: pytest.Pytester, *lines: str) -> None:
    """``pytest.ini`` with ``rag_dataset = gold.yaml`` and ``lines``."""
    pytester.makefile(".ini", pytest=INI + "".join(line + "\n" for line in lines))


def set_inputs(pytester: pytest.Pytester, **inputs: Any) -> None:
    """The keyword arguments of ``rag.retrieval`` in the inner ``test_rag.py``."""
    (pytester.path / "inputs.json").write_text(json.dumps(inputs), encoding="utf-8")


def baseline(pytester: pytest.Pytester, name: str = BASELINE) -> dict[str, Any]:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def junit_cases(path: Path) -> dict[str, ET.Element]:
    """``{classname::name: <testcase>}`` of a junit-xml file."""
    root = ET.parse(path).getroot()
    return {f"{case.get('classname')}::{case.get('name')}": case for case in root.iter("testcase")}


def junit_properties(case: ET.Element) -> dict[str, str]:
    return {prop.get("name", ""): prop.get("value", "") for prop in case.iter("property")}


def scorecard_lines(result: pytest.RunResult) -> list[str]:
    """The lines of the ``RAG scorecard`` section (up to the next ``===`` line)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "RAG scorecard" in line and "=" in line)
    out = []
    for line in lines[start + 1:]:
        if line.startswith(("=", "pytest-rag:")):
            break
        out.append(line)
    return out
