"""Symbolic metric names for checks: ``assert_metric(recall_at_k >= 0.8)``.

Every key of the registry is a :class:`~pytest_rag.stages.checks.MetricRef`
here, resolved against the running test's latest report that has the key.
Keys shared by several stages (``ndcg_at_k``, ``p95_latency_ms``,
``answer_f1``, ...) can be qualified by stage: ``retrieval.ndcg_at_k``,
``reranking.ndcg_at_k``.

The names are made from :data:`pytest_rag.registry.REGISTRY`; nothing here
lists them again.
"""

from __future__ import annotations

import sys
from types import FrameType, SimpleNamespace
from typing import Any

from .errors import did_you_mean
from .registry import REGISTRY, STAGES
from .stages.checks import MetricRef


def _stage_namespace(stage: str) -> SimpleNamespace:
    keys = [spec.key for spec in REGISTRY.values() if spec.stage == stage]
    return SimpleNamespace(**{key: MetricRef(key, stage) for key in keys})


_KEYS: dict[str, MetricRef] = {}
for _spec in REGISTRY.values():
    _KEYS.setdefault(_spec.key, MetricRef(_spec.key))
_STAGES: dict[str, SimpleNamespace] = {stage: _stage_namespace(stage) for stage in STAGES}

globals().update(_KEYS)
globals().update(_STAGES)

__all__ = sorted(_KEYS) + list(STAGES)


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs ``from pytest_rag.metrics import name`` (whose AttributeError
    Python replaces with an ImportError that drops the message)."""
    import dis

    try:
        return frame is not None and dis.opname[frame.f_code.co_code[frame.f_lasti]] == (
            "IMPORT_FROM")
    except (IndexError, AttributeError):  # another interpreter's frames: no hint
        return False


def __getattr__(name: str) -> Any:
    hint = "" if name.startswith("_") else did_you_mean(name, [*_KEYS, *_STAGES])
    message = (f"pytest_rag.metrics has no metric {name!r}{hint}; `pytest-rag metrics` "
               "lists them")
    if _importing(sys._getframe(1)):
        raise ImportError(message, name=__name__)
    raise AttributeError(message)
