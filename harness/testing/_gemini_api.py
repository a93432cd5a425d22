"""The stand-in model's Gemini API answers (``generateContent`` and its streamed form).

``POST /v1beta/models/MODEL:generateContent`` gets one ``GenerateContentResponse``: a candidate
whose parts are the reply's text, then one ``functionCall`` part per tool call (``name``,
``args``, and ``id`` when the script gives one), ``finishReason: STOP`` and ``usageMetadata``.
``:streamGenerateContent`` cuts the same answer into chunks (`harness.testing._streams`).

Invariants: every answer is a pure function of the reply, its usage and the model name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.testing._replies import Reply


def model_of(path: str) -> str:
    """Return the model a Gemini path names (``/v1beta/models/M:generateContent`` gives M)."""
    tail = path.split("?", 1)[0].rsplit("/models/", 1)[-1]
    return tail.split(":", 1)[0] or "stub"


def gemini_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """Return a usage of any of the stub's shapes as Gemini's ``usageMetadata``."""
    if "promptTokenCount" in usage:
        return dict(usage)
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0))
    out = usage.get("completion_tokens", usage.get("output_tokens", 0))
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    metadata = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }
    return metadata | ({"cachedContentTokenCount": cached} if cached else {})


def gemini_answer(reply: Reply, usage: Mapping[str, Any], model: str) -> dict[str, Any]:
    """Return a ``generateContent`` answer for `reply`."""
    parts: list[dict[str, Any]] = [{"text": reply.content}] if reply.content else []
    for call in reply.tool_calls:
        function: dict[str, Any] = {"name": call.name, "args": call.arguments_object()}
        function |= {"id": call.id} if call.id else {}
        parts.append({"functionCall": function})
    content = {"parts": parts or [{"text": ""}], "role": "model"}
    finish = reply.finish_reason or "STOP"
    return {
        "candidates": [{"content": content, "finishReason": finish, "index": 0}],
        "usageMetadata": gemini_usage(usage),
        "modelVersion": model,
    }
