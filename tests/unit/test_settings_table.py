"""The table of settings (pytest_rag.settings) is the one definition: every row is
validated alike by the parser, the evaluators and the command line, and the README shows it."""

from __future__ import annotations

import argparse
import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_rag.cli import _parser, main
from pytest_rag.dataset.model import Dataset, Params
from pytest_rag.dataset.parser import PARAM_KEYS, parse_dataset
from pytest_rag.errors import DatasetError
from pytest_rag.settings import (
    SETTINGS,
    Setting,
    SettingError,
    parse_setting_text,
    settings_markdown,
    validate_setting,
)
from pytest_rag.settings import setting as setting_row
from pytest_rag.stages.evaluate import EVALUATORS, evaluator_settings

README = Path(__file__).resolve().parents[2] / "README.md"

#: Per kind: a good value with what it becomes, and bad values.
GOOD: dict[str, tuple[object, object]] = {
    "whole": (7, 7), "pair": ([2, 9], (2, 9)), "flag": (True, True),
    "strings": (["a", "b"], ("a", "b")), "text": ("source", "source"),
}
BAD: dict[str, list[object]] = {
    "whole": ["seven", 2.5, True, -1], "pair": [[9, 2], [1], "1 2", [1, -1]],
    "flag": ["yes", 1], "strings": ["a", ["a", 3]], "text": ["", 3],
}


def _problem(row: Setting, value: object, place: str) -> str:
    with pytest.raises(SettingError) as error:
        validate_setting(row.name, value, place)
    return str(error.value)


def _ids(row: Setting) -> str:
    return row.name


def test_the_table_names_each_setting_once_and_says_what_it_does() -> None:
    names = [row.name for row in SETTINGS]
    assert len(names) == len(set(names))
    for row in SETTINGS:
        assert row.help and not row.help.endswith(".")
        assert (row.scope == "evaluator") == bool(row.stages)
        if row.kind in ("whole", "pair") or row.commands:
            assert row.metavar or row.kind == "flag", row.name
    # The unit the issue found wrong on the command line (issue 23).
    assert [row.unit for row in SETTINGS if row.name == "boundary_tolerance"] == ["characters"]


def test_the_evaluators_take_exactly_the_evaluator_rows() -> None:
    rows = {row.name: row for row in SETTINGS if row.scope == "evaluator"}
    assert set(evaluator_settings()) == set(rows)
    for stage, cls in EVALUATORS.items():
        assert set(cls.settings_names) == {name for name, row in rows.items()
                                           if stage in row.stages}, stage


#: Per kind: the type of a typed setting field (``validate_setting`` returns it).
FIELD_TYPES: dict[str, object] = {"whole": int, "pair": tuple[int, int], "flag": bool,
                                  "strings": tuple[str, ...], "text": str}


