"""The seven stage evaluators, one module each."""
