"""Reading the HTML report back: its numbers, section ids, SVGs and text (for the tests).

The rule the page follows (see :mod:`pytest_rag.reports.html`): an element with
``data-value`` holds a number of the JSON report, identified by the
attributes ``data-test``, ``data-stage``, ``data-key``, ``data-field``,
``data-query`` and ``data-variant`` of the element or of its closest
ancestor that has them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

CONTEXT = ("data-test", "data-stage", "data-key", "data-field", "data-query", "data-variant")
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
#: SVG elements written as ``<x .../>``: html.parser reports them as start-end tags.
_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)


class Page(HTMLParser):
    """Every reported number with its context, every ``id``, the text, the tags."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.numbers: list[dict[str, str]] = []
        self.ids: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.mismatched: list[str] = []
        self.feed(text)
        self.close()

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], push: bool) -> None:
        found = {name: value or "" for name, value in attrs}
        self.tags.append((tag, dict(attrs)))
        if "id" in found:
            self.ids.append(found["id"])
        context = dict(self.stack[-1][1]) if self.stack else {}
        context.update({name: found[name] for name in CONTEXT if name in found})
        if "data-value" in found:
            self.numbers.append({**context, "data-value": found["data-value"],
                                 "tag": tag, **({"data-baseline": found["data-baseline"]}
                                                if "data-baseline" in found else {})})
        if push and tag not in VOID:
            self.stack.append((tag, context))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, push=True)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, push=False)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.mismatched.append(tag)
            while self.stack and self.stack[-1][0] != tag:
                self.stack.pop()
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def svgs(text: str) -> list[ET.Element]:
    """Every ``<svg>`` of the page, parsed as XML (raises if one is not well-formed)."""
    return [ET.fromstring(match.group(0)) for match in _SVG.finditer(text)]


def reported(report: dict[str, Any], number: dict[str, str]) -> Any:
    """The value in the JSON report that a number of the page stands for."""
    field = number.get("data-field", "value")
    test, stage, key = number.get("data-test"), number.get("data-stage"), number.get("data-key")
    if field in ("value", "baseline", "delta", "p_value"):
        return report["tests"][test][stage]["metrics"][key][field]
    if field in ("ci_low", "ci_high"):
        return report["tests"][test][stage]["metrics"][key]["ci95"][0 if field == "ci_low" else 1]
    if field == "per_query":
        return report["tests"][test][stage]["per_query"][key][number["data-query"]]
    if field == "sweep":
        sweep = report["sweeps"][test]["stages"][stage]
        return sweep["metrics"][key]["values"][number["data-variant"]]
    if field == "sweep-cost":
        return report["sweeps"][test]["costs"][key][number["data-variant"]]
    if field == "sweep-objective":
        return report["sweeps"][test]["verdict"]["variants"][number["data-variant"]]["objective"]
    if field == "equal_in_every_variant":
        return report["sweeps"][test]["equal_in_every_variant"]
    if field == "summary":
        return report["summary"][key]
    if field == "outcomes":
        outcomes = {nodeid: next(iter(stages.values()))["outcome"]
                    for nodeid, stages in report["tests"].items()}
        return sum(1 for outcome in outcomes.values() if outcome == key)
    raise AssertionError(f"unknown data-field {field!r} in {number}")


def same_number(shown: str, value: Any) -> bool:
    """``data-value`` against the report's value: ``null`` for null, else the exact repr."""
    if value is None:
        return shown == "null"
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return shown == str(value)
    return shown == repr(float(value))


def mismatches(report: dict[str, Any], page: Page) -> list[str]:
    """The numbers of ``page`` that differ from (or are missing in) ``report``."""
    wrong = []
    for number in page.numbers:
        try:
            value = reported(report, number)
        except (KeyError, IndexError, TypeError) as error:
            wrong.append(f"{number}: not in the report ({error!r})")
            continue
        if not same_number(number["data-value"], value):
            wrong.append(f"{number}: the report has {value!r}")
    return wrong
