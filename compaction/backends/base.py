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

An item is vetted before it is recorded (`vetted`): one that holds the backend's API key in
any form (any letter case, base64) is refused like any other failure, and only the fields the
provider documents for its item are kept (`ITEM_FIELDS`), so a foreign ``role`` or ``content``
key never reaches a request.

Invariants: a backend never changes the local Checkpoint text or the code-owned lists; a failed
or refused backend leaves ``provider.item`` None with a one-line ``fallback_reason``; the item
is recorded with its documented fields exactly as the provider returned them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from compaction.errors import ConfigError, ProviderError
from compaction.events import CheckpointData, Message, ProviderCompactionData
from compaction.secrets import holds_secret, redact
from compaction.views.provider_checkpoint import documented_item, provider_item

BackendName = Literal["local", "openai-responses", "anthropic", "auto"]
"""What ``compact(..., backend=...)`` and ``harness compact --backend`` accept."""

BACKEND_NAMES: Final[tuple[BackendName, ...]] = ("local", "openai-responses", "anthropic", "auto")
"""Every backend name, ``auto`` last."""

DEFAULT_API_KEY_ENVS: Final[dict[str, str]] = {
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The environment variable each provider backend reads its key from when none is named."""

BACKEND_FORMS: Final[tuple[str, ...]] = ("auto", "trigger", "endpoint", "on-demand", "edit")
"""The request forms: ``auto`` (each provider's newest), OpenAI's ``trigger`` (newest) and
``endpoint``, Anthropic's ``on-demand`` (newest) and ``edit``."""

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
        return provider_item(self.previous, backend)

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
        api_key_env: the environment variable holding the API key (unset: no key sent);
            None: the backend's own (`DEFAULT_API_KEY_ENVS`: ``OPENAI_API_KEY`` for
            ``openai-responses``, ``ANTHROPIC_API_KEY`` for ``anthropic``).
        timeout: seconds one attempt may take in all.
        max_retries: further attempts after a transient failure (429, 5xx, timeouts).
        max_output_tokens: cap on the provider's summary (Anthropic's ``max_tokens``); the
            answer read is capped at 16 bytes a token plus 64 KiB.
        compact_trigger: Anthropic's ``compact_20260112`` trigger, in input tokens: the API
            compacts only a request at least this long (default 50,000, the smallest the
            API documents), so a shorter span falls back to the local Checkpoint.
        form: which request form the backend speaks (`BACKEND_FORMS`): ``auto`` (default),
            the newest; ``trigger`` or ``endpoint`` (OpenAI: a ``compaction_trigger`` input
            item on ``/v1/responses``, or ``/v1/responses/compact``); ``on-demand`` or
            ``edit`` (Anthropic: the ``compact-2026-09-04`` top-level ``compaction``
            parameter, or the ``compact_20260112`` edit).

    A ``base_url`` given with or without a trailing ``/v1`` reaches the same endpoint.
    """

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    max_output_tokens: int = 4096
    compact_trigger: int = 50_000
    form: str = "auto"

    def __post_init__(self) -> None:
        if self.form not in BACKEND_FORMS:
            raise ConfigError(
                f"BackendConfig: form must be one of {', '.join(BACKEND_FORMS)}, not {self.form!r}"
            )
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"BackendConfig: base_url must start with http:// or https://, "
                f"not {self.base_url!r}"
            )
        if not self.model:
            raise ConfigError("BackendConfig: model must not be empty")

    def key_env(self, backend: str) -> str:
        """Return the variable `backend` reads its key from: the one named, else its default."""
        return self.api_key_env or DEFAULT_API_KEY_ENVS.get(backend, "OPENAI_API_KEY")


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

    def api_keys(self) -> Sequence[str]:
        """Return the API keys the backend sends (none set: empty); no item may hold one."""
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
        provider = vetted(backend, backend.compact_span(span))
    except Exception as exc:  # any failure of a provider leaves the local Checkpoint standing
        reason = backend.redact(f"{backend.name} failed: {type(exc).__name__}: {exc}")
        provider = ProviderCompactionData(
            backend=backend.name,
            fallback_reason=one_line(reason + "; the local Checkpoint stands", span.secrets()),
        )
    return data.model_copy(update={"provider": with_open_items(provider, data)})


def open_items(data: CheckpointData) -> list[str]:
    """Return the open items a Checkpoint carries by code: items, task subjects, job ids."""
    tasks = (*(data.pending_tasks or ()), *(data.current_tasks or ()))
    jobs = [f"job {j.id}" for j in data.jobs or ()]
    return [*data.pending, *data.current, *(t.subject for t in tasks), *jobs]


def with_open_items(
    provider: ProviderCompactionData, data: CheckpointData
) -> ProviderCompactionData:
    """Record which open items a readable provider summary names (its block's ``content``).

    An item counts as kept when its head (its first 40 characters, case and spacing
    ignored) stands in the summary; a job, when its id does. An opaque item (OpenAI's
    encrypted one) is unreadable: nothing is recorded.
    """
    summary = provider.item.get("content") if provider.item else None
    if not isinstance(summary, str):
        return provider
    flat = " ".join(summary.split()).casefold()
    kept: list[str] = []
    missed: list[str] = []
    for item in open_items(data):
        head = " ".join(item.removeprefix("job ").split()).casefold()[:40]
        (kept if head and head in flat else missed).append(item)
    return provider.model_copy(
        update={"open_items_kept": tuple(kept), "open_items_missed": tuple(missed)}
    )


def _strings(value: object) -> Iterator[str]:
    """Yield every string in a JSON value, its objects' keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def vetted(backend: CompactionBackend, provider: ProviderCompactionData) -> ProviderCompactionData:
    """Return what a backend returned with its item's documented fields only (`ITEM_FIELDS`).

    Raises:
        ProviderError: the item, usage or model holds one of the backend's API keys in any form
            (`holds_secret`: any letter case, base64): such an item is never stored or sent.
    """
    if provider.item is None:
        return provider
    keys = [key for key in backend.api_keys() if key]
    found = [provider.item, provider.usage, provider.model]
    if keys and any(holds_secret(text, key) for text in _strings(found) for key in keys):
        raise ProviderError("bad_response", "the compaction item holds the API key; refused")
    return provider.model_copy(update={"item": documented_item(provider.backend, provider.item)})
