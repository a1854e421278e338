"""Small SVG charts for the HTML report, drawn by hand: metric bars, histograms and
the sweeps' quality-against-cost scatter.

Every function returns one ``<svg>`` element as a string that is well-formed
XML on its own (text escaped, no HTML entities), with its colours as
attributes, so a chart looks the same inline, printed or cut out of the page.
Coordinates are rounded to 0.1 px, so the same data always gives the same text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Marker", "Point", "Series", "bar", "bin_counts", "histogram", "scatter",
           "short_number"]

#: Colours: the current value, a value that got worse, the baseline, a threshold.
CURRENT = "#2f6fb3"
WORSE = "#c0392b"
BASELINE = "#9aa5b1"
THRESHOLD = "#d35400"
TRACK = "#e8ecf1"
INK = "#1f2933"
MUTED = "#616e7c"
GOOD = "#1e7e34"


@dataclass(frozen=True)
class Series:
    """One set of bin counts of a histogram, e.g. the current or the baseline values."""

    name: str
    counts: tuple[int, ...]
    colour: str


@dataclass(frozen=True)
class Marker:
    """A vertical line at ``x`` (in data units) with a short label above the plot."""

    x: float
    label: str
    colour: str = THRESHOLD
    dashed: bool = True


def _c(value: float) -> str:
    """A coordinate: 0.1 px steps, without ``-0.0``."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _e(text: str) -> str:
    return escape(text, quote=True)


