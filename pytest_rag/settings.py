"""Every setting of the evaluators and of the loader, defined once.

:data:`SETTINGS` is the one table: a row names a setting, its kind, unit,
bounds, default, help sentence and where it can be given (the dataset file's
``params``, an ini option ``rag_<name>``, flags of the command line, keyword
arguments).  Everything else derives from it: :func:`validate_setting` checks a
value from Python or a file, :func:`parse_setting_text` one from an ini file or
the command line (both with the same messages), ``plugin/options.py``
registers the ini options, ``cli.py`` the flags, and
:func:`settings_markdown` writes the README's reference table.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, SupportsInt, cast

from .errors import describe_value, is_bool, show_value, unknown_names

__all__ = ["SETTINGS", "Setting", "SettingError", "parse_setting_text", "setting",
           "settings_markdown", "validate_setting", "validate_settings", "whole_number"]

Kind = Literal["whole", "pair", "flag", "strings", "text"]
Scope = Literal["evaluator", "loader", "call"]


@dataclass(frozen=True)
class Setting:
    """One setting.

    Attributes
    ----------
    name:
        The keyword, the ``params`` key and (as ``rag_<name>``) the ini option.
    kind:
        ``whole`` (a whole number), ``pair`` (``[min, max]`` of whole numbers,
        min <= max), ``flag`` (true or false), ``strings`` (a list of strings)
        or ``text`` (a non-empty string).
    help:
        One sentence saying what it does (no final period).
    unit:
        What a number counts (``tokens``, ``characters``), or ``""``.
    minimum:
        The smallest whole number allowed (``whole`` and ``pair``); there is no
        largest (a K beyond the ranked list is the whole list).
    default, default_note:
        The value when nothing gives one (``None``: no default, the metrics that
        need it are not measured), or a note saying what the evaluator uses
        instead (its default lives beside the metric).
    stages:
        The evaluators that read it; empty for a loader setting.
    scope:
        ``evaluator`` (a constructor argument of the evaluators in ``stages``),
        ``loader`` (an argument of ``load_dataset``) or ``call`` (an argument
        of ``evaluate()``).
    params:
        Whether it is a key of a dataset file's ``params`` section.
    ini:
        Whether it is the ini option ``rag_<name>``.
    commands:
        The ``pytest-rag`` commands that take it as a flag (``convert trec``
        for a subcommand).
    flag, metavar:
        The command-line flag (default ``--name-with-dashes``) and the name of
        its value in the help.
    ini_list:
        For ``strings``: how the ini value is split (``args``: on blanks,
        ``linelist``: one per line).
    """

    name: str
    kind: Kind
    help: str
    unit: str = ""
    minimum: int = 0
    default: Any = None
    default_note: str = ""
    stages: tuple[str, ...] = ()
    scope: Scope = "evaluator"
    params: bool = True
    ini: bool = True
    commands: tuple[str, ...] = ("evaluate",)
    flag: str = ""
    metavar: str | tuple[str, str] = ""
    ini_list: Literal["args", "linelist"] = "linelist"

    @property
    def ini_name(self) -> str:
        """The ini option, ``rag_<name>``."""
        return f"rag_{self.name}"

    @property
    def cli_flag(self) -> str:
        """The command-line flag, ``--name-with-dashes`` unless the row names another."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def type_text(self) -> str:
        """The kind of value in words, with the bounds and the unit."""
        unit = f" ({self.unit})" if self.unit else ""
        if self.kind == "whole":
            return f"whole number >= {self.minimum}{unit}"
        if self.kind == "pair":
            return f"[min, max], whole numbers >= {self.minimum}, min <= max{unit}"
        if self.kind == "flag":
            return "true or false"
        if self.kind == "strings":
            return "list of strings"
        return "non-empty string"

    @property
    def default_text(self) -> str:
        """The default in words (``none`` when there is none)."""
        if self.default_note:
            return self.default_note
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)

    @property
    def help_text(self) -> str:
        """The help of an ini option or a flag: the sentence, the unit and the default."""
        unit = f"; unit: {self.unit}" if self.unit else ""
        return f"{self.help}{unit}; default: {self.default_text}"


_RANKED = ("embedding", "retrieval", "reranking")

