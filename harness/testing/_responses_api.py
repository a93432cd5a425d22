"""The stand-in model's OpenAI Responses and compaction answers, served by `stub_model`.

Shapes as the ``openai`` and ``anthropic`` SDKs define them:

- ``POST /v1/responses``: a ``response`` whose ``output`` holds a ``message`` item (its text as
  ``output_text``) and a ``function_call`` item per tool call. With ``context_management:
  [{"type": "compaction", "compact_threshold": N}]`` and an input of at least N tokens, the
  output opens with a ``compaction`` item (server-side compaction).
- ``POST /v1/responses`` whose input ends with ``{"type": "compaction_trigger"}`` (the newer
  form): the output opens with a ``compaction`` item, whatever the input's length.
- ``POST /v1/messages`` with the top-level ``compaction: {"type": "summarize"}`` (on-demand,
  beta ``compact-2026-09-04``): a ``compaction`` block is the whole answer, ``stop_reason:
  "compaction"``.
- ``POST /v1/responses/compact``: a ``response.compaction`` whose ``output`` is the input's user
  messages, then one ``compaction`` item (``encrypted_content``).
- ``POST /v1/messages`` with a ``compact_20260112`` edit and an input of at least its trigger
  (default 150,000 tokens): the content opens with a ``compaction`` block (``content``, the
  summary); with ``pause_after_compaction`` it is the whole answer, ``stop_reason:
  "compaction"``.

The item's ``encrypted_content`` (and the block's summary) is the reply's ``compaction`` text, or
``stub-compaction-<request index>``; ``Reply(compaction="")`` answers without any item.

Invariants: every answer is a pure function of the request, the reply and the request's index.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.testing._replies import Reply


def _tokens_of(request: Mapping[str, Any]) -> int:
    """Return the stub's token estimate of a request's prompt: about four bytes a token."""
    return len(json.dumps(request, ensure_ascii=False, sort_keys=True).encode()) // 4


def compaction_text(reply: Reply, index: int) -> str | None:
    """Return the item's opaque text, or None when the reply asks for no item."""
    if reply.compaction == "":
        return None
    return reply.compaction if reply.compaction is not None else f"stub-compaction-{index}"


def compaction_item(reply: Reply, index: int) -> dict[str, Any] | None:
    """Return the Responses ``compaction`` item for a reply, or None."""
    text = compaction_text(reply, index)
    if text is None:
        return None
    return {"type": "compaction", "id": f"cmp_{index}", "encrypted_content": text}


def responses_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """Return a usage in the Responses shape, its missing fields (``total_tokens``) filled in."""
    if "input_tokens" in usage:
        given, out = usage["input_tokens"], usage.get("output_tokens", 0)
        return {
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": given + out,
            **usage,
        }
    prompt, out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + out,
    }


def _server_side(request: Mapping[str, Any]) -> bool:
    """Tell whether a Responses request compacts: a trigger item last, or past its threshold."""
    items = request.get("input")
    if isinstance(items, list) and items and items[-1] == {"type": "compaction_trigger"}:
        return True
    entries = request.get("context_management")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and entry.get("type") == "compaction":
            threshold = entry.get("compact_threshold")
            if isinstance(threshold, int) and _tokens_of(request) >= threshold:
                return True
    return False


def responses_answer(
    request: Mapping[str, Any], reply: Reply, index: int, usage: Mapping[str, Any], model: str
) -> dict[str, Any]:
    """Return a ``responses.create`` answer."""
    output: list[dict[str, Any]] = []
    item = compaction_item(reply, index) if _server_side(request) else None
    output += [item] if item is not None else []
    if reply.content:
        text = {"type": "output_text", "text": reply.content, "annotations": []}
        output.append(
            {
                "type": "message",
                "id": f"msg_{index}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    for i, call in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{index}_{i}",
                "call_id": call.id or f"call_{index}_{i}",
                "name": call.name,
                "arguments": call.arguments_text(),
                "status": "completed",
            }
        )
    return {
        "id": f"resp_{index}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": responses_usage(usage),
    }


def compact_answer(
    request: Mapping[str, Any], reply: Reply, index: int, usage: Mapping[str, Any]
) -> dict[str, Any]:
    """Return a ``responses.compact`` answer: the input's user messages, then the item."""
    items = request.get("input")
    output: list[dict[str, Any]] = []
    for i, entry in enumerate(items if isinstance(items, list) else []):
        if isinstance(entry, Mapping) and entry.get("role") == "user":
            content = entry.get("content")
            text = content if isinstance(content, str) else ""
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{index}_{i}",
                    "role": "user",
                    "status": "completed",
                    "content": [{"type": "input_text", "text": text}],
                }
            )
    item = compaction_item(reply, index)
    output += [item] if item is not None else []
    return {
        "id": f"cmp_resp_{index}",
        "object": "response.compaction",
        "created_at": 0,
        "output": output,
        "usage": responses_usage(usage),
    }


def compaction_edit(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return a messages request's ``compact_20260112`` edit when its trigger is passed."""
    management = request.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, Mapping) and edit.get("type") == "compact_20260112":
            trigger = edit.get("trigger")
            value = trigger.get("value") if isinstance(trigger, Mapping) else None
            if _tokens_of(request) >= (value if isinstance(value, int) else 150_000):
                return edit
    return None


def anthropic_compaction(
    request: Mapping[str, Any], reply: Reply, index: int
) -> tuple[dict[str, Any] | None, bool]:
    """Return the compaction block a messages answer opens with (or None), and whether it pauses."""
    on_demand = request.get("compaction")
    if isinstance(on_demand, Mapping) and on_demand.get("type") == "summarize":
        text = compaction_text(reply, index)
        return (None, False) if text is None else ({"type": "compaction", "content": text}, True)
    edit = compaction_edit(request)
    if edit is None:
        return None, False
    text = compaction_text(reply, index)
    if text is None:
        return None, False
    return {"type": "compaction", "content": text}, edit.get("pause_after_compaction") is True
