"""Text rules below everything else: tokens, words, integer intervals, Markdown blocks."""
