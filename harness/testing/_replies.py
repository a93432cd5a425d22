"""A script for the stand-in model: the replies it gives, in order, and the requests it got.

A `Reply` holds text and `ToolCall`s, a status, a malformed body, usage figures, an overflow
refusal or a hang; a `Script` step may also be a function of the decoded request. Every request
the server received is kept as a `RecordedRequest` (raw bytes and headers).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call in a scripted reply."""

    name: str
    """The tool the model calls."""
    arguments: str | Mapping[str, Any] = "{}"
    """The arguments: JSON text or an object. Chat-completions sends text as is (so a scripted
    malformed string reaches the client); messages sends an object, text decoded when it is
    JSON and as is otherwise."""
    id: str | None = None
    """The call id; None numbers it by request and position (``call_2_0``, ``toolu_2_0``)."""

    def arguments_text(self) -> str:
        """Return the arguments as chat-completions sends them: JSON text."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)

    def arguments_object(self) -> Any:  # noqa: ANN401 - a decoded JSON value has no narrower type
        """Return the arguments as messages sends them: an object (text decoded if it can be)."""
        if not isinstance(self.arguments, str):
            return dict(self.arguments)
        try:
            return json.loads(self.arguments)
        except ValueError:
            return self.arguments


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the stand-in model."""

    content: str | None = ""
    """The assistant message's text (None sends ``"content": null``; messages sends no text
    block for None or an empty text)."""
    status: int = 200
    """HTTP status; not 200 sends the API's error body."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. ``{"Retry-After": "2"}``."""
    body: bytes | None = None
    """Raw response body, sent as is (malformed JSON, a truncated answer...)."""
    usage: Mapping[str, Any] | None = None
    """The ``usage`` object; None sends one from the stub's prefix-cache model."""
    hang: bool = False
    """Send nothing until the client gives up (or the server stops)."""
    finish_reason: str | None = None
    """Chat-completions' ``finish_reason``; None: ``tool_calls`` with tool calls, else ``stop``."""
    tool_calls: Sequence[ToolCall] = ()
    """Tool calls, in order: ``message.tool_calls`` or ``tool_use`` blocks after the text."""
    stop_reason: str | None = None
    """Messages' ``stop_reason``; None: ``tool_use`` with tool calls, else ``end_turn``."""
    compaction: str | None = None
    """A compaction item's ``encrypted_content`` (Responses) or block's summary (messages);
    None: ``stub-compaction-<index>``; ``""``: answer without one
    (`harness.testing._responses_api`)."""
    overflow: bool = False
    """Refuse the request as too long: HTTP 400 with the API's real overflow body
    (`harness.testing._overflow_bodies`)."""


Script = Reply | Callable[[Mapping[str, Any]], Reply]
"""A reply, or a function of the decoded request that returns one."""


@dataclass(frozen=True)
class RecordedRequest:
    """A request the stand-in model received."""

    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: bytes

    def json(self) -> Any:  # noqa: ANN401 - a decoded JSON body has no narrower type
        """Return the decoded JSON body."""
        return json.loads(self.body)
