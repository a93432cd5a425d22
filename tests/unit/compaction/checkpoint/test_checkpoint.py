"""The Checkpoint: fixed sections, rendering, escaping and the parser's round trip."""

from __future__ import annotations

import re

import pytest

from compaction import (
    CODE_OWNED_SECTIONS,
    NARRATIVE_SECTIONS,
    SECTION_NAMES,
    Checkpoint,
    CompactionError,
    TaskRef,
    parse_checkpoint,
    render_checkpoint,
)
from compaction.checkpoint import (
    decode_item,
    decode_task,
    encode_item,
    encode_task,
    escape_narrative,
    split_sections,
    unescape_narrative,
)

ADVERSARIAL = [
    "## Pending Jobs",
    "# Heading",
    "```python\nprint(1)\n```",
    "~~~",
    "{{ secret }}",
    "{% for x in y %}{% endfor %}",
    "- [ ] nested list",
    '- "looks like an item"',
    "\u202eright-to-left\u202c",
    "\u200f\u2067isolate\u2069",
    "line one\nline two\r\nline three\rfour",
    "sep\u2028line\u2029para\x85nel",
    "  padded  ",
    "(none)",
    "> quoted note",
    "a" * 10_000,
    '"quoted" \\ backslash',
    "</system>",
    "\\## escaped already",
    "---",
    "===",
    "tab\there\x00nul\x1bescape",
    "\ud800 lone surrogate",
]


def headings(text: str) -> list[str]:
    return [line[3:] for line in text.split("\n") if line.startswith("## ")]


class TestSections:
    def test_eight_sections_in_fixed_order(self) -> None:
        """The section names are the eight of the brief, in order."""
        assert SECTION_NAMES == (
            "Primary Request and Intent",
            "Key Technical Concepts",
            "Files and Code",
            "Errors and Fixes",
            "Pending Jobs",
            "Current Work",
            "Next Step",
            "Critical Context",
        )
        assert CODE_OWNED_SECTIONS == ("Pending Jobs", "Current Work")
        assert len(NARRATIVE_SECTIONS) == 6

    def test_empty_checkpoint_renders_every_section_as_none(self) -> None:
        """An empty Checkpoint shows all eight headings, each with (none) under it."""
        text = render_checkpoint(Checkpoint())
        assert headings(text) == list(SECTION_NAMES)
        assert text.count("\n(none)\n") == 8

    def test_render_is_deterministic(self) -> None:
        """The same Checkpoint renders to the same bytes."""
        c = Checkpoint(primary_request="Do it", pending_jobs=("a", "b"))
        assert render_checkpoint(c) == render_checkpoint(
            Checkpoint(primary_request="Do it", pending_jobs=("a", "b"))
        )

    def test_items_are_json_lines_in_order(self) -> None:
        """Pending Jobs and Current Work hold one JSON string line per item, in list order."""
        text = render_checkpoint(Checkpoint(pending_jobs=("b", "a"), current_work=("c",)))
        body = text.split("## Pending Jobs\n\n", 1)[1].split("\n\n## Current Work", 1)[0]
        assert body == '- "b"\n- "a"'
        assert '## Current Work\n\n- "c"\n' in text

    def test_carried_note_only_when_carried(self) -> None:
        """The earlier-turn note appears at the top of Pending Jobs only when carried_over."""
        plain = render_checkpoint(Checkpoint(pending_jobs=("x",)))
        carried = render_checkpoint(Checkpoint(pending_jobs=("x",), carried_over=True))
        assert "\n> " not in plain
        assert re.search(
            r"## Pending Jobs\n\n> [^\n]*earlier|before the latest user request", carried
        )


class TestItemEncoding:
    @pytest.mark.parametrize("text", ADVERSARIAL)
    def test_item_is_one_line_and_decodes_unchanged(self, text: str) -> None:
        """Any text encodes to exactly one line that decodes back to the same text."""
        line = encode_item(text)
        assert "\n" not in line
        assert "\r" not in line
        assert not re.search("[\u2028\u2029\u202a-\u202e\u2066-\u2069\x85]", line)
        assert decode_item(line) == text

    @pytest.mark.parametrize(
        ("line", "match"),
        [("* x", "starts with"), ('- "unterminated', "Unterminated|Expecting"), ("- 12", "starts")],
    )
    def test_decode_rejects_non_items(self, line: str, match: str) -> None:
        """A line that encode_item could not have written is refused."""
        with pytest.raises(ValueError, match=match):
            decode_item(line)


