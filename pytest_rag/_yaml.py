"""Safe YAML reading: no tag constructs an object, duplicate keys are errors."""

from __future__ import annotations

from typing import Any

import yaml

from .errors import DatasetError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictSafeLoader(_Base):  # type: ignore[misc]
    """PyYAML's safe loader that also refuses a key given twice in a mapping."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue
            if duplicate:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, source: str) -> object:
    """Decode YAML text; errors become :class:`DatasetError` naming line and column."""
    try:
        return yaml.load(text, Loader=_StrictSafeLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = error.problem or error.context or "invalid YAML"
        raise DatasetError(source, place, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise DatasetError(source, "", f"invalid YAML: {error}") from None
