"""The package's layers, read from its imports: what may import what.

Layers, bottom to top (README "Development" has the map)::

    errors, registry,     the exception type, the metric vocabulary, how untrusted
    escaping, atomic,     text is written to a terminal and to Markdown, atomic writes,
    settings              the table of settings
    text                  tokens, words, intervals, Markdown blocks, locating text
    dataset               the format: model, parser, loading, keyword inputs
    kernels               numpy arithmetic of the metrics
    stages, metrics       the seven evaluators, Report, checks
    compare               baselines, tolerances, significance, sweeps, diff
    reports               scorecard, HTML, SVG, text tables
    plugin | cli          the pytest layer, and beside it the command line

A module imports only from its own layer or below; ``plugin`` and ``cli``
never import each other; only ``plugin`` imports pytest; no two modules
import each other, directly or round a longer loop.  Every import counts:
top-level, inside a function (the lazy ones) and under ``TYPE_CHECKING``.
The package's ``__init__`` is the public facade and may name any layer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import pytest_rag

PACKAGE = Path(pytest_rag.__file__).parent

#: Layer rank of each top-level module or folder of the package.
RANKS: dict[str, int] = {
    "errors": 0, "registry": 0, "escaping": 0, "atomic": 0, "formatting": 0, "settings": 0,
    "text": 1,
    "dataset": 2,
    "kernels": 3,
    "stages": 4, "metrics": 4,
    "compare": 5,
    "reports": 6,
    "plugin": 7, "cli": 7, "__main__": 7,
}
#: Top layers that stand beside each other and must not import each other.
SIDE_BY_SIDE = {"plugin": "cli", "cli": "plugin", "__main__": "plugin"}
MAX_MODULES_PER_FOLDER = 12


def module_name(path: Path, root: Path) -> str:
    """``pytest_rag.dataset.model`` for ``root/dataset/model.py`` (root is the package)."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> Iterator[tuple[tuple[str, ...], int]]:
    """What each import of ``path`` names, wherever the import stands, with its line.

    Each item holds the candidate absolute names, most specific first:
    ``from .plugin import options`` gives ``("pytest_rag.plugin.options",
    "pytest_rag.plugin")``; the first that is a module is what it imports.
    """
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.name,), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield (f"{target}.{alias.name}", target), node.lineno


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """Module name to the package modules it imports (name to line)."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        edges: dict[str, int] = {}
        for candidates, line in imports_of(path, root):
            target = next((c for c in candidates if c in files), None)
            if target is not None and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def external_imports(root: Path, top: str) -> dict[str, list[str]]:
    """Module name to the imports of ``top`` (e.g. ``pytest``) it makes."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for candidates, line in imports_of(path, root):
            target = candidates[-1]
            if target.split(".")[0] in (top, "_" + top):
                found.setdefault(module_name(path, root), []).append(f"{target} (line {line})")
    return found


def layer_of(name: str) -> str | None:
    """The top-level module or folder of a package module; ``None`` for the facade."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_violations(graph: Mapping[str, Mapping[str, int]],
                     ranks: Mapping[str, int] = RANKS) -> list[str]:
    """Each import that goes up a layer, or sideways between plugin and cli."""
    problems = []
    for name, edges in sorted(graph.items()):
        here = layer_of(name)
        if here is None:
            continue
        if here not in ranks:
            problems.append(f"{name}: in no layer; add {here!r} to RANKS")
            continue
        for target, line in sorted(edges.items()):
            there = layer_of(target)
            if there is None:
                problems.append(f"{name} line {line}: imports the package facade {target}")
            elif there not in ranks:
                problems.append(f"{name} line {line}: imports {target}, which is in no layer")
            elif ranks[there] > ranks[here]:
                problems.append(f"{name} line {line}: imports {target}, a layer above it "
                                f"({here} {ranks[here]} < {there} {ranks[there]})")
            elif SIDE_BY_SIDE.get(here) == there:
                problems.append(f"{name} line {line}: imports {target}; {here} and {there} "
                                "stand beside each other")
    return problems


def cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """One loop of imports per strongly connected group of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; the package is small
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_goes_up_a_layer() -> None:
    assert layer_violations(import_graph(PACKAGE)) == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph(PACKAGE)) == []


