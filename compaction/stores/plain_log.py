"""A JSONL log read and appended with the standard library only: the CLI's fast path.

`fold_plain` reads a log's bytes without the event models and returns what `harness todos` and
`harness todo-write` need (the next seq, the latest turn's mode, the context's tool calls, the
task panel and the latest list); `append_plain` appends one line under the log's lock and
fsyncs it. They take only the common case: a log whose every line has the envelope of
`compaction.contract.ENVELOPE`, ``v`` `SCHEMA_VERSION`, seqs that follow the contract's
`seq_follows`, and (``exact=True``) exactly the bytes `dump_event` writes for the event kinds of
`_plain_shapes.SHAPES`. Any other log returns None, and the caller takes the full path, which
reads the log through the one `LogReader` and words every error.

Invariants: when `fold_plain` returns a state, a `Session` replaying the log sees the same seq,
mode, calls and lists (`tests/e2e/test_todo_write_plain.py`, `tests/e2e/test_todos_plain.py`);
`append_plain` writes nothing unless the line is accepted and whole, and cuts the file back if
the write fails; it creates a missing log only when `build` accepts the empty log
(`tests/unit/compaction/stores/test_plain_log.py`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from compaction.contract import (
    CARRY_EVENTS,
    ENVELOPE,
    EVENT_TYPES,
    MAX_EVENT_BYTES,
    MESSAGE,
    SCHEMA_VERSION,
    TODO_WRITE_EVENT,
    TURN_START,
    TodoStatus,
    seq_follows,
)
from compaction.stores._locking import lock_exclusive, unlock
from compaction.stores._plain_shapes import SHAPES, todo_list_shape

PlainTodos: TypeAlias = list[tuple[str, TodoStatus]]
"""A todo list as recorded: content and status of each item."""
PlainCall: TypeAlias = tuple[str, str]
"""A recorded tool call: its id and its function's name."""


@dataclass
class PlainLog:
    """What the fast path needs of a log: where it ends, its mode, its calls, its lists."""

    next_seq: int = 1
    """The seq the next event gets."""
    mode: str | None = None
    """The mode of the latest ``turn/start`` (None: no turn, or a turn without one)."""
    messages: list[tuple[str, str | None, list[PlainCall]]] = field(default_factory=list)
    """The context's messages (not system ones): role, tool_call_id, tool calls."""
    turns: int = 0
    """``turn/start`` events read."""
    panel: PlainTodos = field(default_factory=list)
    """The task panel: the latest list written in the current turn (a turn empties it)."""
    latest: PlainTodos = field(default_factory=list)
    """The latest list written, in whatever turn."""
    latest_seq: int = 0
    """The seq of the ``todo/write`` that wrote `latest` (0: none)."""
    latest_turn: int = 0
    """The turn `latest` was written in (0: before any turn)."""
    carries: bool = False
    """Whether the log holds an approved plan or a job (the full path shows those)."""


def canonical(obj: object) -> bytes:
    """Return `obj` as one line of compact JSON, the form `dump_event` writes (UTF-8)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def event_line(seq: int, kind: str, data: dict[str, Any]) -> bytes:
    """Return the log line of an event, its newline included, as `dump_event` writes it."""
    return canonical(dict(zip(ENVELOPE, (SCHEMA_VERSION, seq, kind, data), strict=True))) + b"\n"


def fold_plain(data: bytes, *, exact: bool) -> PlainLog | None:
    """Return the state of the log `data`, or None when the full path must read it.

    Args:
        data: the whole log.
        exact: take only lines of the exact shapes `dump_event` writes for the kinds of
            `SHAPES` (what an append needs); otherwise any known event type, only the envelope,
            the seqs and the todo lists checked (what the panel needs).
    """
    if data and not data.endswith(b"\n"):
        return None
    state = PlainLog()
    for line in data.split(b"\n")[:-1] if data else ():
        if not _take(state, line, exact):
            return None
    return state


def _take(state: PlainLog, line: bytes, exact: bool) -> bool:
    """Fold one line into `state`; return False when it is not of a shape this fold reads."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or obj.keys() != set(ENVELOPE):
        return False
    v, seq, kind, data = (obj[key] for key in ENVELOPE)
    if type(v) is not int or v != SCHEMA_VERSION or type(seq) is not int:
        return False
    if not seq_follows(state.next_seq - 1, seq) or not isinstance(data, dict):
        return False
    if exact and not _exact(obj, kind, data, line):
        return False
    if kind not in EVENT_TYPES or (kind == TODO_WRITE_EVENT and not todo_list_shape(data)):
        return False
    state.next_seq = seq + 1
    _apply(state, kind, data, exact)
    return True


