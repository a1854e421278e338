"""The README's LangChain, LlamaIndex and Haystack test files run as written.

Each example is copied from README.md into a project of two Chroma corpora
(``docs/*.md``, read by the gold through ``path:``) and run by pytest, with a
``conftest.py`` that gives the ``retriever`` fixture the examples leave to the
user: a word-overlap ranker returning copies of the chunks (LangChain,
LlamaIndex) and Haystack's own ``InMemoryBM25Retriever``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMA = ROOT.parent / "shared" / "data" / "chroma_chunking"
CORPORA = ("chatlogs", "state_of_the_union")

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


def haystack_retriever():
    from haystack.components.converters import TextFileToDocument
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    documents = TextFileToDocument().run(sources=sorted(Path("docs").glob("*.md")))["documents"]
    splitter = DocumentSplitter(split_by="word", split_length=150, split_overlap=20)
    store = InMemoryDocumentStore()
    store.write_documents(splitter.run(documents=documents)["documents"])
    return InMemoryBM25Retriever(store, top_k=5)


@pytest.fixture
def retriever(request):
    name = request.module.__name__
    if name.endswith("langchain"):
        return LangChainRetriever()
    if name.endswith("llamaindex"):
        return LlamaIndexRetriever()
    return haystack_retriever()
'''


def readme_example(name: str) -> str:
    """The Python block between ``<!-- name-example:start -->`` and its end marker."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(rf"<!-- {name}-example:start -->\n```python\n(.*?)```\n"
                       rf"<!-- {name}-example:end -->", text, re.S)
    assert len(found) == 1, f"README.md must hold one {name} example between its markers"
    return found[0]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
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
