"""The examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import pytest_rag

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(pytest_rag.__path__, "pytest_rag.")
    if name not in ("pytest_rag.__main__",)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failed == 0, (f"{failed} docstring example(s) of {name} failed "
                         f"(run pytest --doctest-modules {name.replace('.', '/')}.py)")
