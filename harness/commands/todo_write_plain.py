"""`harness todo-write LOG` on a JSONL file, without pydantic: an accepted call, written plainly.

The common case (a JSONL file, or none yet, no ``--session`` or ``--modes-file``, a built-in or
no ``--mode``, a log `plain_events.fold_log` reads, arguments the tool accepts as they are)
needs no model: under the log's lock this module reads the log, checks the arguments by the
tool's rules (the size cap, JSON with no repeated key, exactly ``todos`` of items with exactly
``content`` and ``status``, content trimmed, not blank or invisible, at most `MAX_ITEM_CHARS`,
no duplicate, one ``in_progress`` unless the mode allows more), appends the ``todo/write``
line, fsyncs, and returns the result. Anything else returns None before a byte is written
(a call the tool would reject or the mode refuse, a log it cannot read, a failed write, cut
back; a missing log is created only for a call accepted on an empty one), and the command
takes the full path (`Session.todo_write`), which words every error.

Invariants: when `plain_todo_write` returns a result, the line it appended and the result are
byte for byte what the full path appends and returns (`tests/e2e/test_todo_write_plain.py`
compares them over generated calls and logs); the constants below equal the tool's.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.commands.plain_events import (
    TODO_STATUSES,
    LogState,
    calls_in_one_response,
    canonical,
    fold_log,
)

try:
    import fcntl
except ImportError:  # Windows: the full path locks with msvcrt
    fcntl = None  # type: ignore[assignment]

TOOL_NAME = "todo_write"
MAX_ARGUMENT_BYTES = 1_000_000
"""`compaction.tools.MAX_ARGUMENT_BYTES` (a test keeps them equal)."""
MAX_ITEM_CHARS = 2000
"""`compaction.tools.MAX_ITEM_CHARS` (a test keeps them equal)."""
MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The longest line an append writes (`compaction.stores`' limit; a test keeps them equal)."""
INVISIBLE_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")
"""Characters that show nothing though not format characters (the tool's `is_blank`)."""
POLICY_FILE = ("schemas", "mode_policies.json")
"""The shipped policy table of the built-in modes, under the `compaction` package."""

Policy = dict[str, Any]


@dataclass(frozen=True)
class Written:
    """An accepted call: what the model reads, and the list now recorded."""

    content: str
    todos: list[dict[str, str]]


