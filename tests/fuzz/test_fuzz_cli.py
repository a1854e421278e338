"""Fuzzing the command line: ``evaluate``, ``validate`` and ``diff`` on mutated files.

``pytest_rag.cli.main`` runs in process, with ``sys.stdout``/``sys.stderr``
captured too (argparse writes its usage errors there).  Every run must return
0, 2, or 1 (``diff`` only); never let an exception escape; never print a
traceback; print a message on stderr when it returns 2.  ``evaluate`` and
``validate`` must also agree with the Python API on the same file: exit 2
with the API's ``DatasetError`` message when the API refuses the file, exit 0
(and, for ``--format json``, one finite-or-null value per registry key) when
it accepts it.  ``diff`` may return 0 or 1 only when both files are baseline or
report files of version 1 (a newer version must be refused, not read).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_strategies import (
    SPECS,
    STAGE_KEYS,
    STAGES,
    examples,
    mutate,
    mutated_datasets,
    plain,
    valid_datasets,
)
from hypothesis import currently_in_test_context, event, given, note
from hypothesis import strategies as st

import pytest_rag
from pytest_rag import DatasetError, load_dataset
from pytest_rag.cli import main
from pytest_rag.compare.comparison import STATUSES
from pytest_rag.escaping import terminal_lines


def run(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)``: status, stdout and stderr (the streams and sys's, together)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def check_run(status: int, err: str, allowed: tuple[int, ...]) -> None:
    if currently_in_test_context():  # also used by plain tests, where events don't exist
        event(f"exit {status}" + (f": {err.split(':')[0]}" if status == 2 else ""))
    assert status in allowed, (status, err)
    assert "Traceback" not in err, err
    if status == 2:
        assert err.strip(), "exit 2 without a message"
        assert err.startswith(("pytest-rag: error: ", "usage: ")), err


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-cli")


#: An integer of more digits than Python converts from text (4,300 by default).
HUGE_DIGITS = "1" + "0" * 5000

# -- evaluate and validate ---------------------------------------------------------------
K_TEXT = ("1", "2", "5", "10000", str(10**30), str(2**63), str(2**64), "0", "-1", "abc", "",
          "1.5", "1e3", " 3", "\u0663", "3\x00", "\U0001d7d1")
OPTIONS = st.lists(st.one_of(
    st.sampled_from(STAGES).map(lambda stage: ["--stage", stage]),
    st.sampled_from(["retreival", "", "\x00", "ALL"]).map(lambda stage: ["--stage", stage]),
    st.sampled_from(K_TEXT).map(lambda k: ["--k", k]),
    st.sampled_from(["table", "json", "xml"]).map(lambda fmt: ["--format", fmt]),
    st.just(["--allow-outside-paths"]),
), max_size=3).map(lambda groups: [arg for group in groups for arg in group])


@st.composite
def dataset_files(draw: st.DrawFn) -> tuple[str, bytes]:
    raw = draw(st.one_of(valid_datasets(), mutated_datasets()))
    suffix = draw(st.sampled_from([".json", ".yaml", ".yml"]))
    if suffix == ".json":
        text = json.dumps(plain(raw), allow_nan=True, ensure_ascii=draw(st.booleans()))
    else:
        try:
            text = yaml.safe_dump(plain(raw), allow_unicode=draw(st.booleans()))
        except (yaml.YAMLError, RecursionError):
            text = "documents: [\n"
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:  # cut or spliced text
        where = draw(st.integers(0, len(data)))
        data = data[:where] + draw(st.sampled_from([b"", b"\xff", b"{", b"\x00", b"]",
                                                    HUGE_DIGITS.encode()]))
    return suffix, data


def _api_outcome(path: Path, argv: list[str]) -> Any:
    """What the Python API makes of the file with the same options."""
    stages = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--stage"] or None
    ks = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--k"]
    try:
        dataset = load_dataset(path, allow_outside_paths="--allow-outside-paths" in argv)
        if argv[0] == "validate":  # validate accepts what evaluate accepts: it evaluates too
            pytest_rag.evaluate_dataset(dataset)
            return dataset
        return pytest_rag.evaluate_dataset(dataset, stages, k=int(ks[-1]) if ks else None)
    except DatasetError as error:
        return error


def _argv_is_valid(argv: list[str]) -> bool:
    for i, arg in enumerate(argv[:-1]):
        value = argv[i + 1]
        if arg == "--stage" and value not in STAGES:
            return False
        if arg == "--format" and value not in ("table", "json"):
            return False
        if arg == "--k":
            # ASCII digits, as the settings table reads a number from text ("٣" and
            # "1_0", which int() takes, are refused).
            if not re.fullmatch(r"[+-]?[0-9]+", value.strip()):
                return False
            if int(value) < 1:
                return False
    return True


@examples(2.0)
@given(dataset_files(), st.sampled_from(["evaluate", "evaluate", "validate"]), OPTIONS)
def test_evaluate_and_validate_exit_0_or_2_and_agree_with_the_api(
        folder: Path, case: tuple[str, bytes], command: str, options: list[str]) -> None:
    suffix, data = case
    path = folder / f"gold{suffix}"
    path.write_bytes(data)
    if command == "validate":
        options = [arg for arg in options if arg == "--allow-outside-paths"]
    argv = [command, str(path), *options]
    note(repr(argv))
    status, out, err = run(argv)
    check_run(status, err, (0, 2))
    if not _argv_is_valid(argv):
        assert status == 2 and err.startswith("usage: "), (status, err)
        return
    expected = _api_outcome(path, argv)
    if isinstance(expected, DatasetError):
        assert status == 2, out
        assert terminal_lines(str(expected)) in err, (str(expected), err)  # ids escaped
        assert str(path) in err
        return
    assert status == 0, err
    if command == "validate":
        assert out.startswith(f"{path}: valid pytest-rag/v1"), out
    elif "--format" in argv and argv[len(argv) - 1 - argv[::-1].index("--format") + 1] == "json":
        result = json.loads(out)
        assert list(result) == list(expected)
        for stage, values in result.items():
            assert sorted(values) == sorted(STAGE_KEYS[stage])
            for key, value in values.items():
                assert value == expected[stage].values[key]
                if value is not None:
                    spec = SPECS[(stage, key)]
                    assert math.isfinite(value) and spec.low <= value <= spec.high, (stage, key)
    else:
        assert out.strip(), "evaluate printed nothing"


ARGV_TOKENS = ("evaluate", "validate", "diff", "metrics", "--stage", "retrieval", "--k", "0", "5",
               "--format", "json", "markdown", "table", "--significance", "0.05", "2", "nan",
               "--tolerance", "-1", "inf", "1e400", "--relative-tolerance", "--all", "--help", "-h",
               "--allow-outside-paths", "missing.json", "", "\x00", "-", "--", "\u202e", "--k=3",
               "--version", "/", ".", "x.yaml", "x.txt", str(10**30), str(2**63), "-" + str(2**63),
               "1" + "0" * 400)


@examples(0.5)
@given(st.lists(st.sampled_from(ARGV_TOKENS), max_size=6))
def test_any_argv_exits_0_1_or_2_without_a_traceback(argv: list[str]) -> None:
    status, _, err = run(argv)
    check_run(status, err, (0, 1, 2))


# -- diff ---------------------------------------------------------------------------------
QUERY_IDS = ("q1", "q2", "q3", "q\u0301", "\u202eq", "\U0001f44d", "q\x00")
METRIC_VALUE = st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5]),
                         st.floats(0, 1e6), st.integers(0, 10))
#: Values a valid file never holds: huge integers (beyond floats too), non-numbers.
ODD_METRIC_VALUE = st.sampled_from([10**30, 2**63, -(2**63), 10**400, -(10**400), "0.5", "", "nan",
                                    True, [0.5], {"value": 0.5}, float("nan"), float("inf")])


def metric_values(draw: st.DrawFn) -> Any:
    """Mostly a valid metric value, now and then an odd one."""
    return draw(ODD_METRIC_VALUE) if draw(st.integers(0, 9)) == 0 else draw(METRIC_VALUE)


@st.composite
def score_files(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A valid pair (old, new) of baseline or report files, as dicts."""
    nodeids = draw(st.lists(st.sampled_from(["t.py::test_a", "t.py::test_b[x-1]", "t\u0301.py::t",
                                             "", "t.py::\U0001f44d"]), min_size=1, max_size=2,
                            unique=True))
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), max_size=5, unique=True))

    def entry(stage: str) -> dict[str, Any]:
        keys = draw(st.lists(st.sampled_from(STAGE_KEYS[stage] + ["custom_metric"]), min_size=1,
                             max_size=4, unique=True))
        metrics: dict[str, Any] = {}
        per_query: dict[str, Any] = {}
        for key in keys:
            value = metric_values(draw)
            spec = SPECS.get((stage, key))
            metrics[key] = value if draw(st.booleans()) else {
                "value": value, "direction": spec.direction.value if spec else "info",
                "tolerance": 0.01, "relative": False}
            if draw(st.booleans()):
                per_query[key] = {q: metric_values(draw) for q in queries}
        return {"metrics": metrics, "per_query": per_query, "settings": {"k": 5}}

    def document() -> dict[str, Any]:
        tests = {nodeid: {stage: entry(stage) for stage in draw(st.lists(
            st.sampled_from(STAGES), min_size=1, max_size=2, unique=True))} for nodeid in nodeids}
        if draw(st.booleans()):
            return {"format": "pytest-rag-baseline", "version": 1, "tests": tests}
        return {"format": "pytest-rag-report", "version": 1, "summary": {}, "tests": tests}

    old = document()
    new = copy_with_changes(draw, old) if draw(st.booleans()) else document()
    return old, new