@pytest.mark.parametrize("stage", list(EVALUATORS))
def test_each_stage_reads_its_rows_as_typed_fields(stage: str) -> None:
    """The typed settings a stage's ``_compute`` gets have one field per table row of
    the stage, of the row's type, whose default is the row's (``None``: optional)."""
    cls = EVALUATORS[stage]
    rows = [row for row in SETTINGS if stage in row.stages]
    hints = typing.get_type_hints(cls.settings_type)
    assert cls.settings_type.names() == tuple(row.name for row in rows) == cls.settings_names
    for row, item in zip(rows, dataclasses.fields(cls.settings_type)):
        base = FIELD_TYPES[row.kind]
        if row.default is not None:
            assert item.default == row.default, row.name
        if row.default is None and not row.default_note:
            assert item.default is None and hints[row.name] == base | None, row.name
        else:
            assert item.default is not None and hints[row.name] == base, row.name
    assert cls.settings_type.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_a_stage_gets_every_setting_typed_and_the_report_the_mapping() -> None:
    """``_compute`` reads attributes; the report's settings are the mapping they were."""
    given = {"size_limits": (1, 9), "boundary_tolerance": 2, "required_metadata": ["a"],
             "k": 3, "relevance_from_evidence": True, "max_context_tokens": 40,
             "abstain_phrases": ["no idea"]}
    seen: dict[str, object] = {}
    for stage, cls in EVALUATORS.items():
        names = cls.settings_names
        original = cls._compute

        def spy(self: Any, dataset: Any, settings: Any, builder: Any) -> None:
            seen[self.stage] = settings

        cls._compute = spy  # type: ignore[method-assign]
        try:
            report = cls(**{name: given[name] for name in names}).evaluate()
        finally:
            cls._compute = original  # type: ignore[method-assign]
        assert isinstance(seen[stage], cls.settings_type)
        assert dict(report.settings) == {name: validate_setting(name, given[name])
                                         for name in names}
    defaults = {stage: dict(cls().evaluate().settings) for stage, cls in EVALUATORS.items()}
    assert defaults["chunking"] == {"size_limits": None, "boundary_tolerance": 0,
                                    "required_metadata": None}
    assert defaults["retrieval"] == {"k": 5}  # a flag that is off is left out
    assert defaults["augmentation"] == {"max_context_tokens": None}
    assert defaults["end_to_end"] == {}
    params = Params(k=2, relevance_from_evidence=True, max_context_tokens=7)
    assert dict(EVALUATORS["reranking"]().evaluate(Dataset(params=params)).settings) == {
        "k": 2, "relevance_from_evidence": True}
    assert dict(EVALUATORS["reranking"](k=4).evaluate(Dataset(params=params)).settings) == {
        "k": 4, "relevance_from_evidence": True}


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.params], ids=_ids)
def test_the_parser_reads_and_checks_each_params_row(row: Setting) -> None:
    assert row.name in PARAM_KEYS
    good, normalised = GOOD[row.kind]
    params = parse_dataset({"params": {row.name: good}}, source="gold.yaml").params
    assert getattr(params, row.name) == normalised
    for bad in BAD[row.kind]:
        with pytest.raises(DatasetError) as error:
            parse_dataset({"params": {row.name: bad}}, source="gold.yaml")
        assert str(error.value) == "gold.yaml: " + _problem(row, bad, f"params.{row.name}")
    assert set(PARAM_KEYS) == {row.name for row in SETTINGS if row.params}


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.scope == "evaluator"], ids=_ids)
def test_each_evaluator_checks_its_rows_with_the_same_message(row: Setting) -> None:
    good, normalised = GOOD[row.kind]
    for stage in row.stages:
        evaluator = EVALUATORS[stage](**{row.name: good})
        assert getattr(evaluator, row.name) == normalised
        for bad in BAD[row.kind]:
            with pytest.raises(SettingError) as error:
                EVALUATORS[stage](**{row.name: bad})
            assert str(error.value) == _problem(row, bad, row.name)
            # The file's params built in Python are checked by the same rule.
            with pytest.raises(SettingError) as error:
                EVALUATORS[stage]().evaluate(Dataset(params=Params(**{row.name: bad})))
            assert str(error.value) == _problem(row, bad, f"params.{row.name}")


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = _parser()
    for word in command.split():
        actions = [action for action in parser._actions
                   if isinstance(action, argparse._SubParsersAction)]
        parser = actions[0].choices[word]
    return parser


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.commands], ids=_ids)
def test_each_row_is_a_flag_of_its_commands_with_its_unit(row: Setting) -> None:
    for command in row.commands:
        actions = {option: action for action in _subparser(command)._actions
                   for option in action.option_strings}
        action = actions[row.cli_flag]
        assert action.dest == row.name
        assert action.help is not None and row.help in action.help
        if row.unit:
            assert f"unit: {row.unit}" in action.help
        if row.kind != "flag":
            assert action.metavar == row.metavar


@pytest.mark.parametrize("row", [row for row in SETTINGS
                                 if row.commands and row.kind in ("whole", "pair")], ids=_ids)
