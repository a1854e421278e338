"""A baseline is read by the dataset layer's one JSON reader: what a dataset file may
not hold, a baseline may not either (issue 24 item 10: a key written twice)."""

from __future__ import annotations

import json

import pytest
from ragproject import BASELINE

RUN = ("-p", "no:cacheprovider")


@pytest.mark.parametrize("args", [("--rag-baseline",), ("--rag-update-baseline",)],
                         ids=["compare", "update"])
def test_a_key_written_twice_is_refused_with_its_line_and_column(
        rag_pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    rag_pytester.runpytest(*RUN, "--rag-update-baseline").assert_outcomes(passed=1)
    path = rag_pytester.path / BASELINE
    entry = json.loads(path.read_text(encoding="utf-8"))
    # The same test written twice, the second copy with every value 0: last copy won.
    (nodeid, stages), = entry["tests"].items()
    first = json.dumps(stages)
    zeroed = json.dumps({stage: {**data, "metrics": dict.fromkeys(data["metrics"], 0.0)}
                         for stage, data in stages.items()})
    text = (f'{{"format": "pytest-rag-baseline", "version": 1, "tests": {{\n'
            f'  {json.dumps(nodeid)}: {first},\n  {json.dumps(nodeid)}: {zeroed}}}}}\n')
    path.write_text(text, encoding="utf-8")
    before = path.read_bytes()
    result = rag_pytester.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"ERROR: pytest-rag: baseline file '{path}' is not valid JSON (line 3, column 3: "
            f"duplicate key {nodeid!r}); restore it from version control, or delete it and "
            "run --rag-update-baseline") in result.stderr.lines
    assert path.read_bytes() == before


def test_pytest_rag_diff_refuses_a_key_written_twice(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("a.json").write_text(
        '{"format": "pytest-rag-baseline", "version": 1,\n "tests": {}, "tests": {}}',
        encoding="utf-8")
    result = pytester.run("pytest-rag", "diff", "a.json", "a.json")
    assert result.ret == 2
    assert "is not valid JSON (line 2, column 15: duplicate key 'tests')" in result.stderr.str()
