"""The README's LangChain, LlamaIndex and Haystack test files run as written.

Each example is copied from README.md into a project of two Chroma corpora
(``docs/*.md``, read by the gold through ``path:``) and run by pytest, with a
``conftest.py`` that gives the ``retriever`` fixture the examples leave to the
user: a word-overlap ranker over the chunks the example's splitter makes,
returning copies of them (new objects, as a vector store hands back).  On a
corpus of four short documents (one chunk each) the numbers the run prints
are checked against a count by hand.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMA = ROOT.parent / "shared" / "data" / "chroma_chunking"
CORPORA = ("chatlogs", "state_of_the_union")

#: Each test runs a framework pipeline in a pytest process of its own: slow (CI runs them).
pytestmark = pytest.mark.slow

needs_shared = pytest.mark.skipif(
    not (CHROMA / "all.gold.json").is_file(),
    reason=f"shared data absent: {CHROMA / 'all.gold.json'} not found")

CONFTEST = '''
import copy
import re
from collections import Counter
from pathlib import Path

import pytest


def _words(text):
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def _top(items, text_of, question, k=5):
    asked = _words(question)
    scores = [sum(min(n, asked[w]) for w, n in _words(text_of(i)).items() if w in asked)
              for i in items]
    order = sorted(range(len(items)), key=lambda i: (-scores[i], i))[:k]
    return [(copy.deepcopy(items[i]), float(scores[i])) for i in order]


class LangChainRetriever:
    def __init__(self):
        from langchain_core.documents import Document
        from langchain_text_splitters import RecursiveCharacterTextSplitter
        files = sorted(Path("docs").glob("*.md"))
        documents = [Document(page_content=f.read_text(), metadata={"source": str(f)})
                     for f in files]
        splitter = RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=100,
                                                  add_start_index=True)
        self.chunks = splitter.split_documents(documents)

    def invoke(self, question):
        return [chunk for chunk, _ in _top(self.chunks, lambda c: c.page_content, question)]


class LlamaIndexRetriever:
    def __init__(self):
        from llama_index.core import SimpleDirectoryReader
        from llama_index.core.node_parser import SentenceSplitter
        documents = SimpleDirectoryReader("docs").load_data()
        self.nodes = SentenceSplitter(chunk_size=256, chunk_overlap=32).get_nodes_from_documents(
            documents)

    def retrieve(self, question):
        from llama_index.core.schema import NodeWithScore
        return [NodeWithScore(node=node, score=score)
                for node, score in _top(self.nodes, lambda n: n.get_content(), question)]


class HaystackRetriever:
    def __init__(self):
        from haystack.components.converters import TextFileToDocument
        from haystack.components.preprocessors import DocumentSplitter
        documents = TextFileToDocument().run(sources=sorted(Path("docs").glob("*.md")))
        splitter = DocumentSplitter(split_by="word", split_length=150, split_overlap=20)
        self.documents = splitter.run(documents=documents["documents"])["documents"]

    def run(self, query):
        return {"documents": [document for document, _ in
                              _top(self.documents, lambda d: d.content, query)]}


@pytest.fixture
def retriever(request):
    name = request.module.__name__
    if name.endswith("langchain"):
        return LangChainRetriever()
    if name.endswith("llamaindex"):
        return LlamaIndexRetriever()
    return HaystackRetriever()
'''


def readme_example(name: str) -> str:
    """The Python block between ``<!-- name-example:start -->`` and its end marker."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(rf"<!-- {name}-example:start -->\n```python\n(.*?)```\n"
                       rf"<!-- {name}-example:end -->", text, re.S)
    assert len(found) == 1, f"README.md must hold one {name} example between its markers"
    return found[0]


@pytest.fixture
def every_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """``pytester`` whose runs load every installed pytest plugin, as a user's would
    (the frameworks bring LangSmith's and anyio's): the suite blocks them elsewhere."""
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return pytester


