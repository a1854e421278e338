"""``documents: {glob: ...}``: a folder of files as documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rag import load_dataset
from pytest_rag.errors import DatasetError


def _gold(folder: Path, documents: object, queries: list[dict] | None = None) -> Path:
    path = folder / "gold.json"
    path.write_text(json.dumps({"format": "pytest-rag/v1", "documents": documents,
                                "queries": queries or [{"id": "q1"}]}), encoding="utf-8")
    return path


def _corpus(folder: Path) -> None:
    (folder / "docs" / "deep").mkdir(parents=True)
    (folder / "docs" / "b.md").write_text("beta text", encoding="utf-8")
    (folder / "docs" / "a.md").write_text("alpha text", encoding="utf-8")
    (folder / "docs" / "deep" / "c.md").write_text("gamma ünïcode", encoding="utf-8")
    (folder / "docs" / "notes.txt").write_text("not markdown", encoding="utf-8")


def test_every_matched_file_is_a_document_named_by_its_relative_path(tmp_path: Path) -> None:
    _corpus(tmp_path)
    gold = _gold(tmp_path, {"glob": "docs/**/*.md"},
                 [{"id": "q1", "expected_evidence": [{"doc_id": "docs/deep/c.md",
                                                      "start": 6, "end": 13}]}])
    dataset = load_dataset(gold)
    assert [d.id for d in dataset.documents] == ["docs/a.md", "docs/b.md", "docs/deep/c.md"]
    assert dataset.documents[2].text == "gamma ünïcode"
    assert dataset.queries[0].expected_evidence[0].doc_id == "docs/deep/c.md"
    # A list of patterns; a file matched twice is one document.
    both = load_dataset(_gold(tmp_path, {"glob": ["docs/*.md", "docs/a.*", "docs/*.txt"]}))
    assert [d.id for d in both.documents] == ["docs/a.md", "docs/b.md", "docs/notes.txt"]


@pytest.mark.parametrize(("documents", "message"), [
    ({"glob": "nothing/*.md"},
     r"documents\.glob \(line 1\): 'nothing/\*\.md' matches no file"),
    ({"glob": "/etc/*"}, r"documents\.glob \(line 1\): '/etc/\*': give a pattern relative"),
    ({"glob": ["docs/*.md", 3]}, r"documents\.glob\[1\]"),
    ({"glob": "docs/*.md", "recursive": True}, r"documents.*recursive"),
    ({"glob": "../outside/*.md"}, r"outside the dataset's folder"),
])
def test_a_bad_glob_is_a_clear_error(tmp_path: Path, documents: object, message: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _corpus(project)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("secret", encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_dataset(_gold(project, documents))


def test_the_matched_files_together_are_held_to_the_file_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_rag.dataset.bounded_read as bounded_read

    _corpus(tmp_path)
    monkeypatch.setattr(bounded_read, "MAX_FILE_BYTES", 25)  # each file fits, the three do not
    with pytest.raises(DatasetError, match=r"the 3 matched files hold 34 bytes, more than"):
        load_dataset(_gold(tmp_path, {"glob": "docs/**/*.md"}))
