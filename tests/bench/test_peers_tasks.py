"""Task retention for the peers: shared tasks (id, status) read out of prompts and scored."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.peers.drivers._common import (
    COPY_TASKS_HEAD,
    Recorder,
    extract_task_state,
    summarize,
)
from benchmarks.peers.metrics import DriverRecord, score, task_truth, tasks_shown, to_message
from compaction import get_tokenizer


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def _answer(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


USER = {"role": "user", "content": "Do both tasks"}
CREATE_1 = _call("c1", "TaskCreate", {"subject": "Fix the parser"})
ANSWER_1 = _answer("c1", "Task #1 created successfully: Fix the parser")
CREATE_2 = _call("c2", "TaskCreate", {"subject": "Run the tests"})
ANSWER_2 = _answer("c2", "Task #2 created successfully: Run the tests")
START_1 = _call("c3", "TaskUpdate", {"taskId": "1", "status": "in_progress"})
ANSWER_3 = _answer("c3", "Updated task #1 status")
READ = _call("c4", "read_file", {"path": "a.py"})
ANSWER_4 = _answer("c4", "x = 1")
DONE = {"role": "assistant", "content": "Done for now."}

EXCHANGE: dict[str, Any] = {
    "first_request": USER["content"],
    "unfinished": [],
    "turns": [
        {
            "messages": [
                USER,
                *(CREATE_1, ANSWER_1, CREATE_2, ANSWER_2),
                *(START_1, ANSWER_3, READ, ANSWER_4, DONE),
            ]
        }
    ],
}
"""Five model calls: two task creates, a start, a read, a reply (checked from the second)."""


def _record(requests: list[list[dict[str, Any]]]) -> DriverRecord:
    recorder = Recorder()
    for messages in requests:
        recorder.record(messages, [{"type": "function", "function": {"name": "t"}}])
    return DriverRecord.model_validate(
        {
            "peer": "p",
            "variant": "v",
            "summarizer": "copy-todos",
            "budget": 100,
            "wall_time_s": 0.1,
            "versions": {},
            "summary_calls": 0,
            "messages": recorder.messages,
            "tools": recorder.tools,
            "requests": recorder.requests,
        }
    )


def _requests(last: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The five calls of `EXCHANGE`, growing, the last one replaced by `last`."""
    history = [USER, CREATE_1, ANSWER_1, CREATE_2, ANSWER_2, START_1, ANSWER_3, READ, ANSWER_4]
    return [history[:1], history[:3], history[:5], history[:7], last]


class TestTaskTruth:
    def test_one_entry_per_assistant_message(self):
        """Each call sees the tasks created and moved before it; finished ones drop out."""
        assert task_truth(EXCHANGE) == [
            {},
            {"1": "pending"},
            {"1": "pending", "2": "pending"},
            {"1": "in_progress", "2": "pending"},
            {"1": "in_progress", "2": "pending"},
        ]


class TestTasksShown:
    def test_calls_and_answers(self):
        """Create answers make a task pending; an update sets its status."""
        messages = [to_message(m) for m in (USER, CREATE_1, ANSWER_1, START_1)]
        assert tasks_shown(messages) == {"1": "in_progress"}

    def test_copied_list_replaces_what_came_before(self):
        """A summary's copied task list is the state; later calls move it on."""
        summary = summarize("copy-todos", "Task #1 created successfully: a\nTask #2 created x")
        assert COPY_TASKS_HEAD in summary
        messages = [to_message({"role": "user", "content": summary}), to_message(START_1)]
        assert tasks_shown(messages) == {"1": "in_progress", "2": "pending"}

    def test_python_repr_and_html_escaped_updates(self):
        """Update arguments count in a Python repr or HTML-escaped, as frameworks render them."""
        text = (
            "Task #7 created successfully: a\n{'taskId': '7', 'status': 'in_progress'}\n"
            "Task #8 created successfully: b\n{&quot;taskId&quot;: &quot;8&quot;, "
            "&quot;status&quot;: &quot;completed&quot;}"
        )
        assert extract_task_state(text) == {"7": "in_progress", "8": "completed"}

    def test_no_tasks(self):
        """Text without task events shows no task, and the structural summary copies none."""
        assert extract_task_state("nothing here: {'todos': []}") == {}
        other = 'Task #1 created successfully: a\n{"tasks": [{"id": 9, "status": "x", "due": 1}]}'
        assert extract_task_state(other) == {"1": "pending"}
        assert COPY_TASKS_HEAD not in summarize("structural", ANSWER_1["content"])


class TestTaskRetention:
    def test_every_task_kept(self):
        """A peer whose prompts keep every task call scores 100% on every checked call."""
        full = [USER, CREATE_1, ANSWER_1, CREATE_2, ANSWER_2, START_1, ANSWER_3, READ, ANSWER_4]
        metrics = score(_record(_requests(full)), EXCHANGE, get_tokenizer())
        assert metrics.task_checks == 4
        assert metrics.task_retention_rate == 1.0

    def test_summary_that_drops_a_task_scores_below_full(self):
        """A summary that copies task 1 but drops task 2 fails the last call's check."""
        dropped = summarize("copy-todos", "Task #1 created successfully: Fix the parser")
        compacted = [USER, {"role": "user", "content": dropped}, START_1, ANSWER_3, READ, ANSWER_4]
        metrics = score(_record(_requests(compacted)), EXCHANGE, get_tokenizer())
        assert metrics.task_checks == 4
        assert metrics.task_retention_rate == 0.75

    def test_copy_summary_of_the_whole_span_keeps_both(self):
        """The copy summarizer, shown both creates, carries both tasks past the compaction."""
        span = "\n".join(str(m["content"]) for m in (ANSWER_1, ANSWER_2))
        summary = summarize("copy-todos", span)
        compacted = [USER, {"role": "user", "content": summary}, START_1, ANSWER_3, READ, ANSWER_4]
        metrics = score(_record(_requests(compacted)), EXCHANGE, get_tokenizer())
        assert metrics.task_retention_rate == 1.0
