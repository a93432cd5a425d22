"""Todo lists and shared tasks read back out of prompt text, JSON or Python repr.

Standard library only: the fake summarizer runs it under each peer's interpreter, and the scorer
imports it in our process, so both read a prompt the same way.

Invariants: pure functions of the text.
"""

from __future__ import annotations

import ast
import html
import json
import re

_TODOS_KEY = re.compile(r"""["'](todos|task_list)["']\s*:\s*\[""")
_TASK_STATUS = {"todo": "pending", "done": "completed"}
"""OpenHands task-tracker statuses in our words (``in_progress`` is the same)."""
_STATUSES = frozenset({"pending", "in_progress", "completed"})


def _balanced(text: str, start: int) -> str | None:
    """Return the bracketed span opening at `start`, honouring quoted strings."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _todo_list(value: object) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        return None
    items = []
    for item in value:
        if not isinstance(item, dict):
            return None
        content = item.get("content", item.get("title"))
        if not isinstance(content, str):
            return None
        status = str(item.get("status", ""))
        if "content" not in item:  # OpenHands' task_list item: its own status words
            status = _TASK_STATUS.get(status, status)
        if status not in _STATUSES:
            return None  # a list the tool refused (a status outside the three): none written
        items.append({"content": content, "status": status})
    return items


def extract_todo_lists(text: str) -> list[list[dict[str, str]]]:
    """Return every todo list written out in `text` (JSON or Python repr), in order.

    Finds ``"todos": [...]`` payloads (and OpenHands' ``"task_list": [...]``, whose ``title`` is
    the content and whose ``todo``/``done`` are ``pending``/``completed``) whether they appear as
    JSON (tool-call arguments, our copy summaries), HTML-escaped JSON (LangChain's XML
    transcript) or a Python repr with the key.
    """
    text = html.unescape(text)
    found: list[list[dict[str, str]]] = []
    for match in _TODOS_KEY.finditer(text):
        span = _balanced(text, match.end() - 1)
        if span is None:
            continue
        value: object
        try:
            value = json.loads(span)
        except ValueError:
            try:
                value = ast.literal_eval(span)
            except (ValueError, SyntaxError):
                continue
        todos = _todo_list(value)
        if todos is not None:
            found.append(todos)
    return found


_CREATED = re.compile(r"(?:Created task |Task #)([A-Za-z0-9_.:-]{1,64}?)(?::| created)")
"""A task tool's answer naming the new task: ours (``Created task 3: ...``) or Claude Code's
(``Task #3 created successfully: ...``), as `harness.simulation` reads it."""
_UPDATE_KEY = re.compile(r"""["']taskId["']\s*:""")
_TASKS_KEY = re.compile(r"""["']tasks["']\s*:\s*\[""")


def _literal(span: str) -> object:
    try:
        return json.loads(span)
    except ValueError:
        try:
            return ast.literal_eval(span)
        except (ValueError, SyntaxError):
            return None


def _update_at(text: str, at: int) -> tuple[str, str] | None:
    """Return (id, status) of the task-update arguments around offset `at`, if it sets one."""
    start = text.rfind("{", 0, at)
    span = _balanced(text, start) if start >= 0 else None
    value = _literal(span) if span else None
    if not isinstance(value, dict):
        return None
    task, status = value.get("taskId"), value.get("status")
    if isinstance(task, str | int) and isinstance(status, str):
        return str(task), status
    return None


def _copied_at(text: str, at: int) -> dict[str, str] | None:
    """Return the task list a summary copied (``"tasks": [{"id", "status"}]``) at `at`."""
    span = _balanced(text, at)
    value = _literal(span) if span else None
    if not isinstance(value, list):
        return None
    out: dict[str, str] = {}
    for item in value:
        if not isinstance(item, dict) or set(item) != {"id", "status"}:
            return None  # only the copy summary's own shape, never some tool's JSON
        if not isinstance(item["status"], str):
            return None
        out[str(item.get("id"))] = str(item["status"])
    return out


def extract_task_state(text: str) -> dict[str, str]:
    """Return the shared tasks `text` shows, id -> latest status, reading it in order.

    A task-create answer (``Task #3 created``) makes its task ``pending``; task-update arguments
    (``{"taskId": "3", "status": ...}``, JSON or Python repr, HTML-escaped or not) set its status;
    a copied list (``"tasks": [{"id", "status"}]``, what the copy summarizer writes) replaces
    everything before it.
    """
    text = html.unescape(text)
    events: list[tuple[int, str, re.Match[str]]] = [
        *((m.start(), "create", m) for m in _CREATED.finditer(text)),
        *((m.start(), "update", m) for m in _UPDATE_KEY.finditer(text)),
        *((m.start(), "copied", m) for m in _TASKS_KEY.finditer(text)),
    ]
    state: dict[str, str] = {}
    for _, kind, match in sorted(events, key=lambda e: e[0]):
        if kind == "create":
            state[match.group(1)] = "pending"
        elif kind == "update" and (update := _update_at(text, match.start())) is not None:
            state[update[0]] = update[1]
        elif kind == "copied" and (copied := _copied_at(text, match.end() - 1)) is not None:
            state = copied
    return state


def task_payload(state: dict[str, str]) -> str:
    """Return the JSON a copy summary writes for `state`: ``{"tasks": [{"id", "status"}]}``."""
    items = [{"id": task, "status": status} for task, status in state.items()]
    return json.dumps({"tasks": items}, ensure_ascii=False)
