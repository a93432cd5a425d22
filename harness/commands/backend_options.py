"""Options and wiring of ``harness compact --backend``: whose compaction goes beside the Checkpoint.

``local`` (the default) is the toolkit's Checkpoint alone. ``openai-responses`` and
``anthropic`` also ask the provider to compact the replaced span and record its opaque item in
the event, beside the code-owned lists (`compaction.backends`); ``auto`` picks the provider of
``--backend-format`` (``responses``, ``anthropic``; ``openai`` chat completions has none, so
local). They share ``--base-url``, ``--model``, ``--api-key-env``, ``--timeout`` and
``--max-retries`` with the LLM summarizer; ``--base-url`` defaults to the provider's API root and
``--api-key-env`` to the provider's key variable (``ANTHROPIC_API_KEY`` for ``anthropic``,
``OPENAI_API_KEY`` for ``openai-responses``; ``auto`` takes the one of the backend it picks).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from compaction import CompactionResult, ConfigError
from compaction.backends import (
    BACKEND_FORMS,
    BACKEND_NAMES,
    DEFAULT_API_KEY_ENVS,
    DEFAULT_BASE_URLS,
    BackendConfig,
    CompactionBackend,
    resolve_backend,
)
from harness.commands.env_options import openai_base_url
from prompts import compaction_backend

REQUEST_FORMATS: tuple[str, ...] = ("openai", "responses", "anthropic")
"""``--backend-format`` choices: the request format the agent sends (for ``--backend auto``)."""


def add_backend_options(p: argparse.ArgumentParser) -> None:
    """Add ``--backend``, ``--compact-trigger``, ``--backend-form`` and ``--backend-format``."""
    p.add_argument(
        "--backend",
        choices=BACKEND_NAMES,
        default="local",
        help="whose compaction goes beside the Checkpoint: local only, or the provider's opaque "
        "item too (openai-responses, anthropic; auto: by --backend-format) (%(default)s)",
    )
    p.add_argument(
        "--compact-trigger",
        type=int,
        default=50_000,
        metavar="N",
        help="anthropic: input tokens past which the compact_20260112 edit compacts; a shorter "
        "span falls back to the local Checkpoint (%(default)s)",
    )
    p.add_argument(
        "--backend-form",
        choices=BACKEND_FORMS,
        default="auto",
        help="the provider's request form: auto (the newest: OpenAI's compaction_trigger item, "
        "Anthropic's on-demand compact-2026-09-04), or trigger/endpoint (OpenAI), "
        "on-demand/edit (Anthropic's compact_20260112 edit) (%(default)s)",
    )
    p.add_argument(
        "--backend-format",
        choices=REQUEST_FORMATS,
        default="openai",
        help="the request format the agent sends, for --backend auto (%(default)s)",
    )


def backend_from_args(args: argparse.Namespace) -> CompactionBackend | None:
    """Return the backend the options describe (None for local).

    Raises:
        ConfigError: ``--model`` missing for a provider backend, or a bad option value.
    """
    concrete = resolve_backend(args.backend, args.backend_format)
    if concrete == "local":
        return None
    if not args.model:
        raise ConfigError(f"--backend {concrete} needs --model")
    from harness.commands.extras import require

    require("httpx", f"--backend {concrete}")
    # No --api-key-env: the backend's own variable (ANTHROPIC_API_KEY for anthropic).
    key_env = args.api_key_env or DEFAULT_API_KEY_ENVS[concrete]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", key_env):
        # Never echo the value: a key pasted here by mistake must not reach the terminal.
        raise ConfigError(
            "--api-key-env takes the NAME of an environment variable holding the key "
            "(e.g. ANTHROPIC_API_KEY), not the key itself"
        )
    checks = (
        ("--timeout", args.timeout, 0),
        ("--max-retries", args.max_retries, -1),
        ("--compact-trigger", args.compact_trigger, 0),
    )
    for flag, value, above in checks:
        if not value > above:
            raise ConfigError(f"{flag} must be > {above}, not {value}")
    config = BackendConfig(
        base_url=_base_url(args.base_url, concrete),
        model=args.model,
        api_key_env=key_env,
        timeout=args.timeout,
        max_retries=args.max_retries,
        max_output_tokens=args.max_output_tokens,
        compact_trigger=args.compact_trigger,
        form=args.backend_form,
    )
    return compaction_backend(concrete, config)


def backend_json(result: CompactionResult) -> dict[str, Any]:
    """Return what ``--json`` says of the backend: its name, its item recorded or why not."""
    provider = result.data.provider
    if provider is None:
        return {"backend": "local"}
    return {
        "backend": provider.backend,
        "backend_item": provider.item is not None,
        "backend_fallback_reason": provider.fallback_reason,
        "open_items_kept": provider.open_items_kept,
        "open_items_missed": provider.open_items_missed,
    }


def backend_line(result: CompactionResult) -> str | None:
    """Return the report's line on the backend, or None for local."""
    provider = result.data.provider
    if provider is None:
        return None
    if provider.item is not None:
        return f"backend: {provider.backend} compaction item recorded beside the Checkpoint"
    return f"backend fallback: {provider.fallback_reason}"


def _base_url(given: str | None, backend: str) -> str:
    """Return ``--base-url``, else ``OPENAI_BASE_URL`` for an OpenAI backend, else its default."""
    if given is None and backend.startswith("openai"):
        given = openai_base_url(None)
    return given or DEFAULT_BASE_URLS[backend]
