"""Where a dataset error is, for a person: the line in the file and the record's id.

The parser names a place by its path in the data (``queries[3].relevant``),
which makes users count list items.  :func:`located` adds, after the path,
the id of the query, document or chunk it is in and the line of the file
where the innermost part of the path that exists starts:
``queries[3].relevant (query 'q4', line 12)``.  It runs only when an error
is raised: the file is composed (not constructed) by the YAML reader, which
also reads JSON, to find the line; a file it cannot compose, or one larger
than :data:`MAX_LOCATED_CHARACTERS`, gets the id alone.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import DatasetError
from ..escaping import quoted

__all__ = ["MAX_LOCATED_CHARACTERS", "located"]

#: Beyond this size the line is not looked for (composing costs about a second per 20 MB).
MAX_LOCATED_CHARACTERS = 50_000_000
#: The sections whose items have ids, and what an item is called.
_RECORDS = {"queries": "query", "documents": "document", "chunks": "chunk"}
_HEAD = re.compile(r"(queries|documents|chunks|run|params)(?=[.\[]|$)")
_STEP = re.compile(r"\[(\d+)\]|\.([^.\[]+)")


def _steps(place: str) -> list[str | int] | None:
    """The path of ``place`` as keys and indexes, or ``None`` when it is not a data path."""
    head = _HEAD.match(place)
    if head is None:
        return None
    steps: list[str | int] = [head.group(1)]
    position = head.end()
    while position < len(place):
        step = _STEP.match(place, position)
        if step is None:
            break
        steps.append(int(step.group(1)) if step.group(1) is not None else step.group(2))
        position = step.end()
    return steps


def _line(text: str, steps: list[str | int]) -> int | None:
    """The line (from 1) where the innermost existing node of ``steps`` starts."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
    except Exception:  # noqa: BLE001 - any reader failure: no line, the message stands
        return None
    line = None
    for step in steps:
        if isinstance(node, yaml.MappingNode) and isinstance(step, str):
            node = next((value for key, value in node.value
                         if isinstance(key, yaml.ScalarNode) and key.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            node = node.value[step] if step < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def located(error: DatasetError, data: object, text: str) -> DatasetError:
    """``error`` with the record's id and the line after its place (see the module);
    ``error`` itself when its place is not a path into the data."""
    steps = _steps(error.place)
    if steps is None:
        return error
    notes = []
    if steps[0] in _RECORDS and len(steps) > 1 and isinstance(steps[1], int):
        section = data.get(steps[0]) if isinstance(data, dict) else None
        item = (section[steps[1]] if isinstance(section, list) and steps[1] < len(section)
                else None)
        record_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(record_id, str) and record_id:
            notes.append(f"{_RECORDS[str(steps[0])]} {quoted(record_id)}")
    line = _line(text, steps) if len(text) <= MAX_LOCATED_CHARACTERS else None
    if line is not None:
        notes.append(f"line {line}")
    if not notes:
        return error
    return DatasetError(error.source, f"{error.place} ({', '.join(notes)})", error.problem)
