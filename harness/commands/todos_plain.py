"""`harness todos LOG` into a pipe, without pydantic or rich: the panel folded from the JSON lines.

The common case (a JSONL file, no ``--session``, ``--json`` or ``--follow``, stdout not a
terminal) needs only the ``todo/write`` and ``turn/start`` events: this module reads the file
with the standard library, checks every line's envelope (``v`` 1, ``seq`` 1, 2, 3..., a known
``type``, the four fields) and each todo list's exact shape, and prints what the full path prints.
Anything else (a store, a torn or blank line, an envelope or a list it would have to explain, a
content rich would change: control characters, trailing spaces; a terminal or a forced colour)
returns None, and the command takes the full path, which reads the log through the one
`LogReader` and refuses a malformed log with its usual message.

Invariants: when `plain_todos` returns text, it is byte for byte what the full path prints
(`tests/e2e/test_todos_plain.py` compares the two); it never writes to the log.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

EVENT_TYPES = frozenset(
    {
        "turn/start",
        "message",
        "todo/write",
        "task/create",
        "task/update",
        "turn/end",
        "compaction/checkpoint",
        "usage/report",
        "message/retract",
        "context/overflow",
        "plan/approve",
        "job/start",
        "job/end",
    }
)
"""The ``type`` of every event the log schema knows (a test keeps it equal to the models')."""
TODO_STATUSES = ("pending", "in_progress", "completed")
STATUS_MARKS = {"completed": "✓", "in_progress": "◉", "pending": "○"}
ENVELOPE = frozenset({"v", "seq", "type", "data"})
STYLED_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
"""Environment variables that make rich style output that is not a terminal."""

Todos = list[tuple[str, str]]


def plain_todos(log: str, *, session: str | None, json_out: bool, follow: bool) -> str | None:
    """Return what `harness todos LOG` prints, or None when the full path must answer."""
    if session is not None or json_out or follow or "://" in log:
        return None
    if any(name in os.environ for name in STYLED_ENV):
        return None
    try:
        info = os.stat(log)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(log, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    folded = _fold(data)
    return None if folded is None else _render(*folded)


def _fold(data: bytes) -> tuple[Todos, Todos, int, int] | None:
    """Return the panel, the latest list, its seq and its turn (None: give up)."""
    if data and not data.endswith(b"\n"):
        return None
    panel: Todos = []
    latest: Todos = []
    latest_seq = written = turn = 0
    seq = 0
    for line in data.split(b"\n")[:-1] if data else ():
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict) or obj.keys() != ENVELOPE:
            return None
        v, n, kind = obj["v"], obj["seq"], obj["type"]
        if type(v) is not int or v != 1 or type(n) is not int or n != seq + 1:
            return None
        if kind not in EVENT_TYPES or not isinstance(obj["data"], dict):
            return None
        seq = n
        if kind in ("plan/approve", "job/start", "job/end"):
            return None  # the full path shows the jobs and the plan below the panel
        if kind == "turn/start":
            turn += 1
            panel = []
        elif kind == "todo/write":
            todos = _todos(obj["data"])
            if todos is None:
                return None
            panel, latest, latest_seq, written = todos, todos, seq, turn
    return panel, latest, latest_seq, max(written, 1)


def _todos(data: dict[str, Any]) -> Todos | None:
    """Return a todo list of exactly the recorded shape, else None."""
    items = data.get("todos")
    if data.keys() != {"todos"} or not isinstance(items, list):
        return None
    out: Todos = []
    for item in items:
        if not isinstance(item, dict) or item.keys() != {"content", "status"}:
            return None
        content, status = item["content"], item["status"]
        if type(content) is not str or status not in TODO_STATUSES or not _printable(content):
            return None
        out.append((content, status))
    return out


def _printable(text: str) -> bool:
    """Whether rich prints `text` unchanged: no control character, no trailing white space."""
    return text.isprintable() and text == text.rstrip()


def _render(panel: Todos, latest: Todos, latest_seq: int, turn: int) -> str:
    if not panel and latest and all(status == "completed" for _, status in latest):
        where = (
            f"no list in this turn; the latest, seq {latest_seq} in turn {turn}: "
            f"all {len(latest)} completed"
        )
        return where + "\n" + _panel(panel) + "\n"
    if panel or all(status == "completed" for _, status in latest):
        return _panel(panel) + "\n"
    carried = (
        f"carried from turn {turn}: no list written in this turn; the latest list "
        f"(seq {latest_seq}) still has unfinished items"
    )
    return carried + "\n" + _panel(latest) + "\n"


def _panel(todos: Todos) -> str:
    counts = dict.fromkeys(TODO_STATUSES, 0)
    for _, status in todos:
        counts[status] += 1
    lines = [
        f"{counts['completed']} completed, {counts['in_progress']} in progress, "
        f"{counts['pending']} pending"
    ]
    lines += [f"{STATUS_MARKS[status]} {content}" for content, status in todos]
    return "\n".join(lines)
