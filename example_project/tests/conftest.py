"""Session fixtures: the gold data, and the pipeline built and run once per session.

``RAGAPP_CHUNKER`` picks the chunker of the pipeline under test (``markdown``
by default; ``naive`` shows the baseline gate at work).  Under pytest-xdist
each worker builds its own pipeline; everything but the latencies is
bit-for-bit the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rag import Dataset, load_dataset
from ragapp import Document, Pipeline, PipelineConfig
from support import Bench, documents_of

DATA = Path(__file__).resolve().parent.parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    try:
        PipelineConfig.from_env()
    except ValueError as error:
        raise pytest.UsageError(f"RAGAPP_CHUNKER: {error}") from None


def pytest_report_header(config: pytest.Config) -> str:
    settings = PipelineConfig.from_env()
    params = " ".join(f"{key}={value}" for key, value in settings.chunk_params.items())
    return f"ragapp: chunker {settings.chunker} ({params}); set RAGAPP_CHUNKER to change it"


def _bench(name: str, gold: Dataset, config: PipelineConfig) -> Bench:
    pipeline = Pipeline(config, documents_of(gold))
    traces = {query.id: pipeline.ask(query.question or "") for query in gold.queries}
    return Bench(name, gold, pipeline, traces)


@pytest.fixture(scope="session")
def pipeline_config() -> PipelineConfig:
    """The configuration under test: the defaults, or RAGAPP_CHUNKER's chunker."""
    return PipelineConfig.from_env()


@pytest.fixture(scope="session")
def top_k(pytestconfig: pytest.Config) -> int:
    """The K of the ranking metrics (ini ``rag_k``), also the pipeline's search depth in tests."""
    return int(pytestconfig.getini("rag_k") or 5)


@pytest.fixture(scope="session")
def chroma_gold() -> Dataset:
    """Five corpora (chat logs, a speech, Wikipedia, PubMed, financial filings), 363 questions."""
    return load_dataset(DATA / "chroma" / "gold.json")


@pytest.fixture(scope="session")
def chroma_documents(chroma_gold: Dataset) -> list[Document]:
    return documents_of(chroma_gold)


@pytest.fixture(scope="session")
def clapnq_gold() -> Dataset:
    """298 Wikipedia passages, 150 answerable and 150 unanswerable questions."""
    return load_dataset(DATA / "clapnq" / "gold.json")


@pytest.fixture(scope="session")
def chroma(chroma_gold: Dataset, pipeline_config: PipelineConfig) -> Bench:
    """The pipeline over the chroma corpora, with its answer to every question."""
    return _bench("chroma", chroma_gold, pipeline_config)


@pytest.fixture(scope="session")
def clapnq(clapnq_gold: Dataset, pipeline_config: PipelineConfig) -> Bench:
    """The pipeline over the ClapNQ passages, with its answer to every question."""
    return _bench("clapnq", clapnq_gold, pipeline_config)


@pytest.fixture
def bench(request: pytest.FixtureRequest) -> Bench:
    """One of the benches, by name, for tests parametrized over both (see support.BOTH)."""
    bench: Bench = request.getfixturevalue(request.param)
    return bench
