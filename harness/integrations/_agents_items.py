"""Agents SDK items ⇄ the log's messages: checked on the way in, shown as the model saw them.

An item the SDK hands `LogSession.add_items` is untrusted input: it must be a mapping (or an
SDK model with ``model_dump``) with a known shape, a message with a ``role``, or a ``type`` the
SDK uses; a ``function_call`` needs ``call_id`` and ``name``, a ``function_call_output`` needs
``call_id``. Anything else raises `compaction.MessageError` naming the field (``items[2]``,
``items[0].call_id``), checked for every item before anything is appended.

On the way out (`item_of`) the verbatim item comes back, except a tool output the session
clipped: the model sees the clipped text (head, note, tail), so that is what ``get_items``
returns too. The Checkpoint is one user item with the preamble, as the log's view shows it.

Invariants: `message_of` either returns a `Message` or raises `MessageError`; `item_of` of a
logged message is the stored item, with only a clipped output changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from agents import TResponseInputItem

from compaction import (
    CheckpointData,
    FunctionCall,
    Message,
    MessageError,
    ToolCall,
)
from compaction.views import checkpoint_message

ITEM_FIELD: Final = "agents_item"
"""The provider field that keeps an SDK item verbatim."""
ROLES: Final = frozenset({"user", "assistant", "system", "developer"})
"""Roles of an SDK message item."""


def _text(content: object) -> str | None:
    """The text of an item's content: a string, or its text parts joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(t for t in texts if isinstance(t, str))
    return json.dumps(content, ensure_ascii=False)


def item_data(item: object, where: str = "item") -> dict[str, Any]:
    """Return an SDK item as a plain dict, or raise `MessageError` naming `where`."""
    dump = getattr(item, "model_dump", None)
    raw: object = dump(mode="json", exclude_none=True) if callable(dump) else item
    if not isinstance(raw, Mapping):
        raise MessageError(where, f"an Agents SDK item must be a dict, not {type(raw).__name__}")
    return dict(raw)


def _required(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise MessageError(f"{where}.{key}", f"a {data.get('type')} item needs a string {key}")
    return value


def message_of(
    item: TResponseInputItem | Mapping[str, Any] | object, where: str = "item"
) -> Message:
    """Return the `Message` that records one SDK item (the item kept in its provider fields).

    Raises:
        MessageError: the item is not a dict of a known shape; the error names the field.
    """
    data = item_data(item, where)
    keep: dict[str, Any] = {ITEM_FIELD: data}
    kind, role = data.get("type"), data.get("role")
    if kind == "function_call":
        call = ToolCall(
            id=_required(data, "call_id", where),
            function=FunctionCall(
                name=_required(data, "name", where), arguments=str(data.get("arguments") or "")
            ),
        )
        return Message(role="assistant", tool_calls=(call,), provider_fields=keep)
    if kind == "function_call_output":
        call_id = _required(data, "call_id", where)
        output = _text(data.get("output")) or ""
        return Message(role="tool", tool_call_id=call_id, content=output, provider_fields=keep)
    if role is not None:
        if not isinstance(role, str) or role not in ROLES:
            raise MessageError(f"{where}.role", f"must be one of {sorted(ROLES)}, not {role!r}")
        mapped = "assistant" if role == "assistant" else "user" if role == "user" else "system"
        return Message(role=mapped, content=_text(data.get("content")), provider_fields=keep)
    if not isinstance(kind, str) or not kind:
        raise MessageError(where, "an Agents SDK item needs a 'role' or a 'type'")
    # Reasoning, hosted tool calls and the like: kept verbatim, no text in the context.
    return Message(role="assistant", content=None, provider_fields=keep)


def messages_of(items: Sequence[object]) -> list[Message]:
    """Return the messages of a batch of items, every one checked before any is returned."""
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise MessageError("items", f"must be a list of items, not {type(items).__name__}")
    return [message_of(item, f"items[{i}]") for i, item in enumerate(items)]


def item_of(message: Message) -> TResponseInputItem:
    """Return the SDK item a context message shows (a clipped output as the model saw it)."""
    kept = (message.provider_fields or {}).get(ITEM_FIELD)
    if isinstance(kept, dict):
        if message.role == "tool" and _text(kept.get("output")) != message.text():
            return cast(TResponseInputItem, {**kept, "output": message.text()})
        return cast(TResponseInputItem, kept)
    if message.role == "tool":
        output = {"type": "function_call_output", "call_id": message.tool_call_id}
        return cast(TResponseInputItem, {**output, "output": message.text()})
    return cast(TResponseInputItem, {"role": message.role, "content": message.text()})


def output_ids(items: Sequence[object]) -> list[str]:
    """Return the call ids of the ``function_call_output`` items among `items`."""
    return [
        str(item["call_id"])
        for item in items
        if isinstance(item, Mapping)
        and item.get("type") == "function_call_output"
        and "call_id" in item
    ]


def checkpoint_item(checkpoint: CheckpointData) -> TResponseInputItem:
    """Return the Checkpoint as the model reads it: one user item, preamble first."""
    text = checkpoint_message(checkpoint).text()
    return cast(TResponseInputItem, {"role": "user", "content": text})


def item_key(item: object) -> str:
    """Return a stable key of an item's content, to tell whether the log holds it already."""
    try:
        data = item_data(item)
    except MessageError:
        return repr(item)
    return json.dumps(data, sort_keys=True, default=str)
