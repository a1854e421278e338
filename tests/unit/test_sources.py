"""Files of other tools: TREC qrels and runs, BEIR folders, ragas rows, and run files.

The TREC tests convert trec_eval's own files and compare with trec_eval's printed
values (the conformance cases in ../shared/data/trec_eval/cases); the BEIR test
builds a BEIR folder from the ClapNQ gold.  Both skip without ../shared.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_rag import DatasetError, load_dataset
from pytest_rag.cli import main
from pytest_rag.dataset.sources import ragas as ragas_source
from pytest_rag.dataset.sources.ragas import context_id
from pytest_rag.stages.generation import GenerationEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TREC = SHARED / "trec_eval"
CLAPNQ = SHARED / "clapnq" / "clapnq_dev.gold.json"
needs_trec = pytest.mark.skipif(not (TREC / "qrels.test").is_file(),
                                reason=f"shared data absent: {TREC / 'qrels.test'} not found")
needs_clapnq = pytest.mark.skipif(not CLAPNQ.is_file(),
                                  reason=f"shared data absent: {CLAPNQ} not found")


def cli(*argv: str) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# -- TREC ---------------------------------------------------------------------------------

@needs_trec
@pytest.mark.parametrize(("family", "qrels", "run", "level"), [
    ("trec", "qrels.test", "results.test", 1),
    ("trec_l2", "qrels.rel_level", "results.test", 2),
    ("trec_trunc", "qrels.test", "results.trunc", 1),
])
def test_converted_trec_files_give_trec_evals_values(tmp_path: Path, family: str, qrels: str,
                                                     run: str, level: int) -> None:
    output = tmp_path / "gold.yaml"
    status, out, err = cli("convert", "trec", "--qrels", str(TREC / qrels), "--run",
                           str(TREC / run), "--relevance-level", str(level), "-o", str(output))
    assert status == 0, err
    assert out.startswith(f"{output}: written, 0 documents, 0 chunks, 3 queries")
    dataset = load_dataset(output)
    cases = sorted((TREC / "cases").glob(f"{family}_3[0-9][0-9]_k*.json"))
    assert cases
    for case in cases:
        data = json.loads(case.read_text(encoding="utf-8"))
        topic = data["queries"][0]["id"]
        per_query = RetrievalEvaluator(k=data["params"]["k"]).evaluate(dataset).per_query
        for key, expected in data["expected"]["retrieval"].items():
            got = per_query[key][topic]
            assert got is not None and math.isclose(got, expected, abs_tol=1e-4), (
                case.name, key, got, expected)


@needs_trec
def test_trec_files_load_directly_and_equal_the_conversion(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.test"
    qrels.write_bytes((TREC / "qrels.test").read_bytes())
    output = tmp_path / "gold.json"
    assert cli("convert", "trec", "--qrels", str(qrels), "--run", str(TREC / "results.test"),
               "-o", str(output))[0] == 0
    direct = load_dataset(qrels, run=TREC / "results.test")
    converted = load_dataset(output)
    assert direct.queries == converted.queries and direct.run == converted.run


@pytest.mark.parametrize(("name", "text", "message"), [
    ("qrels.txt", "301 0 doc1 1\n301 0 doc2\n",
     "line 2: expected 4 fields (topic iteration docno relevance), got 3: '301 0 doc2'"),
    ("qrels.txt", "301 0 doc1 yes\n",
     "line 1: relevance 'yes' is not a whole number in ASCII digits"),
    ("qrels.txt", "301 0 doc1 1.5\n",
     "line 1: relevance '1.5' is not a whole number in ASCII digits"),
    # trec_eval reads ASCII digits only (atol): these are not 1, 3 and 10.
    ("qrels.txt", "301 0 doc1 \uff11\n",
     "line 1: relevance '\uff11' is not a whole number in ASCII digits"),
    ("qrels.txt", "301 0 doc1 \u0663\n",
     "line 1: relevance '\u0663' is not a whole number in ASCII digits"),
    ("qrels.txt", "301 0 doc1 1_0\n",
     "line 1: relevance '1_0' is not a whole number in ASCII digits"),
    # Fields are split on ASCII whitespace only: a no-break space is part of a field.
    ("qrels.txt", "301 0 doc1\u00a01\n",
     "line 1: expected 4 fields (topic iteration docno relevance), got 3: '301 0 doc1\\xa01'"),
    ("qrels.txt", "301 0 doc1 1\n301 0 doc1 0\n",
     "line 2: document 'doc1' is judged twice for topic '301'"),
])
def test_malformed_qrels_lines_are_located(tmp_path: Path, name: str, text: str,
                                           message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert str(raised.value) == f"{path}: {message}"


def test_a_trec_run_orders_by_score_then_docno_descending(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 a 1\n1 0 c 1\n", encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 3 0.5 x\n1 Q0 b 1 0.9 x\n1 Q0 c 2 0.5 x\n9 Q0 z 1 1.0 x\n",
                   encoding="utf-8")
    dataset = load_dataset(qrels, run=run)
    assert dataset.run["1"].retrieved_ids == ("b", "c", "a")  # topic 9 is not judged: left out
    assert list(dataset.run) == ["1"]
    run.write_text("1 Q0 a 1 high x\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"run.txt: line 1: score 'high' is not a finite"):
        load_dataset(qrels, run=run)
    for score in ("1_0", "\uff11", "\u0663", "inf"):
        run.write_text(f"1 Q0 a 1 {score} x\n", encoding="utf-8")
        with pytest.raises(DatasetError, match=r"line 1: score '.*' is not a finite number in "
                                               "ASCII digits"):
            load_dataset(qrels, run=run)


def test_trec_comment_lines_are_skipped_as_trec_eval_skips_them(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("# judged by hand\n1 0 a 1\n#1 0 b 1\n1 0 c 2\n", encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("# run of 2024\n1 Q0 a 1 0.5 x\n  # 1 Q0 b 1 0.9 x\n1 Q0 c 2 .7e0 x\n",
                   encoding="utf-8")
    dataset = load_dataset(qrels, run=run)
    assert dataset.queries[0].relevant == {"a": 1, "c": 2}
    assert dataset.run["1"].retrieved_ids == ("c", "a")


# -- BEIR ---------------------------------------------------------------------------------

def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@needs_clapnq
def test_a_beir_folder_built_from_clapnq(tmp_path: Path) -> None:
    gold = json.loads(CLAPNQ.read_text(encoding="utf-8"))
    queries = [q for q in gold["queries"] if q.get("expected_evidence")][:40]
    passages = {span["doc_id"] for q in queries for span in q["expected_evidence"]}
    documents = [d for d in gold["documents"] if d["id"] in passages]
    folder = tmp_path / "clapnq"
    (folder / "qrels").mkdir(parents=True)
    write_jsonl(folder / "corpus.jsonl", [{"_id": d["id"], "title": "", "text": d["text"]}
                                          for d in documents])
    write_jsonl(folder / "queries.jsonl", [{"_id": q["id"], "text": q["question"]}
                                           for q in queries])
    relevant = {q["id"]: sorted({span["doc_id"] for span in q["expected_evidence"]})
                for q in queries}
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, docs in relevant.items()
                                                 for d in docs), encoding="utf-8")
    output = tmp_path / "gold.yaml"
    status, _out, err = cli("convert", "beir", str(folder), "-o", str(output))
    assert status == 0, err
    converted = load_dataset(output)
    direct = load_dataset(folder)
    assert converted.queries == direct.queries and converted.chunks == direct.chunks
    assert [q.id for q in converted.queries] == list(relevant)
    assert {q.id: sorted(q.relevant or {}) for q in converted.queries} == relevant
    assert {q.id: q.question for q in converted.queries} == {q["id"]: q["question"]
                                                              for q in queries}
    # A run of the first corpus id per query: the same metrics as the hand-made dataset.
    retrieved = {q: [docs[0], documents[0]["id"]] for q, docs in relevant.items()}
    by_hand = RetrievalEvaluator(k=2).evaluate(
        documents=[{"id": d["id"], "text": d["text"]} for d in documents],
        chunks=[{"id": d["id"], "doc_id": d["id"], "start": 0, "end": len(d["text"])}
                for d in documents],
        queries=[{"id": q, "relevant": dict.fromkeys(docs, 1)} for q, docs in relevant.items()],
        retrieved_ids=retrieved)
    assert RetrievalEvaluator(k=2).evaluate(direct, retrieved_ids=retrieved).values == \
        by_hand.values


def test_a_beir_folder_without_the_split_names_the_splits(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "dev.tsv").write_text("q\td\t1\n", encoding="utf-8")
    status, _, err = cli("convert", "beir", str(tmp_path), "-o", str(tmp_path / "g.yaml"))
    assert status == 2
    assert err == (f"pytest-rag: error: {tmp_path}: no qrels/test.tsv (a BEIR folder holds "
                   "corpus.jsonl, queries.jsonl and qrels/<split>.tsv); splits found: 'dev'\n")


# -- ragas --------------------------------------------------------------------------------

RAGAS_ROWS = [
    {"user_input": "When are refunds paid?",
     "retrieved_contexts": ["Shipping takes 3 days.", "Refunds are paid within 14 days."],
     "reference_contexts": ["Refunds are paid within 14 days."],
     "response": "Within 14 days.", "reference": "Within 14 days."},
    {"user_input": "How long is shipping?", "retrieved_contexts": ["Returns are free."],
     "reference_contexts": ["Shipping takes 3 days."], "response": "A week.",
     "reference": "3 days."},
]


def check_ragas(dataset: Any) -> None:
    refund, shipping = context_id("Refunds are paid within 14 days."), context_id(
        "Shipping takes 3 days.")
    assert [q.id for q in dataset.queries] == ["row-1", "row-2"]
    assert dataset.queries[0].relevant == {refund: 1}
    assert dataset.run["row-1"].retrieved_ids == (shipping, refund)
    assert len(dataset.documents) == 3  # each distinct text once
    retrieval = RetrievalEvaluator(k=2).evaluate(dataset)
    assert retrieval.per_query["recall_at_k"] == {"row-1": 1.0, "row-2": 0.0}
    assert retrieval.per_query["mrr_at_k"] == {"row-1": 0.5, "row-2": 0.0}
    generation = GenerationEvaluator().evaluate(dataset)
    assert generation.per_query["exact_match"] == {"row-1": 1.0, "row-2": 0.0}


def test_ragas_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = tmp_path / "eval.jsonl"
    write_jsonl(jsonl, RAGAS_ROWS)
    check_ragas(load_dataset(jsonl))
    table = tmp_path / "eval.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(RAGAS_ROWS[0]))
        writer.writeheader()
        for row in RAGAS_ROWS:  # lists as pandas writes them: Python literals
            writer.writerow({key: repr(value) if isinstance(value, list) else value
                             for key, value in row.items()})
    check_ragas(load_dataset(table))
    output = tmp_path / "gold.json"
    assert cli("convert", "ragas", str(table), "-o", str(output))[0] == 0
    check_ragas(load_dataset(output))


def test_ragas_context_ids_are_128_bit_digests() -> None:
    refund = context_id("Refunds are paid within 14 days.")
    assert re.fullmatch(r"ctx-[0-9a-f]{32}", refund)
    assert context_id("Refunds are paid within 14 days.") == refund  # stable
    assert context_id("Refunds are paid within 15 days.") != refund


def test_different_ragas_texts_never_share_an_id(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two texts whose digests collide (forced here: every digest is the same) get
    different ids; the retrieved text that says the opposite is not relevant, and
    ``convert`` keeps both."""
    monkeypatch.setattr(ragas_source, "_digest", lambda text: "0" * 32)
    said, opposite = "Refunds are paid within 14 days.", "Refunds are never paid."
    path = tmp_path / "eval.jsonl"
    write_jsonl(path, [
        {"user_input": "When are refunds paid?", "retrieved_contexts": [opposite],
         "reference_contexts": [said]},
        {"user_input": "Are refunds paid?", "retrieved_contexts": [said, opposite],
         "reference_contexts": [opposite]},
    ])
    dataset = load_dataset(path)
    texts = {document.id: document.text for document in dataset.documents}
    assert sorted(texts.values()) == sorted([said, opposite])  # nothing lost
    ids = {text: doc_id for doc_id, text in texts.items()}
    assert dataset.queries[0].relevant == {ids[said]: 1}
    assert dataset.run["row-1"].retrieved_ids == (ids[opposite],)
    assert dataset.run["row-2"].retrieved_ids == (ids[said], ids[opposite])
    assert dataset.queries[1].relevant == {ids[opposite]: 1}
    recall = RetrievalEvaluator(k=2).evaluate(dataset).per_query["recall_at_k"]
    assert recall == {"row-1": 0.0, "row-2": 1.0}
    output = tmp_path / "gold.json"
    assert cli("convert", "ragas", str(path), "-o", str(output))[0] == 0
    converted = json.loads(output.read_text(encoding="utf-8"))
    assert sorted(document["text"] for document in converted["documents"]) == sorted(
        [said, opposite])


