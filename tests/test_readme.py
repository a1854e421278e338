"""The README stays true: its example file, its metric table and its definitions.

* The YAML example of "The dataset format" is ``tests/data/quickstart.yaml``,
  byte for byte, and that file loads.
* The metric table is what ``pytest_rag.reports.tables.registry_table(markdown=True)``
  prints today.
* Every registry key is defined under its stage's subsection of
  "Metric definitions".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pytest_rag
from pytest_rag.registry import REGISTRY, STAGES
from pytest_rag.reports.tables import registry_table

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
QUICKSTART = ROOT / "tests" / "data" / "quickstart.yaml"

#: The subsection heading of each stage under "Metric definitions".
STAGE_HEADINGS = {
    "chunking": "Chunking",
    "embedding": "Embedding",
    "retrieval": "Retrieval",
    "reranking": "Reranking",
    "augmentation": "Augmentation",
    "generation": "Generation",
    "end_to_end": "End to end",
}


def region(name: str) -> str:
    """The README text between ``<!-- name:start -->`` and ``<!-- name:end -->``."""
    text = README.read_text(encoding="utf-8")
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert text.count(start) == 1 and text.count(end) == 1, (
        f"README.md must hold exactly one {start} and one {end} marker")
    return text.split(start, 1)[1].split(end, 1)[0]


def subsections(text: str) -> dict[str, str]:
    """``### Heading`` -> the text up to the next ``##`` or ``###`` heading."""
    parts = re.split(r"^(#{2,3}) (.+)$", text, flags=re.MULTILINE)
    return {parts[i + 1].strip(): parts[i + 2]
            for i in range(1, len(parts) - 2, 3) if parts[i] == "###"}


def test_readme_yaml_example_is_quickstart_file() -> None:
    blocks = re.findall(r"^```yaml\n(.*?)^```$", region("format"),
                        flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, (
        f"the format section of README.md must hold exactly one ```yaml block, found {len(blocks)}")
    expected = QUICKSTART.read_text(encoding="utf-8")
    assert blocks[0] == expected, (
        "the README's YAML example differs from tests/data/quickstart.yaml: "
        "copy the file into the ```yaml block between the format markers, unchanged")


def test_readme_metric_table_is_current() -> None:
    table = region("metrics-table").strip("\n")
    assert table == registry_table(markdown=True), (
        "README metric table is stale: replace the text between the metrics-table markers "
        "with the output of `pytest-rag metrics --format markdown` "
        "(pytest_rag.reports.tables.registry_table(markdown=True))")


def test_readme_metric_table_says_which_metrics_have_per_query_values() -> None:
    """The "per query" column is what ``--rag-significance`` can test: it must follow
    the registry's flag for every metric."""
    from pytest_rag.registry import REGISTRY

    lines = region("metrics-table").strip("\n").splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert "per query" in header, "the README metric table needs a 'per query' column"
    stage_at, key_at, flag_at = (header.index("stage"), header.index("key"),
                                 header.index("per query"))
    shown = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        shown[f"{cells[stage_at]}.{cells[key_at].strip('`')}"] = cells[flag_at]
    expected = {spec.name: "yes" if spec.per_query else "no" for spec in REGISTRY.values()}
    assert shown == expected


def test_readme_defines_every_metric_under_its_stage() -> None:
    sections = subsections(region("metric-definitions"))
    missing_sections = [heading for heading in STAGE_HEADINGS.values() if heading not in sections]
    assert not missing_sections, (
        f"'Metric definitions' lacks the subsections {missing_sections}; it has {sorted(sections)}")
    assert set(STAGE_HEADINGS) == set(STAGES), "STAGE_HEADINGS must name every stage"
    undefined = [name for name, spec in REGISTRY.items()
                 if f"`{spec.key}`" not in sections[STAGE_HEADINGS[spec.stage]]]
    assert not undefined, (
        f"README 'Metric definitions' does not define {undefined}: write each key as `key` "
        "under the subsection of its stage")


def test_quickstart_loads() -> None:
    try:
        dataset = pytest_rag.load_dataset(QUICKSTART)
    except pytest_rag.DatasetError as error:
        pytest.fail(f"tests/data/quickstart.yaml (the README example) does not load: {error}")
    assert len(dataset.queries) == 3 and len(dataset.chunks) == 3
    assert set(dataset.run) == {query.id for query in dataset.queries}
