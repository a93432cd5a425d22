"""The stand-in model's prefix-cache model: the usage it reports when a reply brings none.

About four bytes a token. Chat-completions and Responses count the longest prefix shared with
an earlier request as cached (OpenAI's rule: nothing under 1,024 tokens, then 128-token steps);
messages reads a prefix ending at an earlier request's ``cache_control`` breakpoint and writes
up to this request's last breakpoint.

Invariants: a request's usage depends only on it and the requests seen before it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["openai", "anthropic", "responses", "responses_compact", "gemini"]
"""Which provider API a request spoke, by its path."""


def _tokens(size: int) -> int:
    """Return the stub's token estimate for `size` bytes: about four bytes a token."""
    return size // 4


def _dump(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True).encode()


def prompt_pieces(api: Api, request: Mapping[str, Any]) -> list[tuple[bytes, bool]]:
    """Return a request's prompt in the order the provider reads it, as (bytes, breakpoint).

    Chat-completions: the tools, then each message. Gemini: the tools, the system instruction,
    then each content. Messages: each tool, each system block, then each message's content
    blocks; a piece is a breakpoint when it carries
    ``cache_control``.
    """
    if api == "openai":
        return [(_dump(request.get("tools", [])), False)] + [
            (_dump(m), False) for m in request.get("messages", [])
        ]
    if api in ("responses", "responses_compact"):
        items = request.get("input", [])
        head = [_dump(request.get("tools", [])), _dump(request.get("instructions", ""))]
        return [(p, False) for p in head] + [
            (_dump(m), False) for m in (items if isinstance(items, list) else [items])
        ]
    if api == "gemini":
        head = [request.get("tools", []), request.get("systemInstruction", {})]
        contents = request.get("contents", [])
        return [
            (_dump(p), False) for p in head + list(contents if isinstance(contents, list) else [])
        ]
    system = request.get("system", [])
    blocks: list[Any] = list(request.get("tools", []))
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for message in request.get("messages", []):
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks += [content] if isinstance(content, str) else list(content or [])
    return [(_dump(b), isinstance(b, Mapping) and "cache_control" in b) for b in blocks]


def prompt_tokens(api: Api, request: Mapping[str, Any]) -> int:
    """Return a request's prompt size in the stub's tokens (what its usage reports)."""
    return _tokens(sum(len(piece) for piece, _ in prompt_pieces(api, request)))


def _common_prefix(a: bytes, b: bytes) -> int:
    """Return the length of the longest common prefix of `a` and `b` (a binary search)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class PrefixCache:
    """The stub's prefix-cache model: the prompts it has seen, per API."""

    seen: dict[str, list[tuple[bytes, tuple[int, ...]]]] = field(default_factory=dict)
    """Per API, each earlier prompt's bytes and its breakpoint offsets."""

    def usage(self, api: Api, request: Mapping[str, Any], answer: str) -> dict[str, Any]:
        """Return the usage of `request` against the prompts seen before, then remember it."""
        pieces = prompt_pieces(api, request)
        prompt = b"".join(p for p, _ in pieces)
        offsets, at = [], 0
        for piece, breakpoint in pieces:
            at += len(piece)
            offsets += [at] if breakpoint else []
        earlier = self.seen.setdefault(api, [])
        total, out = _tokens(len(prompt)), _tokens(len(answer.encode()))
        if api != "anthropic":
            shared = max((_common_prefix(prompt, p) for p, _ in earlier), default=0)
            cached = 0 if _tokens(shared) < 1024 else _tokens(shared) // 128 * 128
            earlier.append((prompt, ()))
            return {
                "prompt_tokens": total,
                "completion_tokens": out,
                "total_tokens": total + out,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
        hits = [m for p, marks in earlier for m in marks if prompt[:m] == p[:m]]
        read = _tokens(max(hits, default=0))
        written = max(_tokens(offsets[-1]) - read, 0) if offsets else 0
        earlier.append((prompt, tuple(offsets)))
        return {
            "input_tokens": total - read - written,
            "output_tokens": out,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }
