"""Compaction backends: the provider's own compaction beside the code-owned Checkpoint.

``local`` is the toolkit's Checkpoint alone; ``openai-responses`` adds OpenAI's
``/v1/responses/compact`` item, ``anthropic`` the Messages API's ``compact_20260112`` block;
``auto`` picks the provider's backend for a request format that has one (``responses``,
``anthropic``), ``local`` otherwise. `make_backend` builds one (``None`` for ``local``); the
HTTP backends load httpx (the ``llm`` extra) only when built. `ToolResultClearer` clears old
tool results only when the provider's cache allows it (`compaction.backends._clearing`).

Import it as ``compaction.backends``.
"""

from compaction.backends._anthropic import with_block_first
from compaction.backends._clearing import (
    CACHE_LIFETIMES,
    CACHED_PRICES,
    ClearingPolicy,
    ResultSlot,
    ToolResultClearer,
    clearable,
    cleared_note,
    cleared_window,
    clearing_due,
)
from compaction.backends._request_times import RecordedRequest, recorded_requests
from compaction.backends._server import ReturnedItem, returned_item
from compaction.backends._table import (
    BACKEND_FORMATS,
    DEFAULT_BASE_URLS,
    make_backend,
    resolve_backend,
)
from compaction.backends.base import (
    BACKEND_FORMS,
    BACKEND_NAMES,
    DEFAULT_API_KEY_ENVS,
    REASON_LIMIT,
    BackendConfig,
    BackendName,
    BackendSpan,
    CompactionBackend,
    SpanEncoder,
    record_backend,
)
from compaction.views.provider_checkpoint import (
    ITEM_FIELDS,
    code_owned_message,
    code_owned_text,
    provider_item,
)

__all__ = [
    "BACKEND_FORMATS",
    "BACKEND_FORMS",
    "BACKEND_NAMES",
    "CACHED_PRICES",
    "CACHE_LIFETIMES",
    "DEFAULT_API_KEY_ENVS",
    "DEFAULT_BASE_URLS",
    "ITEM_FIELDS",
    "REASON_LIMIT",
    "BackendConfig",
    "BackendName",
    "BackendSpan",
    "ClearingPolicy",
    "CompactionBackend",
    "RecordedRequest",
    "ResultSlot",
    "ReturnedItem",
    "SpanEncoder",
    "ToolResultClearer",
    "clearable",
    "cleared_note",
    "cleared_window",
    "clearing_due",
    "code_owned_message",
    "code_owned_text",
    "make_backend",
    "provider_item",
    "record_backend",
    "recorded_requests",
    "resolve_backend",
    "returned_item",
    "with_block_first",
]
