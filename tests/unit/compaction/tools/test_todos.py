"""The todo_write tool: exact model-facing strings, every rejection, and what is appended."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compaction import ModePolicy, TodoItem, ToolInputError, ToolResult
from compaction.contract import MAX_ARGUMENT_BYTES
from compaction.session import Session
from compaction.tools import parse_todo_write, summary_line

HEAD = "todo_write: rejected, nothing was changed. Fix the arguments and call again:\n"
EXAMPLE = '{"todos": [{"content": "Run the tests", "status": "in_progress"}]}'
ITEM_FIELDS = 'an item has only "content" and "status"'
STATUSES = "pending, in_progress, completed"


def todos(*items: tuple[object, object]) -> str:
    """Return todo_write arguments with one item per (content, status) pair."""
    return json.dumps({"todos": [{"content": c, "status": s} for c, s in items]})


REJECTIONS = [
    pytest.param(
        "nope", f"- arguments are not valid JSON; send an object like {EXAMPLE}", id="not-json"
    ),
    pytest.param(
        b"\xff\xfe\x00",
        f"- arguments are not valid JSON; send an object like {EXAMPLE}",
        id="not-utf8",
    ),
    pytest.param("", f"- arguments are not valid JSON; send an object like {EXAMPLE}", id="empty"),
    pytest.param(
        "[]", f'- arguments must be a JSON object with one key "todos", like {EXAMPLE}', id="array"
    ),
    pytest.param(
        '"todos"',
        f'- arguments must be a JSON object with one key "todos", like {EXAMPLE}',
        id="string",
    ),
    pytest.param(
        "null", f'- arguments must be a JSON object with one key "todos", like {EXAMPLE}', id="null"
    ),
    pytest.param(
        "{}",
        '- missing the required parameter "todos" (an array of {content, status})',
        id="missing-todos",
    ),
    pytest.param(
        '{"todos": [], "merge": true}',
        '- unknown parameter "merge"; the only parameter is "todos"',
        id="extra-param",
    ),
    pytest.param(
        '{"todos": "Run tests"}',
        '- "todos" must be an array of {content, status} objects',
        id="todos-string",
    ),
    pytest.param(
        '{"todos": null}',
        '- "todos" must be an array of {content, status} objects',
        id="todos-null",
    ),
    pytest.param(
        '{"todos": {"content": "a", "status": "pending"}}',
        '- "todos" must be an array of {content, status} objects',
        id="todos-object",
    ),
    pytest.param(
        '{"todos": [5]}',
        '- todos[0] must be an object with "content" and "status"',
        id="item-number",
    ),
    pytest.param(
        '{"todos": [["a", "pending"]]}',
        '- todos[0] must be an object with "content" and "status"',
        id="item-array",
    ),
    pytest.param(
        '{"todos": [{"content": "a", "status": "pending", "id": "1"}]}',
        f'- todos[0]: unknown field "id"; {ITEM_FIELDS}',
        id="extra-id",
    ),
    pytest.param(
        '{"todos": [{"content": "a", "status": "pending", "priority": "high"}]}',
        f'- todos[0]: unknown field "priority"; {ITEM_FIELDS}',
        id="extra-priority",
    ),
    pytest.param(
        '{"todos": [{"content": "a", "status": "pending", "activeForm": "Doing a"}]}',
        f'- todos[0]: unknown field "activeForm"; {ITEM_FIELDS}',
        id="extra-activeForm",
    ),
    pytest.param(
        '{"todos": [{"status": "pending"}]}',
        '- todos[0] is missing "content"',
        id="missing-content",
    ),
    pytest.param(
        '{"todos": [{"content": "a"}]}', '- todos[0] is missing "status"', id="missing-status"
    ),
    pytest.param(todos((1, "pending")), "- todos[0].content must be a string", id="content-int"),
    pytest.param(
        todos((None, "pending")), "- todos[0].content must be a string", id="content-null"
    ),
    pytest.param(
        todos(("a", 2)), f"- todos[0].status must be one of {STATUSES}, not 2", id="status-int"
    ),
    pytest.param(
        todos(("a", "done")),
        f'- todos[0].status must be one of {STATUSES}, not "done"',
        id="unknown-status",
    ),
    pytest.param(
        todos(("a", "Pending")),
        f'- todos[0].status must be one of {STATUSES}, not "Pending"',
        id="status-case",
    ),
    pytest.param(todos(("", "pending")), "- todos[0].content is blank", id="empty-content"),
    pytest.param(todos((" \t\n ", "pending")), "- todos[0].content is blank", id="blank-content"),
    pytest.param(
        todos(("Run tests", "pending"), ("  Run tests ", "completed")),
        '- todos[1].content duplicates todos[0]: "Run tests"',
        id="duplicate-after-trim",
    ),
    pytest.param(
        todos(("a", "in_progress"), ("b", "pending"), ("c", "in_progress")),
        "- 2 items are in_progress (todos[0], todos[2]); keep exactly one in_progress and mark "
        "the others pending or completed",
        id="two-in-progress",
    ),
    pytest.param(
        '{"todos": ' + "[" * 100_000 + "]" * 100_000 + "}",
        f"- arguments are nested too deeply; send {EXAMPLE}",
        id="deeply-nested",
    ),
    pytest.param(
        "x" * (MAX_ARGUMENT_BYTES + 1),
        f"- arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a short list",
        id="huge",
    ),
]


class TestRejections:
    @pytest.mark.parametrize(("arguments", "violations"), REJECTIONS)
    def test_parse_raises_exact_text(self, arguments: str | bytes, violations: str) -> None:
        """Each malformed call raises ToolInputError with the exact model-facing text."""
        with pytest.raises(ToolInputError, match=f"^{re.escape(HEAD + violations)}$"):
            parse_todo_write(arguments)

    @pytest.mark.parametrize(("arguments", "violations"), REJECTIONS)
    def test_tool_returns_error_result_and_appends_nothing(
        self, log_path: Path, arguments: str | bytes, violations: str
    ) -> None:
        """Through a session, a rejection is an error result and the log stays as it was."""
        with Session(log_path) as session:
            session.start_turn("plan")
            before = log_path.read_bytes()
            result = session.todo_write(arguments)
            assert result == ToolResult(HEAD + violations, is_error=True)
            assert log_path.read_bytes() == before
            assert session.todos.todos == ()

    def test_every_violation_listed_with_item_index(self) -> None:
        """One call with many problems lists each of them, in item order, with its index."""
        args = json.dumps(
            {
                "todos": [
                    {"content": "a", "status": "in_progress", "id": 7},
                    {"content": "  ", "status": "pending"},
                    {"status": "completed"},
                    {"content": "b", "status": "started"},
                    {"content": " a", "status": "in_progress"},
                ]
            }
        )
        expected = HEAD + "\n".join(
            [
                f'- todos[0]: unknown field "id"; {ITEM_FIELDS}',
                "- todos[1].content is blank",
                '- todos[2] is missing "content"',
                f'- todos[3].status must be one of {STATUSES}, not "started"',
                '- todos[4].content duplicates todos[0]: "a"',
                "- 2 items are in_progress (todos[0], todos[4]); keep exactly one in_progress and "
                "mark the others pending or completed",
            ]
        )
        with pytest.raises(ToolInputError) as info:
            parse_todo_write(args)
        assert str(info.value) == expected
        assert info.value.tool == "todo_write"
        assert len(info.value.violations) == 6

    def test_long_reports_are_capped(self) -> None:
        """More than 20 violations are cut to 20 lines plus a count of the rest."""
        args = todos(*[(f"task {i}", "done") for i in range(25)])
        with pytest.raises(ToolInputError) as info:
            parse_todo_write(args)
        assert info.value.violations[-1] == "...and 5 more problems"
        assert len(info.value.violations) == 21

    def test_long_values_are_quoted_short(self) -> None:
        """A runaway status or duplicate is quoted in at most 100 characters."""
        long = "z" * 5000
        with pytest.raises(ToolInputError) as info:
            parse_todo_write(todos((long, "pending"), (long, "x" * 5000)))
        assert all(len(v) < 200 for v in info.value.violations)
        # Both contents are over the item cap, one status is unknown, one content repeats.
        assert len(info.value.violations) == 4

    def test_refusal_text_is_returned_and_nothing_appended(self, log_path: Path) -> None:
        """A call in a turn whose mode forbids it returns the policy's refusal; nothing appended."""
        table = {"review": ModePolicy(refusals={"todo_write": "review mode forbids it"})}
        with Session(log_path, policies=table) as session:
            session.start_turn("review this", mode="review")
            before = log_path.read_bytes()
            result = session.todo_write(todos(("a", "pending")))
            assert result == ToolResult("review mode forbids it", is_error=True)
            assert log_path.read_bytes() == before


