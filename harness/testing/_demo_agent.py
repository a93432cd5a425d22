"""A scripted agent for trying the toolkit offline: plan, read a file, work through the list.

`demo_reply` is a `Script` step: a function of the decoded request, in any of the APIs the
server speaks (chat completions, Anthropic messages, the Responses API). It reads how many
assistant turns the conversation already holds and answers with the next step of a small job:

1. write the todo list (one item in progress, two pending);
2. read ``README.md`` with the host's ``read_file`` tool, when the request offers one;
3. rewrite the list with the first item completed and the second in progress;
4. rewrite it with every item completed;
5. answer in text, and stop calling tools.

The step follows the conversation, not the server's request count, so a second run against the
same server starts again at step 1.

Invariants: the reply depends on the request alone (same request, same bytes); every
``todo_write`` call it makes is one the tool accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from harness.testing._replies import Reply, ToolCall

ITEMS: Final = ("Read the README", "Summarize what the toolkit does", "Report the summary")
"""The demo job's three items, in order."""

ANSWER: Final = (
    "Done. The toolkit keeps an agent's todo list in an append-only log and copies every "
    "unfinished item into each Checkpoint by code, so compaction never drops a task."
)
"""The demo job's final answer."""


def _todos(done: int, current: int | None) -> dict[str, Any]:
    """Return ``todo_write`` arguments: `done` items completed, item `current` in progress."""
    todos = []
    for index, content in enumerate(ITEMS):
        status = "completed" if index < done else "pending"
        if index == current:
            status = "in_progress"
        todos.append({"content": content, "status": status})
    return {"todos": todos}


def _turns(request: Mapping[str, Any]) -> int:
    """Return how many assistant turns the request's conversation holds, in any API."""
    messages = request.get("messages")
    if isinstance(messages, list):
        return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant")
    raw = request.get("input")
    items: Sequence[Any] = raw if isinstance(raw, list) else []
    turns = 0
    previous_was_call = False
    for item in items:
        kind = item.get("type") if isinstance(item, Mapping) else None
        is_call = kind == "function_call"
        if (is_call and not previous_was_call) or (
            isinstance(item, Mapping) and item.get("role") == "assistant"
        ):
            turns += 1
        previous_was_call = is_call
    return turns


def _tool_names(request: Mapping[str, Any]) -> set[str]:
    """Return the names of the tools the request offers, in any API."""
    names = set()
    for tool in request.get("tools") or ():
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def demo_reply(request: Mapping[str, Any]) -> Reply:
    """Return the demo agent's next step for `request` (see the module docstring)."""
    steps: list[Reply] = [Reply(None, tool_calls=[ToolCall("todo_write", _todos(0, 0))])]
    if "read_file" in _tool_names(request):
        steps.append(Reply(None, tool_calls=[ToolCall("read_file", {"path": "README.md"})]))
    steps.append(Reply(None, tool_calls=[ToolCall("todo_write", _todos(1, 1))]))
    steps.append(Reply(None, tool_calls=[ToolCall("todo_write", _todos(3, None))]))
    turn = _turns(request)
    return steps[turn] if turn < len(steps) else Reply(ANSWER)
