"""How the time of four kernels grows with their input: ``python tests/benchmarks/bench_growth.py``.

Each workload runs at a size and at 4x (or 10x) that size; the table shows
both times, their ratio and the exponent it implies (1: linear, 2: quadratic).
Issue 25 and 27 measured these as quadratic before:

- chunk placement (``kernels/positions.py``) over 5,000 and 50,000 documents;
- framework objects without offsets in ranked lists over one document of
  30k and 120k words (``dataset/frameworks.py``, ``text/occurrences.py``);
- ROUGE-L of a 40k and a 400k-token answer against a 400-token reference
  (``kernels/answers.py``);
- ``lexical_cohesion`` of one chunk of 2,000 and 8,000 different sentences
  (``kernels/cohesion.py``): memory is bounded, time still grows with the
  sentence pairs that share a word (exponent near 2 by nature); identical
  sentences are counted together, and a chunk needing more than
  ``PAIR_WORD_LIMIT`` (2e8) (pair, shared word) counts is not measured, so
  one chunk costs a few seconds at most.

Not part of ``run.py`` (no peer); the tests check outputs, this checks growth.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pytest_rag.dataset.arguments import resolve_inputs
from pytest_rag.kernels import positions
from pytest_rag.kernels.answers import rouge_l_f1
from pytest_rag.stages.chunking import ChunkingEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator


class _Copy:
    """A retriever's copy of a LangChain Document, without ``start_index``."""

    def __init__(self, text: str) -> None:
        self.page_content = text
        self.metadata = {"source": "d"}
        self.id = None


def _positions(size: int) -> Callable[[], object]:
    documents = {f"d{i}": f"word{i} other words here. And more." for i in range(size)}
    chunks = [{"id": f"c{i}", "doc_id": f"d{i}", "start": 0, "end": 4} for i in range(size)]
    dataset = resolve_inputs(None, {"documents": documents, "chunks": chunks})
    for document in dataset.documents:
        _ = document.tokens  # tokenized before timing: the placement alone is timed
    rng = np.random.default_rng(4)
    docs = rng.integers(0, size, 2 * size)  # two spans per document, interleaved
    starts = np.zeros(2 * size, dtype=np.int64)
    ends = np.full(2 * size, 9, dtype=np.int64)
    base = np.arange(size + 1, dtype=np.int64) * 6
    return lambda: positions._place(dataset, base, docs, starts, ends)


def _objects(words: int) -> Callable[[], object]:
    rng = random.Random(1)
    vocabulary = [f"w{i}" for i in range(5000)]
    tokens = [rng.choice(vocabulary) for _ in range(words)]
    text = " ".join(tokens)
    pieces = [" ".join(tokens[i:i + 100]) for i in range(0, words, 100)]
    ranked = {f"q{i}": [_Copy(pieces[(i * 7 + j) % len(pieces)]) for j in range(5)]
              for i in range(len(pieces))}
    evaluator = RetrievalEvaluator()
    return lambda: evaluator.evaluate(documents={"d": text}, retrieved_ids=ranked)


def _rouge(tokens: int) -> Callable[[], object]:
    rng = random.Random(2)
    vocabulary = [f"w{i}" for i in range(2000)]
    answer = [rng.choice(vocabulary) for _ in range(tokens)]
    reference = [rng.choice(vocabulary) for _ in range(400)]
    return lambda: rouge_l_f1(answer, reference)


def _cohesion(sentences: int) -> Callable[[], object]:
    rng = random.Random(3)
    vocabulary = ["the", "a", "of", "and"] + [f"w{i}" for i in range(3000)]
    words = (vocabulary[min(int(rng.paretovariate(1.0)) - 1, len(vocabulary) - 1)]
             for _ in range(sentences * 10))
    text = " ".join(" ".join(next(words) for _ in range(10)) + "." for _ in range(sentences))
    chunk = [{"id": "c", "doc_id": "d", "start": 0, "end": len(text)}]
    evaluator = ChunkingEvaluator()
    return lambda: evaluator.evaluate(documents={"d": text}, chunks=chunk)


WORKLOADS: list[tuple[str, Callable[[int], Callable[[], object]], int, int]] = [
    ("chunk placement, documents", _positions, 5_000, 50_000),
    ("framework objects, words", _objects, 30_000, 120_000),
    ("ROUGE-L, answer tokens", _rouge, 40_000, 400_000),
    ("lexical_cohesion, sentences", _cohesion, 2_000, 8_000),
]


def _best(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    print(f"{'workload':32} {'small':>9} {'large':>9} {'x size':>7} {'x time':>7} {'exponent':>8}")
    for name, make, small, large in WORKLOADS:
        first, second = _best(make(small)), _best(make(large))
        exponent = math.log(second / first) / math.log(large / small)
        print(f"{name:32} {small:>9,} {large:>9,} {large / small:>7.1f} "
              f"{second / first:>7.1f} {exponent:>8.2f}")


if __name__ == "__main__":
    main()
