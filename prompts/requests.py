"""Request assembly: a mode's prompt plus a session's context view, as a provider request.

Two formats. OpenAI chat completions (what DeepSeek, vLLM, SGLang and many others speak):
``{"model"?, "messages": [system, ...], "tools": [...]}``. Anthropic messages:
``{"model"?, "max_tokens"?, "system": [text blocks], "tools": [...], "messages": [...]}``, with
two ``cache_control`` breakpoints (the API allows 4): one on the last stable system block, so the
tools and the stable layers are cached across turns and modes, and a rolling one on the last
block of the last message, so each call reads the whole previous request from the cache and
writes its own; OpenAI's ``tool_calls`` / ``tool`` messages are translated into ``tool_use`` /
``tool_result`` blocks. `cache_breakpoints` reads back where a request's breakpoints are.

The messages come from the log's context view (`compaction.ContextWindow`): system messages
recorded in the log follow the built system prompt; then the checkpoint, as one user message;
then the kept messages.

Invariants: requests are plain JSON data; `dumps` serializes them with sorted keys, so the same
inputs always give the same bytes, and nothing in them depends on the clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compaction import ContextWindow, ImagePart, Message, Session, TextPart
from compaction.backends import with_block_first
from prompts.builder import PromptBuilder, PromptLayers
from prompts.modes import Mode
from prompts.responses import provider_conversation

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
"""Anthropic's cache breakpoint, set on the last stable system block and the last message."""

MAX_CACHE_BREAKPOINTS = 4
"""Anthropic's limit of ``cache_control`` blocks per request."""


def dumps(request: object, *, indent: int | None = None) -> str:
    """Serialize a request deterministically: sorted keys, UTF-8 text, fixed separators."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(
        request, indent=indent, sort_keys=True, ensure_ascii=False, separators=separators
    )


def _window(context: ContextWindow | Session | None) -> ContextWindow:
    if context is None:
        return ContextWindow()
    return context.context if isinstance(context, Session) else context


def _conversation(window: ContextWindow) -> list[Message]:
    """Return the checkpoint message (if any) and the kept messages, without system messages."""
    return window.as_messages()[len(window.system) :]


# --- OpenAI chat completions ------------------------------------------------------------------


def openai_message(message: Message) -> dict[str, Any]:
    """Return a message as an OpenAI chat-completions message param."""
    out: dict[str, Any] = {"role": message.role}
    if isinstance(message.content, tuple):
        out["content"] = [p.model_dump(mode="json", exclude_none=True) for p in message.content]
    elif message.content is not None or message.role != "assistant":
        out["content"] = message.content if message.content is not None else ""
    if message.tool_calls:
        out["tool_calls"] = [c.model_dump(mode="json") for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role != "tool":
        out["name"] = message.name
    return out


def openai_request(
    builder: PromptBuilder,
    mode: Mode,
    context: ContextWindow | Session | None = None,
    *,
    model: str | None = None,
) -> dict[str, Any]:
    """Return the OpenAI chat-completions request for `mode` over a context view.

    Args:
        builder: lays out the system prompt and the tool catalog.
        mode: the mode the system prompt is built for.
        context: the log's context view (or a session); None for the prompt alone.
        model: the model name, included when given.
    """
    layers = builder.layers(mode)
    window = _window(context)
    messages = [{"role": "system", "content": layers.system_prompt}]
    messages += [openai_message(m) for m in window.system]
    messages += [openai_message(m) for m in _conversation(window)]
    request: dict[str, Any] = {"messages": messages}
    if model is not None:
        request["model"] = model
    if layers.tools:
        request["tools"] = [t.openai() for t in layers.tools]
    return request


# --- Anthropic messages -----------------------------------------------------------------------


def _image_block(part: ImagePart) -> dict[str, Any]:
    url = part.image_url.url
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:") :].split(";base64,", 1)
        source = {"type": "base64", "media_type": media_type, "data": data}
        return {"type": "image", "source": source}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _content_blocks(message: Message) -> list[dict[str, Any]]:
    """Return a message's content as Anthropic text and image blocks (empty text dropped)."""
    if message.content is None:
        return []
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append(_image_block(part))
    return blocks


