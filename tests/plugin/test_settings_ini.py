"""Every row of the settings table is an ini option, read and checked by the one rule."""

from __future__ import annotations

import pytest

from pytest_rag.plugin import session_key
from pytest_rag.settings import (
    SETTINGS,
    Setting,
    SettingError,
    parse_setting_text,
)

INI_ROWS = [row for row in SETTINGS if row.ini]
#: Per kind: an ini value and what the plugin passes on.
GOOD = {"whole": ("7", 7), "pair": ("2 9", (2, 9)), "flag": ("true", True),
        "strings": ("alpha beta", ("alpha", "beta")), "text": ("source", "source")}


def _ids(row: Setting) -> str:
    return row.ini_name


def test_every_ini_row_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    text = result.stdout.str()
    for row in INI_ROWS:
        assert f"  {row.ini_name} " in text, row.ini_name


@pytest.mark.parametrize("row", INI_ROWS, ids=_ids)
def test_each_ini_row_reaches_the_evaluators_or_the_loader(pytester: pytest.Pytester,
                                                          row: Setting) -> None:
    text, value = GOOD[row.kind]
    if row.kind == "strings" and row.ini_list == "linelist":
        text = "\n    alpha\n    beta"
    pytester.makeini(f"[pytest]\n{row.ini_name} = {text}\n")
    options = pytester.parseconfigure().stash[session_key].options
    if row.scope == "loader":
        assert getattr(options, row.name) == value
    else:
        assert options.stage_settings == {row.name: value}


@pytest.mark.parametrize("row", [row for row in INI_ROWS if row.kind in ("whole", "pair")],
                         ids=_ids)
def test_a_bad_ini_value_is_a_usage_error_with_the_one_message(pytester: pytest.Pytester,
                                                               row: Setting) -> None:
    bad = {"whole": "x", "pair": "9 2"}[row.kind]
    with pytest.raises(SettingError) as error:
        parse_setting_text(row.name, bad, f"ini {row.ini_name}")
    pytester.makeini(f"[pytest]\n{row.ini_name} = {bad}\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {error.value}"])


QRELS = "q1 0 d1 1\nq1 0 d2 2\n"


def test_ini_relevance_level_reads_trec_qrels_as_trec_eval_l(pytester: pytest.Pytester) -> None:
    """Issue 24: the relevance level is a setting of the loader everywhere, not only of
    ``convert``."""
    pytester.makefile(".test", qrels=QRELS)
    pytester.makeini("[pytest]\nrag_dataset = qrels.test\nrag_relevance_level = 2\n")
    pytester.makepyfile(test_x="def test_x(rag_dataset):\n"
                               "    assert dict(rag_dataset.queries[0].relevant) == {'d2': 2}\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


# -- misspelled options (issue 24, item 12) -------------------------------------------------
@pytest.mark.parametrize(("name", "text", "message"), [
    ("pytest.ini", "[pytest]\nrag_treshold = retrieval.recall_at_k >= 0.8\n",
     ("ERROR: pytest-rag: pytest.ini: unknown ini option 'rag_treshold' "
     "(did you mean 'rag_thresholds'?)")),
    ("tox.ini", "[pytest]\nrag_tolerence = 0.1\n",
     ("ERROR: pytest-rag: tox.ini: unknown ini option 'rag_tolerence' "
     "(did you mean 'rag_tolerance'?)")),
    ("setup.cfg", "[tool:pytest]\nrag_boundary_tolerence = 3\n",
     ("ERROR: pytest-rag: setup.cfg: unknown ini option 'rag_boundary_tolerence' "
     "(did you mean 'rag_boundary_tolerance'?)")),
    ("pyproject.toml", "[tool.pytest.ini_options]\nrag_kk = \"3\"\nrag_treshold = [\"x\"]\n",
     ("ERROR: pytest-rag: pyproject.toml: unknown ini options 'rag_kk' (did you mean 'rag_k'?), "
     "'rag_treshold' (did you mean 'rag_thresholds'?)")),
])
def test_a_misspelled_ini_option_is_a_usage_error(pytester: pytest.Pytester, name: str,
                                                  text: str, message: str) -> None:
    """Before, pytest only warned "Unknown config option" and the gate was silently off."""
    (pytester.path / name).write_text(text, encoding="utf-8")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_unknown_ini_option_of_another_prefix_is_left_to_pytest(
        pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nragged = 1\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK


def test_an_ini_override_is_checked_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "rag_scorcard=full")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("ERROR: pytest-rag: -o/--override-ini: unknown ini option "
                                  "'rag_scorcard' (did you mean 'rag_scorecard'?)")])


