"""Small generated sessions for the loop-feature tests (the way back, receipts, reminders...)."""

from __future__ import annotations

import json

from compaction import FunctionCall, Message, Session, ToolCall


def call(call_id: str, name: str = "bash", **arguments: object) -> Message:
    """Return an assistant message with one tool call."""
    args = json.dumps(arguments or {"command": "ls"})
    return Message(
        role="assistant",
        tool_calls=(ToolCall(id=call_id, function=FunctionCall(name=name, arguments=args)),),
    )


def result(call_id: str, text: str = "ok") -> Message:
    """Return the tool result answering `call_id`."""
    return Message(role="tool", tool_call_id=call_id, content=text)


def say(text: str = "Done.") -> Message:
    """Return an assistant message without tool calls (a final answer)."""
    return Message(role="assistant", content=text)


def reads(session: Session, paths: list[str], *, size: int = 120) -> None:
    """Append one read_file call and its long result per path."""
    for i, path in enumerate(paths):
        cid = f"r{session.applied_seq}_{i}"
        session.add_message(call(cid, "read_file", path=path))
        session.add_message(result(cid, f"contents of {path} " * size))


def todos(*items: tuple[str, str]) -> dict[str, list[dict[str, str]]]:
    """Return todo_write arguments for (content, status) pairs."""
    return {"todos": [{"content": c, "status": s} for c, s in items]}
