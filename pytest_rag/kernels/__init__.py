"""Vectorized metric arithmetic on numpy arrays: ranking, lexical, answers, evidence."""
