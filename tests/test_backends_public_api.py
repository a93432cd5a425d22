"""The public API of `compaction.backends` is pinned, and importing it never loads httpx."""

from __future__ import annotations

import subprocess
import sys

import compaction.backends as backends

PINNED = [
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


def test_all_is_pinned() -> None:
    """__all__ is exactly the pinned list, every name importable."""
    assert backends.__all__ == PINNED
    for name in PINNED:
        assert hasattr(backends, name), name


def test_public_names_are_exported() -> None:
    """Every public name the package imports (other than submodules) is in __all__."""
    public = {n for n in vars(backends) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(backends, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(backends.__all__)


def test_import_loads_no_httpx() -> None:
    """The packages and the backends import without the llm extra: httpx loads on use."""
    code = "import compaction, compaction.backends, prompts, sys; print('httpx' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"
