"""The `todo_write` tool: schema, strict validation and execution.

One tool, full overwrite: its only parameter is `todos`, an array of items with exactly `content`
and `status`. Each accepted call replaces the whole list by appending one `todo/write` event.

Model experience (these strings are a contract; tests pin them):
- accepted: ``Todo list updated: 3 pending, 1 in progress, 2 completed.``
- rejected: ``todo_write: rejected, nothing was changed. Fix the arguments and call again:``
  followed by one ``- `` line per violation, for example
  ``- todos[1]: unknown field "id"; an item has only "content" and "status"``,
  ``- todos[2].content is blank`` (also for content made only of invisible characters: zero-width
  spaces, a BOM, bidi marks, NUL and other control characters),
  ``- todos[3].content duplicates todos[0]: "Run tests"``,
  ``- 2 items are in_progress (todos[0], todos[2]); keep exactly one in_progress``,
  ``- arguments repeat the key "todos"; send each key once``,
  ``- todos[0].content is 2400 characters long; keep it to at most 2000 characters (a short
  sentence: put long detail in a file and name the file)`` (`MAX_ITEM_CHARS`, after trimming),
  ``- arguments are larger than 1000000 bytes; send a short list`` (UTF-8 bytes, not characters;
  a mapping is measured as its JSON).
- refused by mode: the mode's refusal (`compaction.tools.mode_policy`), appended nothing.
- two or more calls in one model response (the latest assistant message of the log holds
  several `todo_write` calls, one still unanswered): each is refused with
  ``- this response makes 2 todo_write calls; each is refused, so no list was lost. Send one
  todo_write call per response, holding the whole updated list`` (a call with bad arguments
  gets its violations instead); nothing is appended.

Hosts run the tool through `Session.todo_write` (or `compaction.call_tool`); this module is the
tool's face over the event models, and never touches a session. Its rules, limits and strings
live in one standard-library module, `compaction.tools._todo_rules`, which the CLI's fast path
(`compaction.tools.plain_todo_write`) asks too.

Invariants: a rejected call appends nothing and changes no view; validation never raises,
whatever bytes it is given. "At most one in_progress" is policy (`allow_parallel_in_progress`),
so it lives here and not in the log's invariants: recorded history may hold several.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from compaction.contract import TODO_WRITE
from compaction.events import Message, TodoItem
from compaction.tools import _todo_rules
from compaction.tools._todo_rules import (
    ARGUMENT_EXAMPLE,
    is_blank,
    one_list_per_response,
    parameters_schema,
)
from compaction.tools.arguments import Arguments

TOOL_NAME: Final = TODO_WRITE


def parse_todo_write(arguments: Arguments, *, allow_parallel: bool = False) -> tuple[TodoItem, ...]:
    """Validate `todo_write` arguments; return the new list or raise `ToolInputError`.

    Every violation is listed, with its item index (`_todo_rules.todo_check`, the one home of
    the rules). Never raises anything else.
    """
    todos = _todo_rules.todo_check(arguments, allow_parallel=allow_parallel)
    return tuple(TodoItem(content=content, status=status) for content, status in todos)


def calls_in_one_response(messages: Sequence[Message]) -> int:
    """Count the `todo_write` calls of the latest assistant message while one is unanswered.

    The rule is `_todo_rules.calls_in_one_response`, read over the messages' recorded fields.
    """
    return _todo_rules.calls_in_one_response(
        [
            (m.role, m.tool_call_id, [(c.id, c.function.name) for c in m.tool_calls or ()])
            for m in messages
        ]
    )


def summary_line(todos: Sequence[TodoItem]) -> str:
    """Return the one line of counts the model gets back from an accepted call."""
    return _todo_rules.summary_line([t.status for t in todos])


__all__ = [
    "ARGUMENT_EXAMPLE",
    "TOOL_NAME",
    "calls_in_one_response",
    "is_blank",
    "one_list_per_response",
    "parameters_schema",
    "parse_todo_write",
    "summary_line",
]
