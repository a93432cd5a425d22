"""Server-side compaction: an item the provider returned on its own, recorded as a checkpoint.

In server-side mode the provider compacts inside an ordinary call (OpenAI's
``context_management: [{"type": "compaction", ...}]``, Anthropic's ``compact_20260112`` edit)
and its answer carries the item. `returned_item` finds it; `ReturnedItem` is the backend that
hands it to the compactor, so the checkpoint is recorded the way a backend's is.

Invariants: an item is found only where its format puts it (a Responses answer's ``output``,
a messages answer's ``content``), and is recorded unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compaction.backends.base import DEFAULT_API_KEY_ENVS, BackendSpan
from compaction.events import ProviderCompactionData
from compaction.secrets import redact


def _compaction(items: object, key: str) -> dict[str, Any] | None:
    found = [
        item
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
        and item.get("type") == "compaction"
        and isinstance(item.get(key), str)
        and item[key]
    ]
    return found[-1] if found else None


def returned_item(
    answer: Mapping[str, Any],
) -> tuple[str, dict[str, Any], dict[str, Any] | None, str | None] | None:
    """Return (backend, item, usage, model) of a compaction an answer carries, else None.

    A Responses answer (``object: response``) carries a ``compaction`` item in ``output``; a
    messages answer (``type: message``) a ``compaction`` block in ``content``.
    """
    usage = answer.get("usage")
    model = answer.get("model")
    extra = (usage if isinstance(usage, dict) else None, model if isinstance(model, str) else None)
    item = _compaction(answer.get("output"), "encrypted_content")
    if item is not None:
        return ("openai-responses", item, *extra)
    block = _compaction(answer.get("content"), "content")
    if block is not None:
        return ("anthropic", block, *extra)
    return None


@dataclass(frozen=True)
class ReturnedItem:
    """A backend that hands the compactor an item the provider already returned."""

    backend: str
    """The backend that made the item."""
    item: dict[str, Any]
    """The item or block, as returned."""
    usage: dict[str, Any] | None = None
    """The answer's usage."""
    model: str | None = None
    """The model that answered."""
    api_key_env: str | None = None
    """The variable holding the key the call was made with (None: the backend's own,
    `DEFAULT_API_KEY_ENVS`); an item that holds the key is refused."""

    @property
    def name(self) -> str:
        """The backend that made the item."""
        return self.backend

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Return the returned item, whatever the span."""
        return ProviderCompactionData(
            backend=self.backend, item=self.item, usage=self.usage, model=self.model
        )

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        return redact(text, self.api_keys())

    def api_keys(self) -> list[str]:
        """Return the key the answer's call was made with, when its variable is set."""
        name = self.api_key_env or DEFAULT_API_KEY_ENVS.get(self.backend, "")
        key = os.environ.get(name, "") if name else ""
        return [key] if key else []
