"""Summarizers: the output check and the offline extractive summarizer."""

from __future__ import annotations

import pytest

from compaction import (
    NARRATIVE_SECTIONS,
    Checkpoint,
    ExtractiveSummarizer,
    FunctionCall,
    Message,
    Section,
    Summarizer,
    SummaryInput,
    TodoItem,
    ToolCall,
    get_tokenizer,
)
from compaction.summarizers import check_output
from compaction.summarizers._extractive import find_paths, looks_like_path, split_entries


def call(call_id: str, name: str, arguments: str) -> Message:
    return Message(
        role="assistant",
        tool_calls=(ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments)),),
    )


def span(
    messages: list[Message], previous: Checkpoint | None = None, budget: int = 4000
) -> SummaryInput:
    return SummaryInput(
        messages=tuple(messages),
        seqs=tuple(range(1, len(messages) + 1)),
        previous=previous,
        todos=(TodoItem(content="secret task", status="pending"),),
        budget_tokens=budget,
    )


SESSION = [
    Message(role="user", content="Add a --verbose flag to the CLI in harness/cli.py."),
    call("c1", "bash", '{"command": "pytest -q tests/unit/test_cli.py\\nmore"}'),
    Message(
        role="tool",
        tool_call_id="c1",
        content="collected 3 items\nE   KeyError: 'verbose'\nFAILED tests/unit/test_cli.py::test_v",
    ),
    call("c2", "edit", '{"path": "harness/cli.py", "old": "a", "new": "b"}'),
    Message(role="tool", tool_call_id="c2", content="ok"),
    Message(role="user", content="You must never print secrets. Use `argparse` only."),
    Message(
        role="assistant",
        content="The flag works.\n\nNext I will update README.md and run `ruff check`.",
    ),
]


class TestCheckOutput:
    def test_missing_sections_become_empty_and_extras_drop(self) -> None:
        """Exactly the six narrative sections come out, in order; others are dropped."""
        checked = check_output(
            {"Next Step": "go", "Pending Jobs": "- fake", "Bogus": "x", "Current Work": "y"}
        )
        assert list(checked) == list(NARRATIVE_SECTIONS)
        assert checked[Section.NEXT_STEP] == "go"
        assert all(v == "" for k, v in checked.items() if k != "Next Step")

    def test_non_text_values_become_json(self) -> None:
        """A value that is not a string is written as its JSON, never dropped silently."""
        # A value of the wrong type on purpose: the runtime check is under test.
        checked = check_output({"Files and Code": ["a.py", "b.py"]})  # type: ignore[dict-item]
        assert checked[Section.FILES_AND_CODE] == '["a.py", "b.py"]'


class TestPaths:
    @pytest.mark.parametrize(
        ("token", "expected"),
        [
            ("src/app.py", True),
            ("/etc/hosts", True),
            ("./run", True),
            ("README.md", True),
            ("and/or", False),
            ("e.g", False),
            ("3.11", False),
            ("pytest -q a.py", False),
            ("//cdn.example.com/x.js", False),
            ("", False),
        ],
    )
    def test_looks_like_path(self, token: str, expected: bool) -> None:
        """Paths need a slash with a root or a known extension, or a known extension."""
        assert looks_like_path(token) is expected

    def test_find_paths_skips_urls_and_trailing_dots(self) -> None:
        """URLs are not paths; a sentence's final dot is not part of the path."""
        text = "See https://example.com/a/b.html and edit src/x.py. Then docs/guide.md"
        assert list(find_paths(text)) == ["src/x.py", "docs/guide.md"]