def test_ragas_old_column_names_are_read(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    write_jsonl(path, [{"question": row["user_input"], "contexts": row["retrieved_contexts"],
                        "answer": row["response"], "ground_truth": row["reference"],
                        "reference_contexts": row["reference_contexts"]} for row in RAGAS_ROWS])
    check_ragas(load_dataset(path))


@pytest.mark.parametrize(("row", "message"), [
    ({"user_input": "q", "retrieved_contexts": "not a list"},
     "line 1: retrieved_contexts: expected a list of strings, got 'not a list'"),
    ({"user_input": "q", "retrieved_contexts": ["ok", ""]},
     "line 1: retrieved_contexts: an empty context"),
    ({"name": "q"}, "line 1: no ragas column (user_input, retrieved_contexts, "
                    "reference_contexts, response, reference); found: 'name'"),
])
def test_malformed_ragas_rows_are_located(tmp_path: Path, row: dict[str, Any],
                                          message: str) -> None:
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, [row])
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert str(raised.value) == f"{path}: {message}"


# -- run files ----------------------------------------------------------------------------

GOLD = ("documents: [{id: d, text: alpha beta gamma}]\n"
        "chunks: [{id: a, doc_id: d, start: 0, end: 5}, {id: b, doc_id: d, start: 6, end: 10}]\n"
        "queries: [{id: q1, relevant: {a: 1}}]\n")


