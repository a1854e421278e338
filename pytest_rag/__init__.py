"""pytest-rag: deterministic, stage-by-stage RAG regression testing for pytest.

The public API is re-exported here.  Names are loaded on first use, so that
``import pytest_rag`` stays cheap and does not import numpy: numpy is imported
only when metrics are computed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

__all__ = [
    "EVALUATORS",
    "REGISTRY",
    "STAGES",
    "AugmentationEvaluator",
    "ChunkingEvaluator",
    "Comparison",
    "Dataset",
    "DatasetError",
    "Direction",
    "EmbeddingEvaluator",
    "EndToEndEvaluator",
    "GenerationEvaluator",
    "MetricSpec",
    "MetricValue",
    "Rag",
    "Report",
    "RerankingEvaluator",
    "RetrievalEvaluator",
    "assert_metric",
    "evaluate_dataset",
    "load_dataset",
    "parse_dataset",
]

_LOCATIONS: dict[str, str] = {
    "assert_metric": "pytest_rag.stages.checks",
    "Comparison": "pytest_rag.stages.checks",
    "MetricValue": "pytest_rag.stages.checks",
    "AugmentationEvaluator": "pytest_rag.stages.augmentation",
    "ChunkingEvaluator": "pytest_rag.stages.chunking",
    "EmbeddingEvaluator": "pytest_rag.stages.embedding",
    "EndToEndEvaluator": "pytest_rag.stages.end_to_end",
    "GenerationEvaluator": "pytest_rag.stages.generation",
    "RerankingEvaluator": "pytest_rag.stages.reranking",
    "RetrievalEvaluator": "pytest_rag.stages.retrieval",
    "Dataset": "pytest_rag.dataset.model",
    "DatasetError": "pytest_rag.errors",
    "Direction": "pytest_rag.registry",
    "MetricSpec": "pytest_rag.registry",
    "REGISTRY": "pytest_rag.registry",
    "STAGES": "pytest_rag.registry",
    "Report": "pytest_rag.stages.report",
    "Rag": "pytest_rag.plugin.fixture",
    "EVALUATORS": "pytest_rag.stages.evaluate",
    "evaluate_dataset": "pytest_rag.stages.evaluate",
    "load_dataset": "pytest_rag.dataset.loading",
    "parse_dataset": "pytest_rag.dataset.parser",
}

if TYPE_CHECKING:
    from .dataset.loading import load_dataset
    from .dataset.model import Dataset
    from .dataset.parser import parse_dataset
    from .errors import DatasetError
    from .plugin.fixture import Rag
    from .registry import REGISTRY, STAGES, Direction, MetricSpec
    from .stages.augmentation import AugmentationEvaluator
    from .stages.checks import Comparison, MetricValue, assert_metric
    from .stages.chunking import ChunkingEvaluator
    from .stages.embedding import EmbeddingEvaluator
    from .stages.end_to_end import EndToEndEvaluator
    from .stages.evaluate import EVALUATORS, evaluate_dataset
    from .stages.generation import GenerationEvaluator
    from .stages.report import Report
    from .stages.reranking import RerankingEvaluator
    from .stages.retrieval import RetrievalEvaluator


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