def plain_todo_write(
    log: str,
    arguments: str | bytes,
    *,
    session: str | None,
    modes_file: str | None,
    mode: str | None,
    allow_parallel: bool,
) -> Written | None:
    """Run an accepted `todo_write` call on the JSONL file `log`; None: the full path answers."""
    if session is not None or modes_file is not None or "://" in log or fcntl is None:
        return None
    table = policy_table()
    if table is None or (mode is not None and mode not in table):
        return None
    fd = _open_log(log, lambda: _accepted(LogState(), arguments, table, mode, allow_parallel))
    if fd is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            return _write_locked(fd, arguments, table, mode, allow_parallel)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _open_log(log: str, accepted_when_empty: Callable[[], object]) -> int | None:
    """Open the regular file `log` for appending; None: not a regular file, or not openable.

    A log that does not exist yet is created (its folders too, as the full path creates them)
    only when the call would be accepted on an empty log, so a rejected call leaves no file.
    """
    try:
        info = os.stat(log)
    except FileNotFoundError:
        if os.path.lexists(log) or accepted_when_empty() is None:
            return None  # a dangling symlink, or a call the full path must answer
        info = None
    except (OSError, ValueError):
        return None
    if info is not None and not stat.S_ISREG(info.st_mode):
        return None
    try:
        if info is None:
            os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        return os.open(log, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return None


def _accepted(
    state: LogState,
    arguments: str | bytes,
    table: dict[str, Policy],
    mode: str | None,
    parallel: bool,
) -> list[dict[str, str]] | None:
    """Return the list the call records on a log in `state`, or None when it is not accepted."""
    policy = _policy(table, state, mode)
    if TOOL_NAME in policy["refusals"]:
        return None
    todos = valid_todos(arguments, allow_parallel=parallel or policy["allow_parallel_in_progress"])
    if todos is None or calls_in_one_response(state.messages) > 1:
        return None
    return todos


def _write_locked(
    fd: int, arguments: str | bytes, table: dict[str, Policy], mode: str | None, parallel: bool
) -> Written | None:
    """Read the log, check the call, append its line (the lock held); None: nothing written."""
    data = _read_all(fd)
    state = fold_log(data)
    if state is None:
        return None
    todos = _accepted(state, arguments, table, mode, parallel)
    if todos is None:
        return None
    event = {"v": 1, "seq": state.next_seq, "type": "todo/write", "data": {"todos": todos}}
    line = canonical(event) + b"\n"
    if len(line) > MAX_EVENT_BYTES or not _append(fd, len(data), line):
        return None
    return Written(summary_line(todos), todos)


def _policy(table: dict[str, Policy], state: LogState, mode: str | None) -> Policy:
    """Return the policy of `mode`, else of the log's latest turn (`policy_for`'s rule)."""
    current = state.mode if mode is None else mode
    default: Policy = {"allow_parallel_in_progress": False, "refusals": {}}
    return default if current is None else table.get(current, default)


def _read_all(fd: int) -> bytes:
    """Return the whole file behind `fd`."""
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _append(fd: int, size: int, line: bytes) -> bool:
    """Write `line` at the end and fsync it; on a failure cut the file back and return False."""
    done = 0
    try:
        while done < len(line):
            done += os.write(fd, line[done:])
        os.fsync(fd)
    except OSError:
        os.ftruncate(fd, size)
        os.fsync(fd)
        return False
    return True


def policy_table() -> dict[str, Policy] | None:
    """Return the shipped table of the built-in modes as plain data (None: not as expected)."""
    import compaction

    path = os.path.join(os.path.dirname(compaction.__file__), *POLICY_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            table = json.load(fh)
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


def valid_todos(arguments: str | bytes, *, allow_parallel: bool) -> list[dict[str, str]] | None:
    """Return the list a `todo_write` call records, or None when the tool would reject it."""
    size = len(arguments) if isinstance(arguments, bytes) else _utf8_length(arguments)
    if size > MAX_ARGUMENT_BYTES:
        return None
    try:
        obj = json.loads(arguments, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError, TypeError, MemoryError):
        return None
    if not isinstance(obj, dict) or list(obj) != ["todos"] or not isinstance(obj["todos"], list):
        return None
    todos: list[dict[str, str]] = []
    seen: set[str] = set()
    for item in obj["todos"]:
        if not isinstance(item, dict) or item.keys() != {"content", "status"}:
            return None
        content, status = item["content"], item["status"]
        if type(content) is not str or type(status) is not str or status not in TODO_STATUSES:
            return None
        text = content.strip()
        if is_blank(text) or len(text) > MAX_ITEM_CHARS or not _encodable(text) or text in seen:
            return None
        seen.add(text)
        todos.append({"content": text, "status": status})
    if not allow_parallel and sum(t["status"] == "in_progress" for t in todos) > 1:
        return None
    return todos


def is_blank(content: str) -> bool:
    """Tell whether `content` shows nothing (the tool's `is_blank`; a test keeps them equal)."""
    return all(
        ch.isspace() or ch in INVISIBLE_FILLERS or unicodedata.category(ch) in ("Cf", "Cc")
        for ch in content
    )


def summary_line(todos: list[dict[str, str]]) -> str:
    """Return the line an accepted call returns (the tool's `summary_line`)."""
    counts = dict.fromkeys(TODO_STATUSES, 0)
    for t in todos:
        counts[t["status"]] += 1
    return (
        f"Todo list updated: {counts['pending']} pending, {counts['in_progress']} in progress, "
        f"{counts['completed']} completed."
    )


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _RepeatedKeyError(ValueError):
    """A JSON object repeats a key (the tool rejects it)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKeyError(key)
        out[key] = value
    return out