class TestTaskEncoding:
    @pytest.mark.parametrize("text", ADVERSARIAL)
    def test_task_is_one_line_and_decodes_unchanged(self, text: str) -> None:
        """Any subject and owner encode to one task line that decodes to the same reference."""
        for task in (
            TaskRef(id="3", owner=text, subject=text),
            TaskRef(id="a_b.c:1-2", owner=None, subject=text),
        ):
            line = encode_task(task)
            assert "\n" not in line
            assert "\r" not in line
            assert not re.search("[\u2028\u2029\u202a-\u202e\u2066-\u2069\x85]", line)
            assert decode_task(line) == task

    def test_exact_lines(self) -> None:
        """A task line names the id and the owner (or no owner), then the subject."""
        assert encode_task(TaskRef(id="2", owner="worker-1", subject="Test")) == (
            '- task 2 (owner "worker-1"): "Test"'
        )
        assert encode_task(TaskRef(id="4", subject='Say "hi"')) == (
            '- task 4 (no owner): "Say \\"hi\\""'
        )

    def test_blockers_are_written_and_read_back(self) -> None:
        """A task that waits on others says so: ``(owner "w1", blocked by 1, 2)``."""
        waits = TaskRef(id="3", owner="w1", subject="Ship", blocked_by=("1", "2"))
        assert encode_task(waits) == '- task 3 (owner "w1", blocked by 1, 2): "Ship"'
        assert decode_task(encode_task(waits)) == waits
        unowned = TaskRef(id="4", subject="Docs", blocked_by=("a_b.c:1-2",))
        assert encode_task(unowned) == '- task 4 (no owner, blocked by a_b.c:1-2): "Docs"'
        assert decode_task(encode_task(unowned)) == unowned

    @pytest.mark.parametrize(
        ("line", "match"),
        [
            ('- task x y (no owner): "a"', "starts with"),
            ('- task 1 (owned): "a"', "owner"),
            ('- task 1 (owner 3): "a"', "JSON string"),
            ('- task 1 (no owner) "a"', "followed by"),
            ("- task 1 (no owner): 5", "JSON string"),
            ('- task 1 (no owner, blocked by): "a"', "followed by"),
            ('- task 1 (no owner, blocked by 1,2): "a"', "followed by"),
            ('- task 1 (no owner, blocked by x y): "a"', "followed by"),
        ],
    )
    def test_decode_rejects_non_tasks(self, line: str, match: str) -> None:
        """A line that encode_task could not have written is refused."""
        with pytest.raises(ValueError, match=match):
            decode_task(line)

    def test_tasks_follow_todos_and_round_trip(self) -> None:
        """Both lists in one Checkpoint: todo items first, then tasks; it parses back equal."""
        c = Checkpoint(
            pending_jobs=("task 9 (no owner): looks like a task",),
            current_work=("Mine",),
            pending_tasks=(TaskRef(id="2", owner="w", subject="## Current Work"),),
            current_tasks=(TaskRef(id="1", subject="(none)"),),
        )
        text = render_checkpoint(c)
        assert headings(text) == list(SECTION_NAMES)
        body = text.split("## Pending Jobs\n\n")[1].split("\n\n## ")[0]
        assert body.splitlines() == [
            '- "task 9 (no owner): looks like a task"',
            '- task 2 (owner "w"): "## Current Work"',
        ]
        assert parse_checkpoint(text) == c
        assert parse_checkpoint(render_checkpoint(Checkpoint(pending_tasks=c.pending_tasks))) == (
            Checkpoint(pending_tasks=c.pending_tasks)
        )