def _tool_input(arguments: str) -> dict[str, Any]:
    """Return tool-call arguments as the object `tool_use.input` needs.

    Arguments that are not a JSON object are kept verbatim under ``_raw_arguments``.
    """
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"_raw_arguments": arguments}


def _anthropic_turn(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """Return the Anthropic role and blocks of one OpenAI-style message.

    Of the provider fields, only what the format needs goes back: a result's ``is_error``, and
    the ``thinking`` blocks an assistant turn with tool calls began with (Anthropic requires
    them back, signature and all, while the tool loop runs).
    """
    extra = message.provider_fields or {}
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        blocks = _content_blocks(message)
        if blocks:
            result["content"] = blocks
        if extra.get("is_error") is True:
            result["is_error"] = True
        return "user", [result]
    thinking = extra.get("thinking") if message.role == "assistant" else None
    blocks = (
        [dict(b) for b in thinking if isinstance(b, dict)] if isinstance(thinking, list) else []
    )
    blocks += _content_blocks(message)
    for call in message.tool_calls or ():
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.function.name,
                "input": _tool_input(call.function.arguments),
            }
        )
    return ("assistant" if message.role == "assistant" else "user"), blocks


def anthropic_message_sources(messages: Sequence[Message]) -> list[int]:
    """Return, for each message `anthropic_messages` makes, the index of its last source message.

    Anthropic message ``k`` holds the blocks of the OpenAI-style messages after source
    ``result[k - 1]`` up to and including ``result[k]`` (that are not dropped).
    """
    return [last for _, _, last in _anthropic_groups(messages)]


def _anthropic_groups(messages: Sequence[Message]) -> list[tuple[str, list[dict[str, Any]], int]]:
    """Group messages into alternating Anthropic turns: (role, blocks, index of last source)."""
    out: list[tuple[str, list[dict[str, Any]], int]] = []
    for i, message in enumerate(messages):
        if message.role == "system":
            continue
        role, blocks = _anthropic_turn(message)
        if not blocks:
            continue
        if out and out[-1][0] == role:
            out[-1] = (role, out[-1][1] + blocks, i)
        else:
            out.append((role, blocks, i))
    return out


def anthropic_messages(
    messages: Sequence[Message], *, rolling_breakpoint: bool = False
) -> list[dict[str, Any]]:
    """Translate OpenAI-style messages into Anthropic messages.

    ``tool_calls`` become ``tool_use`` blocks; each ``tool`` message becomes a ``tool_result``
    block in a user message; consecutive messages of the same role merge into one, so roles
    alternate and the results of one assistant turn sit together in the next user message.
    System messages are not translated here (they belong in ``system``). Messages with no
    content at all are dropped. With `rolling_breakpoint`, the last block of the last message
    carries ``cache_control``.
    """
    out: list[dict[str, Any]] = [
        {"role": role, "content": blocks} for role, blocks, _ in _anthropic_groups(messages)
    ]
    if rolling_breakpoint and out:
        last: list[dict[str, Any]] = out[-1]["content"]
        last[-1] = {**last[-1], "cache_control": dict(CACHE_CONTROL)}
    return out


BreakpointSection = Literal["tools", "system", "messages"]


@dataclass(frozen=True)
class CacheBreakpoint:
    """Where one ``cache_control`` sits in an Anthropic request."""

    section: BreakpointSection
    """The part of the request: ``tools``, ``system`` or ``messages``."""
    index: int
    """The tool, the system block or the message that carries it."""
    block: int = 0
    """For a message, the content block that carries it."""


