"""Chat messages as the official SDKs return them, turned into this toolkit's `Message`.

`from_openai` reads an ``openai`` ``ChatCompletionMessage`` (or its ``model_dump()``, or a
chat-completions message param); `from_anthropic` reads an ``anthropic`` ``Message``, a message
param, or one content block (``text``, ``tool_use``, ``tool_result``, ``thinking``);
`to_messages` picks between them, which is what `Session.add_message` uses.

Both read by duck typing (an object with ``model_dump``, or a mapping): the SDKs are not
dependencies of this package.

Invariants:
- Nothing the provider sent is silently dropped: a field `Message` does not hold lands in
  `Message.provider_fields` as received (``annotations``, ``refusal``, ``audio``,
  ``reasoning_content``, Anthropic's ``thinking`` blocks, ``id``, ``usage``...); a ``None``
  field is not data and is left out.
- A message that cannot be recorded raises `MessageError` naming the field, never pydantic's
  ``ValidationError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from compaction.errors import MessageError
from compaction.events import Message

OPENAI_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
"""Chat-completions fields `Message` holds; every other non-null field is a provider field."""

ANTHROPIC_BLOCKS = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image"}
)
"""Anthropic content block types read; other block types are kept as provider fields."""

THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""Blocks an Anthropic request must send back before the ``tool_use`` they led to."""

_ANTHROPIC_ONLY = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
)


def _plain(value: object, what: str) -> dict[str, Any]:
    """Return an SDK object or a mapping as a plain dict of its non-null fields."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # An SDK object holds what the server sent, typed or not (a tool_use input that is a
        # string); the fields are checked below and a bad one is a MessageError, so pydantic's
        # serializer warnings would only print a second, noisier account of the same fault.
        value = dump(mode="json", exclude_none=True, warnings=False)
    if not isinstance(value, Mapping):
        raise MessageError(
            what, f"expected a mapping or an SDK message, not {type(value).__name__}"
        )
    return {str(k): v for k, v in value.items() if v is not None}


def _build(fields: dict[str, Any], where: str = "") -> Message:
    """Validate a `Message`, turning pydantic's errors into `MessageError` naming the field."""
    try:
        return Message.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise MessageError(f"{where}{loc.lstrip('.')}" or "message", first["msg"]) from None


# --- OpenAI ---------------------------------------------------------------------------------


def from_openai(message: object) -> Message:
    """Read an OpenAI chat-completions message (SDK object, its dump, or a message param).

    ``developer`` becomes ``system`` (the original role is kept in the provider fields); a
    content part that is neither text nor an image is kept in the provider fields too.

    Raises:
        MessageError: the message cannot be recorded; the error names the field.
    """
    data = _plain(message, "message")
    extra = {k: v for k, v in data.items() if k not in OPENAI_KEYS}
    fields = {k: v for k, v in data.items() if k in OPENAI_KEYS}
    if fields.get("role") == "developer":
        fields["role"], extra["role"] = "system", "developer"
    if isinstance(fields.get("content"), list):
        parts, others = _openai_parts(fields["content"])
        fields["content"] = parts
        if others:
            extra["content_parts"] = others
    if "tool_calls" in fields:
        fields["tool_calls"] = [
            _openai_call(i, c) for i, c in enumerate(_list(fields, "tool_calls"))
        ]
    if extra:
        fields["provider_fields"] = extra
    return _build(fields)


def _list(fields: Mapping[str, Any], key: str) -> list[Any]:
    value = fields[key]
    if not isinstance(value, list):
        raise MessageError(key, f"expected an array, not {type(value).__name__}")
    return value


