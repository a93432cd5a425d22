"""What a peer's prompt still shows of the session's open work: todo items and shared tasks.

The truth comes from the session script (the latest todo list written, the tasks created and
moved so far, per scripted request); what a prompt shows is read from its text the way the copy
summarizer reads its span (`benchmarks.peers.drivers._payloads`). Mirrors how
`harness.simulation.replay` scores our strategies: an item counts at its latest status only.

Invariants: pure functions of the messages and the exchange.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.peers.drivers._payloads import extract_task_state, extract_todo_lists
from compaction import Message
from compaction.tokens import message_text
from harness.simulation import (
    TASK_CREATE_NAMES,
    TASK_UPDATE_NAMES,
    created_task_id,
    update_args,
)

__all__ = ["owes_answer", "task_truth", "tasks_shown", "todo_truth", "todos_at_latest_status"]


def owes_answer(exchange: Mapping[str, Any]) -> bool:
    """Tell whether the session ends on a message the agent still owes an answer to.

    Then the agent's loop calls the model once more after the last recorded message, and
    `harness.simulation.replay` scores that call as a request too (it makes it as well).
    """
    turns = exchange.get("turns") or ()
    last = next((t["messages"][-1] for t in reversed(turns) if t["messages"]), None)
    return last is not None and last["role"] != "assistant"


def todos_at_latest_status(
    messages: Sequence[Message], unfinished: Sequence[Mapping[str, str]]
) -> tuple[int, int]:
    """Count unfinished todos kept at their status in the last visible list, and mentioned at all.

    The last visible list is the last ``"todos": [...]`` payload in the prompt (a todo-tool call's
    arguments or a summary that copied one), read in message order.
    """
    text = "\n".join(message_text(m) for m in messages)
    lists = extract_todo_lists(text)
    latest = {item["content"]: item["status"] for item in lists[-1]} if lists else {}
    kept = sum(1 for t in unfinished if latest.get(t["content"]) == t["status"])
    mentioned = sum(1 for t in unfinished if t["content"] in text)
    return kept, mentioned


def todo_truth(exchange: Mapping[str, Any]) -> list[list[dict[str, str]]]:
    """Return, per scripted request, the unfinished items of the latest todo list written so far.

    Request k is the model call that produced the session's k-th assistant message; every
    todo_write call in a session was accepted, so its arguments are the list from then on. A
    session that ends owing an answer (`owes_answer`) has one more request: the final call.
    """
    latest: list[dict[str, str]] = []
    out: list[list[dict[str, str]]] = []
    for turn in exchange.get("turns") or ():
        for message in turn["messages"]:
            if message["role"] != "assistant":
                continue
            out.append([t for t in latest if t["status"] != "completed"])
            for call in message.get("tool_calls") or ():
                if call["function"]["name"] == "todo_write":
                    latest = list(json.loads(call["function"]["arguments"])["todos"])
    if owes_answer(exchange):
        out.append([t for t in latest if t["status"] != "completed"])
    return out


def tasks_shown(messages: Sequence[Message]) -> dict[str, str]:
    """Return the shared tasks a prompt shows, id -> latest status (`extract_task_state`).

    Read from the prompt's text in message order, the way the copy summarizer reads its span:
    task-create answers, task-update arguments, and a list a summary copied.
    """
    return extract_task_state("\n".join(message_text(m) for m in messages))


def task_truth(exchange: Mapping[str, Any]) -> list[dict[str, str]]:
    """Return, per scripted request, the session's unfinished shared tasks, id -> status.

    Mirrors `harness.simulation.replay`: a task-create call's answer names the new task
    (``pending``); a task-update call that sets a status moves it; ``pending`` and
    ``in_progress`` are unfinished.
    """
    tasks: dict[str, str] = {}
    creates: set[str] = set()
    out: list[dict[str, str]] = []
    for turn in exchange.get("turns") or ():
        for message in turn["messages"]:
            if message["role"] == "tool" and message.get("tool_call_id") in creates:
                created = created_task_id(str(message.get("content") or ""))
                if created:
                    tasks[created] = "pending"
            if message["role"] != "assistant":
                continue
            out.append(_open(tasks))
            for call in message.get("tool_calls") or ():
                name = call["function"]["name"]
                if name in TASK_CREATE_NAMES:
                    creates.add(call["id"])
                elif name in TASK_UPDATE_NAMES:
                    got = update_args(call["function"]["arguments"])
                    if got:
                        tasks[got[0]] = got[1]
    if owes_answer(exchange):
        out.append(_open(tasks))
    return out


def _open(tasks: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in tasks.items() if v in ("pending", "in_progress")}
