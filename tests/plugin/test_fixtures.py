"""The ``rag_dataset`` and ``rag`` fixtures: where the dataset comes from, settings, errors."""

from __future__ import annotations

import json
import shutil

import pytest
from ragproject import GOLD, QUICKSTART, write_ini

SHOW_QUERIES = """
def test_queries(rag_dataset):
    assert [query.id for query in rag_dataset.queries] == {expected!r}
"""


def test_dataset_from_ini_is_relative_to_the_ini_file(
        rag_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    (rag_pytester.path / "data").mkdir()
    (rag_pytester.path / "data" / "gold.yaml").write_text(GOLD, encoding="utf-8")
    (rag_pytester.path / "gold.yaml").unlink()
    rag_pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = data/gold.yaml\n")
    sub = rag_pytester.mkdir("tests")
    (sub / "test_sub.py").write_text(SHOW_QUERIES.format(expected=["q1", "q2", "q3", "q4"]))
    monkeypatch.chdir(sub)  # the ini file is one folder up
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "test_sub.py")
    result.assert_outcomes(passed=1)


def test_cli_dataset_is_relative_to_the_current_folder_and_beats_ini(
        rag_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    other = rag_pytester.mkdir("other")
    (other / "small.yaml").write_text("queries:\n  - {id: only, relevant: [a]}\n")
    rag_pytester.makepyfile(test_rag=SHOW_QUERIES.format(expected=["only"]))
    monkeypatch.chdir(other)
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-dataset", "small.yaml",
                                    str(rag_pytester.path / "test_rag.py"))
    result.assert_outcomes(passed=1)


def test_marker_on_test_class_and_module_is_relative_to_the_test_file(
        rag_pytester: pytest.Pytester) -> None:
    sub = rag_pytester.mkdir("sub")
    (sub / "near.yaml").write_text("queries:\n  - {id: near, relevant: [a]}\n")
    (sub / "class.yaml").write_text("queries:\n  - {id: klass, relevant: [a]}\n")
    (sub / "module.yaml").write_text("queries:\n  - {id: module, relevant: [a]}\n")
    (sub / "test_marked.py").write_text("""
import pytest

pytestmark = pytest.mark.rag_dataset("module.yaml")


@pytest.mark.rag_dataset("near.yaml")
def test_function_marker(rag_dataset, rag):
    assert [q.id for q in rag_dataset.queries] == ["near"]
    assert rag.dataset is rag_dataset


@pytest.mark.rag_dataset("class.yaml")
class TestClass:
    def test_class_marker(self, rag_dataset):
        assert [q.id for q in rag_dataset.queries] == ["klass"]

    @pytest.mark.rag_dataset("near.yaml")
    def test_closest_marker_wins(self, rag_dataset):
        assert [q.id for q in rag_dataset.queries] == ["near"]


def test_module_marker(rag_dataset):
    assert [q.id for q in rag_dataset.queries] == ["module"]
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-dataset", "gold.yaml")
    result.assert_outcomes(passed=5)  # 4 marked tests and test_rag.py with the cli dataset


def test_dataset_is_loaded_once_per_session_per_path(rag_pytester: pytest.Pytester) -> None:
    (rag_pytester.path / "other.yaml").write_text("queries:\n  - {id: other, relevant: [a]}\n")
    rag_pytester.makepyfile(test_rag="""
import pytest

SEEN = []


def test_first(rag_dataset):
    SEEN.append(rag_dataset)


def test_second(rag_dataset, rag):
    assert rag_dataset is SEEN[0]
    assert rag.dataset is SEEN[0]


@pytest.mark.rag_dataset("gold.yaml")
def test_same_file_by_marker(rag_dataset):
    assert rag_dataset is SEEN[0]


@pytest.mark.rag_dataset("other.yaml")
def test_other_path(rag_dataset):
    assert rag_dataset is not SEEN[0]
    assert [q.id for q in rag_dataset.queries] == ["other"]
""")
    rag_pytester.makeconftest("""
import pytest_rag.dataset.loading

CALLS = []
_load = pytest_rag.dataset.loading.load_dataset


def counting(path, **kwargs):
    CALLS.append(path)
    return _load(path, **kwargs)


pytest_rag.dataset.loading.load_dataset = counting


def pytest_sessionfinish(session):
    pytest_rag.dataset.loading.load_dataset = _load
    print(f"\\nLOADS {len(CALLS)}")
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["LOADS 2"])


@pytest.mark.parametrize("stage", ["chunking", "embedding", "retrieval", "reranking",
                                   "augmentation", "generation", "end_to_end"])