def copy_with_changes(draw: st.DrawFn, old: dict[str, Any]) -> dict[str, Any]:
    """``old`` with some values moved, so that regressions and improvements happen."""
    new = json.loads(json.dumps(old))
    for stages in new["tests"].values():
        for entry in stages.values():
            for key in entry["metrics"]:
                if draw(st.booleans()):
                    entry["metrics"][key] = metric_values(draw)
            for values in entry["per_query"].values():
                for query in values:
                    if draw(st.booleans()):
                        values[query] = metric_values(draw)
    return new


DIFF_OPTIONS = st.lists(st.one_of(
    st.sampled_from(["0.05", "0.5", "0.05", "1e-300", "0", "1", "nan", "x"]).map(
        lambda alpha: ["--significance", alpha]),
    st.sampled_from(["0", "0.01", "1e300", "0.5", "-1", "inf", "nan"]).map(
        lambda t: ["--tolerance", t]),
    st.sampled_from(["0", "0.1", "0.5", "-0.5", "inf", "nan"]).map(
        lambda t: ["--relative-tolerance", t]),
    st.just(["--all"]),
), max_size=2).map(lambda groups: [arg for group in groups for arg in group])


def check_diff_numbers(old: str, new: str) -> None:
    """Every number of the comparison is finite (or None); p in (0, 1], the interval ordered."""
    from pytest_rag.compare.diff import diff_files, load_scores

    for row in diff_files(load_scores(Path(old)), load_scores(Path(new)), alpha=0.05,
                          permutations=200):
        d = row.diff
        for name in ("current", "baseline", "delta", "tolerance", "p_value", "ci_low", "ci_high"):
            value = getattr(d, name)
            assert value is None or math.isfinite(value), (row.nodeid, d.key, name, value)
        if d.p_value is not None:
            assert 0 < d.p_value <= 1, (row.nodeid, d.key, d.p_value)
        if d.ci_low is not None and d.ci_high is not None:
            assert d.ci_low <= d.ci_high, (row.nodeid, d.key, d.ci_low, d.ci_high)


