"""Every row of the settings table is an ini option, read and checked by the one rule."""

from __future__ import annotations

import pytest

from pytest_rag.dataset.settings import (
    SETTINGS,
    Setting,
    SettingError,
    parse_setting_text,
)
from pytest_rag.plugin import session_key

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
