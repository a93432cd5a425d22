"""The provider backends' common part: post the span, record the item the answer holds.

`ProviderBackend` holds what every HTTP backend does the same way (the endpoint client, the
redaction, posting, the missing-item failure, the recorded usage and model); a backend names
its endpoint, builds its request and picks its item.

Invariants: the recorded item is the one the backend picked, unchanged; an answer without one
is a `ProviderError` (the local Checkpoint stands); nothing the answer holds reaches an error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from compaction.backends.base import BackendConfig, BackendSpan, SpanEncoder
from compaction.errors import ProviderError
from compaction.events import ProviderCompactionData

if TYPE_CHECKING:
    import httpx


class ProviderBackend(ABC):
    """A backend that posts the span to a provider's endpoint and records the item it answers.

    A subclass names itself and its endpoint (`name`, `path`, `auth`, `headers`), builds the
    request (`body`) and picks the item from the answer (`pick`); posting, the missing-item
    failure and the recorded usage and model are shared.

    Args:
        config: the endpoint, model, key variable and limits.
        encode: turns messages into the provider's wire items.
        transport: an httpx transport, for tests that mock the network.
    """

    name: ClassVar[str]
    path: ClassVar[str]
    """The endpoint below the host, with its ``/v1``."""
    auth: ClassVar[str] = "bearer"
    """How the key is sent: ``bearer`` or ``x-api-key``."""
    headers: ClassVar[Mapping[str, str]] = {}
    """Headers sent with every request."""

    def __init__(
        self,
        config: BackendConfig,
        encode: SpanEncoder,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        from compaction.backends._http import EndpointClient

        self.config = config
        self.encode = encode
        self.client = EndpointClient(
            config,
            path=self.endpoint(),
            backend=self.name,
            auth=self.auth,
            extra_headers=self.request_headers(),
            transport=transport,
        )

    def endpoint(self) -> str:
        """Return the endpoint below the host (the form's, for a backend with two forms)."""
        return self.path

    def request_headers(self) -> Mapping[str, str]:
        """Return the headers sent with every request (the form's)."""
        return self.headers

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        return self.client.redact(text)

    def api_keys(self) -> list[str]:
        """Return the key this backend sends (from its variable at call time), if set."""
        key = self.client.environ.get(self.client.config.api_key_env, "")
        return [key] if key else []

    @abstractmethod
    def body(self, span: BackendSpan) -> dict[str, Any]:
        """Return the request that compacts `span`."""

    @abstractmethod
    def pick(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """Return the item to record from the answer, None when it holds none."""

    def missing(self) -> str:
        """Say why an answer without the item failed, for the error after the endpoint's URL."""
        return "the answer holds no compaction item"

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Post the span and return the item the answer holds.

        Raises:
            ProviderError: the call failed, or the answer holds no item.
        """
        answer = self.client.post_json(self.body(span))
        item = self.pick(answer)
        if item is None:
            raise ProviderError("bad_response", f"{self.client.config.url}: {self.missing()}")
        usage = answer.get("usage")
        model = answer.get("model")
        return ProviderCompactionData(
            backend=self.name,
            item=item,
            usage=usage if isinstance(usage, dict) else None,
            model=model if isinstance(model, str) else self.config.model,
        )


def compaction_entries(listed: object, key: str) -> list[dict[str, Any]]:
    """Return the ``compaction`` entries of an answer's list whose `key` is a non-empty string."""
    return [
        entry
        for entry in (listed if isinstance(listed, list) else [])
        if isinstance(entry, dict)
        and entry.get("type") == "compaction"
        and isinstance(entry.get(key), str)
        and entry[key]
    ]
