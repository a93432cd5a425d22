"""The stand-in model's streamed answers: one whole answer cut into each API's SSE events.

A streamed answer is built from the same answer object the stub sends whole, so a script means
the same thing streamed or not:

- Anthropic Messages: ``message_start``, then per content block ``content_block_start``,
  ``content_block_delta`` (``text_delta`` or ``input_json_delta``), ``content_block_stop``;
  ``message_delta`` (stop reason, output tokens), ``message_stop``.
- OpenAI Responses: ``response.created``, ``response.in_progress``, per output item
  ``response.output_item.added`` ... ``response.output_item.done`` (text through
  ``response.output_text.delta``, a call's arguments through
  ``response.function_call_arguments.delta``), ``response.completed`` with ``usage``.
- Chat completions: ``chat.completion.chunk`` objects (role, content, tool call deltas, the
  finish reason; a usage chunk when ``stream_options.include_usage`` asks for one), then
  ``[DONE]``.
- Gemini: the answer's parts one chunk each, the last with ``finishReason`` and
  ``usageMetadata``.

Invariants: joining a stream's deltas gives back the whole answer's text and arguments; every
event's data is one JSON object on one ``data:`` line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

TEXT_PIECES = 3
"""How many deltas a text is cut into (a client must join them)."""


def sse(event: str | None, data: Mapping[str, Any] | str) -> bytes:
    """Return one server-sent event: an optional ``event:`` line and one ``data:`` line."""
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"{head}data: {body}\n\n".encode()


def pieces(text: str, count: int = TEXT_PIECES) -> list[str]:
    """Cut `text` into at most `count` non-empty pieces, in order."""
    if not text:
        return []
    size = len(text) // count + 1
    return [text[i : i + size] for i in range(0, len(text), size)]


def anthropic_events(answer: Mapping[str, Any]) -> Iterator[bytes]:
    """Yield a messages answer as Anthropic's SSE events."""
    usage = dict(answer.get("usage") or {})
    start = dict(answer, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    yield sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(answer.get("content") or []):
        yield from _anthropic_block(index, block)
    delta = {"stop_reason": answer.get("stop_reason"), "stop_sequence": None}
    out = {"output_tokens": usage.get("output_tokens", 0)}
    yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": out})
    yield sse("message_stop", {"type": "message_stop"})


def _anthropic_block(index: int, block: Mapping[str, Any]) -> Iterator[bytes]:
    kind = block.get("type")
    if kind == "text":
        opened: Mapping[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(str(block.get("text", "")))]
    elif kind == "tool_use":
        opened = dict(block, input={})
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments)]
    else:
        opened, deltas = block, []
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": opened},
    )
    for delta in deltas:
        event = {"type": "content_block_delta", "index": index, "delta": delta}
        yield sse("content_block_delta", event)
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def responses_events(answer: Mapping[str, Any]) -> Iterator[bytes]:
    """Yield a Responses answer as its SSE events, numbered by ``sequence_number``."""
    seq = iter(range(1 << 30))
    opening = dict(answer, status="in_progress", output=[], usage=None)
    for name in ("response.created", "response.in_progress"):
        yield _numbered(name, seq, {"response": opening})
    for index, item in enumerate(answer.get("output") or []):
        yield from _responses_item(index, item, seq)
    yield _numbered("response.completed", seq, {"response": dict(answer)})


def _numbered(name: str, seq: Iterator[int], fields: Mapping[str, Any]) -> bytes:
    return sse(name, {"type": name, "sequence_number": next(seq), **fields})


def _responses_item(index: int, item: Mapping[str, Any], seq: Iterator[int]) -> Iterator[bytes]:
    where = {"output_index": index}
    if item.get("type") == "message":
        opened = dict(item, status="in_progress", content=[])
        yield _numbered("response.output_item.added", seq, {**where, "item": opened})
        for part_index, part in enumerate(item.get("content") or []):
            at = {**where, "item_id": item.get("id"), "content_index": part_index}
            yield from _responses_text(part, at, seq)
    elif item.get("type") == "function_call":
        opened = dict(item, status="in_progress", arguments="")
        yield _numbered("response.output_item.added", seq, {**where, "item": opened})
        at = {**where, "item_id": item.get("id")}
        arguments = str(item.get("arguments", ""))
        for piece in pieces(arguments):
            yield _numbered("response.function_call_arguments.delta", seq, {**at, "delta": piece})
        done = {**at, "arguments": arguments}
        yield _numbered("response.function_call_arguments.done", seq, done)
    else:
        yield _numbered("response.output_item.added", seq, {**where, "item": dict(item)})
    yield _numbered("response.output_item.done", seq, {**where, "item": dict(item)})


def _responses_text(
    part: Mapping[str, Any], at: Mapping[str, Any], seq: Iterator[int]
) -> Iterator[bytes]:
    text = str(part.get("text", ""))
    empty = dict(part, text="")
    yield _numbered("response.content_part.added", seq, {**at, "part": empty})
    for piece in pieces(text):
        fields = {**at, "delta": piece, "logprobs": []}
        yield _numbered("response.output_text.delta", seq, fields)
    yield _numbered("response.output_text.done", seq, {**at, "text": text, "logprobs": []})
    yield _numbered("response.content_part.done", seq, {**at, "part": dict(part)})


def chat_events(answer: Mapping[str, Any], include_usage: bool) -> Iterator[bytes]:
    """Yield a chat-completions answer as ``chat.completion.chunk`` events, then ``[DONE]``."""
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    head = {k: answer[k] for k in ("id", "created", "model") if k in answer}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        entry = {"index": 0, "delta": dict(delta), "finish_reason": finish}
        return sse(None, {**head, "choices": [entry]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(message.get("content") or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        opened = {"id": call.get("id"), "type": "function", "function": {"name": "", **function}}
        opened["function"]["arguments"] = ""
        yield chunk({"tool_calls": [{"index": index, **opened}]})
        for piece in pieces(str(function.get("arguments", ""))):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield sse(None, {**head, "choices": [], "usage": answer.get("usage")})
    yield sse(None, "[DONE]")


def gemini_chunks(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return a Gemini answer as its stream's chunks: one part each, the last one closing it."""
    candidate = (answer.get("candidates") or [{}])[0]
    parts: Sequence[Mapping[str, Any]] = (candidate.get("content") or {}).get("parts") or []
    chunks: list[dict[str, Any]] = []
    for part in parts:
        split = pieces(str(part["text"])) if "text" in part else [None]
        for piece in split:
            one = {"text": piece} if piece is not None else dict(part)
            content = {"parts": [one], "role": "model"}
            chunks.append({"candidates": [{"content": content, "index": 0}]})
    if not chunks:
        chunks.append({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}}]})
    last = chunks[-1]
    last["candidates"][0]["finishReason"] = candidate.get("finishReason", "STOP")
    last["usageMetadata"] = answer.get("usageMetadata")
    for chunk in chunks:
        chunk["modelVersion"] = answer.get("modelVersion")
    return chunks


def gemini_events(answer: Mapping[str, Any]) -> Iterator[bytes]:
    """Yield a Gemini answer as ``alt=sse`` events (data lines, no event names)."""
    for chunk in gemini_chunks(answer):
        yield sse(None, chunk)
