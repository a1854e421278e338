"""The SQuAD v1.1 evaluation logic for exact match and token F1, rewritten small.

What the official script does, per answer and reference: lowercase, delete
every ASCII punctuation character, drop the articles ``a``, ``an``, ``the``
(a regular expression on word boundaries), collapse whitespace and split on
it.  Exact match compares the two normalized strings; F1 is ``2PR / (P + R)``
with ``P`` and ``R`` from the size of the ``Counter`` intersection of the two
token lists.  As in the script, each of the two metrics normalizes both texts
itself, and the best score over the references is kept.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """Lowercase, no punctuation, no articles, single spaces."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, truth: str) -> float:
    return float(normalize(prediction) == normalize(truth))


def f1(prediction: str, truth: str) -> float:
    predicted, true = normalize(prediction).split(), normalize(truth).split()
    same = sum((Counter(predicted) & Counter(true)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(true)
    return 2 * precision * recall / (precision + recall)


def best_over(metric: Callable[[str, str], float], prediction: str, truths: Sequence[str]) -> float:
    return max(metric(prediction, truth) for truth in truths)


def evaluate(answers: dict[str, str], references: dict[str, list[str]]
             ) -> dict[str, tuple[float, float]]:
    """``{query: (exact match, F1)}``."""
    return {query: (best_over(exact_match, answer, references[query]),
                    best_over(f1, answer, references[query]))
            for query, answer in answers.items()}