class TestAccepted:
    def test_counts_line_exact(self, log_path: Path) -> None:
        """An accepted call returns exactly the one line of counts."""
        args = todos(
            ("Write the parser", "completed"),
            ("Run the tests", "in_progress"),
            ("Update docs", "pending"),
            ("Fix lint", "pending"),
            ("Read issue", "completed"),
            ("Release", "pending"),
        )
        with Session(log_path) as session:
            result = session.todo_write(args)
        assert result == ToolResult("Todo list updated: 3 pending, 1 in progress, 2 completed.")

    def test_appends_one_todo_write_event_with_trimmed_content(self, log_path: Path) -> None:
        """The log gains exactly one todo/write line holding the trimmed list."""
        with Session(log_path) as session:
            session.todo_write(todos(("  Run tests\n", "in_progress"), ("Ship", "pending")))
        lines = log_path.read_bytes().splitlines()
        assert [json.loads(x) for x in lines] == [
            {
                "v": 1,
                "seq": 1,
                "type": "todo/write",
                "data": {
                    "todos": [
                        {"content": "Run tests", "status": "in_progress"},
                        {"content": "Ship", "status": "pending"},
                    ]
                },
            }
        ]

    def test_empty_list_is_accepted(self, log_path: Path) -> None:
        """An empty list clears the panel and reports zero counts."""
        with Session(log_path) as session:
            session.todo_write(todos(("a", "pending")))
            result = session.todo_write('{"todos": []}')
            assert result.content == "Todo list updated: 0 pending, 0 in progress, 0 completed."
            assert session.todos.todos == ()
            assert session.todos.seq == 2

    def test_parallel_in_progress_allowed_behind_switch(self, log_path: Path) -> None:
        """With allow_parallel_in_progress, several in_progress items are accepted."""
        args = todos(("a", "in_progress"), ("b", "in_progress"))
        with Session(log_path) as session:
            result = session.todo_write(args, allow_parallel_in_progress=True)
        assert result == ToolResult("Todo list updated: 0 pending, 2 in progress, 0 completed.")

    def test_parallel_switch_still_rejects_other_violations(self) -> None:
        """The switch relaxes only the in-progress rule."""
        args = todos(("a", "in_progress"), ("a", "in_progress"))
        with pytest.raises(
            ToolInputError, match=r'todos\[1\]\.content duplicates todos\[0\]: "a"$'
        ):
            parse_todo_write(args, allow_parallel=True)

    def test_mapping_arguments(self) -> None:
        """Already-parsed arguments (a mapping) are validated the same way."""
        items = parse_todo_write({"todos": ({"content": "a", "status": "pending"},)})
        assert items == (TodoItem(content="a", status="pending"),)
        with pytest.raises(ToolInputError, match="duplicates"):
            parse_todo_write({"todos": ({"content": "a", "status": "pending"},) * 2})

    def test_large_valid_list(self) -> None:
        """A large list under the size limit is accepted whole."""
        args = todos(*[(f"task {i}", "pending") for i in range(15_000)])
        assert len(args) < MAX_ARGUMENT_BYTES
        assert len(parse_todo_write(args)) == 15_000

    def test_summary_line(self) -> None:
        """summary_line counts every status, zeros included."""
        items = [TodoItem(content="a", status="completed")]
        assert summary_line(items) == "Todo list updated: 0 pending, 0 in progress, 1 completed."