def test_only_the_plugin_imports_pytest() -> None:
    outside = {name: found for name, found in external_imports(PACKAGE, "pytest").items()
               if layer_of(name) != "plugin"}
    assert outside == {}


def test_every_folder_holds_at_most_twelve_modules() -> None:
    crowded = {str(folder.relative_to(PACKAGE.parent)): count
               for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]
               if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER}
    assert crowded == {}


def test_every_module_says_what_it_is_for_on_its_first_line() -> None:
    silent = []
    for path in sorted(PACKAGE.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or not doc.splitlines()[0].strip():
            silent.append(str(path.relative_to(PACKAGE.parent)))
    assert silent == []


def test_rag_inputs_reach_a_dataset_one_way() -> None:
    """arguments -> dataset resolution -> Dataset -> evaluator, never back."""
    graph = import_graph(PACKAGE)
    # The format's rules know nothing of files or of keyword arguments.
    assert {"pytest_rag.dataset.loading", "pytest_rag.dataset.arguments"}.isdisjoint(
        graph["pytest_rag.dataset.parser"])
    assert "pytest_rag.dataset.arguments" not in graph["pytest_rag.dataset.loading"]
    # The rag fixture hands its arguments to the evaluator, which resolves them once.
    assert {"pytest_rag.dataset.arguments", "pytest_rag.dataset.parser"}.isdisjoint(
        graph["pytest_rag.plugin.fixture"])
    assert "pytest_rag.dataset.arguments" in graph["pytest_rag.stages._base"]


# The checker itself, on a small package written for the purpose: a rule that
# cannot fail would keep nothing true.

def _package(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / "pytest_rag"
    for relative, text in {"__init__.py": '"""Facade."""\n', **files}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(("source", "expected"), [
    ("from ..compare.baseline import Baseline\n",
     "pytest_rag.kernels.ranking line 1: imports pytest_rag.compare.baseline, a layer above it"),
    ("def f():\n    from ..plugin import session\n",
     "pytest_rag.kernels.ranking line 2: imports pytest_rag.plugin.session, a layer above it"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..reports.html import X\n",
     "pytest_rag.kernels.ranking line 3: imports pytest_rag.reports.html, a layer above it"),
    ("import pytest_rag.stages.report\n",
     "pytest_rag.kernels.ranking line 1: imports pytest_rag.stages.report, a layer above it"),
])
def test_the_checker_finds_an_upward_import(tmp_path: Path, source: str, expected: str) -> None:
    root = _package(tmp_path, {
        "kernels/__init__.py": "", "kernels/ranking.py": source,
        "compare/__init__.py": "", "compare/baseline.py": "",
        "plugin/__init__.py": "", "plugin/session.py": "",
        "reports/__init__.py": "", "reports/html.py": "",
        "stages/__init__.py": "", "stages/report.py": "",
    })
    assert [p.split(" (")[0] for p in layer_violations(import_graph(root))] == [expected]


def test_the_checker_finds_cli_and_plugin_importing_each_other(tmp_path: Path) -> None:
    root = _package(tmp_path, {"cli.py": "from .plugin import options\n",
                               "plugin/__init__.py": "", "plugin/options.py": ""})
    assert layer_violations(import_graph(root)) == [
        "pytest_rag.cli line 1: imports pytest_rag.plugin.options; cli and plugin stand "
        "beside each other"]


def test_the_checker_finds_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "dataset/__init__.py": "",
        "dataset/model.py": "def f():\n    from .positions import build\n",
        "dataset/positions.py": "from .model import Dataset\n",
    })
    assert cycles(import_graph(root)) == [["pytest_rag.dataset.model",
                                           "pytest_rag.dataset.positions"]]


def test_the_checker_finds_pytest_outside_the_plugin(tmp_path: Path) -> None:
    root = _package(tmp_path, {"stages/__init__.py": "",
                               "stages/report.py": "def f():\n    import _pytest.nodes\n"})
    assert external_imports(root, "pytest") == {
        "pytest_rag.stages.report": ["_pytest.nodes (line 2)"]}
