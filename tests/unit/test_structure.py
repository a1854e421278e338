"""Markdown structural blocks (SEMANTICS.md, "Chunking")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.text import markdown
from pytest_rag.text.markdown import Block, markdown_blocks


def spans(text: str) -> list[tuple[str, str]]:
    """Each block as ``(kind, its text)``, which reads better than offsets."""
    return [(block.kind, text[block.start:block.end]) for block in markdown_blocks(text)]


def test_heading_needs_one_to_six_hashes_at_line_start_then_a_space() -> None:
    text = "# One\n###### Six\n####### Seven\n#NoSpace\n  # Indented\n#\tTab\n## Two"
    assert spans(text) == [("heading", "# One"), ("heading", "###### Six"),
                           ("heading", "## Two")]


def test_block_span_excludes_the_trailing_newline() -> None:
    assert markdown_blocks("# Title\nbody\n") == [Block("heading", 0, 7)]


def test_closed_fence_includes_both_fence_lines() -> None:
    text = "intro\n```python\nx = 1\n# not a heading\n- not a list\n```\nafter"
    assert spans(text) == [("code", "```python\nx = 1\n# not a heading\n- not a list\n```")]


def test_fence_closes_only_with_the_same_three_characters() -> None:
    text = "~~~\ncode\n```\nstill code\n~~~\n# Heading"
    assert spans(text) == [("code", "~~~\ncode\n```\nstill code\n~~~"), ("heading", "# Heading")]


def test_unclosed_fence_runs_to_the_end_of_the_document() -> None:
    text = "# Title\n```\ncode\n| a |\n| b |\n"
    assert spans(text) == [("heading", "# Title"), ("code", "```\ncode\n| a |\n| b |")]


def test_indented_fence_marker_is_not_a_fence() -> None:
    assert spans("text\n  ```\n# Heading") == [("heading", "# Heading")]


def test_table_needs_two_consecutive_pipe_lines() -> None:
    text = "| lone |\n\n| a | b |\n|---|---|\n  | c | d |\nnot table\n| single |"
    assert spans(text) == [("table", "| a | b |\n|---|---|\n  | c | d |")]


def test_list_with_indented_continuation_lines() -> None:
    text = "- first\n  continued\n    deeper\n* second\n10) third\n2. fourth\nplain"
    assert spans(text) == [("list", text[:text.index("\nplain")])]


def test_list_ends_at_a_blank_or_unindented_line() -> None:
    text = "- a\n\n- b\nparagraph\n  indented, but no list is open"
    assert spans(text) == [("list", "- a"), ("list", "- b")]


def test_whitespace_only_line_is_blank() -> None:
    assert spans("- a\n   \n  not a continuation") == [("list", "- a")]


def test_item_needs_whitespace_after_the_marker() -> None:
    text = "-no\n1.5 million\n+\n---\n1.\tyes"
    assert spans(text) == [("list", "1.\tyes")]


def test_indented_table_inside_a_list_belongs_to_the_list_only() -> None:
    text = "- item\n  | a | b |\n  | c | d |\n| e | f |\n| g | h |"
    assert spans(text) == [("list", "- item\n  | a | b |\n  | c | d |"),
                           ("table", "| e | f |\n| g | h |")]


def test_unindented_heading_or_fence_ends_a_list() -> None:
    text = "- a\n# Head\n- b\n```\n- in code\n```"
    assert spans(text) == [("list", "- a"), ("heading", "# Head"), ("list", "- b"),
                           ("code", "```\n- in code\n```")]


def test_item_line_ends_a_table() -> None:
    text = "| a |\n| b |\n- item\n| c |"
    assert spans(text) == [("table", "| a |\n| b |"), ("list", "- item")]


def test_lines_split_at_newline_only() -> None:
    # "\r" stays part of the line; the block still starts at the line start.
    assert spans("# Title\r\n- a\r\n- b\r\n") == [("heading", "# Title\r"),
                                                ("list", "- a\r\n- b\r")]


def test_no_blocks() -> None:
    assert markdown_blocks("") == []
    assert markdown_blocks("just a paragraph\nof two lines") == []


LINES = ["prose", "Prose. More", "", " ", "  indented", "- item", "* item", "+ item", "1. item",
         "٣) item", "| a | b |", "  | c |", "# H", "## H", "#no", "```", "~~~", "``x", "\u00a0x",
         "x | y", "10 apples", "-no", "\tcode"]


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=25), st.booleans())
def test_prose_lines_skip_the_rules_without_changing_the_blocks(
        lines: list[str], final_newline: bool) -> None:
    """Lines starting with no mark, whitespace or digit are prose and take a
    shortcut; with every line taking the full rules the blocks are the same."""
    text = "\n".join(lines) + ("\n" if final_newline else "")
    fast = markdown_blocks(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "_MARKS", "".join(set("".join(LINES))) + "Pp")
        assert markdown_blocks(text) == fast