#: The table of every setting, in pipeline order (the loader's last).
SETTINGS: tuple[Setting, ...] = (
    Setting("size_limits", "pair", "the allowed tokens per chunk, both ends included "
            "(size_compliance)", unit="tokens", stages=("chunking",), metavar=("MIN", "MAX")),
    Setting("boundary_tolerance", "whole", "how far a chunk boundary may be from an ideal "
            "one and still match (boundary_f1)", unit="characters", default=0,
            stages=("chunking",), metavar="CHARACTERS"),
    Setting("required_metadata", "strings", "the metadata keys every chunk must carry "
            "(metadata_completeness)", stages=("chunking",), metavar="KEY", ini_list="args"),
    Setting("k", "whole", "the cut-off K of retrieval, reranking and the embedding top K",
            minimum=1, default=5, stages=_RANKED, metavar="K"),
    Setting("relevance_from_evidence", "flag", "grade chunks from expected_evidence for "
            "queries without relevant", default=False, stages=_RANKED),
    Setting("max_context_tokens", "whole", "the token budget of the packed context "
            "(budget_compliant)", unit="tokens", stages=("augmentation",), metavar="TOKENS"),
    Setting("abstain_phrases", "strings", "the phrases that mark an answer as an abstention "
            "(they replace the built-in list)", default_note="the built-in list",
            stages=("generation",), flag="--abstain-phrase", metavar="PHRASE"),
    Setting("doc_id_key", "text", "the metadata key naming the document of a LangChain, "
            "LlamaIndex or Haystack chunk object", scope="call", params=False, commands=(),
            metavar="KEY"),
    Setting("relevance_level", "whole", "the grade from which a TREC qrels judgement counts "
            "as relevant (trec_eval -l)", minimum=1, default=1, scope="loader",
            params=False, commands=("evaluate", "validate", "convert trec"), metavar="N"),
    Setting("allow_outside_paths", "flag", "allow dataset 'path:' documents outside the "
            "dataset's folder", default=False, scope="loader", params=False,
            commands=("evaluate", "validate")),
)

_BY_NAME = {row.name: row for row in SETTINGS}


