"""Compaction backends wired to this package's formats, and server-side compaction recorded.

`compaction_backend` builds a `compaction.backends` backend with the span encoder of its format
(Responses items for ``openai-responses``, Anthropic messages for ``anthropic``).
`record_server_compaction` records a compaction the provider made on its own (server-side mode:
a ``responses.create`` with ``context_management``, or a messages call with the
``compact_20260112`` edit) as a checkpoint at that point of the log.

Invariants: a recorded server-side compaction carries the code-owned lists like any checkpoint;
an answer without an item or block records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from compaction import CompactionPolicy, CompactionResult, Session, compact
from compaction.backends import (
    BackendConfig,
    CompactionBackend,
    ReturnedItem,
    make_backend,
    resolve_backend,
    returned_item,
)
from prompts.requests import anthropic_messages
from prompts.responses import responses_input


def compaction_backend(
    name: str, config: BackendConfig | None = None, *, request_format: str | None = None
) -> CompactionBackend | None:
    """Return the compaction backend `name`, wired to its format's span encoder.

    ``openai-responses`` sends the span as Responses items, ``anthropic`` as Anthropic
    messages; ``auto`` picks by `request_format` (``responses``, ``anthropic``; else local);
    ``local`` is None (the toolkit's Checkpoint alone).

    Raises:
        ConfigError: an unknown name, or a provider backend without a config.
    """
    concrete = resolve_backend(name, request_format)
    encode = anthropic_messages if concrete == "anthropic" else responses_input
    return make_backend(concrete, config, encode)


def record_server_compaction(
    session: Session,
    answer: Mapping[str, Any],
    *,
    policy: CompactionPolicy | None = None,
    fixed_tokens: int = 0,
) -> CompactionResult | None:
    """Record the compaction a provider's answer carries as a checkpoint; None if it has none.

    The checkpoint replaces the whole context up to now (the provider compacted all of it):
    the local Checkpoint is written as usual (code-owned lists from the log) and the answer's
    ``compaction`` item (Responses ``output``) or block (Anthropic ``content``) is recorded
    whole beside it, with the answer's usage.

    Args:
        session: the live session, before the answer's own message is added.
        answer: the decoded ``responses.create`` or ``messages.create`` answer.
        policy: the window (the tail kept is none: the provider kept nothing verbatim).
        fixed_tokens: the system prompt and tool catalog, as for `compact`.
    """
    found = returned_item(answer)
    if found is None:
        return None
    whole = replace(policy or CompactionPolicy(), retain=0.0)
    return compact(
        session, whole, force=True, fixed_tokens=fixed_tokens, backend=ReturnedItem(*found)
    )