def short_number(value: float) -> str:
    """A compact axis label: whole numbers as such, others with 3 significant digits."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3g}"


def _open(width: int, height: int, css_class: str, title: str) -> list[str]:
    # No xmlns: inline SVG in HTML needs none, and the page names no URL at all.
    return [f'<svg class="{_e(css_class)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
            f"<title>{_e(title)}</title>"]


def bar(value: float | None, *, low: float, high: float, baseline: float | None = None,
        thresholds: Sequence[float] = (), worse: bool = False, title: str = "",
        width: int = 200, height: int = 18) -> str:
    """A horizontal bar of ``value`` on the scale ``low..high``.

    The bar starts at 0 when 0 is on the scale (else at ``low``); ``baseline``
    is drawn as a dark tick, each threshold as a dashed orange line; values
    off the scale are clamped to its ends.  ``value`` ``None`` (not measured)
    draws the empty track only.  ``worse`` colours the bar red.
    """
    if not high > low:
        raise ValueError(f"bar scale must have high > low, got {low!r}..{high!r}")
    pad = 3.0
    span = width - 2 * pad

    def x(number: float) -> float:
        return pad + span * (min(max(number, low), high) - low) / (high - low)

    parts = _open(width, height, "bar", title)
    parts.append(f'<rect x="{_c(pad)}" y="4" width="{_c(span)}" height="{height - 8}" '
                 f'fill="{TRACK}"/>')
    if value is not None:
        origin = x(0.0) if low <= 0.0 <= high else x(low)
        end = x(value)
        left, right = min(origin, end), max(origin, end)
        length = max(right - left, 1.0)  # a value at 0 still shows a sliver
        parts.append(f'<rect class="value" x="{_c(left)}" y="4" width="{_c(length)}" '
                     f'height="{height - 8}" fill="{WORSE if worse else CURRENT}"/>')
    for limit in thresholds:
        at = _c(x(limit))
        parts.append(f'<line class="threshold" x1="{at}" y1="0" x2="{at}" y2="{height}" '
                     f'stroke="{THRESHOLD}" stroke-width="3" stroke-dasharray="3 2"/>')
    if baseline is not None:
        at = _c(x(baseline))
        parts.append(f'<line class="baseline" x1="{at}" y1="0" x2="{at}" y2="{height}" '
                     f'stroke="{INK}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def bin_counts(values: Iterable[float], edges: Sequence[float],
               weights: Iterable[int] | None = None) -> tuple[int, ...]:
    """How many values fall in each bin ``[edges[i], edges[i+1])``; the last bin is closed.

    Values outside ``edges[0]..edges[-1]`` go to the first or last bin.
    ``weights`` counts each value that many times (default once).
    """
    bins = len(edges) - 1
    if bins < 1:
        raise ValueError("a histogram needs at least two bin edges")
    counts = [0] * bins
    low, high = edges[0], edges[-1]
    width = (high - low) / bins
    for value, weight in zip(values, weights if weights is not None else _ones()):
        if width > 0:
            index = int((value - low) // width)
        else:
            index = 0
        index = min(max(index, 0), bins - 1)
        # Float steps can put a value just below an edge in the next bin: check the edges.
        while index > 0 and value < edges[index]:
            index -= 1
        while index < bins - 1 and value >= edges[index + 1]:
            index += 1
        counts[index] += weight
    return tuple(counts)


def _ones() -> Iterable[int]:
    while True:
        yield 1


def _axes(left: float, top: float, plot_w: float, plot_h: float) -> list[str]:
    """The x axis along the bottom of the plot and the y axis along its left side."""
    base = _c(top + plot_h)
    return [(f'<line x1="{_c(left)}" y1="{base}" x2="{_c(left + plot_w)}" y2="{base}" '
             f'stroke="{MUTED}" stroke-width="1"/>'),
            (f'<line x1="{_c(left)}" y1="{_c(top)}" x2="{_c(left)}" y2="{base}" '
             f'stroke="{MUTED}" stroke-width="1"/>')]


def histogram(series: Sequence[Series], edges: Sequence[float], *,
              markers: Sequence[Marker] = (), title: str = "", x_label: str = "",
              width: int = 560, height: int = 190) -> str:
    """Bars of each bin's counts, the series side by side within a bin, with a legend.

    ``edges`` are the bin edges (one more than the counts of each series);
    ``markers`` are vertical lines in data units (e.g. size limits), clamped
    to the plotted range.
    """
    bins = len(edges) - 1
    if bins < 1:
        raise ValueError("a histogram needs at least two bin edges")
    for item in series:
        if len(item.counts) != bins:
            raise ValueError(f"series {item.name!r} has {len(item.counts)} counts for {bins} bins")
    left, right, top, bottom = 44.0, 12.0, 30.0, 40.0
    plot_w = width - left - right
    plot_h = height - top - bottom
    low, high = float(edges[0]), float(edges[-1])
    tallest = max((max(item.counts) for item in series if item.counts), default=0) or 1

    def x(number: float) -> float:
        if high == low:
            return left
        return left + plot_w * (min(max(number, low), high) - low) / (high - low)

    def y(count: float) -> float:
        return top + plot_h - plot_h * count / tallest

    parts = _open(width, height, "histogram", title)
    base = _c(top + plot_h)
    parts.extend(_axes(left, top, plot_w, plot_h))
    for count in sorted({0, tallest}):
        parts.append(f'<text x="{_c(left - 4)}" y="{_c(y(count) + 4)}" text-anchor="end" '
                     f'font-size="10" fill="{MUTED}">{count}</text>')
    groups = max(len(series), 1)
    for i in range(bins):
        x0, x1 = x(edges[i]), x(edges[i + 1])
        slot = (x1 - x0) / groups
        for j, item in enumerate(series):
            count = item.counts[i]
            if count == 0:
                continue
            bar_x = x0 + slot * j + min(1.0, slot / 4)
            bar_w = max(slot - 2 * min(1.0, slot / 4), 0.5)
            parts.append(
                f'<rect x="{_c(bar_x)}" y="{_c(y(count))}" width="{_c(bar_w)}" '
                f'height="{_c(top + plot_h - y(count))}" fill="{item.colour}">'
                f"<title>{_e(item.name)}: {count} in [{_e(short_number(edges[i]))}, "
                f"{_e(short_number(edges[i + 1]))}{']' if i == bins - 1 else ')'}</title></rect>")
    ticks = sorted({0, bins // 2, bins}) if bins > 1 else [0, 1]
    for i in ticks:
        tick = x(edges[i])
        parts.append(f'<text x="{_c(tick)}" y="{_c(top + plot_h + 13)}" text-anchor="middle" '
                     f'font-size="10" fill="{MUTED}">{_e(short_number(edges[i]))}</text>')
    if x_label:
        parts.append(f'<text x="{_c(left + plot_w / 2)}" y="{_c(height - 6)}" '
                     f'text-anchor="middle" font-size="11" fill="{INK}">{_e(x_label)}</text>')
    for marker in markers:
        spot = x(marker.x)
        at = _c(spot)
        dash = ' stroke-dasharray="4 3"' if marker.dashed else ""
        parts.append(f'<line class="marker" x1="{at}" y1="{_c(top - 4)}" x2="{at}" y2="{base}" '
                     f'stroke="{marker.colour}" stroke-width="2"{dash}/>')
        # A label near an end of the plot grows inwards, so it is never cut off.
        room = 3.5 * len(marker.label)
        anchor = ("end" if spot + room > width else "start" if spot - room < 0 else "middle")
        parts.append(f'<text x="{at}" y="{_c(top - 7)}" text-anchor="{anchor}" font-size="10" '
                     f'fill="{marker.colour}">{_e(marker.label)}</text>')
    legend_x = width - right
    for item in reversed(series):
        label = _e(item.name)
        parts.append(f'<text x="{_c(legend_x)}" y="12" text-anchor="end" font-size="11" '
                     f'fill="{INK}">{label}</text>')
        legend_x -= 7 * len(item.name) + 4
        parts.append(f'<rect x="{_c(legend_x - 10)}" y="3" width="10" height="10" '
                     f'fill="{item.colour}"/>')
        legend_x -= 22
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Point:
    """One variant of a scatter plot: ``x`` (a cost), ``y`` (the objective), its label,
    and whether it is on the frontier (drawn filled and joined) or recommended
    (drawn larger, in green)."""

    x: float
    y: float
    label: str
    frontier: bool = False
    recommended: bool = False


def scatter(points: Sequence[Point], *, title: str = "", x_label: str = "", y_label: str = "",
            width: int = 560, height: int = 260) -> str:
    """Quality against cost: a dot per point, the frontier points joined in order of
    cost (the trade-off curve), each point labelled."""
    left, right, top, bottom = 52.0, 16.0, 16.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [p.x for p in points] or [0.0]
    ys = [p.y for p in points] or [0.0]
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = min(ys), max(ys)

    def x(value: float) -> float:
        share = 0.5 if x_high == x_low else (value - x_low) / (x_high - x_low)
        return left + 8 + (plot_w - 16) * share

    def y(value: float) -> float:
        share = 0.5 if y_high == y_low else (value - y_low) / (y_high - y_low)
        return top + 8 + (plot_h - 16) * (1 - share)

    parts = _open(width, height, "scatter", title)
    parts.extend(_axes(left, top, plot_w, plot_h))
    for value in sorted({x_low, x_high}):
        parts.append(f'<text x="{_c(x(value))}" y="{_c(top + plot_h + 13)}" '
                     f'text-anchor="middle" font-size="10" fill="{MUTED}">'
                     f"{_e(short_number(value))}</text>")
    for value in sorted({y_low, y_high}):
        parts.append(f'<text x="{_c(left - 4)}" y="{_c(y(value) + 4)}" text-anchor="end" '
                     f'font-size="10" fill="{MUTED}">{_e(short_number(value))}</text>')
    front = sorted((p for p in points if p.frontier), key=lambda p: (p.x, p.y))
    if len(front) > 1:
        path = " ".join(f"{_c(x(p.x))},{_c(y(p.y))}" for p in front)
        parts.append(f'<polyline class="frontier" points="{path}" fill="none" '
                     f'stroke="{CURRENT}" stroke-width="1.5" stroke-dasharray="4 3"/>')
    for point in points:
        colour = GOOD if point.recommended else CURRENT if point.frontier else BASELINE
        radius = 6 if point.recommended else 4
        parts.append(f'<circle cx="{_c(x(point.x))}" cy="{_c(y(point.y))}" r="{radius}" '
                     f'fill="{colour}"><title>{_e(point.label)}: {_e(short_number(point.y))} '
                     f"at {_e(short_number(point.x))}</title></circle>")
    parts.extend(_point_labels(points, x, y, width, height))
    if x_label:
        parts.append(f'<text x="{_c(left + plot_w / 2)}" y="{_c(height - 6)}" '
                     f'text-anchor="middle" font-size="11" fill="{INK}">{_e(x_label)}</text>')
    if y_label:
        parts.append(f'<text x="12" y="{_c(top + plot_h / 2)}" text-anchor="middle" '
                     f'font-size="11" fill="{INK}" transform="rotate(-90 12 '
                     f'{_c(top + plot_h / 2)})">{_e(y_label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


#: The width of one character of a 10-pixel label, and a label's height, in pixels.
_CHAR_WIDTH, _LABEL_HEIGHT = 5.5, 11.0


def _point_labels(points: Sequence[Point], x: Callable[[float], float],
                  y: Callable[[float], float], width: int, height: int) -> list[str]:
    """A label beside every dot, placed where it overlaps no label placed before it:
    the recommended point first, then the frontier, then the rest; to the right and
    above the dot, else right below, left above, left below.  A label with no free
    place keeps the first that stays inside the chart (its dot's tooltip names it too)."""
    placed: list[tuple[float, float, float, float]] = []
    texts = []
    for point in sorted(points, key=lambda p: (not p.recommended, not p.frontier)):
        cx, cy = x(point.x), y(point.y)
        size = _CHAR_WIDTH * len(point.label)
        above, below = cy - 3 - _LABEL_HEIGHT, cy + 5  # a label's top edge
        boxes = [(cx + 7, above, size, ""), (cx + 7, below, size, ""),
                 (cx - 7 - size, above, size, ' text-anchor="end"'),
                 (cx - 7 - size, below, size, ' text-anchor="end"')]
        inside = [box for box in boxes if box[0] >= 0 and box[0] + box[2] <= width
                  and box[1] >= 0 and box[1] + _LABEL_HEIGHT <= height] or boxes[:1]
        free = [box for box in inside if not any(
            box[0] < right and other_left < box[0] + box[2]
            and box[1] < bottom and top < box[1] + _LABEL_HEIGHT
            for other_left, top, right, bottom in placed)]
        left, top, _, anchor = (free or inside)[0]
        placed.append((left, top, left + size, top + _LABEL_HEIGHT))
        text_x = left + size if anchor else left
        texts.append(f'<text x="{_c(text_x)}" y="{_c(top + _LABEL_HEIGHT - 2)}" font-size="10" '
                     f'fill="{INK}"{anchor}>{_e(point.label)}</text>')
    return texts

