"""Lenient reading of a summarizer's Markdown: line endings and whitespace kept as they matter.

Written to kill mutants that survived `scripts/mutate` (`split_sections` line-ending handling
and body trimming): each changes a narrative section's text.
"""

from __future__ import annotations

import pytest

from compaction import Section
from compaction.checkpoint import split_sections


class TestLineEndings:
    @pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
    def test_headings_found_with_any_line_ending(self, newline: str) -> None:
        """CRLF and lone-CR answers split into the same sections as LF ones."""
        lines = ["## Next Step", "", "Run the tests.", "Then ship.", "## Errors and Fixes", "None."]
        assert split_sections(newline.join(lines)) == {
            "Next Step": "Run the tests.\nThen ship.",  # one line break, never two
            "Errors and Fixes": "None.",
        }


class TestBodyTrimming:
    def test_only_blank_lines_are_trimmed(self) -> None:
        """Leading spaces of the first line (indented code) survive; blank lines around go."""
        text = "## Files and Code\n\n    x = 1\n    y = 2\n\n## Next Step\n\nGo.\n"
        sections = split_sections(text)
        assert sections[Section.FILES_AND_CODE] == "    x = 1\n    y = 2"
        assert sections[Section.NEXT_STEP] == "Go."

    def test_letters_at_the_edges_are_kept(self) -> None:
        """Trimming removes newlines only, never letters at the start or end of a body."""
        text = "## Next Step\nXylophone tests next; check X\n"
        assert split_sections(text) == {"Next Step": "Xylophone tests next; check X"}
