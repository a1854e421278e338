"""Did-you-mean hints for document ids and file paths in dataset errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rag import DatasetError, load_dataset, parse_dataset
from pytest_rag.errors import MAX_CHOICES, did_you_mean, similar_file


def _error(path: Path) -> str:
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    return str(raised.value)


def test_an_unknown_document_id_suggests_the_closest_one() -> None:
    data = {"documents": [{"id": "refunds", "text": "abc"}, {"id": "shipping", "text": "d"}],
            "chunks": [{"id": "c", "doc_id": "refnuds", "start": 0, "end": 1}]}
    with pytest.raises(DatasetError) as raised:
        parse_dataset(data, source="gold.yaml")
    assert str(raised.value) == ("gold.yaml: chunks[0].doc_id: unknown document 'refnuds' "
                                 "(did you mean 'refunds'?) (known: 'refunds', 'shipping')")


def test_a_missing_path_document_suggests_the_closest_file_written_as_given(
        tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "returns.md").write_text("Returns.", encoding="utf-8")
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents:\n  - {id: d, path: docs/retruns.md}\n", encoding="utf-8")
    assert _error(gold).endswith("document file 'docs/retruns.md' not found (looked at "
                                 f"'{tmp_path / 'docs' / 'retruns.md'}') "
                                 "(did you mean 'docs/returns.md'?)")


def test_a_missing_dataset_file_suggests_its_neighbour(tmp_path: Path) -> None:
    (tmp_path / "gold.yaml").write_text("queries: []\n", encoding="utf-8")
    assert _error(tmp_path / "gold.yml") == (f"{tmp_path / 'gold.yml'}: file not found "
                                             f"(did you mean '{tmp_path / 'gold.yaml'}'?)")
    assert _error(tmp_path / "nothing-like-it.json").endswith(": file not found")
    assert similar_file(tmp_path / "missing" / "gold.yml", "missing/gold.yml") == ""


def test_no_hint_is_looked_for_among_too_many_names_or_for_a_huge_name() -> None:
    names = [f"doc{i}" for i in range(MAX_CHOICES + 1)]
    assert did_you_mean("doc1x", names) == ""
    assert did_you_mean("doc1x", names[:10]) == " (did you mean 'doc1'?)"
    assert did_you_mean("d" * 5_000, ["d" * 4_999]) == ""


def test_names_alike_only_in_their_extension_are_no_hint(tmp_path: Path) -> None:
    (tmp_path / "gold.yaml").write_text("queries: []\n", encoding="utf-8")
    assert similar_file(tmp_path / "nope.yaml", "nope.yaml") == ""
    assert similar_file(tmp_path / "gold.yml", "gold.yml") == " (did you mean 'gold.yaml'?)"


def test_a_misspelled_metric_of_a_report_suggests_the_closest_one() -> None:
    from pytest_rag.stages.retrieval import RetrievalEvaluator

    report = RetrievalEvaluator(k=1).evaluate(retrieved_ids={"q": ["a"]},
                                              relevant={"q": ["a"]})
    with pytest.raises(AttributeError, match=r"'recal_at_k' \(did you mean 'recall_at_k'\?\)"):
        report.recal_at_k  # noqa: B018
    with pytest.raises(KeyError, match=r"'hit_at' \(did you mean 'hit_at_k'\?\)"):
        report["hit_at"]
    assert not hasattr(report, "_private")  # hasattr stays an ordinary False


def test_a_misspelled_symbolic_metric_suggests_the_closest_one() -> None:
    import pytest_rag.metrics as metrics

    with pytest.raises(AttributeError, match=r"'recal_at_k' \(did you mean 'recall_at_k'\?\)"):
        metrics.recal_at_k  # noqa: B018
    # Python turns the AttributeError of a from-import into its own ImportError: the
    # suggestion must survive it.
    with pytest.raises(ImportError, match=r"'recal_at_k' \(did you mean 'recall_at_k'\?\)"):
        from pytest_rag.metrics import recal_at_k  # noqa: F401
    with pytest.raises(ImportError, match=r"'retreival' \(did you mean 'retrieval'\?\)"):
        from pytest_rag.metrics import retreival  # noqa: F401
    assert getattr(metrics, "recal_at_k", None) is None