@examples(2.0)
@given(score_files(), st.integers(0, 3), st.data(), DIFF_OPTIONS)
def test_diff_exits_0_1_or_2_on_mutated_files(folder: Path,
                                              pair: tuple[dict[str, Any], dict[str, Any]],
                                              which: int, data: st.DataObject,
                                              options: list[str]) -> None:
    old, new = pair
    if which & 1:
        old = plain(data.draw(mutate(old)))
    if which & 2:
        new = plain(data.draw(mutate(new)))
    paths = []
    for name, document in (("old.json", old), ("new.json", new)):
        path = folder / name
        text = json.dumps(plain(document), allow_nan=True,
                          ensure_ascii=data.draw(st.booleans(), label="ascii"))
        if data.draw(st.integers(0, 9), label="cut") == 0:
            text = text[:data.draw(st.integers(0, len(text)), label="cut at")] + data.draw(
                st.sampled_from(["", HUGE_DIGITS]), label="spliced")
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    if data.draw(st.integers(0, 19), label="missing") == 0:
        paths[1] = str(folder / "missing.json")
    status, out, err = run(["diff", *paths, *options])
    check_run(status, err, (0, 1, 2))
    if status in (0, 1):
        for path in paths:  # accepted: both files are of a known format and version
            document = json.loads(Path(path).read_text(encoding="utf-8"))
            assert document.get("format") in ("pytest-rag-baseline", "pytest-rag-report"), path
            assert type(document.get("version")) is int and document["version"] == 1, (
                path, document.get("version"))
        check_diff_numbers(*paths)
        assert out.strip(), "diff printed nothing"
        assert is_diff_summary(out.splitlines()[-1]), out