def setting(name: str) -> Setting:
    """The row of ``name``; a ``KeyError`` names the closest one."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown setting {unknown_names([name], _BY_NAME)}") from None


class SettingError(ValueError, TypeError):
    """A bad setting value: ``place`` says where it came from (``params.k``,
    ``ini rag_k``, ``k``), ``problem`` what is wrong.  A ``ValueError`` and, for
    callers that catch the wrong type of a keyword argument, a ``TypeError``."""

    def __init__(self, place: str, problem: str) -> None:
        self.place = place
        self.problem = problem
        super().__init__(f"{place}: {problem}" if place else problem)


def whole_number(value: object, place: str, minimum: int | None = None) -> int:
    """``value`` as an ``int``: an int, a numpy integer or a whole float (``5.0``, as a
    file may write it), at least ``minimum``; the format's one rule for whole numbers.

    Raises
    ------
    SettingError
        ``expected a whole number, got ...`` or ``must be >= minimum, got ...`` at ``place``.
    """
    if type(value) is int:  # the common case, without the ABC checks
        number = value
    elif is_bool(value) or not isinstance(value, numbers.Real):
        raise SettingError(place, f"expected a whole number, got {describe_value(value)}")
    elif isinstance(value, numbers.Integral):
        number = int(value)
    else:
        try:
            whole = float(value).is_integer()
        except OverflowError:  # a fraction beyond the float range
            whole = False
        if not whole:
            raise SettingError(place, f"expected a whole number, got {describe_value(value)}")
        number = int(cast(SupportsInt, value))
    if minimum is not None and number < minimum:
        raise SettingError(place, f"must be >= {minimum}, got {number}")
    return number


def _items(value: object, place: str) -> list[Any]:
    """The items of a list-like value (read once), refusing strings and mappings."""
    if (isinstance(value, (str, bytes, bytearray, Mapping, set, frozenset))
            or not isinstance(value, Iterable) or getattr(value, "ndim", 1) != 1):
        raise SettingError(place, f"expected a list, got {describe_value(value)}")
    return list(value)


def validate_setting(name: str, value: object, place: str | None = None) -> Any:
    """``value`` of the setting ``name``, validated and normalised; ``None`` passes.

    Whole numbers come back as ``int`` (numpy integers and whole floats are
    accepted), pairs as a tuple of two ints, lists as a tuple of strings.
    ``place`` is where the value came from, for the message (default: ``name``).

    Raises
    ------
    SettingError
        Naming ``place`` (or ``place[i]`` for an item) and what is wrong.
    """
    row = setting(name)
    where = name if place is None else place
    if value is None:
        return None
    if row.kind == "whole":
        return whole_number(value, where, row.minimum)
    if row.kind == "pair":
        items = _items(value, where)
        if len(items) != 2:
            raise SettingError(where, f"expected [min, max], got {show_value(value)}")
        low = whole_number(items[0], f"{where}[0]", row.minimum)
        high = whole_number(items[1], f"{where}[1]", row.minimum)
        if low > high:
            raise SettingError(where, f"min {low} is greater than max {high}")
        return low, high
    if row.kind == "flag":
        if not is_bool(value):
            raise SettingError(where, f"expected true or false, got {describe_value(value)}")
        return bool(value)
    if row.kind == "strings":
        items = _items(value, where)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise SettingError(f"{where}[{i}]",
                                   f"expected a string, got {describe_value(item)}")
        return tuple(items)
    if not isinstance(value, str) or not value:
        raise SettingError(where, f"expected a non-empty string, got {describe_value(value)}")
    return value


def validate_settings(values: Mapping[str, object], place: str = "") -> dict[str, Any]:
    """Each of ``values`` checked by :func:`validate_setting` (``place`` prefixes the names,
    e.g. ``params``); the ``None`` ones are left out."""
    prefix = f"{place}." if place else ""
    return {name: valid for name, value in values.items()
            if (valid := validate_setting(name, value, prefix + name)) is not None}


_WHOLE_TEXT = re.compile(r"[+-]?[0-9]+")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _whole_text(text: str, place: str, minimum: int) -> int:
    stripped = text.strip()
    if not _WHOLE_TEXT.fullmatch(stripped):  # ASCII digits only, as the file format
        raise SettingError(place, f"expected a whole number, got {show_value(text)}")
    try:
        number = int(stripped)
    except ValueError:  # beyond the interpreter's limit of digits in a conversion
        raise SettingError(place, f"expected a whole number, got {len(stripped)} digits: "
                                  "too many to read") from None
    return whole_number(number, place, minimum)


def parse_setting_text(name: str, text: str | Sequence[str], place: str | None = None) -> Any:
    """The value of ``name`` written as text (an ini line, command-line words), checked
    as :func:`validate_setting` checks it; blank text is ``None``.

    A pair is two words (``"50 400"`` or ``["50", "400"]``), a list one string per
    item, a flag ``true``/``false`` (also ``yes``/``no``, ``on``/``off``, ``1``/``0``).
    """
    row = setting(name)
    where = name if place is None else place
    words = text.split() if isinstance(text, str) else [str(word) for word in text]
    if row.kind == "strings":
        items = [text] if isinstance(text, str) else list(words)
        return validate_setting(name, [item for item in items if item.strip()] or None, where)
    joined = text.strip() if isinstance(text, str) and row.kind == "text" else " ".join(words)
    if not joined:
        return None
    if row.kind == "whole":
        return _whole_text(joined, where, row.minimum)
    if row.kind == "pair":
        if len(words) != 2:
            raise SettingError(where, "expected two whole numbers 'MIN MAX', got "
                                      f"{show_value(joined)}")
        return validate_setting(name, (_whole_text(words[0], f"{where}[0]", row.minimum),
                                       _whole_text(words[1], f"{where}[1]", row.minimum)), where)
    if row.kind == "flag":
        if joined.lower() in _TRUE:
            return True
        if joined.lower() in _FALSE:
            return False
        raise SettingError(where, f"expected true or false, got {show_value(joined)}")
    return validate_setting(name, joined, where)


def settings_markdown() -> str:
    """The README's settings table, one row per setting, from :data:`SETTINGS`."""
    lines = ["| setting | value | default | `params` | ini | command line | used by | meaning |",
             "|---|---|---|---|---|---|---|---|"]
    for row in SETTINGS:
        metavar = " ".join(row.metavar) if isinstance(row.metavar, tuple) else row.metavar
        flag = f"`{row.cli_flag} {metavar}`".replace(" `", "`") if row.commands else ""
        if row.kind == "strings" and flag:
            flag += " (repeatable)"
        if flag:
            flag += " in " + ", ".join(f"`{command}`" for command in row.commands)
        used = {"evaluator": ", ".join(row.stages), "loader": "`load_dataset` (loading)",
                "call": "`evaluate()` and `rag.<stage>()` calls"}[row.scope]
        lines.append(" | ".join([
            f"| `{row.name}`", row.type_text, row.default_text, "yes" if row.params else "",
            f"`{row.ini_name}`" if row.ini else "", flag, used, row.help + " |"]))
    return "\n".join(lines)
