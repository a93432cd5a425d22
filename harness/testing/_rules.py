"""Replies that are functions of the request: a request's readable text, and summary rules.

A `Rule` is asked before the script: it returns a `Reply` for a request it recognises (the
script does not advance) or None. `summary_rule` answers the summary requests the three agent
CLIs send when they compact (Claude Code's "CRITICAL: Respond with TEXT ONLY", Codex's
"CONTEXT CHECKPOINT COMPACTION", Gemini CLI's ``<state_snapshot>`` prompts) with a scripted
summary, so a test scripts the work and the summary apart.

Invariants: a rule reads the decoded request only; reading never raises on an odd body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.testing._replies import Reply

Rule = Callable[[str, Mapping[str, Any]], "Reply | None"]
"""A reply for a request it recognises, by the API's name and the decoded request; else None."""

SUMMARY_MARKERS = (
    "CRITICAL: Respond with TEXT ONLY",
    "CONTEXT CHECKPOINT COMPACTION",
    "<state_snapshot>",
)
"""Text that opens or fills the summary request of Claude Code, Codex and Gemini CLI."""


def text_of(content: object) -> str:
    """Join the text of a message content of any of the four APIs."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return text_of(content.get("parts") or content.get("content") or content.get("text"))
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "tool_result":
            texts.append(text_of(part.get("content")))
    return "\n".join(texts)


@dataclass(frozen=True)
class RequestText:
    """The readable parts of a request: its system text and its last user text."""

    system: str
    last_user: str


def request_text(api: str, body: Mapping[str, Any]) -> RequestText:
    """Return the system text and the last user text of a decoded request."""
    if api == "gemini":
        turns = [c for c in _list(body.get("contents")) if c.get("role", "user") == "user"]
        users = [text_of(c) for c in turns]
        system = text_of(body.get("systemInstruction") or body.get("system_instruction"))
    elif api in ("responses", "responses_compact"):
        items = body.get("input")
        if isinstance(items, str):
            return RequestText(str(body.get("instructions") or ""), items)
        users = [text_of(i.get("content")) for i in _list(items) if i.get("role") == "user"]
        system = "\n".join(
            [str(body.get("instructions") or "")]
            + [text_of(i.get("content")) for i in _list(items) if i.get("role") == "developer"]
        )
    else:
        messages = _list(body.get("messages"))
        users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        system = text_of(body.get("system")) + "\n".join(
            text_of(m.get("content")) for m in messages if m.get("role") == "system"
        )
    users = [u for u in users if u.strip()]
    return RequestText(system, users[-1] if users else "")


def _list(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def is_summary_request(api: str, body: Mapping[str, Any]) -> bool:
    """Tell whether a request is an agent CLI's request for its compaction summary."""
    text = request_text(api, body)
    in_user = any(m in text.last_user for m in SUMMARY_MARKERS)
    return in_user or "<state_snapshot>" in text.system


def summary_rule(summary: str, usage: Mapping[str, Any] | None = None) -> Rule:
    """Return a rule answering every compaction summary request with `summary`."""

    def rule(api: str, body: Mapping[str, Any]) -> Reply | None:
        return Reply(summary, usage=usage) if is_summary_request(api, body) else None

    return rule


def text_rule(needle: str, reply: Reply, *, where: str = "last_user") -> Rule:
    """Return a rule answering `reply` to a request whose `where` text holds `needle`.

    `where` is ``last_user`` or ``system``.
    """

    def rule(api: str, body: Mapping[str, Any]) -> Reply | None:
        text = request_text(api, body)
        return reply if needle in getattr(text, where) else None

    return rule
