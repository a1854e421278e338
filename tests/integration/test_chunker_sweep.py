"""A real chunker sweep on the Chroma corpora, and its export read back by the CLI.

A pytest project of two Chroma corpora (``chatlogs`` and
``state_of_the_union``: 88,000 characters, their 132 gold questions; the
other three corpora are left out to keep the run short) read by the gold
through ``documents: {glob: docs/*.md}``.  Its test splits them with
LangChain's ``RecursiveCharacterTextSplitter`` at six size/overlap settings
(150-0 to 2000-200, the range of issue 26) as a ``rag_sweep``: a word-overlap
retriever (top 10), a packer of at most 300 words, and the chunking,
retrieval (grades derived from evidence) and augmentation reports of each.
The run, with ``--rag-export``, must print the sweep's recommendation and its
reason, and every exported file, evaluated by ``pytest-rag evaluate``, must
give exactly the numbers of the run, stage by stage and metric by metric.

Install the splitter with ``pip install -e '.[integration]'``; without it, or
without ``../shared``, the test skips and says why.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMA = ROOT.parent / "shared" / "data" / "chroma_chunking"
CORPORA = ("chatlogs", "state_of_the_union")
SETTINGS = ((150, 0), (300, 30), (600, 60), (800, 100), (1200, 150), (2000, 200))
STAGES = ("chunking", "retrieval", "augmentation")

needs_shared = pytest.mark.skipif(
    not (CHROMA / "all.gold.json").is_file(),
    reason=f"shared data absent: {CHROMA / 'all.gold.json'} not found")

SWEEP = '''
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

SETTINGS = {settings!r}


def words(text):
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def retrieve(chunks, question, k=10):
    """The ``k`` chunks sharing the most question words (ties: the earlier chunk)."""
    index = defaultdict(list)
    for i, chunk in enumerate(chunks):
        for word, count in words(chunk.page_content).items():
            index[word].append((i, count))
    scores = Counter()
    for word, asked in words(question).items():
        for i, count in index.get(word, ()):
            scores[i] += min(asked, count)
    return [chunks[i] for i in sorted(scores, key=lambda i: (-scores[i], i))[:k]]


def pack(retrieved, budget=300):
    """Retrieved chunks in order while their words fit the budget (the first always)."""
    packed, used = [], 0
    for chunk in retrieved:
        size = len(chunk.page_content.split())
        if packed and used + size > budget:
            break
        packed.append(chunk)
        used += size
    return packed


@pytest.mark.rag_sweep(objective="augmentation.context_sufficient",
                       cost=("context_tokens", "chunks"))
@pytest.mark.parametrize("size, overlap", SETTINGS, ids=[f"{{s}}-{{o}}" for s, o in SETTINGS])
def test_splitter(rag, rag_dataset, size, overlap):
    files = sorted(Path("docs").glob("*.md"))
    documents = [Document(page_content=f.read_text(encoding="utf-8"),
                          metadata={{"source": f.as_posix()}}) for f in files]
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap,
                                              add_start_index=True)
    chunks = splitter.split_documents(documents)
    retrieved = {{q.id: retrieve(chunks, q.question) for q in rag_dataset.queries}}
    rag.chunking(chunks=chunks)
    rag.retrieval(chunks=chunks, retrieved_ids=retrieved)
    rag.augmentation(chunks=chunks,
                     context_ids={{q: pack(found) for q, found in retrieved.items()}})
'''


@pytest.fixture
def sweep_project(pytester: pytest.Pytester) -> pytest.Pytester:
    docs = pytester.path / "docs"
    docs.mkdir()
    for name in CORPORA:
        (docs / f"{name}.md").write_bytes((CHROMA / f"{name}.md").read_bytes())
    full = json.loads((CHROMA / "all.gold.json").read_text(encoding="utf-8"))
    queries = [query for query in full["queries"]
               if all(span["doc_id"] in CORPORA for span in query["expected_evidence"])]
    for query in queries:  # the glob's ids are the files' paths
        for span in query["expected_evidence"]:
            span["doc_id"] = f"docs/{span['doc_id']}.md"
    gold = {"format": "pytest-rag/v1", "params": {"k": 5},
            "documents": {"glob": "docs/*.md"}, "queries": queries}
    (pytester.path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    pytester.makeini("[pytest]\nrag_dataset = gold.json\nrag_relevance_from_evidence = true\n")
    pytester.makepyfile(test_sweep=SWEEP.format(settings=list(SETTINGS)))
    return pytester


def evaluate(path: Path, stage: str) -> dict[str, float | None]:
    """What ``pytest-rag evaluate FILE --stage STAGE --format json`` prints for ``stage``."""
    done = subprocess.run([sys.executable, "-m", "pytest_rag", "evaluate", str(path),
                           "--stage", stage, "--format", "json"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    values: dict[str, float | None] = json.loads(done.stdout)[stage]
    return values


@pytest.mark.slow  # six real splitter settings over two corpora, then the CLI
@needs_shared
def test_a_real_splitter_sweep_recommends_and_its_export_reproduces_it(
        sweep_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("langchain_text_splitters", "langchain_core"):
        if importlib.util.find_spec(module) is None:  # found, not imported (see above)
            pytest.skip(f"{module} not installed (pip install -e '.[integration]')")
    from pytest_rag.plugin.report_files import export_folder

    monkeypatch.setenv("COLUMNS", "80")  # the table's layout, whatever the terminal
    result = sweep_project.runpytest_subprocess("-p", "no:cacheprovider",
                                                "--rag-export=exported", "--rag-report=r.json")
    result.assert_outcomes(passed=len(SETTINGS))
    assert result.ret == pytest.ExitCode.OK
    output = result.stdout.str()
    assert "--rag-export" not in output  # every file reproduced its report when written
    report = json.loads((sweep_project.path / "r.json").read_text(encoding="utf-8"))
    sweep = report["sweeps"]["test_sweep.py::test_splitter"]
    verdict = sweep["verdict"]
    ids = [f"{size}-{overlap}" for size, overlap in SETTINGS]
    assert sweep["variants"] == ids
    assert sweep["knobs"] == {f"{s}-{o}": {"size": s, "overlap": o} for s, o in SETTINGS}
    # Real chunks: more of them, and more index tokens, the smaller the chunks.
    chunks = [sweep["costs"]["chunks"][variant] for variant in ids]
    assert chunks == sorted(chunks, reverse=True) and len(set(chunks)) == len(ids)

    # The rule, the recommendation and its reason, printed as the JSON report says.
    recommended = verdict["recommended"]
    assert recommended in ids, verdict
    assert verdict["reason"].startswith("augmentation.context_sufficient ")
    printed = " ".join(output.split())  # the verdict's lines wrap at the terminal's width
    assert ("rule: the cheapest (context_tokens, then chunks) of the non-dominated variants "
            "within noise of the best augmentation.context_sufficient (higher is better)"
            in printed)
    assert f"recommended: {recommended} ({' '.join(verdict['reason'].split())})" in printed
    # Each variant's row, its knobs beside it (the deciding columns fit a screenful).
    for size, overlap in SETTINGS:
        result.stdout.re_match_lines([rf"  {size}-{overlap}\s+{size}\s+{overlap}\s"])
    # The recommendation follows the stated rule: tied with the best, on the frontier,
    # and the cheapest such variant by context tokens, then chunks.
    tied = set(verdict["tied_with_best"])
    frontier = set(verdict["frontier"])
    assert recommended in tied & frontier, verdict
    costs = sweep["costs"]
    assert min(tied & frontier, key=lambda v: (costs["context_tokens"][v],
                                               costs["chunks"][v])) == recommended

    # Every exported file, evaluated by the command line, gives the run's numbers exactly.
    tests = report["tests"]
    assert sorted(tests) == sorted(f"test_sweep.py::test_splitter[{v}]" for v in ids)
    for nodeid, stages in tests.items():
        assert sorted(stages) == sorted(STAGES), nodeid
        for stage, entry in stages.items():
            path = export_folder(sweep_project.path / "exported", nodeid) / f"{stage}.json"
            recorded = {key: metric["value"] for key, metric in entry["metrics"].items()}
            assert any(value is not None for value in recorded.values()), (nodeid, stage)
            assert evaluate(path, stage) == recorded, (nodeid, stage)
