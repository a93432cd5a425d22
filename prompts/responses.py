"""OpenAI Responses API requests, and the provider view after a provider compaction.

`responses_request` lays a mode's prompt and a context view out as a ``responses.create`` body
with the stable-prefix layout of the other formats: ``tools`` (the catalog), ``instructions``
(core, mode, environment: the system prompt), then ``input``: the system messages the log
recorded, the checkpoint, the kept messages. Chat messages become input items:
text messages ``{"type": "message", "role", "content"}``, each tool call a ``function_call``
item, each tool result a ``function_call_output`` item.

After a provider compaction (`compaction.backends`) the checkpoint enters the request of the
provider that made it as its opaque item, then one user message with the code-owned sections
(Pending Jobs, Current Work, the way back to the span), then the kept tail; every other format
gets the local Checkpoint. `compact_threshold` turns on OpenAI's server-side compaction
(``context_management``); a response that carries a ``compaction`` item is recorded with
`prompts.record_server_compaction`.

Invariants: requests are plain JSON data, a pure function of the builder, the mode and the log;
a tool call's item follows its assistant text, and its result's item follows the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from compaction import ContextWindow, ImagePart, Message, Session
from compaction.backends import code_owned_message, provider_item
from prompts.builder import PromptBuilder
from prompts.catalog import ToolSpec
from prompts.modes import Mode

RESPONSES_BACKEND: Final = "openai-responses"
"""The backend whose items a Responses request carries."""


def responses_tool(spec: ToolSpec) -> dict[str, Any]:
    """Return a tool as a Responses function tool (``strict`` is required there: null if unset)."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": spec.strict,
    }


def _content(message: Message) -> str | list[dict[str, Any]]:
    """Return a message's content as Responses input content (text, or input parts)."""
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    if message.role == "assistant":
        return message.text()
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ImagePart):
            parts.append({"type": "input_image", "image_url": part.image_url.url, "detail": "auto"})
        else:
            parts.append({"type": "input_text", "text": part.text})
    return parts


def responses_items(message: Message) -> list[dict[str, Any]]:
    """Return one chat message as Responses input items."""
    if message.role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": message.text(),
            }
        ]
    items: list[dict[str, Any]] = []
    content = _content(message)
    if content or not message.tool_calls:
        items.append({"type": "message", "role": message.role, "content": content})
    for call in message.tool_calls or ():
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.function.name,
                "arguments": call.function.arguments,
            }
        )
    return items


def responses_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Return chat messages as Responses input items, in order."""
    return [item for message in messages for item in responses_items(message)]


def _window(context: ContextWindow | Session | None) -> ContextWindow:
    if context is None:
        return ContextWindow()
    return context.context if isinstance(context, Session) else context


def provider_conversation(
    window: ContextWindow, backend: str
) -> tuple[dict[str, Any] | None, list[Message]]:
    """Return the item `backend` made (or None) and the messages after the system messages.

    With an item, the messages are the code-owned message, then the kept tail; without one,
    the local Checkpoint message, then the kept tail.
    """
    item = provider_item(window.checkpoint, backend)
    if item is None or window.checkpoint is None:
        return None, window.as_messages()[len(window.system) :]
    return item, [code_owned_message(window.checkpoint), *window.messages]


def responses_request(
    builder: PromptBuilder,
    mode: Mode,
    context: ContextWindow | Session | None = None,
    *,
    model: str | None = None,
    compact_threshold: int | None = None,
) -> dict[str, Any]:
    """Return the OpenAI Responses request for `mode` over a context view.

    Args:
        builder: lays out the system prompt and the tool catalog.
        mode: the mode the system prompt is built for.
        context: the log's context view (or a session); None for the prompt alone.
        model: the model name, included when given.
        compact_threshold: turn on server-side compaction past this many tokens
            (``context_management: [{"type": "compaction", "compact_threshold": N}]``).
    """
    layers = builder.layers(mode)
    window = _window(context)
    item, messages = provider_conversation(window, RESPONSES_BACKEND)
    items = responses_input(window.system)
    items += [item] if item is not None else []
    items += responses_input(messages)
    request: dict[str, Any] = {"instructions": layers.system_prompt, "input": items}
    if layers.tools:
        request["tools"] = [responses_tool(t) for t in layers.tools]
    if model is not None:
        request["model"] = model
    if compact_threshold is not None:
        request["context_management"] = [
            {"type": "compaction", "compact_threshold": compact_threshold}
        ]
    return request