@pytest.mark.parametrize("run", ["q1: {retrieved_ids: [b, a]}\n",
                                 "run:\n  q1: {retrieved_ids: [b, a]}\n"])
def test_evaluate_with_a_separate_run_file(tmp_path: Path, run: str) -> None:
    (tmp_path / "gold.yaml").write_text(GOLD, encoding="utf-8")
    (tmp_path / "run.yaml").write_text(run, encoding="utf-8")
    status, out, err = cli("evaluate", str(tmp_path / "gold.yaml"), "--run",
                           str(tmp_path / "run.yaml"), "--format", "json", "--k", "2")
    assert status == 0, err
    assert json.loads(out)["retrieval"]["mrr_at_k"] == 0.5


def test_errors_in_a_run_file_name_the_run_file(tmp_path: Path) -> None:
    (tmp_path / "gold.yaml").write_text(GOLD, encoding="utf-8")
    run = tmp_path / "run.yaml"
    run.write_text("run:\n  q1: {retrieved_ids: [b, 7]}\n", encoding="utf-8")
    status, _, err = cli("evaluate", str(tmp_path / "gold.yaml"), "--run", str(run))
    assert status == 2
    assert err == f"pytest-rag: error: {run}: run.q1.retrieved_ids[1]: expected a string, got a " \
                  "number 7\n"
    run.write_text("q9: {retrieved_ids: [a]}\n", encoding="utf-8")
    status, _, err = cli("validate", str(tmp_path / "gold.yaml"), "--run", str(run))
    assert err == f"pytest-rag: error: {run}: q9: query 'q9' is not in 'queries'\n"
    status, _, err = cli("validate", str(tmp_path / "gold.yaml"), "--run",
                         str(tmp_path / "none.yaml"))
    assert err == f"pytest-rag: error: {tmp_path / 'none.yaml'}: file not found\n"
    status, _, err = cli("validate", str(tmp_path / "gold.yaml"), "--run", str(tmp_path))
    assert err == f"pytest-rag: error: {tmp_path}: is a directory, not a regular file\n"


