"""Safe YAML reading: no tag constructs an object, duplicate keys are errors."""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import DatasetError
from ..text.locate import line_column

__all__ = ["load_yaml"]

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_NO_CONSTRUCTOR = "could not determine a constructor for the tag"
#: What ``!!`` stands for in a tag.
_STANDARD_PREFIX = "tag:yaml.org,2002:"


#: What a constructor of the safe loader raises on a scalar it cannot read
#: (``!!int abc``, a date such as ``2024-02-30``, ``!!bool maybe``).
_CONSTRUCTION_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError,
                        IndexError)


class _StrictSafeLoader(_Base):  # type: ignore[misc]
    """PyYAML's safe loader, stricter.

    - A key given twice in a mapping is an error.  Merge keys (``<<: *anchor``)
      are left to the safe loader: a key given next to a merge overrides the
      merged one, as YAML intends.
    - A value its tag cannot construct is an error naming its line, never a
      raw Python exception.
    - A recursive alias (an anchor used inside itself) is an error, and so are
      aliases that expand the document by more than :data:`MAX_ALIAS_EXPANSION`
      nodes.
    """

    def construct_document(self, node: Any) -> Any:
        _validate_graph(node)
        return super().construct_document(node)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _CONSTRUCTION_ERRORS as error:
            tag = str(node.tag).rsplit(":", 1)[-1]
            value = node.value if isinstance(node, yaml.ScalarNode) else None
            if isinstance(value, str) and len(value) > 40:
                value = value[:37] + "..."
            what = f"{value!r} as {tag}" if value is not None else f"this {tag}"
            detail = f" ({error})" if tag == "timestamp" and type(error) is ValueError else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {what}{detail}; quote it if it is text",
                node.start_mark) from None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping, but found {node.id}", node.start_mark)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            # ``key in seen`` alone is no hashability test: Python looks a set
            # up as a frozenset, so only ``add`` refuses it.
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # unhashable: the safe loader reports it
                continue
            if duplicate:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", mark)
        return super().construct_mapping(node, deep=deep)


#: How many nodes aliases may add to a document beyond the nodes it writes out:
#: an alias repeats its anchored value, and a few hundred bytes of nested
#: aliases can stand for billions of nodes ("billion laughs").
MAX_ALIAS_EXPANSION = 1_000_000


def _validate_graph(root: Any) -> None:
    """Raise if a node contains itself (through an alias), or if aliases make the document
    stand for more than :data:`MAX_ALIAS_EXPANSION` nodes beyond its distinct ones.

    Linear in distinct nodes and edges: each node's expanded size is summed once,
    from its children's, in post-order.
    """
    size: dict[int, int] = {}
    uses: dict[int, int] = {id(root): 1}
    nodes: dict[int, Any] = {id(root): root}
    on_path: set[int] = {id(root)}
    stack = [(root, iter(_children(root)))]
    while stack:
        node, children = stack[-1]
        for child in children:
            key = id(child)
            if key in on_path:
                raise yaml.composer.ComposerError(
                    None, None, "an anchor is used inside itself (a recursive alias)",
                    child.start_mark)
            uses[key] = uses.get(key, 0) + 1
            if key not in size and key not in nodes:
                nodes[key] = child
                if isinstance(child, yaml.ScalarNode):
                    size[key] = 1
                else:
                    on_path.add(key)
                    stack.append((child, iter(_children(child))))
                    break
        else:
            stack.pop()
            on_path.discard(id(node))
            size[id(node)] = 1 + sum(size[id(child)] for child in _children(node))
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_EXPANSION:
        key = max((key for key, count in uses.items() if count > 1),
                  key=lambda key: (uses[key] - 1) * size[key])
        raise yaml.composer.ComposerError(
            None, None,
            f"aliases expand this document by {added:,} nodes, over the limit of "
            f"{MAX_ALIAS_EXPANSION:,}; the value anchored here ({size[key]:,} nodes) is used "
            f"{uses[key]:,} times", nodes[key].start_mark)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _problem(error: yaml.MarkedYAMLError) -> str:
    problem = error.problem or error.context or "invalid YAML"
    if problem.startswith(_NO_CONSTRUCTOR):
        tag = problem[len(_NO_CONSTRUCTOR):].strip()
        import ast

        try:
            name = ast.literal_eval(tag)  # PyYAML gives the tag's repr
        except (ValueError, SyntaxError):
            name = None
        if isinstance(name, str) and name.startswith(_STANDARD_PREFIX):
            tag = repr("!!" + name[len(_STANDARD_PREFIX):])  # as written: !!python/object:...
        return (f"the tag {tag} is not allowed (files are read with a safe loader: "
                "no tag constructs an object)")
    return problem


def load_yaml(text: str, source: str) -> object:
    """Decode YAML text; errors become :class:`DatasetError` naming line and column.

    Examples
    --------
    >>> load_yaml("k: 5", "gold.yaml")
    {'k': 5}
    """
    try:
        return yaml.load(text, Loader=_StrictSafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise DatasetError(source, place, f"invalid YAML: {_problem(error)}") from None
    except yaml.reader.ReaderError as error:
        character = (f"#x{error.character:04x}" if isinstance(error.character, int)
                     else repr(error.character))
        raise DatasetError(source, line_column(text, error.position),
                           f"invalid YAML: character {character} is not allowed") from None
    except yaml.YAMLError as error:
        raise DatasetError(source, "", f"invalid YAML: {error}") from None
    except RecursionError:
        raise DatasetError(source, "", "invalid YAML: nested too deeply") from None