def test_each_flag_refuses_a_bad_value_by_the_same_rule(row: Setting, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries: [{id: q1}]\n", encoding="utf-8")
    bad = {"whole": ["x"], "pair": ["9", "2"]}[row.kind]
    with pytest.raises(SettingError) as error:
        parse_setting_text(row.name, bad)
    command = row.commands[0].split()
    args = [*command, *(["--qrels", str(gold)] if command == ["convert", "trec"] else [str(gold)]),
            row.cli_flag, *bad, *(["-o", str(tmp_path / "out.yaml")] if "convert" in command
                                  else [])]
    assert main(args) == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument {row.cli_flag}: {error.value.problem}\n")


def test_size_limits_min_over_max_is_refused_on_every_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = "min 9 is greater than max 2"
    with pytest.raises(DatasetError, match=f"params.size_limits: {message}"):
        parse_dataset({"params": {"size_limits": [9, 2]}})
    with pytest.raises(ValueError, match=f"^size_limits: {message}"):
        EVALUATORS["chunking"](size_limits=(9, 2))
    with pytest.raises(ValueError, match=f"^params.size_limits: {message}"):
        EVALUATORS["chunking"]().evaluate(Dataset(params=Params(size_limits=(9, 2))))
    with pytest.raises(ValueError, match=f"^ini rag_size_limits: {message}"):
        parse_setting_text("size_limits", "9 2", "ini rag_size_limits")
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries: [{id: q1}]\n", encoding="utf-8")
    assert main(["evaluate", str(gold), "--size-limits", "9", "2"]) == 2
    assert capsys.readouterr().err.endswith(f"argument --size-limits: {message}\n")


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("k", np.int64(3), 3), ("max_context_tokens", np.int32(30), 30),
    ("boundary_tolerance", np.uint8(2), 2), ("size_limits", np.array([1, 4]), (1, 4)),
    ("size_limits", (np.int16(1), np.int64(4)), (1, 4)), ("k", np.float64(3.0), 3),
    ("relevance_from_evidence", np.bool_(True), True), ("k", 10**400, 10**400),
])
def test_numpy_integers_are_whole_numbers(name: str, value: object, expected: object) -> None:
    """Issue 24: ``k=np.int64(3)`` was "not a whole number"; now numpy scalars are accepted
    wherever an int is, by the evaluators and the parser alike."""
    checked = validate_setting(name, value)
    assert checked == expected and type(checked) is type(expected)
    assert getattr(parse_dataset({"params": {name: value}}).params, name) == expected


def test_numpy_integer_settings_give_the_numbers_of_plain_ints() -> None:
    documents = {"d": "alpha beta gamma delta epsilon"}
    chunks = [{"id": "a", "doc_id": "d", "start": 0, "end": 10},
              {"id": "b", "doc_id": "d", "start": 11, "end": 30}]
    inputs: dict[str, Any] = {"documents": documents, "chunks": chunks,
                              "relevant": {"q1": ["a"]}, "retrieved_ids": {"q1": ["b", "a"]},
                              "expected_evidence": {"q1": [{"doc_id": "d", "start": 0, "end": 5}]},
                              "context_ids": {"q1": ["a", "b"]}}
    for stage, settings in (("retrieval", {"k": 1}), ("augmentation", {"max_context_tokens": 3})):
        cls = EVALUATORS[stage]
        accepted = {key: value for key, value in inputs.items() if key in cls.inputs}
        plain = cls(**settings).evaluate(**accepted)
        numpy_ = cls(**{key: np.int64(value) for key, value in settings.items()}).evaluate(
            **accepted)
        assert numpy_.values == plain.values and numpy_.settings == plain.settings


def _readme_block() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- settings-table: generated by [^>]*-->\n(.*?)\n<!-- settings-table: "
                      r"end -->", text, re.DOTALL)
    assert match, "the README has no generated settings table"
    return match.group(1)


def test_the_readme_settings_table_is_the_generated_one() -> None:
    """Regenerate with ``python -c "from pytest_rag.settings import settings_markdown;
    print(settings_markdown())"``."""
    assert _readme_block() == settings_markdown()


@pytest.mark.parametrize("row", SETTINGS, ids=_ids)
def test_the_readme_names_each_row_with_its_unit_flag_and_ini_option(row: Setting) -> None:
    text = README.read_text(encoding="utf-8")
    line = next(line for line in _readme_block().splitlines() if line.startswith(f"| `{row.name}`"))
    if row.unit:
        assert row.unit in line
    if row.ini:
        assert f"`{row.ini_name}`" in line
    synopsis = text[text.index("## Command line"):]
    synopsis = synopsis[:synopsis.index("```", synopsis.index("```") + 3)]
    metavar = " ".join(row.metavar) if isinstance(row.metavar, tuple) else row.metavar
    for command in row.commands:
        usage = next(line for line in synopsis.splitlines() if f"pytest-rag {command} " in line)
        start = synopsis.index(usage)
        end = synopsis.find("\npytest-rag ", start + 1)
        assert f"{row.cli_flag} {metavar}".strip() in synopsis[start:end], (command, row.name)
    if row.params:
        params_row = next(line for line in text.splitlines()
                          if line.startswith(f"| `params` | `{row.name}` |"))
        if row.unit:
            assert row.unit in params_row


