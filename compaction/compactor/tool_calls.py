"""`call_tool` for agent loops: every built-in tool, the ``compact_context`` tool included.

The dispatcher of the tools room (`compaction.tools.dispatch.call_tool`) runs the session's own
tools and the host's, under the turn's mode policy. ``compact_context`` runs a compaction, which
sits above the tools room, so this module adds it: `call_tool` here is the one a host imports
(``from compaction import call_tool``); it hands ``compact_context`` to the dispatcher as a
handler, so the mode policy, the argument checks and the unknown-tool answer stay in one place.

`compact_context` compacts at the next safe cut, as a forced compaction would (the call's own
assistant message, waiting for this result, stays in the kept tail), and returns one line naming
the span replaced and the tokens saved, or saying plainly that there is nothing to compact.

Invariants: a refused or rejected call appends nothing; a compaction it runs is an ordinary
``compaction/checkpoint`` event (with its receipt), whose ``instructions`` hold the model's focus.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compaction.compactor.compact import CompactionPolicy, compact
from compaction.compactor.compact_context import (
    COMPACT_CONTEXT,
    MIN_NEW_TOKENS,
    NOTHING_LINE,
    compacted_line,
    not_compacted_line,
    parse_compact_context,
    too_little_line,
)
from compaction.errors import CompactionError, ToolInputError
from compaction.session import Session
from compaction.summarizers import Summarizer
from compaction.tools.arguments import Arguments
from compaction.tools.dispatch import ToolHandler
from compaction.tools.dispatch import call_tool as dispatch
from compaction.tools.tool_result import ToolResult


def compact_context(
    session: Session,
    arguments: Arguments | None = None,
    *,
    policy: CompactionPolicy | None = None,
    fixed_tokens: int = 0,
    summarizer: Summarizer | None = None,
    min_new_tokens: int = MIN_NEW_TOKENS,
) -> ToolResult:
    """Run ``compact_context`` (the mode policy is the caller's to check: see `call_tool`).

    Args:
        session: the live session.
        arguments: the model's arguments (an optional ``focus``).
        policy: the window and the tail (default `CompactionPolicy()`).
        fixed_tokens: the system prompt and tool catalog (`prompts.fixed_tokens`).
        summarizer: writes the narrative (default: extractive).
        min_new_tokens: the floor: with less new content since the last Checkpoint (messages
            appended after it, counted), nothing is compacted (0: no floor; a session without
            a Checkpoint has no floor).
    """
    try:
        focus = parse_compact_context(arguments)
    except ToolInputError as exc:
        return ToolResult(str(exc), is_error=True)
    new = new_tokens(session) if session.checkpoint_seq else min_new_tokens
    if new < min_new_tokens:
        return ToolResult(too_little_line(new, min_new_tokens))
    try:
        result = compact(
            session,
            policy,
            summarizer=summarizer,
            force=True,
            instructions=focus,
            fixed_tokens=fixed_tokens,
        )
    except CompactionError as exc:
        if exc.code in ("nothing_to_compact", "no_safe_cut"):
            return ToolResult(NOTHING_LINE)
        return ToolResult(not_compacted_line(str(exc)), is_error=True)
    data = result.data
    return ToolResult(compacted_line(1, data.last_seq, data.tokens_before, data.tokens_after))


def new_tokens(session: Session) -> int:
    """Tokens of the context's messages appended after the newest Checkpoint (all, without one)."""
    since = session.checkpoint_seq
    return sum(session.event_tokens(seq) for seq in session.context.seqs if seq > since)


def call_tool(
    session: Session,
    name: str,
    arguments: Arguments | None = None,
    *,
    policy: CompactionPolicy | None = None,
    fixed_tokens: int = 0,
    summarizer: Summarizer | None = None,
    handlers: Mapping[str, ToolHandler] | None = None,
    agent: str | None = None,
    mode: str | None = None,
    min_new_tokens: int = MIN_NEW_TOKENS,
) -> ToolResult:
    """Run the tool `name` as `compaction.tools.call_tool` does, ``compact_context`` included.

    Args:
        session: the session whose current mode decides (as for every tool).
        name: the tool called.
        arguments: its raw arguments, as the dispatcher takes them.
        policy: for ``compact_context``: the window and tail (default `CompactionPolicy()`).
        fixed_tokens: for ``compact_context``: the system prompt and tool catalog's tokens.
        summarizer: for ``compact_context``: writes the narrative (default: extractive).
        handlers: the host's tools by name (as `compaction.tools.call_tool`'s, whose result
            this returns: ``is_error`` when the call was refused or rejected).
        agent: the calling agent, for the task tools.
        mode: a mode to run under instead of the current turn's.
        min_new_tokens: for ``compact_context``: the floor of new content since the last
            Checkpoint below which it answers "Nothing to compact" (0: no floor).
    """

    def run_compact(parsed: dict[str, Any]) -> ToolResult:
        return compact_context(
            session, parsed, policy=policy, fixed_tokens=fixed_tokens, summarizer=summarizer,
            min_new_tokens=min_new_tokens,
        )  # fmt: skip

    table: dict[str, ToolHandler] = {**(handlers or {}), COMPACT_CONTEXT: run_compact}
    return dispatch(session, name, arguments, handlers=table, agent=agent, mode=mode)


__all__ = [
    "call_tool",
    "compact_context",
]
