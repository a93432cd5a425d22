"""The context after a provider compaction: the opaque item, then the code-owned sections.

For the format of the provider that made the item, the checkpoint enters the request as the item
(`provider_item`), then one user message (`code_owned_message`) with Pending Jobs and Current
Work copied by code from the event (encoded as the Checkpoint encodes them) and the way back to
the replaced span, then the kept tail. Any other format, and any checkpoint without an item,
gets the local Checkpoint text the event also holds.

The whole-request count knows no format, so a checkpoint with an item costs the larger of what
either format sends (`checkpoint_tokens`): the local Checkpoint message, or the item
(`item_tokens`) plus the code-owned message. The item's size is the session tokenizer's count
of the item's canonical JSON (sorted keys, no spaces), the one rule for every provider: the
compaction call's reported usage says what the call cost, not what the item costs when re-sent.
A base64 ``encrypted_content`` counts about 1.5 characters a token (o200k_base), likely more
than the provider bills for it, so the trigger fires early rather than late.

Invariants: the code-owned message holds every item of the event's ``pending`` and ``current``
lists and its tasks, verbatim (each one line, as in the Checkpoint), in order; the item is
handed back as recorded, its documented fields only (`ITEM_FIELDS`); a checkpoint never costs
less than its local message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from jinja2 import Template

from compaction.checkpoint import (
    Checkpoint,
    carried_lines,
    encode_item,
    encode_task,
    template_environment,
)
from compaction.events import CheckpointData, Message
from compaction.tokens import Tokenizer, count_message
from compaction.views.context import checkpoint_message

ITEM_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    # OpenAI's Responses input item ``compaction`` (ResponseCompactionItemParam): the answer's
    # ``created_by`` is not an input field.
    "openai-responses": frozenset({"type", "id", "encrypted_content"}),
    # Anthropic's ``compaction`` block as returned (BetaCompactionBlock), sent back verbatim.
    "anthropic": frozenset({"type", "content", "encrypted_content", "signature", "tool_changes"}),
}
"""The fields each provider documents for its compaction item: the only ones kept and replayed
(a ``role`` or ``content`` key an answer slipped into an OpenAI item never reaches a request)."""


def documented_item(backend: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """Return `item` with only the fields `backend` documents for it (`ITEM_FIELDS`), in order."""
    fields = ITEM_FIELDS.get(backend, frozenset())
    return {key: value for key, value in item.items() if key in fields}


def provider_item(checkpoint: CheckpointData | None, backend: str) -> dict[str, Any] | None:
    """Return the checkpoint's opaque item when `backend` made it, else None.

    Only its documented fields (`documented_item`): an older log's item recorded whole is
    replayed without the keys its provider does not document.
    """
    provider = checkpoint.provider if checkpoint is not None else None
    if provider is None or provider.backend != backend or provider.item is None:
        return None
    return documented_item(backend, provider.item)


@cache
def _template() -> Template:
    return template_environment().get_template("provider_checkpoint.md.j2")


def code_owned_text(checkpoint: CheckpointData) -> str:
    """Return the text after the item: Pending Jobs, Current Work, the way back to the span.

    Current Work holds the items, the tasks, the running jobs and the approved plan.
    """
    pending = [encode_item(t) for t in checkpoint.pending]
    pending += [encode_task(t) for t in checkpoint.pending_tasks or ()]
    current = [encode_item(t) for t in checkpoint.current]
    current += [encode_task(t) for t in checkpoint.current_tasks or ()]
    current += carried_lines(Checkpoint(jobs=checkpoint.jobs or (), plan=checkpoint.plan))
    provider = checkpoint.provider
    return _template().render(
        backend=provider.backend if provider else "provider",
        sections=[
            {"name": "Pending Jobs", "lines": pending},
            {"name": "Current Work", "lines": current},
        ],
        first_seq=checkpoint.first_seq,
        last_seq=checkpoint.last_seq,
    )


def code_owned_message(checkpoint: CheckpointData) -> Message:
    """Return the user message that follows a provider's item in the context."""
    return Message(role="user", content=code_owned_text(checkpoint))


def item_tokens(tokenizer: Tokenizer, checkpoint: CheckpointData) -> int:
    """Return the tokens the checkpoint's item costs in its provider's request (0: no item).

    The tokenizer's count of the item's canonical JSON (sorted keys, no spaces).
    """
    provider = checkpoint.provider
    if provider is None or provider.item is None:
        return 0
    text = json.dumps(provider.item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return tokenizer.count(text)


def checkpoint_tokens(tokenizer: Tokenizer, checkpoint: CheckpointData) -> int:
    """Return what the checkpoint costs in the whole-request count, whatever the format.

    The local Checkpoint message, or, with a provider item, the larger of it and the item plus
    the code-owned message (the request of the item's provider).
    """
    local = count_message(tokenizer, checkpoint_message(checkpoint))
    if checkpoint.provider is None or checkpoint.provider.item is None:
        return local
    provider = item_tokens(tokenizer, checkpoint)
    provider += count_message(tokenizer, code_owned_message(checkpoint))
    return max(local, provider)
