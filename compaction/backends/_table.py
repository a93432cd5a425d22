"""The table of backends: a name, the request format it serves, and how to build it.

Invariants: one entry per provider backend; ``auto`` resolves through `BACKEND_FORMATS` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from compaction.backends.base import BACKEND_NAMES, BackendConfig, CompactionBackend, SpanEncoder
from compaction.errors import ConfigError

Transport = Any
"""An httpx transport (typed loosely: this module must not import httpx)."""


def _openai_responses(
    config: BackendConfig, encode: SpanEncoder, transport: Transport
) -> CompactionBackend:
    from compaction.backends._openai_responses import OpenAIResponsesBackend

    return OpenAIResponsesBackend(config, encode, transport=transport)


def _anthropic(
    config: BackendConfig, encode: SpanEncoder, transport: Transport
) -> CompactionBackend:
    from compaction.backends._anthropic import AnthropicBackend

    return AnthropicBackend(config, encode, transport=transport)


Builder = Callable[[BackendConfig, SpanEncoder, Transport], CompactionBackend]

BUILDERS: Final[dict[str, Builder]] = {
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
}
"""Each provider backend's constructor (imported on use: it loads httpx)."""

BACKEND_FORMATS: Final[dict[str, str]] = {
    "responses": "openai-responses",
    "anthropic": "anthropic",
}
"""The provider backend of each request format that has one (``auto`` reads this)."""

DEFAULT_BASE_URLS: Final[dict[str, str]] = {
    "openai-responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Each provider backend's API root when none is given."""


def resolve_backend(name: str, request_format: str | None = None) -> str:
    """Return the concrete backend for `name`: ``auto`` becomes the format's, or ``local``.

    Raises:
        ConfigError: an unknown backend name.
    """
    if name not in BACKEND_NAMES:
        raise ConfigError(
            f"unknown compaction backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}"
        )
    if name == "auto":
        return BACKEND_FORMATS.get(request_format or "", "local")
    return name


def make_backend(
    name: str,
    config: BackendConfig | None,
    encode: SpanEncoder | None,
    *,
    request_format: str | None = None,
    transport: Transport = None,
) -> CompactionBackend | None:
    """Return the backend `name` (after resolving ``auto``), or None for ``local``.

    Args:
        name: ``local``, ``openai-responses``, ``anthropic`` or ``auto``.
        config: endpoint, model and limits (needed by a provider backend).
        encode: the span encoder of the backend's format (`prompts.compaction_backend` passes
            the right one).
        request_format: the format the requests are built in, for ``auto``.
        transport: an httpx transport, for tests that mock the network.

    Raises:
        ConfigError: an unknown name, or a provider backend without a config or an encoder.
    """
    concrete = resolve_backend(name, request_format)
    if concrete == "local":
        return None
    if config is None or encode is None:
        raise ConfigError(f"the {concrete} backend needs a BackendConfig and a span encoder")
    return BUILDERS[concrete](config, encode, transport)