def test_an_ini_override_is_not_blamed_on_the_ini_file(pytester: pytest.Pytester) -> None:
    (pytester.path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\nrag_tolerence = \"0.1\"\n", encoding="utf-8")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "rag_treshold=x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: pytest-rag: -o/--override-ini: unknown ini option 'rag_treshold' (did you "
        "mean 'rag_thresholds'?); pyproject.toml: unknown ini option 'rag_tolerence' (did "
        "you mean 'rag_tolerance'?)"])


@pytest.mark.parametrize(("args", "message"), [
    (["--rag-treshold", "retrieval.recall_at_k>=0.8"],
     "ERROR: pytest-rag: unknown option '--rag-treshold' (did you mean '--rag-threshold'?)"),
    (["--rag-update-basline"],
     ("ERROR: pytest-rag: unknown option '--rag-update-basline' "
     "(did you mean '--rag-update-baseline'?)")),
    (["--rag-scorecard=full", "--rag-htm=report.html"],
     "ERROR: pytest-rag: unknown option '--rag-htm' (did you mean '--rag-html'?)"),
])
def test_a_misspelled_flag_is_a_usage_error_with_the_closest_one(
        pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_rag_flag_of_a_conftest_is_not_refused(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_addoption(parser):\n"
                          "    parser.addoption('--rag-mine', action='store_true')\n")
    pytester.makepyfile(test_x="def test_x(request):\n"
                               "    assert request.config.getoption('rag_mine')\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-mine")
    assert result.ret == pytest.ExitCode.OK


def test_two_misspelled_flags_are_named_together(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-strct", "--rag-reprot=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: pytest-rag: unknown options '--rag-strct' (did you mean "
                                 "'--rag-strict'?), '--rag-reprot' (did you mean '--rag-report'?)"])


def test_the_known_flags_and_a_test_path_after_dashes_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--rag-scorecard=off",
                                "--rag-tolerance", "0.1", "--", "test_x.py")
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize(("line", "message"), [
    ("rag_thresholds = retrieval.recal_at_k >= 0.8",
     ("ERROR: pytest-rag: ini rag_thresholds: 'retrieval.recal_at_k >= 0.8': unknown metric "
     "'recal_at_k' (did you mean 'recall_at_k'?) of stage 'retrieval'; known: *")),
    ("rag_tolerances = retreival.recall_at_k 0.05",
     ("ERROR: pytest-rag: ini rag_tolerances: 'retreival.recall_at_k 0.05': unknown stage "
     "'retreival' (did you mean 'retrieval'?); known: *")),
])
def test_a_misspelled_metric_in_the_ini_names_the_closest(pytester: pytest.Pytester, line: str,
                                                          message: str) -> None:
    pytester.makeini(f"[pytest]\n{line}\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_readme_lists_every_flag_and_ini_option(pytester: pytest.Pytester) -> None:
    """The README's "Options" table (and its generated "Settings" table) name every
    ``--rag-*`` flag and every ini option the plugin registers."""
    import re
    from pathlib import Path

    from pytest_rag.plugin.options import ini_names

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    reference = readme[readme.index("## Options"):readme.index("<!-- settings-table: end -->")]
    flags = set(re.findall(r"^\s+(--rag-[a-z-]+)", pytester.runpytest("--help").stdout.str(),
                           re.M))
    assert len(flags) >= 10
    for name in sorted(flags):
        assert f"`{name}" in reference, name
    for name in ini_names():
        assert f"`{name}`" in reference, name
