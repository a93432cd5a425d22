"""An OpenAI Agents SDK ``Session`` backed by this toolkit's session log.

`LogSession` implements the SDK's session protocol (``get_items``, ``add_items``, ``pop_item``,
``clear_session``) over a `compaction.Session`, and the SDK's compaction hook
(``run_compaction``, which the `agents.Runner` calls after each turn on a session that has it)
with this toolkit's compactor and Checkpoint.

How the protocol maps onto an append-only log (the log is the one source of truth; the SDK's
items are a view of it):

- ``add_items``: each item becomes a `message` event (a user or assistant message, a
  ``function_call`` as an assistant tool call, a ``function_call_output`` as its `tool` result,
  any other item as an assistant message with no text), and the item itself is kept verbatim in
  the message's ``provider_fields["agents_item"]``, so ``get_items`` gives back exactly what the
  SDK stored.
- ``get_items``: the log's context view, as items: after a compaction, the Checkpoint first (as
  a user message item), then the kept messages.
- ``pop_item``: a `message/retract` tombstone naming the newest message of the context; the log
  keeps the message, the context view (and the next ``get_items``) no longer has it.
- ``clear_session``: one `message/retract` tombstone naming every message of the context; an
  earlier checkpoint's span stays folded and the checkpoint itself is no longer shown.
- ``run_compaction``: `compaction.maybe_compact` under the adapter's `CompactionPolicy`
  (``force`` in the SDK's arguments compacts even below the threshold); the todo list in the log
  is carried into Pending Jobs and Current Work by code. The Runner calls this hook after a
  model response that carries a response id (the Responses API); with a model that gives none
  (chat completions), call ``await session.run_compaction()`` after each run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from agents import OpenAIResponsesCompactionArgs, SessionSettings, TResponseInputItem

from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    FunctionCall,
    Message,
    RetractData,
    ToolCall,
    compact,
    maybe_compact,
)
from compaction import Session as LogBackedSession

ITEM_FIELD = "agents_item"
"""The provider field that keeps an SDK item verbatim."""

CLEARED = "clear_session"
POPPED = "pop_item"


class LogSession:
    """An Agents SDK session whose history is a Context Harness session log.

    Args:
        session_id: the SDK's session id.
        path: the JSONL log (created on first write, replayed when it exists).
        policy: when ``run_compaction`` compacts (default `CompactionPolicy()`).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self, session_id: str, path: Path | str, *, policy: CompactionPolicy | None = None
    ) -> None:
        self.session_id = session_id
        self.log = LogBackedSession(path)
        self.policy = policy or CompactionPolicy()
        self.compactions: list[CompactionResult] = []
        self._lock = asyncio.Lock()

    def close(self) -> None:
        """Close the log."""
        self.log.close()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """Return the context view as SDK items (the newest `limit` when given)."""
        window = self.log.context
        items: list[TResponseInputItem] = []
        if window.checkpoint is not None:
            items.append(
                cast(TResponseInputItem, {"role": "user", "content": window.checkpoint.text})
            )
        items += [item_of(m) for m in window.messages]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append each item as a `message` event, the item kept verbatim."""
        if not items:
            return
        async with self._lock:
            self.log.append_many([message_of(item) for item in items])

    async def pop_item(self) -> TResponseInputItem | None:
        """Retract the newest message of the context (a tombstone); return its item."""
        async with self._lock:
            window = self.log.context
            if not window.messages:
                return None
            self.log.append(RetractData(seqs=(window.seqs[-1],), reason=POPPED))
            return item_of(window.messages[-1])

    async def clear_session(self) -> None:
        """Retract every message of the context (one tombstone); the log keeps them all."""
        async with self._lock:
            seqs = self.log.context.seqs
            if seqs:
                self.log.append(RetractData(seqs=seqs, reason=CLEARED))

    async def run_compaction(self, args: OpenAIResponsesCompactionArgs | None = None) -> None:
        """The SDK's compaction hook: compact the log when the policy says (or when forced)."""
        force = bool(args.get("force")) if args else False
        async with self._lock:
            try:
                result = (
                    compact(self.log, self.policy, force=True)
                    if force
                    else maybe_compact(self.log, self.policy)
                )
            except CompactionError as exc:
                if exc.code in ("below_threshold", "nothing_to_compact", "no_safe_cut"):
                    return
                raise
            if result is not None:
                self.compactions.append(result)


def _text(content: object) -> str | None:
    """The text of an item's content: a string, or its text parts joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(t for t in texts if isinstance(t, str))
    return json.dumps(content, ensure_ascii=False)


def message_of(item: TResponseInputItem | Mapping[str, Any]) -> Message:
    """Return the `Message` that records one SDK item (the item kept in its provider fields)."""
    dump = getattr(item, "model_dump", None)
    raw: object = dump(mode="json", exclude_none=True) if callable(dump) else item
    data: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {"content": str(raw)}
    keep: dict[str, Any] = {ITEM_FIELD: data}
    kind, role = data.get("type"), data.get("role")
    if kind == "function_call":
        call = ToolCall(
            id=str(data.get("call_id")),
            function=FunctionCall(name=str(data.get("name")), arguments=str(data.get("arguments"))),
        )
        return Message(role="assistant", tool_calls=(call,), provider_fields=keep)
    if kind == "function_call_output":
        output = _text(data.get("output")) or ""
        return Message(
            role="tool", tool_call_id=str(data.get("call_id")), content=output, provider_fields=keep
        )
    if role in ("user", "system", "developer"):
        mapped = "user" if role == "user" else "system"
        return Message(role=mapped, content=_text(data.get("content")), provider_fields=keep)
    return Message(role="assistant", content=_text(data.get("content")), provider_fields=keep)


def item_of(message: Message) -> TResponseInputItem:
    """Return the SDK item a message records (the verbatim item, or one built from the message)."""
    kept = (message.provider_fields or {}).get(ITEM_FIELD)
    if isinstance(kept, dict):
        if message.role == "tool" and isinstance(kept.get("output"), str):
            # The context view may show a huge output clipped: the model gets what it shows.
            return cast(TResponseInputItem, {**kept, "output": message.text()})
        return cast(TResponseInputItem, kept)
    if message.role == "tool":
        output = {"type": "function_call_output", "call_id": message.tool_call_id}
        return cast(TResponseInputItem, {**output, "output": message.text()})
    return cast(TResponseInputItem, {"role": message.role, "content": message.text()})