def test_a_stage_without_inputs_or_dataset_fails_and_writes_nothing(
        pytester: pytest.Pytester, stage: str) -> None:
    pytester.makepyfile(f"""
def test_stage(rag):
    rag.{stage}()
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"pytest-rag: rag.{stage}() got no inputs and no dataset is configured: pass its "
        "inputs (*), set the ini option rag_dataset, pass --rag-dataset or mark the test "
        "with @pytest.mark.rag_dataset(path)"])
    baseline = pytester.path / "rag-baseline.json"
    assert not baseline.exists() or json.loads(baseline.read_text(encoding="utf-8"))["tests"] == {}


def test_no_dataset_configured_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
def test_dataset(rag_dataset):
    pass


def test_evaluate(rag):
    rag.evaluate()
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of test_dataset*",
        "pytest-rag: no dataset configured: set the ini option rag_dataset, pass --rag-dataset "
        "PATH, or mark the test with @pytest.mark.rag_dataset('gold.yaml')",
        "*pytest-rag: rag.evaluate() needs a dataset: set the ini option rag_dataset, pass "
        "--rag-dataset or mark the test with @pytest.mark.rag_dataset(path)",
    ])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_missing_dataset_file_is_one_usage_error(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_more="def test_b(rag):\n    rag.retrieval()\n\n\n"
                                      "def test_c(rag_dataset):\n    pass\n")
    for option in ("--rag-dataset", "--rag-run"):
        result = rag_pytester.runpytest("-p", "no:cacheprovider", option, "nope.yaml")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "failed" not in result.stdout.str()  # no test ran: not one failure per test
        result.stderr.fnmatch_lines([f"ERROR: pytest-rag: {rag_pytester.path / 'nope.yaml'}: "
                                     f"file not found ({option})"])
    # Set in the ini file: the message names the option and the file that set it.
    (rag_pytester.path / "pytest.ini").write_text("[pytest]\nrag_dataset = nope.yaml\n")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines([f"ERROR: pytest-rag: {rag_pytester.path / 'nope.yaml'}: "
                                 "file not found (ini rag_dataset in pytest.ini)"])


def test_rag_without_dataset_takes_inputs_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
from pytest_rag import assert_metric


def test_inputs(rag):
    assert rag.dataset is None
    report = rag.retrieval(retrieved_ids={"q1": ["a", "b"]}, relevant={"q1": ["b"]}, k=1)
    assert report.settings["k"] == 1
    assert_metric(report.recall_at_k == 0.0)
""")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize(("text", "message"), [
    ("queries:\n  - {id: q1, relevnt: [a]}\n",
     "*gold.yaml: queries[[]0[]].relevnt (query 'q1', line 2): unknown key "
     "(did you mean 'relevant'?)"),
    ("queries:\n  - {id: q1}\n  - {id: q1}\n",
     "*gold.yaml: queries[[]1[]].id (query 'q1', line 3): *q1*"),
])
def test_bad_dataset_fails_with_the_loader_message_and_no_traceback(
        rag_pytester: pytest.Pytester, text: str, message: str) -> None:
    (rag_pytester.path / "gold.yaml").write_text(text, encoding="utf-8")
    rag_pytester.makepyfile(test_rag="""
def test_dataset(rag_dataset):
    pass


def test_stage(rag):
    rag.retrieval()
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines([f"pytest-rag: {message}"] * 2, consecutive=False)
    for pattern in ("*Traceback*", "*During handling*", "*DatasetError*", "*loading.py*",
                    "*raise *"):
        result.stdout.no_fnmatch_line(pattern)


def test_stage_methods_take_inputs_and_settings(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag="""
import pytest


def test_dataset_run(rag):
    report = rag.retrieval()
    assert report.settings["k"] == 2                    # from the dataset's params
    assert report.per_query["recall_at_k"] == pytest.approx(
        {"q1": 1.0, "q2": 2 / 3, "q3": 0.0, "q4": 1.0})


def test_inputs_replace_the_run_and_settings_win(rag):
    report = rag.retrieval(retrieved_ids={"q1": ["x", "a"], "q2": ["b"]}, k=1)
    assert report.settings["k"] == 1
    # q1 finds nothing in its top 1; q2 finds 1 of 3; q3 and q4 have no ranking now.
    assert report.per_query["recall_at_k"] == {"q1": 0.0, "q2": pytest.approx(1 / 3),
                                               "q3": None, "q4": None}
    assert rag.reports["retrieval"] is report


def test_every_stage_method_records_its_report(rag):
    for stage in ("chunking", "embedding", "retrieval", "reranking", "augmentation",
                  "generation", "end_to_end"):
        assert getattr(rag, stage)().stage == stage
    assert list(rag.reports) == ["chunking", "embedding", "retrieval", "reranking",
                                 "augmentation", "generation", "end_to_end"]


def test_unknown_input_fails_with_what_is_accepted(rag):
    rag.retrieval(retreived_ids={})
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*pytest-rag: rag.retrieval() got unexpected argument(s) "
                                 "'retreived_ids' (did you mean 'retrieved_ids'?); "
                                 "inputs: *retrieved_ids*; settings: k*"])


