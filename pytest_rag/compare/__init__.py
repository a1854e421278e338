"""Comparing runs: baselines, tolerances and thresholds, significance, sweeps, diffs."""
