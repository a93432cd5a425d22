"""Compaction backends: the provider's own compaction beside the code-owned Checkpoint.

``local`` is the toolkit's Checkpoint alone; ``openai-responses`` adds OpenAI's
``/v1/responses/compact`` item, ``anthropic`` the Messages API's ``compact_20260112`` block;
``auto`` picks the provider's backend for a request format that has one (``responses``,
``anthropic``), ``local`` otherwise. `make_backend` builds one (``None`` for ``local``); the
HTTP backends load httpx (the ``llm`` extra) only when built. `ToolResultClearer` clears old
tool results only when the provider's cache allows it (`compaction.backends._clearing`).

Import it as ``compaction.backends``.
"""

from __future__ import annotations

import typing as _typing

from compaction._lazy import lazy_root as _lazy_root

if _typing.TYPE_CHECKING:
    from compaction.backends._anthropic import with_block_first
    from compaction.backends._clearing import (
        ClearingPolicy,
        ToolResultClearer,
        clearable,
        cleared_window,
    )
    from compaction.backends._server import ReturnedItem, returned_item
    from compaction.backends._table import DEFAULT_BASE_URLS, make_backend, resolve_backend
    from compaction.backends.base import (
        BACKEND_FORMS,
        BACKEND_NAMES,
        DEFAULT_API_KEY_ENVS,
        BackendConfig,
        CompactionBackend,
    )
    from compaction.views.provider_checkpoint import code_owned_message, provider_item

_EXPORTS: dict[str, str] = {
    "BACKEND_FORMS": "compaction.backends.base",
    "clearable": "compaction.backends._clearing",
    "BACKEND_NAMES": "compaction.backends.base",
    "BackendConfig": "compaction.backends.base",
    "ClearingPolicy": "compaction.backends._clearing",
    "CompactionBackend": "compaction.backends.base",
    "DEFAULT_API_KEY_ENVS": "compaction.backends.base",
    "DEFAULT_BASE_URLS": "compaction.backends._table",
    "ReturnedItem": "compaction.backends._server",
    "ToolResultClearer": "compaction.backends._clearing",
    "cleared_window": "compaction.backends._clearing",
    "code_owned_message": "compaction.views.provider_checkpoint",
    "make_backend": "compaction.backends._table",
    "provider_item": "compaction.views.provider_checkpoint",
    "resolve_backend": "compaction.backends._table",
    "returned_item": "compaction.backends._server",
    "with_block_first": "compaction.backends._anthropic",
}
"""Each public name and the module that defines it (imported on first use)."""

__all__ = [
    "BACKEND_FORMS",
    "BACKEND_NAMES",
    "DEFAULT_API_KEY_ENVS",
    "DEFAULT_BASE_URLS",
    "BackendConfig",
    "ClearingPolicy",
    "CompactionBackend",
    "ReturnedItem",
    "ToolResultClearer",
    "clearable",
    "cleared_window",
    "code_owned_message",
    "make_backend",
    "provider_item",
    "resolve_backend",
    "returned_item",
    "with_block_first",
]

__getattr__, __dir__ = _lazy_root(__name__, _EXPORTS, globals(), __all__)