class TestNeverRaises:
    @pytest.mark.parametrize(
        "arguments",
        [
            pytest.param({"todos": [{"content": object(), "status": "pending"}]}, id="object"),
            pytest.param({"todos": [{"content": "a", "status": object()}]}, id="status-object"),
            pytest.param({"todos": [{"content": "\ud800", "status": "pending"}]}, id="surrogate"),
            pytest.param(
                '{"todos": [{"content": "\\ud800", "status": "pending"}]}', id="json-surrogate"
            ),
            pytest.param("1e999999", id="infinity"),
            pytest.param('{"todos": [' + "{" * 50_000, id="unterminated"),
        ],
    )
    def test_odd_arguments_give_a_result(self, log_path: Path, arguments: object) -> None:
        """Whatever the arguments, todo_write returns a ToolResult (an error here)."""
        with Session(log_path) as session:
            result = session.todo_write(arguments)  # type: ignore[arg-type]
        assert isinstance(result, ToolResult)
        assert result.is_error
        assert result.content.startswith(HEAD)

    def test_lone_surrogate_key_is_escaped(self) -> None:
        """A key holding a lone surrogate is reported without quoting it, as valid UTF-8."""
        for args in (
            '{"todos": [{"content": "a", "status": "pending", "\\ud800": 1}]}',
            '{"todos": [{"content": "a", "status": "\\ud800"}]}',
            '{"todos": [], "\\udfff": 1}',
        ):
            with pytest.raises(ToolInputError) as info:
                parse_todo_write(args)
            str(info.value).encode("utf-8")

    @pytest.mark.parametrize(
        ("args", "line"),
        [
            ('{"todos": [], "\\udfff": 1}', "- arguments must be valid Unicode text"),
            (
                '{"todos": [{"content": "a", "status": "pending", "\\ud800": 1}]}',
                "- todos[0] must be valid Unicode text",
            ),
        ],
    )
    def test_a_surrogate_is_reported_where_it_is(self, args: str, line: str) -> None:
        """The report names where the bad text is; at the top level, the arguments."""
        with pytest.raises(ToolInputError) as info:
            parse_todo_write(args)
        assert str(info.value) == HEAD + line

    def test_duplicates_after_a_malformed_item_are_reported(self) -> None:
        """Every problem is listed: a malformed item does not hide the duplicates after it."""
        item = {"content": "a", "status": "pending"}
        args = {"todos": [5, item, dict(item)]}
        with pytest.raises(ToolInputError) as info:
            parse_todo_write(args)
        assert str(info.value) == HEAD + "\n".join(
            [
                '- todos[0] must be an object with "content" and "status"',
                '- todos[2].content duplicates todos[1]: "a"',
            ]
        )

    def test_deeply_nested_mapping(self, log_path: Path) -> None:
        """A deeply nested Python structure is rejected, not a RecursionError."""
        nested: list[object] = []
        for _ in range(100_000):
            nested = [nested]
        with Session(log_path) as session:
            result = session.todo_write({"todos": nested})
        assert result == ToolResult(
            HEAD + '- todos[0] must be an object with "content" and "status"', is_error=True
        )
