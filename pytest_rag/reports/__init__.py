"""Rendering results: the scorecard, the HTML report with its SVG charts, text tables."""