def is_diff_summary(line: str) -> bool:
    """Whether ``line`` is the last line of ``pytest-rag diff``: the count of each status
    in the order of ``STATUSES``, regressed and improved always, the others when not 0."""
    counts = line.removeprefix("no differences; ").split(", ")
    expected = iter(row for row in STATUSES.values() if row.summary)
    for part in counts:
        number, _, words = part.partition(" ")
        for row in expected:
            if row.summary == words:
                break
            if row.tile_always:  # skipped a count that is always shown
                return False
        else:
            return False
        if not number.isdigit() or (number == "0" and not row.tile_always):
            return False
    return not any(row.tile_always for row in expected)


# -- regressions: minimal reproductions of fixed bugs ----------------------------------------------
def _baseline(path: Path, metrics: Any, per_query: Any = None) -> str:
    entry = {"metrics": metrics, "per_query": per_query or {}}
    path.write_text(json.dumps({"format": "pytest-rag-baseline", "version": 1,
                                "tests": {"t.py::test": {"retrieval": entry}}}), encoding="utf-8")
    return str(path)


def test_diff_refuses_a_string_per_query_value(tmp_path: Path) -> None:
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 0.5},
                    {"recall_at_k": {"q1": 0.5, "q2": 0.2}})
    new = _baseline(tmp_path / "new.json", {"recall_at_k": 0.4},
                    {"recall_at_k": {"q1": "x", "q2": 0.2}})
    status, _, err = run(["diff", old, new])
    assert status == 2 and "per_query" in err


def test_diff_of_a_value_written_as_a_large_integer_and_itself_is_no_change(
        tmp_path: Path) -> None:
    """10**30 read as an integer on one side and as a float on the other differed by
    2e13 (found by the deep fuzz run): both sides read numbers as floats."""
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 10**30})
    new = _baseline(tmp_path / "new.json", {"recall_at_k": 10**30})
    status, out, _ = run(["diff", old, new])
    assert status == 0 and "0 regressed" in out


def test_diff_of_an_entry_whose_settings_are_null_compares_without_them(
        tmp_path: Path) -> None:
    """``"settings": null`` in a report was a TypeError (found by the deep fuzz run)."""
    paths = []
    for name, settings in (("old.json", {"k": 5}), ("new.json", None)):
        entry = {"metrics": {"recall_at_k": 0.5}, "per_query": {}, "settings": settings}
        path = tmp_path / name
        path.write_text(json.dumps({"format": "pytest-rag-baseline", "version": 1,
                                    "tests": {"t.py::test": {"retrieval": entry}}}),
                        encoding="utf-8")
        paths.append(str(path))
    status, out, err = run(["diff", *paths])
    assert status == 0 and "0 regressed" in out, err


