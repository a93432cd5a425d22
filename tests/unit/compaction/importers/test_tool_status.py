"""A tool call's exit status, read by each importer and used by Errors and Fixes.

Shapes from the real formats: Codex's unified exec output (``Chunk ID``, ``Wall time``,
``Process exited with code N``, ``Output:``) and older JSON ``metadata.exit_code``; Claude Code's
``is_error`` with ``Exit code N`` on a failed Bash result's first line; Gemini CLI's
``run_shell_command`` result, whose ``status`` is ``success`` while its text says
``Exit Code: 1``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction import (
    CompactionPolicy,
    FunctionCall,
    Message,
    MessageAdded,
    Section,
    Session,
    SummaryInput,
    ToolCall,
    compact,
)
from compaction.importers import load
from compaction.importers._tool_status import codex_exit_code, exit_code_in
from compaction.summarizers import check_output
from compaction.summarizers.facts import error_lines

MAKE_FAILED = "golangci-lint run ./...\nmake: *** [Makefile:12: lint] Error 1"
"""A failing run with no ``error:``-style line: only its status says it failed."""


def codex_file(tmp_path: Path, outputs: list[str]) -> Path:
    records: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/repo"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Make lint pass"}],
            },
        },
    ]
    for n, output in enumerate(outputs):
        args = json.dumps({"cmd": "make lint"})
        records += [
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": args,
                    "call_id": f"c{n}",
                },
            },
            {
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": f"c{n}", "output": output},
            },
        ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def unified(code: int, output: str) -> str:
    return (
        f"Chunk ID: 7f3a\nWall time: 2.1 seconds\nProcess exited with code {code}\n"
        f"Original token count: 40\nOutput:\n{output}"
    )


def tool_messages(path: Path) -> list[Message]:
    return [e.data for e in load(path) if isinstance(e, MessageAdded) and e.data.role == "tool"]


def errors_after_import(path: Path, tmp_path: Path) -> str:
    with Session(tmp_path / "s.jsonl") as session:
        for event in load(path):
            session.append(event.data)
        policy = CompactionPolicy(window_tokens=16_000, retain=0.0)
        return compact(session, policy, force=True).checkpoint.errors_and_fixes


class TestReading:
    @pytest.mark.parametrize(
        ("text", "last", "code"),
        [
            (unified(2, "boom"), False, 2),
            ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\n", False, 1),
            ("Exit code 127\nbash: nope: command not found", False, 127),
            ("Command: go vet\nOutput: (empty)\nError: (none)\nExit Code: 3\nSignal: 0", True, 3),
            ("the test printed 'Exit code 1' inline", False, None),
            ("no status at all", False, None),
        ],
    )
    def test_exit_code_lines(self, text: str, last: bool, code: int | None) -> None:
        """Each format's status line is read; a mention inside a line is not a status."""
        assert exit_code_in(text, last=last) == code

    def test_codex_json_metadata(self) -> None:
        """Older Codex outputs carry the status as JSON metadata."""
        text = json.dumps({"output": "FAIL", "metadata": {"exit_code": 4, "duration_seconds": 1}})
        assert codex_exit_code(text) == 4


