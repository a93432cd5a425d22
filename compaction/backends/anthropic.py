"""The ``anthropic`` backend: the Messages API's ``compact_20260112`` edit compacts the span.

The span goes as Anthropic messages (the previous checkpoint's compaction block first when this
backend made it, else the previous local Checkpoint), then one user message asking to compact,
with ``context_management.edits: [{"type": "compact_20260112", "pause_after_compaction": true,
...}]`` and the beta header ``compact-2026-01-12``. The answer's ``compaction`` block (its
``content`` summary, and ``encrypted_content`` / ``signature`` when sent) is recorded whole.
The API compacts only past the edit's ``trigger`` (input tokens); an answer without a block, a
span under the trigger included, is a failure and the local Checkpoint stands.

Invariants: the recorded block is the answer's ``compaction`` block unchanged; a block whose
``content`` is null (the provider's own failed compaction) counts as no block; nothing the answer
holds reaches an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from compaction.backends.base import BackendConfig, BackendSpan, SpanEncoder
from compaction.errors import ProviderError
from compaction.events import Message, ProviderCompactionData
from compaction.views.context import checkpoint_message

if TYPE_CHECKING:
    import httpx

MESSAGES_PATH: Final = "/v1/messages"
"""Below the API root (``https://api.anthropic.com``)."""

BETA: Final = "compact-2026-01-12"
"""The beta header value the ``compact_20260112`` edit needs."""

API_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` header."""

COMPACT_REQUEST: Final = "Compact the conversation so far."
"""The user message the span ends with, so the request ends on a user turn."""


class AnthropicBackend:
    """Compacts a span with the Messages API's ``compact_20260112`` context-management edit.

    Args:
        config: the endpoint (``base_url`` is the API root, e.g. ``https://api.anthropic.com``),
            model, key variable (sent as ``x-api-key``) and limits.
        encode: turns messages into Anthropic messages (`prompts.anthropic_messages`).
        transport: an httpx transport, for tests that mock the network.
    """

    name: Final = "anthropic"

    def __init__(
        self,
        config: BackendConfig,
        encode: SpanEncoder,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        from compaction.backends.http import EndpointClient

        self.config = config
        self.encode = encode
        self.trigger = config.compact_trigger
        headers = {"anthropic-version": API_VERSION, "anthropic-beta": BETA}
        self.client = EndpointClient(
            config,
            path=MESSAGES_PATH,
            backend=self.name,
            auth="x-api-key",
            extra_headers=headers,
            transport=transport,
        )

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        return self.client.redact(text)

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
        ask = Message(role="user", content=COMPACT_REQUEST)
        messages = self.encode([*map(checkpoint_message, head), *span.messages, ask])
        if block is not None:
            messages = with_block_first(block, messages)
        return {
            "model": self.config.model,
            "max_tokens": self.config.max_output_tokens,
            "messages": messages,
            "context_management": {"edits": [self.edit(span.instructions)]},
        }

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Post the span and return the answer's compaction block.

        Raises:
            ProviderError: the call failed, or the answer holds no compaction block.
        """
        answer = self.client.post_json(self.body(span))
        content = answer.get("content")
        blocks = [
            b
            for b in (content if isinstance(content, list) else [])
            if isinstance(b, dict)
            and b.get("type") == "compaction"
            and isinstance(b.get("content"), str)
            and b["content"]
        ]
        if not blocks:
            raise ProviderError(
                "bad_response",
                f"{self.client.config.url}: the answer holds no compaction block (the span may "
                f"be under the {self.trigger}-token trigger)",
            )
        usage = answer.get("usage")
        model = answer.get("model")
        return ProviderCompactionData(
            backend=self.name,
            item=blocks[0],
            usage=usage if isinstance(usage, dict) else None,
            model=model if isinstance(model, str) else self.config.model,
        )


def with_block_first(block: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the messages with a compaction block opening them, in an assistant turn."""
    if messages and messages[0].get("role") == "assistant":
        first = {**messages[0], "content": [block, *messages[0]["content"]]}
        return [first, *messages[1:]]
    return [{"role": "assistant", "content": [block]}, *messages]