def test_diff_refuses_an_integer_metric_value_beyond_floats(tmp_path: Path) -> None:
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 0.5})
    new = tmp_path / "new.json"
    new.write_text('{"format": "pytest-rag-baseline", "version": 1, "tests": {"t.py::test": '
                   '{"retrieval": {"metrics": {"recall_at_k": 1' + "0" * 400 + '}}}}}',
                   encoding="utf-8")
    status, _, err = run(["diff", old, str(new)])
    assert status == 2 and "recall_at_k" in err


def test_diff_refuses_deeply_nested_json(tmp_path: Path) -> None:
    old = _baseline(tmp_path / "old.json", {"recall_at_k": 0.5})
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    status, _, err = run(["diff", old, str(deep)])
    assert status == 2 and str(deep) in err


@pytest.mark.parametrize("k", [2**63, 10**12, 10**30])
def test_evaluate_with_a_huge_k_exits_cleanly(tmp_path: Path, k: int) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"params": {"k": k}, "queries": [{"id": "q1", "relevant": ["a"]}],
                                "run": {"q1": {"retrieved_ids": ["a", "b"]}}}), encoding="utf-8")
    status, _, err = run(["evaluate", str(path)])
    check_run(status, err, (0, 2))
    if status == 2:  # refusing k is fine, if the message says where
        assert str(path) in err and "params.k" in err, err


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_evaluate_with_costs_near_the_float_maximum(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"queries": [{"id": "q1"}, {"id": "q2"}],
                                "run": {"q1": {"cost_usd": 1.7e308}, "q2": {"cost_usd": 1.7e308}}}),
                    encoding="utf-8")
    status, _, err = run(["evaluate", str(path), "--format", fmt])
    assert status == 0, err



@pytest.mark.parametrize("where", ["option", "params"])
def test_evaluate_with_k_beyond_the_float_range_exits_cleanly(tmp_path: Path, where: str) -> None:
    path = tmp_path / "gold.json"
    params = {"k": 10**400} if where == "params" else {}
    path.write_text(json.dumps({"params": params, "queries": [{"id": "q1", "relevant": ["a"]}],
                                "run": {"q1": {"retrieved_ids": ["a", "b"]}}}), encoding="utf-8")
    argv = ["evaluate", str(path), *(["--k", str(10**400)] if where == "option" else [])]
    status, _, err = run(argv)
    check_run(status, err, (0, 2))
    if status == 2:  # refusing k is fine, if the message says where
        assert "--k" in err or "params.k" in err, err


def test_diff_of_values_near_the_float_maximum(tmp_path: Path) -> None:
    # Values at the largest magnitude a baseline holds, of opposite signs: every
    # difference is still finite.
    old = _baseline(tmp_path / "old.json", {"cost_usd": -1e300},
                    {"cost_usd": {"q1": -1e300, "q2": -1e300}})
    new = _baseline(tmp_path / "new.json", {"cost_usd": 1e300},
                    {"cost_usd": {"q1": 1e300, "q2": 1e300}})
    # The true mean change is 2e300; with two queries no sign flip test can reach p < 0.5.
    from pytest_rag.compare.significance import paired_change

    change = paired_change({"q1": -1e300, "q2": -1e300}, {"q1": 1e300, "q2": 1e300})
    assert change.mean_delta == 2e300 and change.p_value is not None and change.p_value >= 0.25
    check_diff_numbers(old, new)


def test_diff_refuses_values_beyond_the_comparable_range(tmp_path: Path) -> None:
    old = _baseline(tmp_path / "old.json", {"cost_usd": -1.7e308}, {})
    new = _baseline(tmp_path / "new.json", {"cost_usd": 1.7e308}, {})
    status, _, err = run(["diff", old, new])
    assert status == 2, err
    assert str(tmp_path / "old.json") in err and "metrics.cost_usd" in err, err
    assert "Traceback" not in err
