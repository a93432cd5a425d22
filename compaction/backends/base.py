"""Compaction backends: who, besides the code, compacts the span a checkpoint replaces.

A backend is a provider's own compaction (OpenAI's ``/v1/responses/compact``, Anthropic's
``compact_20260112`` edit). It runs after the local Checkpoint is planned: the compactor has
already copied Pending Jobs and Current Work from the log and rendered the local text; the
backend adds the provider's opaque item beside them (`ProviderCompactionData`), and the view
for that provider's format sends the item, then the code-owned sections, then the kept tail.

`record_backend` is the one door: it calls the backend, and on any failure (an HTTP error, a
timeout, a garbage answer, an answer without the item) records the reason instead, so the local
Checkpoint stands. The reason is one line with the API key, bearer tokens and every opaque item
the span carried redacted.

Invariants: a backend never changes the local Checkpoint text or the code-owned lists; a failed
backend leaves ``provider.item`` None with a one-line ``fallback_reason``; the item is recorded
whole, exactly as the provider returned it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from compaction.errors import ConfigError
from compaction.events import CheckpointData, Message, ProviderCompactionData
from compaction.secrets import redact

BackendName = Literal["local", "openai-responses", "anthropic", "auto"]
"""What ``compact(..., backend=...)`` and ``harness compact --backend`` accept."""

BACKEND_NAMES: Final[tuple[BackendName, ...]] = ("local", "openai-responses", "anthropic", "auto")
"""Every backend name, ``auto`` last."""

REASON_LIMIT: Final = 300
"""Longest fallback reason recorded, in characters."""

SpanEncoder = Callable[[Sequence[Message]], list[dict[str, Any]]]
"""Turns the span's messages into the provider's wire items (``prompts`` owns the formats)."""


@dataclass(frozen=True)
class BackendSpan:
    """The span a checkpoint replaces, as a backend receives it."""

    messages: tuple[Message, ...]
    """The replaced messages, oldest first (system messages excluded)."""
    seqs: tuple[int, ...]
    """Their seqs."""
    previous: CheckpointData | None
    """The checkpoint this one folds in, if any."""
    instructions: str | None = None
    """Focus instructions for the provider's summarizer."""

    def previous_item(self, backend: str) -> dict[str, Any] | None:
        """Return the previous checkpoint's opaque item when `backend` made it, else None."""
        provider = self.previous.provider if self.previous else None
        if provider is None or provider.backend != backend or provider.item is None:
            return None
        return dict(provider.item)

    def secrets(self) -> list[str]:
        """Return the opaque strings the span carries (never to appear in an error)."""
        provider = self.previous.provider if self.previous else None
        item = provider.item if provider and provider.item else {}
        return [v for v in item.values() if isinstance(v, str) and len(v) >= 16]


@dataclass(frozen=True)
class BackendConfig:
    """Where and how a provider backend calls its API.

    Args:
        base_url: the API root: ``https://api.openai.com/v1`` (OpenAI, requests go to
            ``{base_url}/responses/compact``) or ``https://api.anthropic.com`` (Anthropic,
            ``{base_url}/v1/messages``).
        model: the model that compacts.
        api_key_env: the environment variable holding the API key (unset: no key sent).
        timeout: seconds one attempt may take in all.
        max_retries: further attempts after a transient failure (429, 5xx, timeouts).
        max_output_tokens: cap on the provider's summary (Anthropic's ``max_tokens``); the
            answer read is capped at 16 bytes a token plus 64 KiB.
        compact_trigger: Anthropic's ``compact_20260112`` trigger, in input tokens: the API
            compacts only a request at least this long (default 50,000, the smallest the
            API documents), so a shorter span falls back to the local Checkpoint.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_retries: int = 3
    max_output_tokens: int = 4096
    compact_trigger: int = 50_000

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"BackendConfig: base_url must start with http:// or https://, "
                f"not {self.base_url!r}"
            )
        if not self.model:
            raise ConfigError("BackendConfig: model must not be empty")


class CompactionBackend(Protocol):
    """A provider's compaction of one span."""

    @property
    def name(self) -> str:
        """The backend's name, recorded in the event (``openai-responses``, ``anthropic``)."""
        ...

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Return the provider's item for `span`.

        Raises:
            Exception: any failure; `record_backend` turns it into the fallback reason.
        """
        ...

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        ...


def one_line(text: str, secrets: Sequence[str] = ()) -> str:
    """Return `text` redacted, on one line, at most `REASON_LIMIT` characters."""
    flat = " ".join(redact(text, secrets).split())
    return flat if len(flat) <= REASON_LIMIT else flat[: REASON_LIMIT - 3] + "..."


def record_backend(
    backend: CompactionBackend, span: BackendSpan, data: CheckpointData
) -> CheckpointData:
    """Return the checkpoint payload with the backend's item, or with why it has none.

    Any exception of the backend falls back to the local Checkpoint (already in `data`).
    """
    try:
        provider = backend.compact_span(span)
    except Exception as exc:  # any failure of a provider leaves the local Checkpoint standing
        reason = backend.redact(f"{backend.name} failed: {type(exc).__name__}: {exc}")
        provider = ProviderCompactionData(
            backend=backend.name,
            fallback_reason=one_line(reason + "; the local Checkpoint stands", span.secrets()),
        )
    return data.model_copy(update={"provider": provider})
