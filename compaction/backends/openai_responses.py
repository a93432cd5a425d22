"""The ``openai-responses`` backend: OpenAI's ``POST /v1/responses/compact`` compacts the span.

The span goes as Responses input items (the previous checkpoint's compaction item first when
this backend made it, else the previous local Checkpoint as a user message); the answer's
``output`` ends in one ``compaction`` item (``encrypted_content``), recorded whole with the
answer's ``usage``.

Invariants: the recorded item is the answer's ``compaction`` item unchanged; an answer without
one is a failure (the local Checkpoint stands); nothing the answer holds reaches an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from compaction.backends.base import BackendConfig, BackendSpan, SpanEncoder
from compaction.errors import ProviderError
from compaction.events import ProviderCompactionData
from compaction.views.context import checkpoint_message

if TYPE_CHECKING:
    import httpx

COMPACT_PATH: Final = "/responses/compact"
"""Below the API root (``https://api.openai.com/v1``)."""


class OpenAIResponsesBackend:
    """Compacts a span with OpenAI's ``/v1/responses/compact``.

    Args:
        config: the endpoint (``base_url`` is the API root, e.g. ``https://api.openai.com/v1``),
            model, key variable and limits.
        encode: turns messages into Responses input items (`prompts.responses_input`).
        transport: an httpx transport, for tests that mock the network.
    """

    name: Final = "openai-responses"

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
        self.client = EndpointClient(
            config, path=COMPACT_PATH, backend=self.name, transport=transport
        )

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        return self.client.redact(text)

    def body(self, span: BackendSpan) -> dict[str, Any]:
        """Return the ``responses.compact`` request for `span`."""
        items: list[dict[str, Any]] = []
        previous = span.previous_item(self.name)
        if previous is not None:
            items.append(previous)
        elif span.previous is not None:
            items += self.encode([checkpoint_message(span.previous)])
        items += self.encode(span.messages)
        body: dict[str, Any] = {"model": self.config.model, "input": items}
        if span.instructions:
            body["instructions"] = span.instructions
        return body

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Post the span and return the compaction item the answer ends with.

        Raises:
            ProviderError: the call failed, or the answer holds no compaction item.
        """
        answer = self.client.post_json(self.body(span))
        output = answer.get("output")
        items = [
            item
            for item in (output if isinstance(output, list) else [])
            if isinstance(item, dict)
            and item.get("type") == "compaction"
            and isinstance(item.get("encrypted_content"), str)
            and item["encrypted_content"]
        ]
        if not items:
            raise ProviderError(
                "bad_response", f"{self.client.config.url}: the answer holds no compaction item"
            )
        usage = answer.get("usage")
        model = answer.get("model")
        return ProviderCompactionData(
            backend=self.name,
            item=items[-1],
            usage=usage if isinstance(usage, dict) else None,
            model=model if isinstance(model, str) else self.config.model,
        )
