"""The ``openai-responses`` backend: OpenAI's compaction, in its two request forms.

The span goes as Responses input items (the previous checkpoint's compaction item first when
this backend made it, else the previous local Checkpoint as a user message). The newer form
(``trigger``, what ``auto`` picks) posts them to ``POST /v1/responses`` followed by a
``{"type": "compaction_trigger"}`` item (it must be the last input item; ``store`` false); the
older (``endpoint``) posts them to ``POST /v1/responses/compact``. Either answer's ``output``
holds one ``compaction`` item (``encrypted_content``), recorded whole with the ``usage``.

Invariants: the recorded item is the answer's ``compaction`` item unchanged; an answer without
one is a failure (the local Checkpoint stands); nothing the answer holds reaches an error.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from compaction.backends._provider_backend import ProviderBackend, compaction_entries
from compaction.backends.base import BackendSpan
from compaction.views.context import checkpoint_message

COMPACT_PATH: Final = "/v1/responses/compact"
"""The older form's endpoint (``https://api.openai.com/v1/responses/compact``)."""
RESPONSES_PATH: Final = "/v1/responses"
"""The newer form's endpoint: a Responses create whose input ends with the trigger item."""
TRIGGER_ITEM: Final = {"type": "compaction_trigger"}
"""The input item that compacts the context before it (the last input item)."""


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

    @property
    def triggered(self) -> bool:
        """Whether the newer form (the trigger item) is spoken: ``auto`` or ``trigger``."""
        return self.config.form in ("auto", "trigger")

    def endpoint(self) -> str:
        """Return ``/v1/responses`` (trigger item) or ``/v1/responses/compact``."""
        return RESPONSES_PATH if self.triggered else COMPACT_PATH

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
        if self.triggered:
            body["input"] = [*items, dict(TRIGGER_ITEM)]
            body["store"] = False
        if span.instructions:
            body["instructions"] = span.instructions
        return body

    def pick(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """Return the answer's (last) compaction item."""
        items = compaction_entries(answer.get("output"), "encrypted_content")
        return items[-1] if items else None
