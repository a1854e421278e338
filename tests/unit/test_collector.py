"""The garbage-collector pause around an evaluation restores what it found."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pytest_rag import RetrievalEvaluator
from pytest_rag.dataset.caches import collector_paused


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_back_on_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off when the inner one ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_stays_off_when_the_caller_switched_it_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_restored_after_an_exception() -> None:
    gc.enable()
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_the_callers_frozen_objects_stay_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with collector_paused():
        kept: list[list[int]] = [[] for _ in range(1000)]
    assert gc.get_freeze_count() == frozen
    del kept


def test_nothing_is_left_frozen_and_the_young_count_is_reset() -> None:
    gc.enable()
    assert gc.get_freeze_count() == 0
    with collector_paused():
        kept: list[list[int]] = [[] for _ in range(5000)]
    assert gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 5000
    assert gc.is_tracked(kept[0])
    del kept


def test_an_evaluation_leaves_the_collector_as_it_was() -> None:
    gc.enable()
    report = RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q1": ["a", "b"]},
                                              relevant={"q1": ["b"]})
    assert report["recall_at_k"] == 1.0
    assert gc.isenabled()
    gc.disable()
    RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q1": ["a", "b"]}, relevant={"q1": ["b"]})
    assert not gc.isenabled()


def test_an_error_in_an_evaluation_leaves_the_collector_on() -> None:
    gc.enable()
    with pytest.raises(Exception, match="expected a string"):
        RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q1": ["a", 7]}, relevant={"q1": ["a"]})
    assert gc.isenabled()


def test_load_dataset_decodes_and_parses_with_the_collector_paused(
        tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a file pauses the collector around decode and parse, and restores it,
    also when the file is refused."""
    from pathlib import Path

    import pytest_rag.dataset.loading as loading
    from pytest_rag import DatasetError, load_dataset

    seen: list[bool] = []
    original = loading.parse_dataset

    def watched(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loading, "parse_dataset", watched)
    folder = Path(str(tmp_path))
    good = folder / "good.json"
    good.write_text('{"queries": [{"id": "q1", "relevant": {"c1": 1}}]}', encoding="utf-8")
    gc.enable()
    assert load_dataset(good).query_ids == ("q1",)
    assert seen == [False] and gc.isenabled()
    bad = folder / "bad.json"
    bad.write_text('{"queries": [{"id": "q1", "id": "q2"}]}', encoding="utf-8")
    with pytest.raises(DatasetError, match="duplicate key 'id'"):
        load_dataset(bad)
    assert gc.isenabled()
