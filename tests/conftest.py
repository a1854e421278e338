"""Options, markers and hypothesis profiles shared by every folder of the suite."""

from __future__ import annotations

import pytest
from hypothesis_profiles import register

pytest_plugins = ["pytester"]

register()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (the benchmark harness, the kill "
                          "tests); CI runs them")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (CI does)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