@pytest.fixture
def project(every_plugin: pytest.Pytester) -> pytest.Pytester:
    pytester = every_plugin
    docs = pytester.path / "docs"
    docs.mkdir()
    for name in CORPORA:
        shutil.copyfile(CHROMA / f"{name}.md", docs / f"{name}.md")
    full = json.loads((CHROMA / "all.gold.json").read_text(encoding="utf-8"))
    gold = {
        "format": "pytest-rag/v1",
        "documents": [{"id": name, "path": f"docs/{name}.md"} for name in CORPORA],
        "queries": [query for query in full["queries"]
                    if all(span["doc_id"] in CORPORA for span in query["expected_evidence"])],
    }
    (pytester.path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    pytester.makeini("[pytest]\nrag_dataset = gold.json\n")
    pytester.makeconftest(CONFTEST)
    return pytester


@needs_shared
@pytest.mark.parametrize(("name", "modules"), [
    ("langchain", ("langchain_text_splitters", "langchain_core")),
    ("llamaindex", ("llama_index",)),
    ("haystack", ("haystack",)),
])
def test_readme_example_runs(project: pytest.Pytester, name: str,
                             modules: tuple[str, ...]) -> None:
    for module in modules:  # found, not imported: pytester drops what a test imports
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            pytest.skip(f"{module} not installed (pip install -e '.[integration]')")
    project.makepyfile(**{f"test_{name}": readme_example(name)})
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--rag-scorecard=full")
    result.assert_outcomes(passed=2)


#: Four one-chunk documents; the word-overlap ranker's order is worked out below.
SMALL_DOCS = {
    "account": "Sign in with your account email. Reset your password from the sign in page.",
    "language": "Open the settings to change the language of the app and of the emails.",
    "refunds": "Refunds are paid within 14 days. Ask support for a refund form.",
    "shipping": "Shipping takes three days. Express shipping takes one day and costs extra.",
}
#: Query, question, gold document, evidence quote.  Words shared with each
#: document (the ranker's score), highest first, at K = 2:
#: q1: refunds 3 (are, paid, refunds), the rest 0: rank 1.
#: q2: shipping 4 (shipping, takes, one, day), the rest 0: rank 1.
#: q3: language 5 (change, the twice, of, app), account 2 (the, password): rank 2.
#: q4: language 2 (the, to), account 1 (the), shipping 0: not in the top 2.
SMALL_QUERIES = [
    ("q1", "When are refunds paid?", "refunds", "Refunds are paid within 14 days"),
    ("q2", "Which shipping takes one day?", "shipping", "Express shipping takes one day"),
    ("q3", "How do I change the password of the app?", "account", "Reset your password"),
    ("q4", "How much does it cost to send the parcel fast?", "shipping", "costs extra"),
]
#: One relevant chunk per query (grade 2: it holds the whole quote), K = 2,
#: ranks 1, 1, 2 and a miss:
#: hit = 3/4; MRR = (1 + 1 + 1/2 + 0)/4; P@2 = (1/2 + 1/2 + 1/2 + 0)/4;
#: recall = 3/4; nDCG = (1 + 1 + 1/log2(3) + 0)/4 (gain 2^2 - 1 on both sides);
#: AP = (1 + 1 + 1/2 + 0)/4.
HAND_COUNT = {
    "hit_at_k": 3 / 4,
    "mrr_at_k": (1 + 1 + 0.5 + 0) / 4,
    "precision_at_k": (0.5 + 0.5 + 0.5 + 0) / 4,
    "recall_at_k": 3 / 4,
    "ndcg_at_k": (1 + 1 + 1 / math.log2(3) + 0) / 4,
    "average_precision_at_k": (1 + 1 + 0.5 + 0) / 4,
}


@pytest.fixture
def small_project(every_plugin: pytest.Pytester) -> pytest.Pytester:
    pytester = every_plugin
    docs = pytester.path / "docs"
    docs.mkdir()
    for name, text in SMALL_DOCS.items():
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    gold = {
        "format": "pytest-rag/v1",
        "params": {"k": 2},
        "documents": [{"id": name, "path": f"docs/{name}.md"} for name in SMALL_DOCS],
        "queries": [{"id": query_id, "question": question,
                     "expected_evidence": [{"doc_id": doc_id, "quote": quote}]}
                    for query_id, question, doc_id, quote in SMALL_QUERIES],
    }
    (pytester.path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    pytester.makeini("[pytest]\nrag_dataset = gold.json\n")
    pytester.makeconftest(CONFTEST)
    return pytester


def printed_values(lines: list[str], keys: set[str]) -> dict[str, float]:
    """``metric  value`` pairs the scorecard prints, for ``keys``."""
    found: dict[str, float] = {}
    for line in lines:
        cells = line.replace("|", " ").split()
        for i, cell in enumerate(cells[:-1]):
            if cell in keys and re.fullmatch(r"-?\d+(\.\d+)?", cells[i + 1]):
                found[cell] = float(cells[i + 1])
    return found


@pytest.mark.parametrize(("name", "modules"), [
    ("langchain", ("langchain_text_splitters", "langchain_core")),
    ("llamaindex", ("llama_index",)),
    ("haystack", ("haystack",)),
])
def test_readme_example_prints_the_hand_count(small_project: pytest.Pytester, name: str,
                                              modules: tuple[str, ...]) -> None:
    """What the README's retriever test prints is what a count by hand gives."""
    for module in modules:
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            pytest.skip(f"{module} not installed (pip install -e '.[integration]')")
    small_project.makepyfile(**{f"test_{name}": readme_example(name)})
    result = small_project.runpytest_subprocess("-p", "no:cacheprovider",
                                                "--rag-scorecard=full")
    result.assert_outcomes(passed=2)
    printed = printed_values(result.outlines, set(HAND_COUNT))
    assert printed.keys() == HAND_COUNT.keys(), result.stdout.str()
    for key, value in HAND_COUNT.items():
        assert printed[key] == pytest.approx(value, abs=5e-4), key


@pytest.mark.parametrize(("name", "modules"), [
    ("langchain", ("langchain_text_splitters", "langchain_core")),
    ("llamaindex", ("llama_index",)),
    ("haystack", ("haystack",)),
])
def test_without_chunks_the_misses_still_count(small_project: pytest.Pytester, name: str,
                                               modules: tuple[str, ...]) -> None:
    """The same example without ``chunks=``: only the retrieved chunks are known.
    Hit, MRR and precision keep the hand count (q4's miss counts, hit is not
    3/3); recall, nDCG and AP are not measured."""
    for module in modules:
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            pytest.skip(f"{module} not installed (pip install -e '.[integration]')")
    example = readme_example(name)
    assert example.count("chunks=split_docs(), retrieved_ids") == 1
    example = example.replace("chunks=split_docs(), retrieved_ids", "retrieved_ids")
    small_project.makepyfile(**{f"test_{name}": example})
    result = small_project.runpytest_subprocess("-p", "no:cacheprovider",
                                                "--rag-scorecard=full")
    result.assert_outcomes(passed=2)
    exact = {"hit_at_k", "mrr_at_k", "precision_at_k"}
    printed = printed_values(result.outlines, set(HAND_COUNT))
    assert printed.keys() == exact, result.stdout.str()
    for key in exact:
        assert printed[key] == pytest.approx(HAND_COUNT[key], abs=5e-4), key
    for key in set(HAND_COUNT) - exact:
        result.stdout.re_match_lines([rf"\s+{key}\s+-\s+not measured"])
