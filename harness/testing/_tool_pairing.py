"""The providers' rule that every tool call has its result, checked as they check it.

A request holding a tool call without a result is refused with HTTP 400 by every provider, in
its own words (the bodies below are the real ones):

- OpenAI chat completions: "An assistant message with 'tool_calls' must be followed by tool
  messages responding to each 'tool_call_id'. The following tool_call_ids did not have response
  messages: call_x";
- Anthropic messages: "messages.N: `tool_use` ids were found without `tool_result` blocks
  immediately after: toolu_x. Each `tool_use` block must have a corresponding `tool_result`
  block in the next message.";
- OpenAI Responses: "No tool output found for function call call_x.".

Invariants: `unanswered_ids` reads the decoded request only; an empty list means the request
pairs every call with its result, in the place the API wants it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from harness.testing._prefix_cache import Api

PAIRING_STATUS: Final = 400
"""The status a provider refuses a request with an unanswered call with."""


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _openai(messages: list[Any]) -> list[str]:
    missing: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        ids = [c.get("id") for c in _list(message.get("tool_calls")) if isinstance(c, Mapping)]
        answered: set[object] = set()
        for after in messages[i + 1 :]:
            if not isinstance(after, Mapping) or after.get("role") != "tool":
                break
            answered.add(after.get("tool_call_id"))
        missing += [str(c) for c in ids if c not in answered]
    return missing


def _blocks(message: object, kind: str, key: str) -> list[object]:
    if not isinstance(message, Mapping):
        return []
    blocks = _list(message.get("content"))
    return [b.get(key) for b in blocks if isinstance(b, Mapping) and b.get("type") == kind]


def _anthropic(messages: list[Any]) -> list[str]:
    missing: list[str] = []
    for i, message in enumerate(messages):
        uses = _blocks(message, "tool_use", "id")
        if not uses:
            continue
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = set(_blocks(following, "tool_result", "tool_use_id"))
        missing += [str(u) for u in uses if u not in answered]
    return missing


def _responses(items: list[Any]) -> list[str]:
    kinds = [(i.get("type"), i.get("call_id")) for i in items if isinstance(i, Mapping)]
    calls = [c for kind, c in kinds if kind == "function_call"]
    outputs = {c for kind, c in kinds if kind == "function_call_output"}
    return [str(c) for c in calls if c not in outputs]


def unanswered_ids(api: Api, request: Mapping[str, Any]) -> list[str]:
    """Return the ids of the tool calls `request` holds without their results, in order."""
    if api == "openai":
        return _openai(_list(request.get("messages")))
    if api == "anthropic":
        return _anthropic(_list(request.get("messages")))
    if api in ("responses", "responses_compact"):
        return _responses(_list(request.get("input")))
    return []


def pairing_body(api: Api, ids: list[str]) -> bytes:
    """Return the provider's refusal body of a request holding the unanswered calls `ids`."""
    joined = ", ".join(ids)
    if api == "anthropic":
        message = (
            f"messages: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {joined}. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message."
        )
        error = {"type": "invalid_request_error", "message": message}
        return json.dumps({"type": "error", "error": error}).encode()
    if api == "openai":
        message = (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {joined}"
        )
    else:
        message = f"No tool output found for function call {joined}."
    body = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return json.dumps({"error": body}).encode()
