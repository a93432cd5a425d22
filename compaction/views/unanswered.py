"""Unanswered tool calls: the calls a killed process left without a result, and their answer.

A process killed inside a tool call leaves the assistant message that made the call in the log
with no ``tool`` message answering it. Every provider refuses a request that holds such a call
(HTTP 400), so the next writer answers it first: a ``tool`` message with a fixed error text
(`interrupted_text`, "the process stopped before this call returned", from
``templates/call_interrupted.md``), as the importers answer a call whose transcript lacks its
result. The answer is an ordinary appended event, recorded once: every later request holds the
same bytes.

Only the newest assistant message can hold an open call in a log written by this toolkit: a
writer that appends any other user or assistant message (or a ``turn/start``) answers the open
calls first (`with_answers`, called by `compaction.Session.append_many`). `unanswered_in_log`
finds every call left without a result anywhere in a log, for ``harness log``'s warning (a log
written before this rule may hold one before a later message: appending cannot answer it in
place, so the warning names it).

Invariants: `with_answers` only inserts ``tool`` messages, before the first payload that would
leave a call unanswered; it never reorders or drops the caller's payloads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources

from compaction.events import Event, EventData, Message, MessageAdded, ToolCall, TurnStartData


@cache
def interrupted_text() -> str:
    """Return the placeholder result of a call the process never finished."""
    path = resources.files("compaction").joinpath("templates", "call_interrupted.md")
    return path.read_text(encoding="utf-8").strip()


def interrupted_result(call: ToolCall) -> Message:
    """Return the ``tool`` message that answers `call` with the placeholder (a failed result)."""
    return Message(
        role="tool",
        tool_call_id=call.id,
        name=call.function.name,
        content=interrupted_text(),
        failed=True,
        provider_fields={"is_error": True},  # Anthropic's tool_result flag
    )


def unanswered_calls(newest_first: Iterable[Message]) -> tuple[ToolCall, ...]:
    """Return the calls of the newest assistant message that no later ``tool`` message answers.

    Args:
        newest_first: the context's messages, newest first (read only back to the newest
            message that is not a tool result).
    """
    answered: set[str] = set()
    for message in newest_first:
        if message.role == "tool" and message.tool_call_id is not None:
            answered.add(message.tool_call_id)
            continue
        calls = message.tool_calls or () if message.role == "assistant" else ()
        return tuple(c for c in calls if c.id not in answered)
    return ()


def _closes(data: EventData) -> bool:
    """Whether `data` would leave an open call unanswered for good (a new turn or message)."""
    if isinstance(data, TurnStartData):
        return True
    return isinstance(data, Message) and data.role in ("user", "assistant")


def with_answers(open_calls: Sequence[ToolCall], payloads: Sequence[EventData]) -> list[EventData]:
    """Return `payloads` with a placeholder answer before the first one that closes open calls.

    Args:
        open_calls: the calls open in the log now (`unanswered_calls`).
        payloads: what a writer is about to append, in order.
    """
    pending = {c.id: c for c in open_calls}
    out: list[EventData] = []
    for data in payloads:
        if isinstance(data, Message) and data.role == "tool" and data.tool_call_id:
            pending.pop(data.tool_call_id, None)
        elif pending and _closes(data):
            out += [interrupted_result(c) for c in pending.values()]
            pending.clear()
        if isinstance(data, Message) and data.role == "assistant" and data.tool_calls:
            pending = {c.id: c for c in data.tool_calls}
        out.append(data)
    return out


class CallTracker:
    """Follow a log's events and tell which tool calls no ``tool`` message answers.

    A call is left unanswered once a user or assistant message follows it without its result;
    the calls still open at the end are listed too (a live process may still be running them).
    """

    def __init__(self) -> None:
        self._open: dict[str, tuple[int, ToolCall]] = {}
        self._left: list[tuple[int, ToolCall]] = []

    def feed(self, event: Event) -> None:
        """Take the next event of the log."""
        if not isinstance(event, MessageAdded):
            return
        message = event.data
        if message.role == "tool" and message.tool_call_id:
            self._open.pop(message.tool_call_id, None)
            return
        if message.role in ("user", "assistant"):
            self._left += self._open.values()
            self._open = {}
        for call in message.tool_calls or ():
            self._open[call.id] = (event.seq, call)

    def unanswered(self) -> list[tuple[int, ToolCall]]:
        """Return every call without a result so far, with the seq of the message that made it."""
        return self._left + list(self._open.values())


def unanswered_in_log(events: Iterable[Event]) -> list[tuple[int, ToolCall]]:
    """Return every tool call of a log that no ``tool`` message answers, with its event's seq."""
    tracker = CallTracker()
    for event in events:
        tracker.feed(event)
    return tracker.unanswered()


__all__ = [
    "CallTracker",
    "interrupted_result",
    "interrupted_text",
    "unanswered_calls",
    "unanswered_in_log",
    "with_answers",
]
