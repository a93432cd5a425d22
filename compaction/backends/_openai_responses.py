"""The ``openai-responses`` backend: OpenAI's ``POST /v1/responses/compact`` compacts the span.

The span goes as Responses input items (the previous checkpoint's compaction item first when
this backend made it, else the previous local Checkpoint as a user message); the answer's
``output`` ends in one ``compaction`` item (``encrypted_content``), recorded whole with the
answer's ``usage``.

Invariants: the recorded item is the answer's ``compaction`` item unchanged; an answer without
one is a failure (the local Checkpoint stands); nothing the answer holds reaches an error.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from compaction.backends._provider_backend import ProviderBackend, compaction_entries
from compaction.backends.base import BackendSpan
from compaction.views.context import checkpoint_message

COMPACT_PATH: Final = "/responses/compact"
"""Below the API root (``https://api.openai.com/v1``)."""


class OpenAIResponsesBackend(ProviderBackend):
    """Compacts a span with OpenAI's ``/v1/responses/compact``.

    Args:
        config: the endpoint (``base_url`` is the API root, e.g. ``https://api.openai.com/v1``),
            model, key variable and limits.
        encode: turns messages into Responses input items (`prompts.responses_input`).
        transport: an httpx transport (tests mock the network with one).
    """

    name: ClassVar[str] = "openai-responses"
    path: ClassVar[str] = COMPACT_PATH

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

    def pick(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """Return the compaction item the answer's ``output`` ends with."""
        items = compaction_entries(answer.get("output"), "encrypted_content")
        return items[-1] if items else None