def _openai_parts(content: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    parts: list[dict[str, Any]] = []
    others: list[Any] = []
    for i, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise MessageError(f"content[{i}]", "expected a content part object")
        if part.get("type") == "text":
            parts.append({"type": "text", "text": part.get("text")})
        elif part.get("type") == "image_url":
            parts.append({"type": "image_url", "image_url": part.get("image_url")})
        else:
            others.append(dict(part))
    return parts, others


def _openai_call(index: int, call: object) -> dict[str, Any]:
    where = f"tool_calls[{index}]"
    if not isinstance(call, Mapping):
        raise MessageError(where, "expected a tool call object")
    if call.get("type", "function") != "function":
        raise MessageError(
            f"{where}.type", f"only function tool calls can be recorded, not {call.get('type')!r}"
        )
    fn = call.get("function")
    if not isinstance(fn, Mapping):
        raise MessageError(f"{where}.function", "expected an object with name and arguments")
    return {
        "id": call.get("id"),
        "function": {"name": fn.get("name"), "arguments": fn.get("arguments")},
    }


# --- Anthropic ------------------------------------------------------------------------------


def from_anthropic(message: object) -> tuple[Message, ...]:
    """Read an Anthropic message (SDK ``Message``, its dump, a message param) or content block.

    An assistant message becomes one message: text blocks its content, ``tool_use`` blocks its
    tool calls, ``thinking`` blocks (and the message's ``id``, ``model``, ``usage``...) its
    provider fields. A user message becomes one `tool` message per ``tool_result`` block (its
    ``is_error`` kept), then one user message with the rest. A lone content block is read as
    the message it belongs to: ``tool_result`` a user's, any other an assistant's.

    Raises:
        MessageError: the message cannot be recorded; the error names the field.
    """
    data = _plain(message, "message")
    if "role" not in data and data.get("type") != "message":
        block_role = "user" if data.get("type") == "tool_result" else "assistant"
        data = {"role": block_role, "content": [data]}
    role = data.get("role")
    content = data.get("content")
    extra = {k: v for k, v in data.items() if k not in ("role", "content")}
    if isinstance(content, str) or content is None:
        fields: dict[str, Any] = {"role": role, "content": content}
        return (_build({**fields, "provider_fields": extra or None}),)
    if not isinstance(content, list):
        raise MessageError(
            "content", f"expected text or an array of blocks, not {type(content).__name__}"
        )
    if role == "assistant":
        return (_anthropic_assistant(content, extra),)
    if role == "user":
        return _anthropic_user(content, extra)
    raise MessageError("role", f"an Anthropic message is from user or assistant, not {role!r}")


def _blocks(content: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        plain = _plain(block, f"content[{i}]")
        if not isinstance(plain.get("type"), str):
            raise MessageError(f"content[{i}].type", "a content block needs a type")
        out.append(plain)
    return out


def _anthropic_assistant(content: list[Any], extra: dict[str, Any]) -> Message:
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for i, block in enumerate(_blocks(content)):
        kind = block["type"]
        if kind == "text":
            texts.append({"type": "text", "text": block.get("text")})
            if block.get("citations"):
                others.append(block)
        elif kind == "tool_use":
            calls.append(_tool_use(i, block))
        elif kind in THINKING_BLOCKS:
            thinking.append(block)
        else:
            others.append(block)
    extra = {**extra, **({"thinking": thinking} if thinking else {})}
    extra |= {"blocks": others} if others else {}
    fields: dict[str, Any] = {"role": "assistant", "content": _joined(texts)}
    fields["tool_calls"] = calls or None
    fields["provider_fields"] = extra or None
    return _build(fields)


def _tool_use(index: int, block: Mapping[str, Any]) -> dict[str, Any]:
    args = block.get("input", {})
    if not isinstance(args, Mapping):
        raise MessageError(f"content[{index}].input", "tool_use input must be an object")
    arguments = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return {"id": block.get("id"), "function": {"name": block.get("name"), "arguments": arguments}}


def _joined(parts: Sequence[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """One text part is plain text; several stay parts; none is no content."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0]["type"] == "text":
        text: str | None = parts[0]["text"]
        return text
    return list(parts)


def _anthropic_user(content: list[Any], extra: dict[str, Any]) -> tuple[Message, ...]:
    out: list[Message] = []
    rest: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for i, block in enumerate(_blocks(content)):
        kind = block["type"]
        if kind == "tool_result":
            out.append(_tool_result(i, block))
        elif kind == "text":
            rest.append({"type": "text", "text": block.get("text")})
        elif kind == "image":
            rest.append(_image(i, block))
        else:
            others.append(block)
    if rest or others or not out:
        fields: dict[str, Any] = {"role": "user", "content": _joined(rest)}
        extra = {**extra, **({"blocks": others} if others else {})}
        out.append(_build({**fields, "provider_fields": extra or None}))
    return tuple(out)


def _tool_result(index: int, block: Mapping[str, Any]) -> Message:
    where = f"content[{index}]."
    body = block.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(body, list):
        for j, inner in enumerate(_blocks(body)):
            if inner["type"] == "image":
                parts.append(_image(j, inner))
            elif inner["type"] == "text":
                parts.append({"type": "text", "text": inner.get("text")})
    text: Any = body if isinstance(body, str) or body is None else _joined(parts)
    fields: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": block.get("tool_use_id"),
        "content": text,
    }
    if block.get("is_error"):
        fields["provider_fields"] = {"is_error": True}
    return _build(fields, where)


def _image(index: int, block: Mapping[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64":
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    elif isinstance(source, Mapping) and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        raise MessageError(f"content[{index}].source", "an image needs a base64 or url source")
    return {"type": "image_url", "image_url": {"url": url}}


# --- either -----------------------------------------------------------------------------------


def to_messages(message: object) -> tuple[Message, ...]:
    """Read any message this toolkit accepts: a `Message`, an OpenAI or an Anthropic one.

    An SDK object is told by its package (``openai.*`` or ``anthropic.*``); a mapping is
    Anthropic's when it is a ``message`` object, a lone content block, or holds Anthropic-only
    blocks (``tool_use``, ``tool_result``, ``thinking``...), and OpenAI's otherwise.

    Raises:
        MessageError: the message cannot be recorded; the error names the field.
    """
    if isinstance(message, Message):
        return (message,)
    package = type(message).__module__.split(".", 1)[0]
    if package == "anthropic":
        return from_anthropic(message)
    if package == "openai":
        return (from_openai(message),)
    data = _plain(message, "message")
    return from_anthropic(data) if _looks_anthropic(data) else (from_openai(data),)


def _looks_anthropic(data: Mapping[str, Any]) -> bool:
    if data.get("type") == "message" or (
        "role" not in data and data.get("type") in ANTHROPIC_BLOCKS
    ):
        return True
    content = data.get("content")
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, Mapping) and b.get("type") in _ANTHROPIC_ONLY for b in blocks) or any(
        isinstance(b, Mapping) and b.get("type") == "image" and "source" in b for b in blocks
    )
