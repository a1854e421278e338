"""Evaluating every stage a dataset has data for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..dataset.model import Dataset
from ..errors import unknown_names
from ..registry import STAGES
from ._base import StageEvaluator
from .augmentation import AugmentationEvaluator
from .chunking import ChunkingEvaluator
from .embedding import EmbeddingEvaluator
from .end_to_end import EndToEndEvaluator
from .generation import GenerationEvaluator
from .report import Report
from .reranking import RerankingEvaluator
from .retrieval import RetrievalEvaluator

__all__ = ["EVALUATORS", "evaluate_dataset", "make_evaluator"]

#: Stage key to its evaluator class.
EVALUATORS: dict[str, type[StageEvaluator[Any]]] = {
    "chunking": ChunkingEvaluator,
    "embedding": EmbeddingEvaluator,
    "retrieval": RetrievalEvaluator,
    "reranking": RerankingEvaluator,
    "augmentation": AugmentationEvaluator,
    "generation": GenerationEvaluator,
    "end_to_end": EndToEndEvaluator,
}


def make_evaluator(stage: str, **settings: Any) -> StageEvaluator[Any]:
    """The evaluator of ``stage`` with the settings it takes (others are ignored)."""
    if stage not in EVALUATORS:
        raise ValueError(f"unknown stage {stage!r}; known: {', '.join(STAGES)}")
    cls = EVALUATORS[stage]
    accepted = cls.settings_names
    return cls(**{name: value for name, value in settings.items()
                  if name in accepted and value is not None})


def evaluator_settings() -> tuple[str, ...]:
    """Every setting any evaluator takes, in stage order, each once: the flags of
    ``pytest-rag evaluate`` and the keys of the format's ``params``."""
    return tuple(dict.fromkeys(name for stage in STAGES
                               for name in EVALUATORS[stage].settings_names))


def evaluate_dataset(dataset: Dataset, stages: Iterable[str] | None = None,
                     **settings: Any) -> dict[str, Report]:
    """Evaluate ``stages`` (default: all seven, in pipeline order) on ``dataset``.

    ``settings`` (``k``, ``size_limits``, ...) go to the evaluators that take
    them and override the dataset's ``params``.  Stages without data return a
    report whose values are all ``None``.
    """
    if stages is None:
        chosen = list(STAGES)
    elif isinstance(stages, str) or not isinstance(stages, Iterable):
        raise TypeError(f"stages must be a list of stage names ({', '.join(STAGES)}), "
                        f"got {stages!r}")
    else:
        chosen = list(stages)
    known = {name for cls in EVALUATORS.values() for name in cls.settings_names}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(f"unexpected setting(s) {unknown_names(unknown, known)}; "
                        f"settings: {', '.join(sorted(known))}")
    return {stage: make_evaluator(stage, **settings).evaluate(dataset) for stage in chosen}
