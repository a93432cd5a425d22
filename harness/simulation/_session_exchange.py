"""The exchange format: a generated session as plain OpenAI-format messages plus todo writes.

For peers that run outside this package (the format is documented in ``benchmarks/README.md``):
`to_exchange` builds the document, `dump_exchange` writes it, `load_exchange` reads it back into
event payloads.

Invariants: `load_exchange(dump_exchange(p))` gives back `p` for a generated session; the file is
UTF-8 JSON with sorted keys, so the same session gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compaction import EventData, Message, TodoItem, TodoWriteData, TurnEndData, TurnStartData
from harness.simulation._sessions import final_todos, unfinished, user_tools

EXCHANGE_FORMAT = "context-harness/session-exchange"
EXCHANGE_VERSION = 1


def to_exchange(payloads: Sequence[EventData], **meta: object) -> dict[str, Any]:
    """Return a session in the exchange format (see ``benchmarks/README.md``).

    Args:
        payloads: the session's events, in log order.
        **meta: extra fields stored under ``meta`` (e.g. ``seed``, ``turns``).
    """
    turns: list[dict[str, Any]] = []
    for p in payloads:
        if isinstance(p, TurnStartData):
            turns.append(
                {"mode": p.mode or "agent", "messages": [], "todo_writes": [], "ended": False}
            )
            continue
        if not turns:
            turns.append({"mode": "agent", "messages": [], "todo_writes": [], "ended": False})
        turn = turns[-1]
        if isinstance(p, Message):
            turn["messages"].append(p.model_dump(mode="json", exclude_none=True))
        elif isinstance(p, TodoWriteData):
            call_id = _last_call_id(turn["messages"])
            turn["todo_writes"].append(
                {
                    "after_message": len(turn["messages"]) - 1,
                    "tool_call_id": call_id,
                    "todos": [t.model_dump() for t in p.todos],
                }
            )
        elif isinstance(p, TurnEndData):
            turn["ended"] = True
            if p.reason:
                turn["end_reason"] = p.reason
    first_user = next((m for m in payloads if isinstance(m, Message) and m.role == "user"), None)
    return {
        "format": EXCHANGE_FORMAT,
        "version": EXCHANGE_VERSION,
        "meta": dict(sorted(meta.items())),
        "tools": list(user_tools()),
        "turns": turns,
        "first_request": first_user.text() if first_user else None,
        "final_todos": [t.model_dump() for t in final_todos(payloads)],
        "unfinished": [t.model_dump() for t in unfinished(payloads)],
    }


def _last_call_id(messages: list[dict[str, Any]]) -> str | None:
    for m in reversed(messages):
        for call in m.get("tool_calls") or ():
            if call["function"]["name"] == "todo_write":
                return str(call["id"])
    return None


def dump_exchange(payloads: Sequence[EventData], path: Path | str, **meta: object) -> Path:
    """Write a session as exchange-format JSON (UTF-8, sorted keys, 1-space indent)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_exchange(payloads, **meta), ensure_ascii=False, indent=1, sort_keys=True)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def load_exchange(path: Path | str) -> list[EventData]:
    """Read an exchange-format file back into event payloads, in log order.

    Raises:
        ValueError: the file is not in the exchange format.
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != EXCHANGE_FORMAT:
        raise ValueError(f"{path}: not a {EXCHANGE_FORMAT} file (format={doc.get('format')!r})")
    out: list[EventData] = []
    for turn in doc["turns"]:
        out.append(TurnStartData(mode=turn["mode"]))
        writes = {w["after_message"]: w for w in turn["todo_writes"]}
        for i, m in enumerate(turn["messages"]):
            out.append(Message.model_validate(m))
            if i in writes:
                todos = tuple(TodoItem.model_validate(t) for t in writes[i]["todos"])
                out.append(TodoWriteData(todos=todos))
        if turn["ended"]:
            out.append(TurnEndData(reason=turn.get("end_reason")))
    return out
