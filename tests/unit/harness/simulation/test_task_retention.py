"""Every-call retention of the shared task list: what a request shows, and what a replay counts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction import CompactionPolicy, FunctionCall, Message, Task, ToolCall, TurnStartData
from compaction.checkpoint import Checkpoint, render_checkpoint
from compaction.events import TaskCreateData, TaskRef
from compaction.views import checkpoint_preamble
from harness.simulation import STRATEGIES, replay
from harness.simulation._context_strategies import created_task_id, update_args, visible_tasks


def call(name: str, cid: str, args: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-format assistant message with one tool call."""
    return {
        "role": "assistant",
        "tool_calls": [{"id": cid, "function": {"name": name, "arguments": json.dumps(args)}}],
    }


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Task #3 created successfully: Write docs", "3"),
        ('Created task 12: "Run the tests" (pending, no owner).', "12"),
        ("Created the file.", None),
        ("task #3 created", None),
    ],
)
def test_created_task_id(answer, expected):
    """Ours and Claude Code's create answers name the id; other text does not."""
    assert created_task_id(answer) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"taskId": "2", "status": "completed"}', ("2", "completed")),
        ('{"id": 7, "status": "in_progress"}', ("7", "in_progress")),
        ('{"taskId": "2", "subject": "x"}', None),
        ("[1, 2]", None),
        ("not json", None),
    ],
)
def test_update_args(arguments, expected):
    """A task update that sets a status gives (id, status); anything else gives None."""
    assert update_args(arguments) == expected


def test_latest_statement_wins():
    """A Checkpoint's tasks replace earlier ones; later creates and updates apply in order."""
    checkpoint = checkpoint_preamble() + render_checkpoint(
        Checkpoint(
            primary_request="x",
            pending_tasks=(TaskRef(id="1", subject="a"),),
            current_tasks=(TaskRef(id="2", owner="w", subject="b"),),
        )
    )
    messages = [
        call("TaskCreate", "c0", {"subject": "old"}),
        {"role": "tool", "tool_call_id": "c0", "content": "Task #9 created successfully: old"},
        {"role": "user", "content": checkpoint},
        call("TaskCreate", "c1", {"subject": "c"}),
        {"role": "tool", "tool_call_id": "c1", "content": "Task #3 created successfully: c"},
        call("TaskUpdate", "c2", {"taskId": "1", "status": "in_progress"}),
        {"role": "tool", "tool_call_id": "x", "content": "Task #8 created successfully: no"},
    ]
    seen = visible_tasks(messages)
    assert seen == {"1": "in_progress", "2": "in_progress", "3": "pending"}


def _session(works: int) -> list[Any]:
    """A session: two tasks created, then long work, then one task updated; more work."""
    out: list[Any] = [TurnStartData(mode="agent"), Message(role="user", content="Do it.")]
    for i, subject in enumerate(("First thing", "Second thing"), 1):
        cid = f"create{i}"
        out.append(
            Message(
                role="assistant",
                tool_calls=(
                    ToolCall(
                        id=cid,
                        function=FunctionCall(
                            name="TaskCreate", arguments=json.dumps({"subject": subject})
                        ),
                    ),
                ),
            )
        )
        out.append(TaskCreateData(agent="main", task=Task(id=str(i), subject=subject)))
        out.append(
            Message(
                role="tool", tool_call_id=cid, content=f"Task #{i} created successfully: {subject}"
            )
        )
    for n in range(works):
        cid = f"read{n}"
        out.append(
            Message(
                role="assistant",
                tool_calls=(
                    ToolCall(
                        id=cid,
                        function=FunctionCall(name="read_file", arguments='{"path": "a.py"}'),
                    ),
                ),
            )
        )
        out.append(Message(role="tool", tool_call_id=cid, content=f"line {n}\n" * 400))
    return out


def test_b_keeps_every_task_where_a_loses_them():
    """After compactions cut the creates away, B's Checkpoint shows the tasks; A's does not."""
    payloads = _session(30)
    policy = CompactionPolicy(window_tokens=12_000)
    b = replay(payloads, STRATEGIES["B"], policy=policy)
    a = replay(payloads, STRATEGIES["A"], policy=policy)
    assert b.compactions >= 1
    assert a.compactions >= 1
    assert b.task_checks == a.task_checks > 0
    assert b.task_retention == 1.0
    assert a.task_held < a.task_checks
