"""What every summarizer shares: its input, its protocol and the check of its output.

A summarizer gets a `SummaryInput` (the messages of the span being replaced, the previous
Checkpoint if the session was compacted before, the latest todo list, and a token budget) and
returns narrative sections by heading name. It never owns the tasks: `Pending Jobs` and
`Current Work` are filled by the compactor from the log, and `check_output` drops them (and any
other unknown section) from whatever a summarizer returns, and fills a missing section with
``(none)``. So an LLM summarizer can be wrong, terse or verbose without ever losing a task.

Invariants: a summarizer's output reaches a Checkpoint only through `check_output`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from compaction.checkpoint import NARRATIVE_SECTIONS, Checkpoint, Section
from compaction.events import Message, TodoItem


@dataclass(frozen=True)
class SummaryInput:
    """What a summarizer reads: the span being replaced and what surrounds it."""

    messages: tuple[Message, ...]
    """The non-system messages being replaced, in log order (system messages are never here)."""
    seqs: tuple[int, ...]
    """The log seq of each message, aligned with `messages`."""
    previous: Checkpoint | None
    """The Checkpoint this compaction folds in, if the session was compacted before."""
    todos: tuple[TodoItem, ...]
    """The latest todo list, for context only: the compactor writes the task sections itself."""
    budget_tokens: int
    """The size all narrative sections together should stay within."""


@runtime_checkable
class Summarizer(Protocol):
    """Writes the narrative sections of a Checkpoint.

    An implementation returns a mapping from section heading (one of `NARRATIVE_SECTIONS`) to
    Markdown text. It may raise: the compactor then falls back to the extractive summarizer and
    records why in the checkpoint event. An LLM summarizer can parse its model's Markdown reply
    with `compaction.checkpoint.split_sections`.
    """

    @property
    def name(self) -> str:
        """A stable name recorded in each checkpoint event, e.g. ``extractive``."""
        ...

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        """Return narrative sections by heading name."""
        ...


def check_output(output: Mapping[str, str]) -> dict[Section, str]:
    """Return exactly the six narrative sections, in order, from a summarizer's output.

    A missing section becomes empty (rendered ``(none)``); a section with another name, the
    code-owned `Pending Jobs` and `Current Work` included, is dropped; a value that is not text
    is written as its JSON.
    """
    checked: dict[Section, str] = {}
    for name in NARRATIVE_SECTIONS:
        value: Any = output.get(name, "")
        checked[name] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return checked
