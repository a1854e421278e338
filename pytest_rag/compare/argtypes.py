"""Command-line value parsers shared by ``pytest-rag`` and the pytest options."""

from __future__ import annotations

import argparse
import math

__all__ = ["non_negative", "positive_int", "significance_level"]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def positive_int(text: str) -> int:
    """A whole number >= 1 (``--k``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative(text: str) -> float:
    """A finite number >= 0 (tolerances)."""
    value = _number(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def significance_level(text: str) -> float:
    """A number strictly between 0 and 1 (``--significance``, ``--rag-significance``)."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value