def test_an_unknown_chunk_in_a_run_file_names_the_run_file(tmp_path: Path) -> None:
    """Found only when the token metrics look for its span: still the run file's place."""
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents: [{id: d, text: alpha beta gamma}]\n"
                    "chunks: [{id: a, doc_id: d, start: 0, end: 5}]\n"
                    "queries: [{id: q1, expected_evidence: [{doc_id: d, start: 0, end: 5}]}]\n",
                    encoding="utf-8")
    for text, place in (("q1: {retrieved_ids: [zz]}\n", "q1"),
                        ("run:\n  q1: {retrieved_ids: [zz]}\n", "run.q1")):
        run = tmp_path / "run.yaml"
        run.write_text(text, encoding="utf-8")
        status, _, err = cli("evaluate", str(gold), "--run", str(run), "--stage", "retrieval")
        assert (status, err) == (2, f"pytest-rag: error: {run}: {place}.retrieved_ids[0]: "
                                    "unknown chunk 'zz': token metrics need its span\n")


def test_a_bare_run_section_may_have_a_query_named_run(tmp_path: Path) -> None:
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries: [{id: run, relevant: {a: 1}}, {id: q2, relevant: {a: 1}}]\n",
                    encoding="utf-8")
    run = tmp_path / "run.yaml"
    run.write_text("run: {retrieved_ids: [a]}\nq2: {retrieved_ids: [b, a]}\n", encoding="utf-8")
    dataset = load_dataset(gold, run=run)
    assert dataset.run["run"].retrieved_ids == ("a",)
    assert dataset.run["q2"].retrieved_ids == ("b", "a")
