"""The ``anthropic`` backend: the Messages API's compaction, in its two request forms.

The span goes as Anthropic messages (the previous checkpoint's compaction block first when this
backend made it, else the previous local Checkpoint). The newer form (``on-demand``, what
``auto`` picks; beta ``compact-2026-09-04``) sends them with the top-level ``compaction:
{"type": "summarize"}`` parameter: the API summarizes every message it is sent and answers a
``compaction`` block (``stop_reason`` ``compaction``), whatever the span's length. The older
(``edit``) adds one user message asking to compact, with ``context_management.edits:
[{"type": "compact_20260112", "pause_after_compaction": true, ...}]`` and the beta header
``compact-2026-01-12``. The answer's ``compaction`` block (its
``content`` summary, and ``encrypted_content`` / ``signature`` when sent) is recorded whole.
The API compacts only past the edit's ``trigger`` (input tokens); an answer without a block, a
span under the trigger included, is a failure and the local Checkpoint stands.

Invariants: the recorded block is the answer's ``compaction`` block unchanged; a block whose
``content`` is null (the provider's own failed compaction) counts as no block; nothing the answer
holds reaches an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from compaction.backends._provider_backend import ProviderBackend, compaction_entries
from compaction.backends.base import BackendSpan
from compaction.events import Message
from compaction.views.context import checkpoint_message

MESSAGES_PATH: Final = "/v1/messages"
"""Below the API root (``https://api.anthropic.com``)."""

BETA: Final = "compact-2026-01-12"
"""The beta header value the ``compact_20260112`` edit needs."""
ON_DEMAND_BETA: Final = "compact-2026-09-04"
"""The beta header value of on-demand compaction (the top-level ``compaction`` parameter)."""

API_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` header."""

COMPACT_REQUEST: Final = "Compact the conversation so far."
"""The user message the span ends with, so the request ends on a user turn."""


class AnthropicBackend(ProviderBackend):
    """Compacts a span with the Messages API's ``compact_20260112`` context-management edit.

    Args:
        config: the endpoint (``base_url`` is the API root, e.g. ``https://api.anthropic.com``),
            model, key variable (sent as ``x-api-key``) and limits.
        encode: turns messages into Anthropic messages (`prompts.anthropic_messages`).
        transport: an httpx transport, for tests that mock the network.
    """

    name: ClassVar[str] = "anthropic"
    path: ClassVar[str] = MESSAGES_PATH
    auth: ClassVar[str] = "x-api-key"
    headers: ClassVar[Mapping[str, str]] = {
        "anthropic-version": API_VERSION,
        "anthropic-beta": BETA,
    }

    @property
    def on_demand(self) -> bool:
        """Whether the newer form (on-demand) is spoken: ``auto`` or ``on-demand``."""
        return self.config.form in ("auto", "on-demand")

    def request_headers(self) -> Mapping[str, str]:
        """Return the version header and the form's beta header."""
        return {**self.headers, "anthropic-beta": ON_DEMAND_BETA if self.on_demand else BETA}

    @property
    def trigger(self) -> int:
        """The edit's trigger, in input tokens (`BackendConfig.compact_trigger`)."""
        return self.config.compact_trigger

    def missing(self) -> str:
        """Say that the answer holds no block, the trigger the likely cause (older form)."""
        if self.on_demand:
            return "the answer holds no compaction block"
        return (
            "the answer holds no compaction block (the span may be under the "
            f"{self.trigger}-token trigger)"
        )

    def edit(self, instructions: str | None) -> dict[str, Any]:
        """Return the ``compact_20260112`` edit."""
        edit: dict[str, Any] = {
            "type": "compact_20260112",
            "pause_after_compaction": True,
            "trigger": {"type": "input_tokens", "value": self.trigger},
        }
        if instructions:
            edit["instructions"] = instructions
        return edit

    def body(self, span: BackendSpan) -> dict[str, Any]:
        """Return the messages request that compacts `span`."""
        block = span.previous_item(self.name)
        head = [] if span.previous is None or block is not None else [span.previous]
        ask = [] if self.on_demand else [Message(role="user", content=COMPACT_REQUEST)]
        messages = self.encode([*map(checkpoint_message, head), *span.messages, *ask])
        if block is not None:
            messages = with_block_first(block, messages)
        body: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": self.config.max_output_tokens,
            "messages": messages,
        }
        if self.on_demand:
            body["compaction"] = {"type": "summarize"}
            if span.instructions:
                body["compaction"]["instructions"] = span.instructions
        else:
            body["context_management"] = {"edits": [self.edit(span.instructions)]}
        return body

    def pick(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """Return the answer's first ``compaction`` block (one whose ``content`` is text)."""
        blocks = compaction_entries(answer.get("content"), "content")
        return blocks[0] if blocks else None


def with_block_first(block: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the messages with a compaction block opening them, in an assistant turn."""
    if messages and messages[0].get("role") == "assistant":
        first = {**messages[0], "content": [block, *messages[0]["content"]]}
        return [first, *messages[1:]]
    return [{"role": "assistant", "content": [block]}, *messages]