def test_relevance_level_of_load_dataset_evaluate_and_validate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24: ``--relevance-level`` / ``relevance_level=`` beyond ``convert trec``."""
    import json

    from pytest_rag.dataset.loading import load_dataset

    qrels = tmp_path / "qrels.test"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2\n", encoding="utf-8")
    run = tmp_path / "run.test"
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n", encoding="utf-8")
    assert dict(load_dataset(qrels).queries[0].relevant or {}) == {"d1": 1, "d2": 2}
    assert dict(load_dataset(qrels, relevance_level=2).queries[0].relevant or {}) == {"d2": 2}
    with pytest.raises(ValueError, match=r"^relevance_level: must be >= 1, got 0$"):
        load_dataset(qrels, relevance_level=0)

    def mrr(*flags: str) -> float:
        assert main(["evaluate", str(qrels), "--run", str(run), "--stage", "retrieval",
                     "--format", "json", *flags]) == 0
        return float(json.loads(capsys.readouterr().out)["retrieval"]["mrr_at_k"])

    assert (mrr(), mrr("--relevance-level", "2")) == (1.0, 0.5)
    assert main(["validate", str(qrels), "--relevance-level", "2"]) == 0
    assert "valid" in capsys.readouterr().out
    assert main(["validate", str(qrels), "--relevance-level", "3"]) == 0  # no query relevant


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("doc_id_key", "  source  file ", "source  file"), ("doc_id_key", "   ", None),
    ("size_limits", " 50   400 ", (50, 400)), ("size_limits", ["50", "400"], (50, 400)),
    ("k", " +7 ", 7), ("relevance_from_evidence", "Yes", True), ("allow_outside_paths", "0", False),
    ("abstain_phrases", ["no idea", "", "sorry"], ("no idea", "sorry")),
])
def test_text_values_are_read_as_written(name: str, text: str | list[str],
                                         expected: object) -> None:
    """A text key is kept as written (inner blanks too); words are split only for pairs."""
    assert parse_setting_text(name, text) == expected


# A fullwidth 1, an Arabic-Indic 3, a separator, a float, a base.
@pytest.mark.parametrize("text", ["\uff11", "\u0663", "1_0", "2.0", "0x10"])
def test_whole_numbers_as_text_are_ascii_digits(text: str) -> None:
    """As the file format and trec_eval read them: no other digits, separators or bases."""
    with pytest.raises(SettingError, match="expected a whole number"):
        parse_setting_text("k", text)


@pytest.mark.parametrize("bad", ["", 3, ["source"]])
def test_doc_id_key_of_evaluate_is_checked_by_the_same_rule(bad: object) -> None:
    with pytest.raises(SettingError) as error:
        EVALUATORS["chunking"]().evaluate(doc_id_key=bad)
    assert str(error.value) == _problem(setting_row("doc_id_key"), bad, "doc_id_key")
    assert isinstance(error.value, TypeError)  # as before, for callers that catch it


def test_long_text_values_give_short_messages(capsys: pytest.CaptureFixture[str]) -> None:
    """A megabyte of digits or letters is refused in a readable line, never a traceback."""
    with pytest.raises(SettingError, match=r"^k: expected a whole number, got 100000 digits: "
                                           r"too many to read$"):
        parse_setting_text("k", "7" * 100_000)
    with pytest.raises(SettingError) as error:
        parse_setting_text("k", "x" * 100_000)
    assert len(str(error.value)) < 120
    assert main(["evaluate", "gold.yaml", "--k", "9" * 100_000]) == 2
    assert capsys.readouterr().err.endswith(
        "argument --k: expected a whole number, got 100000 digits: too many to read\n")