def cache_breakpoints(request: Mapping[str, Any]) -> tuple[CacheBreakpoint, ...]:
    """Return the ``cache_control`` breakpoints of an Anthropic request, in prefix order.

    Anthropic reads a request as tools, then system, then messages; the order here is the same.

    Raises:
        ValueError: the request holds more breakpoints than the API allows (4).
    """
    found: list[CacheBreakpoint] = []
    for i, tool in enumerate(request.get("tools") or ()):
        if "cache_control" in tool:
            found.append(CacheBreakpoint("tools", i))
    system = request.get("system")
    for i, block in enumerate(system if isinstance(system, list) else ()):
        if "cache_control" in block:
            found.append(CacheBreakpoint("system", i))
    for i, message in enumerate(request.get("messages") or ()):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, Mapping) and "cache_control" in block:
                found.append(CacheBreakpoint("messages", i, j))
    if len(found) > MAX_CACHE_BREAKPOINTS:
        raise ValueError(
            f"{len(found)} cache_control breakpoints; Anthropic allows {MAX_CACHE_BREAKPOINTS}"
        )
    return tuple(found)


def anthropic_system(layers: PromptLayers, window: ContextWindow) -> list[dict[str, Any]]:
    """Return the system blocks: core, mode, environment, then system messages from the log.

    The last of the stable layers (the mode block; the core block when the mode block is
    empty) carries the cache breakpoint, so the tools and the stable layers are cached across
    turns and the environment after it may change without invalidating them.
    """
    stable = [b for b in (layers.core, layers.mode) if b]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in stable]
    if blocks:
        blocks[-1]["cache_control"] = dict(CACHE_CONTROL)
    if layers.environment:
        blocks.append({"type": "text", "text": layers.environment})
    for message in window.system:
        blocks += _content_blocks(message)
    return blocks


def anthropic_request(
    builder: PromptBuilder,
    mode: Mode,
    context: ContextWindow | Session | None = None,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    compact_trigger: int | None = None,
    clear_tool_uses: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the Anthropic messages request for `mode` over a context view.

    It carries two cache breakpoints: the last stable system block and the last block of the
    last message (the rolling one); `cache_breakpoints` reads them back. After an ``anthropic``
    backend compaction, the messages open with its compaction block (in an assistant turn),
    then the code-owned sections, then the kept tail.

    Args:
        builder: lays out the system prompt and the tool catalog.
        mode: the mode the system prompt is built for.
        context: the log's context view (or a session); None for the prompt alone.
        model: the model name, included when given.
        max_tokens: the output limit, included when given (the API requires it).
        compact_trigger: turn on server-side compaction past this many input tokens (the
            ``compact_20260112`` edit; send the ``anthropic-beta: compact-2026-01-12`` header).
        clear_tool_uses: a ``clear_tool_uses_20250919`` edit (`clear_tool_uses_edit`), for
            server-side clearing of old tool results (beta ``context-management-2025-06-27``).
    """
    layers = builder.layers(mode)
    window = _window(context)
    block, conversation = provider_conversation(window, "anthropic")
    messages = anthropic_messages(conversation, rolling_breakpoint=True)
    request: dict[str, Any] = {
        "system": anthropic_system(layers, window),
        "messages": with_block_first(block, messages) if block is not None else messages,
    }
    if layers.tools:
        request["tools"] = [t.anthropic() for t in layers.tools]
    if model is not None:
        request["model"] = model
    if max_tokens is not None:
        request["max_tokens"] = max_tokens
    edits: list[dict[str, Any]] = [dict(clear_tool_uses)] if clear_tool_uses else []
    if compact_trigger is not None:
        trigger = {"type": "input_tokens", "value": compact_trigger}
        edits.append({"type": "compact_20260112", "trigger": trigger})
    if edits:
        request["context_management"] = {"edits": edits}
    return request


def clear_tool_uses_edit(
    *, keep: int = 3, trigger_tokens: int = 100_000, clear_at_least: int | None = None
) -> dict[str, Any]:
    """Return Anthropic's ``clear_tool_uses_20250919`` edit: keep the latest `keep` tool uses.

    The server clears older tool results once the input passes `trigger_tokens`, and only when
    at least `clear_at_least` tokens would go (so a cleared cache prefix pays for itself).
    """
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "keep": {"type": "tool_uses", "value": keep},
        "trigger": {"type": "input_tokens", "value": trigger_tokens},
    }
    if clear_at_least is not None:
        edit["clear_at_least"] = {"type": "input_tokens", "value": clear_at_least}
    return edit