class TestImporters:
    def test_codex_exit_status_reaches_the_tool_message(self, tmp_path: Path) -> None:
        """Codex: 'Process exited with code N' becomes exit_code N, failed when non-zero."""
        path = codex_file(tmp_path, [unified(1, MAKE_FAILED), unified(0, "ok")])
        assert [(m.exit_code, m.failed) for m in tool_messages(path)] == [(1, True), (0, False)]

    def test_claude_code_is_error_and_exit_code(self, tmp_path: Path) -> None:
        """Claude Code: is_error marks the failure; a Bash result's 'Exit code N' is its code."""
        records = [
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": "Run lint"}},
            {
                "type": "assistant",
                "uuid": "a",
                "message": {
                    "id": "m1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "Bash",
                            "input": {"command": "make lint"},
                        },
                        {
                            "type": "tool_use",
                            "id": "t2",
                            "name": "Read",
                            "input": {"file_path": "/r/a.go"},
                        },
                    ],
                },
            },
            {
                "type": "user",
                "uuid": "r",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "is_error": True,
                            "content": "Exit code 2\n" + MAKE_FAILED,
                        },
                        {"type": "tool_result", "tool_use_id": "t2", "content": "package a"},
                    ],
                },
            },
        ]
        path = tmp_path / "s.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        assert [(m.exit_code, m.failed) for m in tool_messages(path)] == [(2, True), (None, False)]

    def test_gemini_status_success_but_exit_code_1(self, tmp_path: Path) -> None:
        """Gemini CLI: a shell call of status success whose text says Exit Code: 1 failed."""

        def call(n: int, code: int) -> dict[str, Any]:
            output = (
                f"Command: make lint\nDirectory: (root)\nOutput: {MAKE_FAILED}\n"
                f"Error: (none)\nExit Code: {code}\nSignal: 0"
            )
            return {
                "id": f"run-{n}",
                "name": "run_shell_command",
                "args": {"command": "make lint"},
                "status": "success",
                "result": [
                    {
                        "functionResponse": {
                            "id": f"run-{n}",
                            "name": "run_shell_command",
                            "response": {"output": output},
                        }
                    }
                ],
            }

        doc = {
            "sessionId": "g1",
            "messages": [
                {"id": "1", "type": "user", "content": "Make lint pass"},
                {"id": "2", "type": "gemini", "content": "", "toolCalls": [call(1, 1)]},
            ],
        }
        path = tmp_path / "g.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        assert [(m.exit_code, m.failed) for m in tool_messages(path)] == [(1, True)]


class TestErrorsAndFixes:
    def test_codex_failure_without_an_error_line_is_reported(self, tmp_path: Path) -> None:
        """A Codex run that failed only by its exit code is in Errors and Fixes, with its code."""
        path = codex_file(tmp_path, [unified(2, MAKE_FAILED)])
        errors = errors_after_import(path, tmp_path)
        assert errors == "- `make lint` failed: exit code 2: golangci-lint run ./..."

    def test_a_later_passing_status_fixes_it(self, tmp_path: Path) -> None:
        """The same command exiting 0 afterwards marks the failure fixed."""
        path = codex_file(tmp_path, [unified(2, MAKE_FAILED), unified(0, "")])
        errors = errors_after_import(path, tmp_path)
        assert errors.endswith("(fixed: a later run passed)")


class TestLinterFindings:
    def test_a_listed_linter_finding_is_an_error_line(self) -> None:
        """SWE-agent's edit output lists flake8 findings as '- E999 ...': an error, not a diff."""
        text = "Your edit introduced new syntax error(s).\n- E999 SyntaxError: unmatched ']'"
        assert error_lines(text) == ["- E999 SyntaxError: unmatched ']'"]
        assert error_lines("- raise ValueError: old line\n+ fixed") == []


class TestLatestFailure:
    def test_the_failure_seen_last_is_kept_not_the_command_run_last(self) -> None:
        """Test fails, lint fails, lint passes, test passes: lint's failure is the latest one."""
        results = [
            ("mise run test", "x.go:1:2: cannot use y", True),
            ("mise run lint", "a_test.go:8:13: string has 4 occurrences (goconst)", True),
            ("mise run lint", "0 issues.", False),
            ("mise run test", "ok", False),
        ]
        messages = [Message(role="user", content="Make the checks pass")]
        for n, (command, output, failed) in enumerate(results):
            fn = FunctionCall(name="Bash", arguments=json.dumps({"command": command}))
            messages.append(
                Message(role="assistant", tool_calls=(ToolCall(id=f"b{n}", function=fn),))
            )
            messages.append(
                Message(role="tool", tool_call_id=f"b{n}", content=output, failed=failed)
            )
        span = SummaryInput(
            messages=tuple(messages),
            seqs=tuple(range(1, len(messages) + 1)),
            previous=None,
            todos=(),
            budget_tokens=60,
        )
        errors = check_output({}, span)[Section.ERRORS_AND_FIXES]
        assert "`mise run lint` failed: a_test.go:8:13" in errors
