"""Rebuild this folder's data from the project's shared public data.

The example ships its own copy of the data, so nobody needs to run this.  It
is kept to show exactly how the copy was cut, and to redo the cut after an
upstream change::

    python data/build_subset.py /path/to/shared/data

It reads ``chroma_chunking/*.md`` and ``*.gold.json`` and
``clapnq/clapnq_dev.gold.json`` from that folder, and writes ``chroma/`` and
``clapnq/`` next to this file.  Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: corpus id -> (title, how to cut it).  ``None`` keeps the whole file.
CHROMA: dict[str, tuple[str, str | None]] = {
    "chatlogs": ("Support chat transcripts", None),
    "state_of_the_union": ("State of the Union address, 2024", None),
    "wikitexts": ("WikiText articles", None),
    "pubmed": ("PubMed Central open-access articles", "articles:5"),
    "finance": ("Financial filing excerpts", "paragraphs:150000"),
}
CLAPNQ_PER_KIND = 150  # the first N answerable and the first N unanswerable questions


def _cut(text: str, rule: str | None) -> str:
    """The kept prefix of a corpus: whole articles or whole paragraphs only."""
    if rule is None:
        return text
    kind, _, amount = rule.partition(":")
    limit = int(amount)
    if kind == "articles":  # PubMed articles each start with a "PMID:" line
        starts = [match.start() for match in re.finditer(r"^PMID:", text, flags=re.M)]
        return text[:starts[limit]] if len(starts) > limit else text
    if kind == "paragraphs":  # up to the last blank line before `limit` characters
        end = text.rfind("\n\n", 0, limit)
        return text[:end + 1]
    raise ValueError(f"unknown cut rule {rule!r}")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def build_chroma(source: Path) -> tuple[int, int]:
    documents, queries = [], []
    (HERE / "chroma").mkdir(parents=True, exist_ok=True)
    for corpus, (title, rule) in CHROMA.items():
        full = (source / "chroma_chunking" / f"{corpus}.md").read_bytes().decode("utf-8")
        text = _cut(full, rule)
        (HERE / "chroma" / f"{corpus}.md").write_bytes(text.encode("utf-8"))
        documents.append({"id": corpus, "path": f"{corpus}.md",
                          "metadata": {"source": f"{corpus}.md", "title": title}})
        gold = json.loads((source / "chroma_chunking" / f"{corpus}.gold.json").read_text("utf-8"))
        for query in gold["queries"]:
            spans = query["expected_evidence"]
            if all(span["end"] <= len(text) for span in spans):
                queries.append({"id": query["id"], "question": query["question"],
                                "expected_evidence": spans, "answerable": True})
    _write_json(HERE / "chroma" / "gold.json",
                {"format": "pytest-rag/v1", "documents": documents, "queries": queries})
    return len(documents), len(queries)


def build_clapnq(source: Path) -> tuple[int, int]:
    gold = json.loads((source / "clapnq" / "clapnq_dev.gold.json").read_text("utf-8"))
    kept: list[dict[str, Any]] = []
    for answerable in (True, False):
        kept += [q for q in gold["queries"] if q["answerable"] is answerable][:CLAPNQ_PER_KIND]
    wanted = {f"unans-{q['id']}" for q in kept if not q["answerable"]}
    wanted |= {span["doc_id"] for q in kept for span in q.get("expected_evidence", [])}
    # An answerable question without evidence spans still brings its passage:
    # the passages name their questions in metadata.query_ids.
    ids = {q["id"] for q in kept}
    documents = []
    for document in gold["documents"]:
        meta = document["metadata"]
        if document["id"] in wanted or ids & set(meta.get("query_ids", [])):
            documents.append({"id": document["id"], "text": document["text"],
                              "metadata": {"title": meta["title"], "source": meta["source"]}})
    queries = [{key: q[key] for key in ("id", "question", "expected_evidence",
                                        "reference_answer", "answerable") if key in q}
               for q in kept]
    _write_json(HERE / "clapnq" / "gold.json",
                {"format": "pytest-rag/v1", "documents": documents, "queries": queries})
    return len(documents), len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the shared data folder")
    args = parser.parse_args()
    documents, questions = build_chroma(args.source)
    print(f"chroma: {documents} documents, {questions} questions")
    documents, questions = build_clapnq(args.source)
    print(f"clapnq: {documents} passages, {questions} questions")


if __name__ == "__main__":
    main()