QUICKSTART_SETTINGS_TEST = """
import pytest


def test_ini_settings(rag):
    assert rag.retrieval().settings["k"] == 1
    assert rag.reranking().settings["k"] == 1
    assert rag.embedding().settings["k"] == 1
    chunking = rag.chunking().settings
    assert tuple(chunking["size_limits"]) == (3, 40)
    assert chunking["boundary_tolerance"] == 7
    assert list(chunking["required_metadata"]) == ["source", "page"]
    assert rag.augmentation().settings["max_context_tokens"] == 1000
    generation = rag.generation()
    assert list(generation.settings["abstain_phrases"]) == ["sorry", "no idea"]
    # q3's answer "Sorry, I don't know." abstains on an unanswerable question: right.
    assert generation.per_query["abstention_accuracy"]["q3"] == 1.0


def test_arguments_beat_ini(rag):
    assert rag.retrieval(k=3).settings["k"] == 3
    chunking = rag.chunking(size_limits=(1, 2), boundary_tolerance=0,
                            required_metadata=["source"]).settings
    assert tuple(chunking["size_limits"]) == (1, 2)
    assert chunking["boundary_tolerance"] == 0
    assert list(chunking["required_metadata"]) == ["source"]
    assert rag.augmentation(max_context_tokens=5).settings["max_context_tokens"] == 5
    generation = rag.generation(abstain_phrases=["no idea"])
    assert generation.per_query["abstention_accuracy"]["q3"] == 0.0


def test_evaluate_takes_settings(rag):
    reports = rag.evaluate(k=4)
    assert reports["retrieval"].settings["k"] == 4
    assert reports["chunking"].settings["boundary_tolerance"] == 7


def test_evaluate_rejects_inputs(rag):
    with pytest.raises(TypeError, match="takes settings only"):
        rag.evaluate(retrieved_ids={})
    with pytest.raises(TypeError, match="got 'kk' .did you mean 'k'."):
        rag.evaluate(kk=3)
"""


