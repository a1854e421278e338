"""The pieces every part of the HTML report is built from: escaping, attributes, and
the elements that hold a reported number (see :mod:`pytest_rag.reports.html`)."""

from __future__ import annotations

from html import escape

from ..formatting import delta_text, number_text

__all__ = ["format_number"]


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _exact(value: float | None) -> str:
    """The machine-readable form: ``repr`` of a float, an integer as is, ``null`` for None."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def format_number(value: float | None) -> str:
    """A value for people: 3 decimals, 1 above 1000, 2 significant digits below 0.01."""
    if value is None:
        return "not measured"
    return number_text(value)


def _delta_text(value: float) -> str:
    return delta_text(value)


def _attrs(**attributes: object) -> str:
    """`` data-x="..."`` for each attribute that is not ``None`` (``_`` becomes ``-``)."""
    return "".join(f' {name.rstrip("_").replace("_", "-")}="{_e(value)}"'
                   for name, value in attributes.items() if value is not None)


def _number(tag: str, value: float | None, *, text: str | None = None,
            css: str = "", **attributes: object) -> str:
    """An element holding a reported number, with its exact value in ``data-value``."""
    shown = text if text is not None else format_number(value)
    classes = " ".join(part for part in (css, "nm" if value is None else "") if part)
    return (f"<{tag}{_attrs(class_=classes or None, **attributes)} data-value=\"{_exact(value)}\">"
            f"{_e(shown)}</{tag}>")


def _id(text: object) -> str:
    """An id in running text or a list: escaped and isolated from the text direction
    around it (``<bdi>``), so a right-to-left override in it turns nothing else around
    (``<code>`` elements are isolated by the style sheet)."""
    return f"<bdi>{_e(text)}</bdi>"


def _status(status: str) -> str:
    return f'<span class="status {_e(status.replace(" ", "-"))}">{_e(status)}</span>'
