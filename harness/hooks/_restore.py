"""The texts the hooks print: summary instructions before a compaction, the restore block after.

The restore block opens with the audit line ("the summary kept N of M open items"), then lists
every open item verbatim, ids kept, so the agent's next request holds all of them whatever its
summary said. Each agent gets it in its own hook output format (`output_for`).

Invariants: every open item appears in the block exactly as the transcript holds it; the block
names no path, key or environment value, only the items and counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.hooks._fold import Item

HEAD = "[Context Harness]"

SECTIONS = (
    ("todo", "Todo list:"),
    ("task", "Shared tasks (by id):"),
    ("plan", "The approved plan:"),
    ("job", "Jobs still running:"),
)
"""The block's sections, in order: each kind of open item under its heading."""


def kept_count(items: Sequence[Item], summary: str | None) -> int:
    """Return how many of `items` the summary kept (verbatim, or a task by id)."""
    return sum(1 for item in items if summary is not None and item.kept_by(summary) is not None)


def restore_block(items: Sequence[Item], summary: str | None) -> str:
    """Return the block that restores every open item after a compaction."""
    kept = kept_count(items, summary)
    lines = [
        f"{HEAD} After the compaction, the summary kept {kept} of {len(items)} open items. "
        "Every open item, restored verbatim from the session; continue from these:"
    ]
    for kind, heading in SECTIONS:
        found = [i.line() for i in items if i.kind == kind]
        lines += ["", heading, *found] if found else []
    return "\n".join(lines)


def summary_instructions(items: Sequence[Item]) -> str:
    """Return the instructions that ask the agent's summary to keep every open item."""
    lines = [
        f"{HEAD} The session has {len(items)} open items. Copy each of them into the summary "
        "verbatim, with its status and id, under a heading 'Open items':",
        *(i.line() for i in items),
    ]
    return "\n".join(lines)


def output_for(agent: str, event: str, text: str, request: object = None) -> str:
    """Return `text` in `agent`'s hook output format for `event`.

    Claude Code's PreCompact takes plain text (it is appended to the summary prompt); a
    SessionStart hook's JSON ``additionalContext`` reaches the next request (Claude Code, Codex);
    Gemini CLI's BeforeModel returns the request with one more user message.
    """
    if event == "PreCompact":
        return text
    if event == "BeforeModel":
        messages = list(request) if isinstance(request, list) else []
        messages.append({"role": "user", "content": text})
        specific = {"hookEventName": "BeforeModel", "llm_request": {"messages": messages}}
    else:
        specific = {"hookEventName": event, "additionalContext": text}
    return json.dumps({"hookSpecificOutput": specific}, ensure_ascii=False)
