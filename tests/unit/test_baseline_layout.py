"""The baseline file's per-query layout: one line per query, the old layout still read.

A version 2 file holds each entry's per-query values (and gold fingerprints)
as one row per query (:mod:`pytest_rag.compare.baseline_layout`), so a change
of one query is a change of one line, and two branches that change different
queries merge cleanly.  Version 1 files (one line per query per metric) are
read to the same entries, and the next update writes version 2.  A file the
reader would refuse (over its size limit) is never written.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.compare import baseline as baseline_module
from pytest_rag.compare.baseline import Baseline, BaselineError
from pytest_rag.compare.records import StageRecord
from pytest_rag.compare.thresholds import Tolerances
from pytest_rag.registry import REGISTRY

KEYS = ("hit_at_k", "mrr_at_k", "recall_at_k")
value = st.one_of(st.none(), st.floats(-1e300, 1e300, allow_nan=False), st.integers(-5, 5))
query_ids = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)


@st.composite
def records(draw: st.DrawFn) -> StageRecord:
    queries = draw(st.lists(query_ids, max_size=6, unique=True))
    some = st.lists(st.sampled_from(queries), unique=True) if queries else st.just([])
    per_query = {key: {q: draw(value) for q in draw(some)}
                 for key in draw(st.lists(st.sampled_from(KEYS), unique=True))}
    values: dict[str, float | None] = {key: draw(value) for key in KEYS}
    gold = {q: draw(st.text("0123456789abcdef", min_size=16, max_size=16)) for q in draw(some)}
    documents = draw(st.one_of(st.none(), st.just("0123456789abcdef")))
    nodeid = draw(st.sampled_from(["t.py::test", "t.py::test[\u00e9]", "t.py::test[\"]"]))
    return StageRecord(nodeid, "retrieval", values, per_query, {"k": 3}, gold=gold,
                       documents=documents)


def entries(path: Path) -> dict[str, Any]:
    return {nodeid: dict(stages) for nodeid, stages in Baseline.load(path).tests.items()}


@settings(max_examples=150, deadline=None)
@given(st.lists(records(), max_size=3))
def test_what_is_written_is_read_back(tmp_path_factory: pytest.TempPathFactory,
                                      written: list[StageRecord]) -> None:
    path = tmp_path_factory.mktemp("layout") / "b.json"
    baseline = Baseline().updated(written, REGISTRY, Tolerances())
    baseline.save(path)
    loaded = Baseline.load(path)
    assert loaded == baseline
    # Plain JSON: any JSON reader reads it, and it is the file form of the entries.
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(
        json.dumps(baseline.to_json()))


def _record(values: dict[str, float], nodeid: str = "t.py::test") -> StageRecord:
    per_query = {key: {q: v + i / 10 for q, v in values.items()} for i, key in enumerate(KEYS)}
    return StageRecord(nodeid, "retrieval", dict.fromkeys(KEYS, 0.5), per_query,
                       gold={q: f"{len(q):016x}" for q in values})


QUERIES = {f"q{i:03d}": (i % 7) / 7 for i in range(200)}


def test_one_changed_query_is_one_changed_line(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    Baseline().updated([_record(QUERIES)], REGISTRY, Tolerances()).save(path)
    before = path.read_text(encoding="utf-8")
    # 200 queries x 3 metrics and their fingerprints, in about one line a query.
    assert before.count("\n") < 300
    Baseline.load(path).updated([_record({**QUERIES, "q117": 0.99})], REGISTRY,
                                Tolerances()).save(path)
    after = path.read_text(encoding="utf-8")
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                     n=0, lineterm="")
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert len(changed) == 2 and all(line[1:].startswith('"q117":[') for line in changed), changed


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git merge-file")
def test_two_branches_changing_different_queries_merge_cleanly(tmp_path: Path) -> None:
    base, ours, theirs = (tmp_path / name for name in ("base.json", "ours.json", "theirs.json"))
    Baseline().updated([_record(QUERIES)], REGISTRY, Tolerances()).save(base)
    for path, query in ((ours, "q010"), (theirs, "q150")):
        Baseline.load(base).updated([_record({**QUERIES, query: 0.99})], REGISTRY,
                                    Tolerances()).save(path)
    merged = subprocess.run(["git", "merge-file", "-p", str(ours), str(base), str(theirs)],
                            capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stdout[-2000:]
    (tmp_path / "merged.json").write_text(merged.stdout, encoding="utf-8")
    expected = _record({**QUERIES, "q010": 0.99, "q150": 0.99})
    assert entries(tmp_path / "merged.json") == entries_of(expected)


def entries_of(record: StageRecord) -> dict[str, Any]:
    return dict(Baseline().updated([record], REGISTRY, Tolerances()).tests)


def _version_1(baseline: Baseline) -> dict[str, Any]:
    """The version 1 file of ``baseline``: per-query values one line each."""
    return {"format": "pytest-rag-baseline", "version": 1, "tests": baseline.tests}


def test_a_version_1_file_reads_to_the_same_entries(tmp_path: Path) -> None:
    baseline = Baseline().updated([_record(QUERIES), _record(QUERIES, "t.py::other")],
                                  REGISTRY, Tolerances())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_version_1(baseline), indent=2, sort_keys=True) + "\n",
                   encoding="utf-8")
    loaded = Baseline.load(old)
    assert loaded.tests == baseline.tests and loaded.version == 1
    # An update with nothing new still differs from what was read: it is rewritten.
    assert loaded.updated([], REGISTRY, Tolerances()) != loaded
    new = tmp_path / "new.json"
    loaded.updated([], REGISTRY, Tolerances()).save(new)
    assert json.loads(new.read_text(encoding="utf-8"))["version"] == 2
    assert Baseline.load(new).tests == baseline.tests
    assert new.stat().st_size < old.stat().st_size


@pytest.mark.parametrize(("columns", "rows", "problem"), [
    ('["a", "a"]', '{}', "per_query.columns: expected a list of distinct names"),
    ('"a"', '{}', "per_query.columns: expected a list of distinct names"),
    ('["a"]', '[]', "per_query.rows: expected an object of query id to row"),
    ('["a", "b"]', '{"q1": [1.0]}', "per_query.rows['q1']: expected a list of 2 values"),
    ('["a"]', '{"q1": ["x"]}', "per_query.a['q1']: expected a finite number or null"),
    ('["#gold"]', '{"q1": [3]}', "gold.queries: expected an object of query id to fingerprint"),
])
def test_a_bad_row_is_refused_with_its_place(tmp_path: Path, columns: str, rows: str,
                                             problem: str) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"format": "pytest-rag-baseline", "version": 2, "tests": {"t": '
                    '{"retrieval": {"metrics": {}, "per_query": {"columns": ' + columns
                    + ', "rows": ' + rows + '}}}}}', encoding="utf-8")
    with pytest.raises(BaselineError) as raised:
        Baseline.load(path)
    assert f"tests['t']['retrieval'].{problem}" in str(raised.value)


def test_a_file_the_reader_would_refuse_is_not_written(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.json"
    Baseline().updated([_record({"q1": 0.5})], REGISTRY, Tolerances()).save(path)
    kept = path.read_bytes()
    bigger = Baseline().updated([_record(QUERIES)], REGISTRY, Tolerances())
    monkeypatch.setattr(baseline_module, "MAX_FILE_BYTES", len(kept) + 100)
    with pytest.raises(BaselineError, match=r"not written: it would be [0-9,]+ bytes, more "
                                            r"than the [0-9,]+ bytes .* the old file is kept"):
        bigger.save(path)
    assert path.read_bytes() == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]


def test_a_row_is_compact_and_reads_back_the_same_floats(tmp_path: Path) -> None:
    """Rows start their line, without spaces; whole numbers lose their ``.0`` (but ``-0.0``
    keeps its sign) and pytest-rag's 16-hex gold digests are 11 base64 characters of the
    same bits; the reader gives back the same floats and digests."""
    import math

    values = {"q1": 1.0, "q2": 0.0, "q3": -0.0, "q4": 3.0, "q5": 2 / 3, "q6": 1e16,
              "q7": -1e300, "q8": 5e-324}
    gold = {"q1": "88833245624b2fdb", "q2": "0000000000000000", "q3": "ffffffffffffffff",
            "q4": "a hand-written one", "q5": "88833245624B2FDB"}
    record = StageRecord("t.py::test", "retrieval", {"hit_at_k": 0.5}, {"hit_at_k": values},
                         gold=gold)
    path = tmp_path / "b.json"
    Baseline().updated([record], REGISTRY, Tolerances()).save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines if line.startswith('"q')]
    assert rows == ['"q1":["iIMyRWJLL9s",1],', '"q2":["AAAAAAAAAAA",0],',
                    '"q3":["__________8",-0.0],', '"q4":["a hand-written one",3],',
                    '"q5":["88833245624B2FDB",0.6666666666666666],', '"q6":[null,1e+16],',
                    '"q7":[null,-1e+300],', '"q8":[null,5e-324]']
    entry = Baseline.load(path).tests["t.py::test"]["retrieval"]
    assert entry["gold"]["queries"] == gold
    read = entry["per_query"]["hit_at_k"]
    assert read == values
    assert all(type(value) is float for value in read.values())
    assert [math.copysign(1, value) for value in read.values()] == [
        math.copysign(1, value) for value in values.values()]


#: A file of the first version 2 writer: rows indented, ``1.0``, gold digests in hex.
FIRST_VERSION_2 = """\
{
  "format": "pytest-rag-baseline",
  "tests": {
    "t.py::test": {
      "retrieval": {
        "gold": {
          "documents": "0123456789abcdef"
        },
        "metrics": {
          "hit_at_k": {
            "direction": "higher",
            "relative": false,
            "tolerance": 0.01,
            "value": 0.5
          }
        },
        "per_query": {
          "columns": [
            "#gold",
            "hit_at_k",
            "mrr_at_k"
          ],
          "rows": {
            "q1": ["88833245624b2fdb",1.0,0.5],
            "q2": ["792f24d0d8ca8fc5",0.0,-0.0]
          }
        },
        "settings": {
          "k": 3
        }
      }
    }
  },
  "version": 2
}
"""


def test_a_file_of_the_first_version_2_writer_reads_to_the_same_entries(tmp_path: Path) -> None:
    import math

    old = tmp_path / "old.json"
    old.write_text(FIRST_VERSION_2, encoding="utf-8")
    loaded = Baseline.load(old)
    entry = loaded.tests["t.py::test"]["retrieval"]
    assert entry["gold"] == {"documents": "0123456789abcdef",
                             "queries": {"q1": "88833245624b2fdb", "q2": "792f24d0d8ca8fc5"}}
    assert entry["per_query"] == {"hit_at_k": {"q1": 1.0, "q2": 0.0},
                                  "mrr_at_k": {"q1": 0.5, "q2": -0.0}}
    assert math.copysign(1, entry["per_query"]["mrr_at_k"]["q2"]) == -1
    # An update with nothing new still differs from what was read: it is rewritten.
    assert loaded.updated([], REGISTRY, Tolerances()) != loaded
    new = tmp_path / "new.json"
    loaded.updated([], REGISTRY, Tolerances()).save(new)
    assert Baseline.load(new).updated([], REGISTRY, Tolerances()) == Baseline.load(new)
    assert '"q1":["iIMyRWJLL9s",1,0.5],' in new.read_text(encoding="utf-8").splitlines()
    assert Baseline.load(new).tests == loaded.tests
    assert new.stat().st_size < old.stat().st_size


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
cells = st.one_of(st.none(), st.integers(0, 3), st.text("0123456789abcdef", min_size=16,
                                                        max_size=16),
                  st.text(B64, min_size=11, max_size=11), st.text(B64 + "+/=!é", max_size=12))


@settings(max_examples=300, deadline=None)
@given(st.lists(cells, max_size=6), st.booleans())
def test_a_column_of_digests_is_packed_and_unpacked_as_each_one_is(column: list[Any],
                                                                   uniform: bool) -> None:
    """The column-at-once paths give what the one-at-a-time functions give, also for a
    column of 11 characters of which one is out of the alphabet or ends in bits that a
    packed digest never has."""
    from pytest_rag.compare.baseline_layout import (
        _pack_digests,
        _unpack_digests,
        pack_digest,
        unpack_digest,
    )

    if uniform:  # the columns the fast paths take: every cell of one length
        column = [cell for cell in column if isinstance(cell, str) and len(cell) in (11, 16)]
        column = [cell for cell in column if len(cell) == len(column[0])] if column else []
    assert _unpack_digests(column) == [unpack_digest(cell) if isinstance(cell, str) else cell
                                       for cell in column]
    assert _pack_digests(column) == [pack_digest(cell) if isinstance(cell, str) else cell
                                     for cell in column]
    # Back as written, but for a string that reads as a packed digest and is not one (not
    # pytest-rag's: it never equals a digest a run computes, read either way).
    if all(unpack_digest(cell) == cell for cell in column if isinstance(cell, str)):
        assert _unpack_digests(_pack_digests(column)) == column
