"""A Checkpoint that does not read back names the line at fault (1-based, as an editor shows it).

Written for the mutants of `parse_checkpoint` that `scripts/mutate` left alive: each shifted the
line an error names, or let a badly framed section through. Also the accessors of `Checkpoint`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compaction import (
    NARRATIVE_SECTIONS,
    Checkpoint,
    CompactionError,
    Section,
    parse_checkpoint,
    render_checkpoint,
)

CHECKPOINT = Checkpoint(
    primary_request="Add a flag",
    pending_jobs=("Write docs", "Ship"),
    current_work=("Fix parser",),
    carried_over=True,
)
LINES = render_checkpoint(CHECKPOINT).split("\n")
"""Line 3 is the first heading, 21 the carried-over note, 23 and 24 the pending items, 28 the
current one, 34 the last heading; line 37 is the blank one the text ends with."""


def set_line(number: int, text: str) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        lines[number - 1] = text

    return edit


def drop_lines(first: int, last: int) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        del lines[first - 1 : last]

    return edit


def insert_line(number: int, text: str) -> Callable[[list[str]], None]:
    def edit(lines: list[str]) -> None:
        lines.insert(number - 1, text)

    return edit


def append_section(lines: list[str]) -> None:
    lines[-1:] = ["", "## Extra", "", "x", ""]


def test_the_fixture_is_what_the_cases_assume() -> None:
    """The line numbers below count on this layout."""
    assert LINES[2] == "## Primary Request and Intent"
    assert LINES[20].startswith("> This todo list was written before")
    assert (LINES[22], LINES[23], LINES[27]) == ('- "Write docs"', '- "Ship"', '- "Fix parser"')
    assert LINES[33] == "## Critical Context"
    assert (len(LINES), LINES[-1]) == (37, "")
    assert parse_checkpoint("\n".join(LINES)) == CHECKPOINT


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        pytest.param(
            set_line(24, "- Ship"),
            """line 24: not an item line (an item line starts with - "): '- Ship'""",
            id="item-after-note",
        ),
        pytest.param(
            set_line(28, '- "Fix parser'),
            "line 28: not an item line (",  # then the JSON reader's own words
            id="item",
        ),
        pytest.param(set_line(5, "# Add a flag"), "line 5: unescaped line", id="narrative"),
        pytest.param(insert_line(6, "# oops"), "line 6: unescaped line", id="narrative-2nd"),
        pytest.param(append_section, "line 38: unexpected heading '## Extra'", id="extra"),
        pytest.param(
            set_line(7, "## Key Concepts"),
            "line 7: expected heading '## Key Technical Concepts', found '## Key Concepts'",
            id="renamed",
        ),
        pytest.param(
            drop_lines(34, 37), "line 33: missing section '## Critical Context'", id="missing"
        ),
        pytest.param(drop_lines(4, 4), "line 3: a heading is followed and preceded", id="no-gap"),
        pytest.param(
            drop_lines(6, 6), "line 3: a heading is followed and preceded", id="no-gap-end"
        ),
        pytest.param(
            drop_lines(9, 10), "line 7: empty section; an empty section reads (none)", id="empty"
        ),
    ],
)
def test_the_error_names_the_line(edit: Callable[[list[str]], None], error: str) -> None:
    """Each malformed text is refused with code bad_checkpoint and the line at fault."""
    lines = list(LINES)
    edit(lines)
    with pytest.raises(CompactionError) as info:
        parse_checkpoint("\n".join(lines))
    assert info.value.code == "bad_checkpoint"
    assert str(info.value).startswith(f"bad_checkpoint: {error}"), str(info.value)


def test_a_note_without_its_blank_line_loses_no_item() -> None:
    """The carried-over note may stand right above the items: both items still read back."""
    lines = list(LINES)
    del lines[21]  # the blank line after the note
    assert parse_checkpoint("\n".join(lines)).pending_jobs == ("Write docs", "Ship")


class TestAccessors:
    def test_narrative_holds_the_six_sections_text(self) -> None:
        """narrative() maps each narrative heading to its text, empty ones included."""
        narrative = CHECKPOINT.narrative()
        assert list(narrative) == list(NARRATIVE_SECTIONS)
        assert narrative[Section.PRIMARY_REQUEST] == "Add a flag"
        assert narrative[Section.NEXT_STEP] == ""

    def test_only_code_owned_sections_have_tasks(self) -> None:
        """tasks() of a narrative section is empty, not an error."""
        assert CHECKPOINT.tasks(Section.PRIMARY_REQUEST) == ()
        assert CHECKPOINT.tasks(Section.PENDING_JOBS) == ()