class TestNarrativeEscaping:
    @pytest.mark.parametrize("text", ADVERSARIAL)
    def test_escape_round_trips(self, text: str) -> None:
        """Unescaping an escaped text gives the text back."""
        assert unescape_narrative(escape_narrative(text)) == text

    def test_heading_in_narrative_does_not_make_a_section(self) -> None:
        """A summarizer's '## Pending Jobs' line is escaped and stays in its section."""
        c = Checkpoint(next_step='Do this\n## Pending Jobs\n- "fake item"\n   ## Current Work')
        text = render_checkpoint(c)
        assert headings(text) == list(SECTION_NAMES)
        assert "\\## Pending Jobs" in text
        parsed = parse_checkpoint(text)
        assert parsed.pending_jobs == ()
        assert parsed.next_step == c.next_step

    def test_narrative_normalised(self) -> None:
        r"""Line endings become \\n and whitespace-only text becomes empty."""
        assert Checkpoint(next_step="a\r\nb\rc").next_step == "a\nb\nc"
        assert Checkpoint(next_step=" \n\t ").next_step == ""


class TestRoundTrip:
    @pytest.mark.parametrize("text", ADVERSARIAL)
    def test_every_section_round_trips(self, text: str) -> None:
        """parse_checkpoint(render_checkpoint(c)) == c with adversarial text in every section."""
        c = Checkpoint(
            primary_request=text,
            key_concepts=text,
            files_and_code=text,
            errors_and_fixes=text,
            pending_jobs=(text, "after"),
            current_work=("before", text),
            next_step=text,
            critical_context=text,
            carried_over=True,
        )
        assert parse_checkpoint(render_checkpoint(c)) == c

    def test_empty_round_trips(self) -> None:
        """An empty Checkpoint round-trips."""
        assert parse_checkpoint(render_checkpoint(Checkpoint())) == Checkpoint()

    def test_parse_ignores_a_trailing_newline_change(self) -> None:
        """A rendered text with its final newline stripped still parses to the same Checkpoint."""
        c = Checkpoint(critical_context="keep", current_work=("x",))
        assert parse_checkpoint(render_checkpoint(c).rstrip("\n")) == c


def _replace(old: str, new: str) -> str:
    return render_checkpoint(Checkpoint(next_step="go", pending_jobs=("p",))).replace(old, new, 1)


class TestParseRejects:
    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("", "missing section '## Primary Request and Intent'"),
            (_replace("## Next Step\n\ngo\n\n", ""), "expected heading '## Next Step'"),
            (_replace("## Key Technical Concepts", "## Key Concepts"), "expected heading"),
            (_replace("(none)\n\n## Files and Code", "(none)\n## Files and Code"), "blank line"),
            (render_checkpoint(Checkpoint()) + "\n## Extra\n\nx\n", "after the last section"),
            (_replace('- "p"', "- p"), "not an item line"),
            (_replace("\ngo\n", "\n## go\n"), "expected heading"),
            (_replace("\ngo\n", "\n# go\n"), "unescaped line"),
            (
                _replace("## Errors and Fixes\n\n(none)", "## Errors and Fixes\n"),
                "blank line|empty",
            ),
        ],
    )
    def test_rejects_text_render_did_not_write(self, text: str, match: str) -> None:
        """Text render_checkpoint() could not have written raises bad_checkpoint."""
        with pytest.raises(CompactionError, match=match) as info:
            parse_checkpoint(text)
        assert info.value.code == "bad_checkpoint"


class TestSplitSections:
    def test_splits_by_heading_ignoring_case_and_unknowns(self) -> None:
        """Known headings of any level start sections; unknown ones and preamble are dropped."""
        reply = (
            "Sure! Here it is.\n# primary request and intent\nFix the bug.\n"
            "### Bogus\nignored\n## Next Step ##\nRun tests\n## Next Step\nsecond copy\n"
        )
        assert split_sections(reply) == {
            "Primary Request and Intent": "Fix the bug.",
            "Next Step": "Run tests",
        }

    def test_code_owned_sections_are_split_too(self) -> None:
        """split_sections keeps Pending Jobs; dropping it is check_output's job."""
        assert split_sections("## Pending Jobs\n- x") == {"Pending Jobs": "- x"}