def _exact(obj: dict[str, Any], kind: object, data: dict[str, Any], line: bytes) -> bool:
    """Tell whether `line` is exactly what `dump_event` writes for a kind of `SHAPES`."""
    shape = SHAPES.get(kind) if isinstance(kind, str) else None
    if shape is None or not shape(data):
        return False
    try:
        return canonical(obj) == line
    except UnicodeEncodeError:  # a lone surrogate: the models' business
        return False


def _apply(state: PlainLog, kind: str, data: dict[str, Any], exact: bool) -> None:
    """Apply one accepted event to `state` (the mode and the calls only of an exact shape)."""
    if kind == TURN_START:
        state.turns += 1
        state.mode = data.get("mode") if exact else None
        state.panel = []
    elif kind == TODO_WRITE_EVENT:
        todos = [(item["content"], item["status"]) for item in data["todos"]]
        state.panel = state.latest = todos
        state.latest_seq, state.latest_turn = state.next_seq - 1, state.turns
    elif kind in CARRY_EVENTS:
        state.carries = True
    elif exact and kind == MESSAGE and data["role"] != "system":
        calls = [(c["id"], c["function"]["name"]) for c in data.get("tool_calls", ())]
        state.messages.append((data["role"], data.get("tool_call_id"), calls))


def read_plain(path: str) -> bytes | None:
    """Return the bytes of the regular file `path`, or None (missing, not a file, unreadable)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            return fh.read()
    except (OSError, ValueError):
        return None


def append_plain(path: str, build: Callable[[PlainLog], bytes | None]) -> bool:
    """Append the line `build` returns for the log's state, under the log's lock; fsync it.

    `build` gets the exactly folded state of the log as it is under the lock and returns the
    whole line to append (`event_line`), or None to write nothing. Returns whether a line was
    appended: False for a log `fold_plain` does not take, a path that is not a regular file, a
    line over `MAX_EVENT_BYTES`, a refusal by `build` or a failed write (the file cut back).
    """
    fd = _open_log(path, lambda: build(PlainLog()) is not None)
    if fd is None:
        return False
    try:
        lock_exclusive(fd)
        try:
            data = _read_all(fd)
            state = fold_plain(data, exact=True)
            line = None if state is None else build(state)
            if line is None or len(line) > MAX_EVENT_BYTES:
                return False
            return _append(fd, len(data), line)
        finally:
            unlock(fd)
    finally:
        os.close(fd)


def _open_log(path: str, accepted_when_empty: Callable[[], bool]) -> int | None:
    """Open the regular file `path` for appending; None: not a regular file, or not openable.

    A log that does not exist yet is created (its folders too, as the full path creates them)
    only when the call would be accepted on an empty log, so a rejected call leaves no file.
    """
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path) or not accepted_when_empty():
            return None  # a dangling symlink, or a call the full path must answer
        info = None
    except (OSError, ValueError):
        return None
    if info is not None and not stat.S_ISREG(info.st_mode):
        return None
    try:
        if info is None:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return None


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


__all__ = [
    "PlainCall",
    "PlainLog",
    "PlainTodos",
    "append_plain",
    "canonical",
    "event_line",
    "fold_plain",
    "read_plain",
]
