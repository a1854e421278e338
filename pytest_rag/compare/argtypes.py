"""Command-line value parsers shared by ``pytest-rag`` and the pytest options."""

from __future__ import annotations

import argparse
import math

from .thresholds import Tolerance, parse_latency_tolerance

__all__ = ["latency_tolerance", "non_negative", "non_negative_int", "positive_int",
           "significance_level"]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _whole(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (``--k``)."""
    return _whole(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (token counts and tolerances)."""
    return _whole(text, 0)


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


def latency_tolerance(text: str) -> Tolerance:
    """``'PERCENT% + MS'``, ``'PERCENT%'`` or ``'MS'`` (``--latency-tolerance``)."""
    try:
        return parse_latency_tolerance(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
