"""The demo agent: its steps follow the conversation in every API, and its lists are accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.tools import parse_todo_write
from harness.testing import Reply, demo_reply

READ_FILE_CHAT = {"type": "function", "function": {"name": "read_file", "parameters": {}}}
READ_FILE_OTHER = {"name": "read_file", "input_schema": {}}


def chat(turns: int, tools: list[Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        messages += [{"role": "assistant", "content": None}, {"role": "tool", "content": f"{i}"}]
    return {"messages": messages, "tools": tools}


def responses(turns: int, tools: list[Any]) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        items += [
            {"type": "function_call", "call_id": f"a{i}", "name": "x", "arguments": "{}"},
            {"type": "function_call", "call_id": f"b{i}", "name": "y", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"a{i}", "output": ""},
            {"type": "function_call_output", "call_id": f"b{i}", "output": ""},
        ]
    return {"input": items, "tools": tools}


def names(reply: Reply) -> list[str]:
    return [call.name for call in reply.tool_calls]


class TestSteps:
    @pytest.mark.parametrize(
        ("build", "tool"), [(chat, READ_FILE_CHAT), (responses, READ_FILE_OTHER)]
    )
    def test_the_job_with_read_file(self, build: Any, tool: Any) -> None:
        """Plan, read, one done, all done, then the answer; parallel calls are one turn."""
        steps = [demo_reply(build(turn, [tool])) for turn in range(6)]
        assert [names(s) for s in steps[:4]] == [
            ["todo_write"],
            ["read_file"],
            ["todo_write"],
            ["todo_write"],
        ]
        assert steps[4].content is not None
        assert steps[4].content.startswith("Done.")
        assert steps[4].tool_calls == ()
        assert steps[5] == steps[4]

    def test_without_read_file_the_step_is_skipped(self) -> None:
        """A request that offers no read_file tool gets the list steps only."""
        steps = [demo_reply(chat(turn, [])) for turn in range(4)]
        assert [names(s) for s in steps[:3]] == [["todo_write"]] * 3
        assert steps[3].tool_calls == ()

    def test_every_list_is_accepted_by_the_tool(self) -> None:
        """Each todo_write the demo sends passes the tool's own validation, one item in progress."""
        lists = [demo_reply(chat(turn, [])).tool_calls for turn in range(3)]
        statuses = []
        for (call,) in lists:
            todos = parse_todo_write(json.dumps(call.arguments))
            statuses.append([t.status for t in todos])
        assert statuses == [
            ["in_progress", "pending", "pending"],
            ["completed", "in_progress", "pending"],
            ["completed", "completed", "completed"],
        ]

    def test_same_request_same_reply(self) -> None:
        """The reply is a function of the request alone."""
        assert demo_reply(chat(2, [READ_FILE_CHAT])) == demo_reply(chat(2, [READ_FILE_CHAT]))
