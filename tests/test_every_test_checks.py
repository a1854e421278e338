"""Every test checks something: a test function with no assertion cannot fail.

A test checks when its body (or a function it calls, found by name in the
suite's own modules, to any depth) asserts, raises, calls ``pytest.raises``,
``pytest.fail``, ``pytest.skip`` and the like, a ``pytester`` result's
``fnmatch_lines`` or ``assert_outcomes``, any ``assert...`` helper, or runs a
process with ``check=True``.  A test that only calls code and would pass
whatever it returned is listed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: Calls that fail the test by themselves when what they check is false.
CHECKING_CALLS = frozenset({
    "raises", "warns", "deprecated_call", "fail", "skip", "xfail", "importorskip",
    "fnmatch_lines", "no_fnmatch_line", "re_match_lines", "no_re_match_line", "assert_outcomes",
})
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST) -> Iterator[Function]:
    return (node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef,
                                                                ast.AsyncFunctionDef)))


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else None


def _checks(function: Function, checking: set[str]) -> bool:
    for node in ast.walk(function):
        if isinstance(node, (ast.Assert, ast.Raise)):
            return True
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if name is not None and (name in CHECKING_CALLS or name.startswith("assert")
                                     or name in checking):
                return True
            if any(keyword.arg == "check" and isinstance(keyword.value, ast.Constant)
                   and keyword.value.value is True for keyword in node.keywords):
                return True
    return False


def unchecked_tests(root: Path) -> list[str]:
    """``path:line name`` of every ``test_*`` function under ``root`` that checks nothing."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), str(path))
             for path in sorted(root.rglob("*.py"))}
    every = [function for tree in trees.values() for function in _functions(tree)]
    checking: set[str] = set()
    grew = True
    while grew:  # a helper that calls a checking helper checks too
        grew = False
        for function in every:
            if function.name not in checking and _checks(function, checking):
                checking.add(function.name)
                grew = True
    return [f"{path.relative_to(root)}:{function.lineno} {function.name}"
            for path, tree in trees.items() for function in _functions(tree)
            if function.name.startswith("test_") and function.name not in checking]


def test_every_test_function_checks_something() -> None:
    assert unchecked_tests(TESTS) == []


def test_a_test_that_only_calls_code_is_found(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(
        "def helper(x):\n    assert x\n\n"
        "def test_checks_through_a_helper():\n    helper(1)\n\n"
        "def test_only_calls():\n    sorted([2, 1])\n\n"
        "def test_raises(pytest):\n    with pytest.raises(ValueError):\n        int('x')\n",
        encoding="utf-8")
    assert unchecked_tests(tmp_path) == ["test_sample.py:7 test_only_calls"]