def test_ini_settings_are_used_unless_passed(pytester: pytest.Pytester) -> None:
    shutil.copy(QUICKSTART, pytester.path / "gold.yaml")
    pytester.makefile(".ini", pytest="""
[pytest]
rag_dataset = gold.yaml
rag_k = 1
rag_size_limits = 3 40
rag_boundary_tolerance = 7
rag_required_metadata = source page
rag_max_context_tokens = 1000
rag_abstain_phrases =
    sorry
    no idea
""")
    pytester.makepyfile(test_settings=QUICKSTART_SETTINGS_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


@pytest.mark.parametrize(("line", "message"), [
    ("rag_k = 0", "ini rag_k: must be >= 1, got 0"),
    ("rag_k = five", "ini rag_k: expected a whole number, got 'five'"),
    ("rag_size_limits = 5", "ini rag_size_limits: expected two whole numbers 'MIN MAX', "
                             "got '5'"),
    ("rag_size_limits = 40 3", "ini rag_size_limits: min 40 is greater than max 3"),
    ("rag_size_limits = -1 3", "ini rag_size_limits[0]: must be >= 0, got -1"),
    ("rag_boundary_tolerance = -2", "ini rag_boundary_tolerance: must be >= 0, got -2"),
    ("rag_max_context_tokens = -1", "ini rag_max_context_tokens: must be >= 0, got -1"),
    ("rag_scorecard = loud", "ini rag_scorecard: expected one of off, summary, full, got 'loud'"),
])
def test_bad_ini_setting_is_a_usage_error(rag_pytester: pytest.Pytester, line: str,
                                          message: str) -> None:
    write_ini(rag_pytester, line)
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_evaluate_records_every_stage_with_data(pytester: pytest.Pytester) -> None:
    (pytester.path / "gold.yaml").write_text(GOLD, encoding="utf-8")
    shutil.copy(QUICKSTART, pytester.path / "quick.yaml")
    pytester.makepyfile(test_all="""
import pytest

ALL = ["chunking", "embedding", "retrieval", "reranking", "augmentation", "generation",
       "end_to_end"]


@pytest.mark.rag_dataset("quick.yaml")
def test_every_stage(rag):
    reports = rag.evaluate()
    assert list(reports) == ALL
    assert list(rag.reports) == ALL


@pytest.mark.rag_dataset("gold.yaml")
def test_only_stages_with_data(rag):
    assert list(rag.evaluate()) == ["retrieval"]   # gold.yaml has rankings and latencies only
    assert list(rag.reports) == ["retrieval"]
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-report=report.json")
    result.assert_outcomes(passed=2)
    tests = json.loads((pytester.path / "report.json").read_text())["tests"]
    assert sorted(tests["test_all.py::test_every_stage"]) == sorted(
        ["chunking", "embedding", "retrieval", "reranking", "augmentation", "generation",
         "end_to_end"])
    assert list(tests["test_all.py::test_only_stages_with_data"]) == ["retrieval"]


def test_evaluate_after_an_unmeasured_report_of_the_same_stage(pytester: pytest.Pytester) -> None:
    # No run section: rag.retrieval() measures nothing, and neither does evaluate()'s retrieval.
    pytester.makefile(".yaml", gold="queries:\n  - {id: q1, relevant: [a]}\n"
                                    "  - {id: q2, relevant: [b]}\n")
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_twice="""
def test_twice(rag):
    first = rag.retrieval()
    assert rag.evaluate() == {}
    assert rag.reports == {"retrieval": first}
""")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("args", ["", "'a.yaml', 'b.yaml'", "42", "'a.yaml', runs='r.yaml'",
                                  "'a.yaml', run=3"])
def test_marker_takes_one_path(rag_pytester: pytest.Pytester, args: str) -> None:
    rag_pytester.makepyfile(test_rag=f"""
import pytest


@pytest.mark.rag_dataset({args})
def test_marked(rag_dataset):
    pass
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["@pytest.mark.rag_dataset takes one path and optionally "
                                 "run=PATH, e.g. @pytest.mark.rag_dataset('gold.yaml', "
                                 "run='run.yaml')"])


def test_documents_outside_the_dataset_folder_need_the_ini_option(
        pytester: pytest.Pytester) -> None:
    (pytester.path / "doc.md").write_text("alpha beta gamma\n", encoding="utf-8")
    data = pytester.mkdir("data")
    (data / "gold.yaml").write_text("documents:\n  - {id: d, path: ../doc.md}\n")
    pytester.makepyfile(test_doc="""
def test_document(rag_dataset):
    assert rag_dataset.documents[0].text == "alpha beta gamma\\n"
""")
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = data/gold.yaml\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["pytest-rag: *gold.yaml: documents[[]0[]].path (document 'd', "
                                 "line 2): '../doc.md' is outside the dataset's folder*"])
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = data/gold.yaml\n"
                                     "rag_allow_outside_paths = true\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


SCOPED_CONFTEST = """
import pytest


@pytest.fixture(scope="session")
def questions(rag_dataset_session):
    return {q.id: q for q in rag_dataset_session.queries}
"""

SCOPED_TEST = """
import pytest

SEEN = []


@pytest.fixture(scope="module")
def module_ids(rag_dataset_module):
    SEEN.append(rag_dataset_module)
    return rag_dataset_module.query_ids


def test_one(questions, module_ids, rag_dataset, rag_dataset_session):
    assert sorted(questions) == list(module_ids) == {expected!r}
    assert rag_dataset is rag_dataset_session  # loaded once: the same object


def test_two(module_ids, rag_dataset_module, rag_dataset):
    assert rag_dataset_module is rag_dataset and len(SEEN) == 1
"""


def test_session_and_module_scoped_dataset_fixtures(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makeconftest(SCOPED_CONFTEST)
    rag_pytester.makepyfile(test_rag=SCOPED_TEST.format(expected=["q1", "q2", "q3", "q4"]),
                            test_other=SCOPED_TEST.format(expected=["q1", "q2", "q3", "q4"]))
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_module_scoped_dataset_follows_the_module_marker(rag_pytester: pytest.Pytester) -> None:
    (rag_pytester.path / "small.yaml").write_text("queries:\n  - {id: only, relevant: [a]}\n")
    rag_pytester.makepyfile(test_rag="""
import pytest

pytestmark = pytest.mark.rag_dataset("small.yaml")


@pytest.fixture(scope="module")
def ids(rag_dataset_module):
    return rag_dataset_module.query_ids


def test_ids(ids, rag_dataset_session):
    assert ids == ("only",)
    assert rag_dataset_session.query_ids == ("q1", "q2", "q3", "q4")  # the ini's
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_session_scoped_dataset_without_a_dataset_fails_with_the_hint(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rag="def test_x(rag_dataset_session):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*pytest-rag: no dataset configured*"])
