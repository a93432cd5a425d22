"""The context after a provider compaction: the opaque item, then the code-owned sections.

For the format of the provider that made the item, the checkpoint enters the request as the item
(`provider_item`), then one user message (`code_owned_message`) with Pending Jobs and Current
Work copied by code from the event (encoded as the Checkpoint encodes them) and the way back to
the replaced span, then the kept tail. Any other format, and any checkpoint without an item,
gets the local Checkpoint text the event also holds.

Invariants: the code-owned message holds every item of the event's ``pending`` and ``current``
lists and its tasks, verbatim (each one line, as in the Checkpoint), in order; the item is
handed back exactly as recorded.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Template

from compaction.checkpoint import encode_item, encode_task, template_environment
from compaction.events import CheckpointData, Message


def provider_item(checkpoint: CheckpointData | None, backend: str) -> dict[str, Any] | None:
    """Return the checkpoint's opaque item when `backend` made it, else None."""
    provider = checkpoint.provider if checkpoint is not None else None
    if provider is None or provider.backend != backend or provider.item is None:
        return None
    return dict(provider.item)


@cache
def _template() -> Template:
    return template_environment().get_template("provider_checkpoint.md.j2")


def code_owned_text(checkpoint: CheckpointData) -> str:
    """Return the text after the item: Pending Jobs, Current Work, the way back to the span."""
    pending = [encode_item(t) for t in checkpoint.pending]
    pending += [encode_task(t) for t in checkpoint.pending_tasks or ()]
    current = [encode_item(t) for t in checkpoint.current]
    current += [encode_task(t) for t in checkpoint.current_tasks or ()]
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
