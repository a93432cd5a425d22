"""The ``compact_context`` tool: the model asks to compact its context at a natural break.

OpenHands (a condensation request) and deepagents (``compact_conversation``) let the model ask;
here the host opts in to show the tool (`prompts.ToolCatalog(compact_context=True)`; off by
default) and `compaction.call_tool` runs it under the turn's mode policy (the built-in modes all
allow it). This module owns its schema, its validation and every model-facing string; the run
itself (a forced compaction at the next safe cut) is
`compaction.compactor.tool_calls.compact_context`, above the compactor.

Model experience (these strings are a contract; tests pin them):

- compacted: ``Context compacted: events 1..213 replaced by a Checkpoint; 41250 tokens saved
  (52000 -> 10750).``
- nothing to compact: ``Nothing to compact: the context holds no message before this call
  that can be replaced.`` (not an error: the model goes on)
- too little new: ``Nothing to compact: only 340 tokens of new content since the last
  Checkpoint (the floor is 2000); go on with the task.`` (not an error). A call made before
  `MIN_NEW_TOKENS` of new messages arrived since the last Checkpoint compacts nothing: a model
  that calls the tool again and again would otherwise write a Checkpoint each time, each saving
  less. The host sets the floor (``min_new_tokens=`` of `compaction.call_tool`; 0: no floor).
- cannot: ``compact_context: not compacted: <why>.`` (``is_error``), e.g. when the Checkpoint
  alone would not fit the window;
- rejected: ``compact_context: rejected, nothing was changed. Fix the arguments and call
  again:`` then one line per problem, e.g. ``- unknown parameter "now"; compact_context takes
  only "focus"``.

Invariants: a rejected call appends nothing; validation raises nothing but `ToolInputError`.
"""

from __future__ import annotations

from typing import Any, Final

from compaction import contract
from compaction.errors import ToolInputError
from compaction.events import surrogate_problem
from compaction.tools.arguments import Arguments, load_arguments, show

COMPACT_CONTEXT: Final = contract.COMPACT_CONTEXT
"""The tool's name."""
FOCUS_CHARS: Final = 2000
"""Longest ``focus`` accepted."""
MIN_NEW_TOKENS: Final = 2000
"""Default floor: tokens of messages that must have arrived since the last Checkpoint."""


def compact_context_schema() -> dict[str, Any]:
    """Return the JSON schema of the tool's parameters: one optional ``focus`` string."""
    return {
        "type": "object",
        "properties": {
            "focus": {
                "type": "string",
                "description": "What the summary should keep in particular (optional).",
                "maxLength": FOCUS_CHARS,
            }
        },
        "additionalProperties": False,
    }


def parse_compact_context(arguments: Arguments | None) -> str | None:
    """Validate the arguments; return the focus (None when not given) or raise `ToolInputError`."""
    if arguments is None or (isinstance(arguments, str | bytes) and not arguments.strip()):
        return None
    obj = load_arguments(
        arguments, COMPACT_CONTEXT, example='{"focus": "the API decisions"}', shape="of its options"
    )
    problems = [
        f'unknown parameter {show(key)}; compact_context takes only "focus"'.encode(
            "utf-8", "backslashreplace"
        ).decode()
        for key in obj
        if key != "focus"
    ]
    focus = obj.get("focus")
    if focus is not None and not isinstance(focus, str):
        problems.append('"focus" must be a string')
    elif isinstance(focus, str) and len(focus) > FOCUS_CHARS:
        problems.append(f'"focus" is longer than {FOCUS_CHARS} characters; send a short one')
    elif isinstance(focus, str) and (problem := surrogate_problem('"focus"', focus)):
        problems.append(problem)
    if problems:
        raise ToolInputError(COMPACT_CONTEXT, problems)
    return focus.strip() or None if isinstance(focus, str) else None


def compacted_line(first_seq: int, last_seq: int, before: int, after: int) -> str:
    """Return the result of a compaction: the span replaced and the tokens saved."""
    return (
        f"Context compacted: events {first_seq}..{last_seq} replaced by a Checkpoint; "
        f"{before - after} tokens saved ({before} -> {after})."
    )


NOTHING_LINE: Final = (
    "Nothing to compact: the context holds no message before this call that can be replaced."
)
"""The result when there is nothing to compact."""


def too_little_line(new_tokens: int, floor: int) -> str:
    """Return the result when less than the floor of new content arrived since the Checkpoint."""
    return (
        f"Nothing to compact: only {new_tokens} tokens of new content since the last "
        f"Checkpoint (the floor is {floor}); go on with the task."
    )


def not_compacted_line(why: str) -> str:
    """Return the error result when compaction was attempted and could not be done."""
    return f"{COMPACT_CONTEXT}: not compacted: {why.rstrip('.')}."


__all__ = [
    "COMPACT_CONTEXT",
    "MIN_NEW_TOKENS",
    "compact_context_schema",
]
