"""A `todo_write` call decided with the standard library only: the CLI's fast path.

`plain_todo_call` tells whether a call would be accepted on a log whose state the JSONL store's
plain fold read (`compaction.stores.plain_log`), and returns the list it records. It asks the
same rules as the tool (`_todo_rules`: the arguments, the one-call-per-response rule) and the
shipped policy table of the built-in modes (`POLICY_FILE`, read here for `builtin_policies` too),
so nothing of the tool is written twice.

Invariants: a call this module accepts is one `parse_todo_write` accepts, under the same policy,
with the same list; anything else (a refusal, a rejection, a mode the table does not know, a
table not as expected) returns None and the caller takes the full path, which words it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from compaction.contract import TODO_WRITE
from compaction.errors import ToolInputError
from compaction.tools._todo_rules import (
    Todo,
    Turn,
    calls_in_one_response,
    summary_line,
    todo_check,
)
from compaction.tools.arguments import Arguments

POLICY_FILE: Final = "mode_policies.json"
"""The built-in modes' policy table, under ``compaction/schemas/``."""


def policy_path() -> str:
    """Return the path of the shipped policy table."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(package, "schemas", POLICY_FILE)


def policy_text() -> str:
    """Return the shipped policy table's text (raises `OSError` when it cannot be read)."""
    with open(policy_path(), encoding="utf-8") as fh:
        return fh.read()


@cache
def _plain_table() -> dict[str, Any] | None:
    """Return the shipped table as plain data, or None when it is not as expected."""
    try:
        table = json.loads(policy_text())
    except (OSError, ValueError):
        return None
    if not isinstance(table, dict) or not all(map(_is_policy, table.values())):
        return None
    return table


def _is_policy(policy: object) -> bool:
    return (
        isinstance(policy, dict)
        and policy.keys() == {"allow_parallel_in_progress", "refusals"}
        and type(policy["allow_parallel_in_progress"]) is bool
        and isinstance(policy["refusals"], dict)
        and all(type(v) is str for v in policy["refusals"].values())
    )


@dataclass(frozen=True)
class Accepted:
    """An accepted call: the list it records and what the model reads back."""

    todos: list[Todo]
    """The new list: each item's trimmed content and status."""
    content: str
    """The model-facing result (``Todo list updated: ...``)."""


def plain_todo_call(
    arguments: Arguments,
    *,
    mode: str | None,
    log_mode: str | None,
    messages: Sequence[Turn],
    allow_parallel: bool,
) -> Accepted | None:
    """Return an accepted `todo_write` call's list and result, or None: the full path answers.

    Args:
        arguments: the call's arguments as the model sent them.
        mode: the mode asked for (``--mode``), a built-in one or None.
        log_mode: the mode of the log's latest turn (used when `mode` is None).
        messages: the context's messages as the one-call rule reads them.
        allow_parallel: accept several ``in_progress`` items whatever the mode says.
    """
    table = _plain_table()
    if table is None or (mode is not None and mode not in table):
        return None
    current = log_mode if mode is None else mode
    policy = table.get(current, {}) if current is not None else {}
    if TODO_WRITE in policy.get("refusals", {}):
        return None
    parallel = allow_parallel or bool(policy.get("allow_parallel_in_progress", False))
    try:
        todos = todo_check(arguments, allow_parallel=parallel)
    except ToolInputError:
        return None
    if calls_in_one_response(messages) > 1:
        return None
    return Accepted(todos, summary_line([status for _, status in todos]))