class TestExtractiveSummarizer:
    def test_is_a_summarizer(self) -> None:
        """ExtractiveSummarizer satisfies the Summarizer protocol."""
        assert isinstance(ExtractiveSummarizer(), Summarizer)
        assert ExtractiveSummarizer().name == "extractive"

    def test_extracts_requests_paths_commands_errors_intent(self) -> None:
        """Each kind of fact lands in its section."""
        out = ExtractiveSummarizer().summarize(span(SESSION))
        assert list(out) == list(NARRATIVE_SECTIONS)
        primary = out["Primary Request and Intent"]
        assert "- Add a --verbose flag to the CLI in harness/cli.py." in primary
        assert "never print secrets" in primary
        assert out["Files and Code"] == "- edited `harness/cli.py`"
        errors = out["Errors and Fixes"]
        assert errors.startswith("- `pytest -q tests/unit/test_cli.py` failed: ")
        assert "KeyError: 'verbose'" in errors  # the first telling line, not the summary line
        assert "collected 3 items" not in errors
        assert out["Next Step"] == "Next I will update README.md and run `ruff check`."
        assert out["Critical Context"] == "- You must never print secrets."
        concepts = out["Key Technical Concepts"]
        assert "bash" not in concepts
        assert "edit" not in concepts

    @pytest.mark.parametrize(
        ("line", "kept"),
        [
            ("E   AssertionError: assert 3 == 2", True),
            ("ValueError: invalid literal", True),
            ("error[E0308]: mismatched types", True),
            ("fatal: not a git repository", True),
            ("FAILED tests/test_x.py::test_y - KeyError", True),
            ("==== 2 failed, 89 passed in 3.21s ====", True),
            ("19\t    raise SchemaError(f'cannot parse')", False),
            ("    except ValueError:", False),
            ("class ParseError(Exception):", False),
            ("no errors found", False),
            ("collected 3 items", False),
        ],
    )
    def test_error_lines(self, line: str, kept: bool) -> None:
        """Error lines of tool output are kept; source lines naming an error class are not."""
        msgs = [call("c", "bash", "{}"), Message(role="tool", tool_call_id="c", content=line)]
        out = ExtractiveSummarizer().summarize(span(msgs))
        assert (line.strip() in out["Errors and Fixes"]) is kept

    def test_never_writes_tasks(self) -> None:
        """The todo list is context only: its text does not appear in the output."""
        out = ExtractiveSummarizer().summarize(span(SESSION))
        assert all("secret task" not in v for v in out.values())

    def test_long_request_is_clipped_with_a_marker(self) -> None:
        """A request over the verbatim limit keeps its head and says how much was left out."""
        out = ExtractiveSummarizer().summarize(span([Message(role="user", content="x" * 2000)]))
        assert "[… 1200 more characters]" in out["Primary Request and Intent"]

    def test_deterministic(self) -> None:
        """The same input gives the same output."""
        a = ExtractiveSummarizer().summarize(span(SESSION))
        b = ExtractiveSummarizer(get_tokenizer()).summarize(span(SESSION))
        assert a == b

    def test_folds_previous_checkpoint(self) -> None:
        """Earlier narrative comes first, duplicates collapse, the latest intent wins."""
        previous = Checkpoint(
            primary_request="- Build the harness",
            files_and_code="- read `old/module.py`\n- read `harness/cli.py`",
            next_step="Old plan",
            critical_context="- Keep the API stable",
        )
        out = ExtractiveSummarizer().summarize(span(SESSION, previous))
        primary = split_entries(out["Primary Request and Intent"])
        assert primary[0] == "- Build the harness"
        assert primary[1].startswith("- Add a --verbose flag")
        files = split_entries(out["Files and Code"])
        assert files == ["- edited `harness/cli.py`", "- read `old/module.py`"]
        assert out["Next Step"].startswith("Next I will")
        assert out["Critical Context"].startswith("- Keep the API stable")

    def test_keeps_previous_intent_when_span_has_none(self) -> None:
        """A span with no request and no assistant text keeps the previous Next Step."""
        tool_only = [
            call("c1", "bash", '{"command": "ls"}'),
            Message(role="tool", tool_call_id="c1", content="ok"),
        ]
        out = ExtractiveSummarizer().summarize(span(tool_only, Checkpoint(next_step="Old plan")))
        assert out["Next Step"] == "Old plan"

    def test_new_request_makes_earlier_intent_stale(self) -> None:
        """Intent stated before the span's latest request is not the Next Step."""
        messages = [
            Message(role="user", content="Fix the parser"),
            Message(role="assistant", content="Done: the parser is fixed."),
            Message(role="user", content="Now add a --json flag"),
        ]
        out = ExtractiveSummarizer().summarize(span(messages, Checkpoint(next_step="Old plan")))
        assert out["Next Step"] == ""

    def test_budget_drops_oldest_but_keeps_first_request(self) -> None:
        """Over budget, the oldest entries go first; the session's first request stays."""
        messages = [Message(role="user", content=f"request number {i}") for i in range(200)]
        out = ExtractiveSummarizer().summarize(span(messages, budget=300))
        entries = split_entries(out["Primary Request and Intent"])
        assert entries[0] == "- request number 0"
        assert entries[-1] == "- request number 199"
        assert len(entries) < 200
        tokenizer = get_tokenizer()
        assert sum(tokenizer.count(v) for v in out.values()) <= 300

    def test_multiline_request_stays_one_entry(self) -> None:
        """Continuation lines of a request are indented so the entry stays whole when folded."""
        out = ExtractiveSummarizer().summarize(
            span([Message(role="user", content="first line\n- not a new entry\nlast")])
        )
        assert split_entries(out["Primary Request and Intent"]) == [
            "- first line\n  - not a new entry\n  last"
        ]
