"""Reference models for the compaction tests: the slow, plain, obvious way, sharing no code.

Nothing here calls the toolkit's helpers (`Session.latest_todos`, `unfinished`, `unsafe_cuts`,
`parse_checkpoint`): the expected values are folded from the raw payloads a test appended, and
the Checkpoint text is read back with a parser written from the format's description alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compaction import CheckpointData, Message, TodoWriteData, TurnStartData

SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code",
    "Errors and Fixes",
    "Pending Jobs",
    "Current Work",
    "Next Step",
    "Critical Context",
)

INVISIBLE = frozenset(
    [chr(c) for c in range(0x200B, 0x2010)]
    + [chr(c) for c in range(0x2028, 0x202F)]
    + [chr(c) for c in range(0x2060, 0x2065)]
    + ["\ufeff", "\r", "\n", "\u0085"]
)
"""Characters that must never stand raw in an item line (they hide or break the line)."""


@dataclass
class ReferenceLog:
    """What a test appended, with the seqs the log must have given it, folded by hand."""

    entries: list[tuple[int, Any]] = field(default_factory=list)

    def append(self, payload: Any) -> None:
        """Record one appended payload under the next seq."""
        self.entries.append((len(self.entries) + 1, payload))

    def latest_list(self) -> list[tuple[str, str]]:
        """The (content, status) items of the last todo list written, across turns."""
        latest: list[tuple[str, str]] = []
        for _, payload in self.entries:
            if isinstance(payload, TodoWriteData):
                latest = [(t.content, t.status) for t in payload.todos]
        return latest

    def expected_sections(self) -> tuple[list[str], list[str]]:
        """Pending Jobs and Current Work as the brief defines them: by status, in list order."""
        items = self.latest_list()
        pending = [content for content, status in items if status == "pending"]
        current = [content for content, status in items if status == "in_progress"]
        return pending, current

    def list_predates_request(self) -> bool:
        """Whether a turn/start came after the last todo list (or no list was ever written)."""
        last_list = last_turn = 0
        for seq, payload in self.entries:
            if isinstance(payload, TodoWriteData):
                last_list = seq
            elif isinstance(payload, TurnStartData):
                last_turn = seq
        return last_turn > last_list

    def context_messages(self) -> list[Message]:
        """The non-system messages after the last checkpoint's span: what a cut chooses from."""
        last = 0
        for _, payload in self.entries:
            if isinstance(payload, CheckpointData):
                last = payload.last_seq
        return [
            p
            for seq, p in self.entries
            if seq > last and isinstance(p, Message) and p.role != "system"
        ]


def answered_after(messages: list[Message], k: int) -> bool:
    """Whether a call made in ``messages[:k]`` gets its result in ``messages[k:]``."""
    made = {c.id for m in messages[:k] for c in m.tool_calls or ()}
    return any(m.role == "tool" and m.tool_call_id in made for m in messages[k:])


def waits_for_result(messages: list[Message]) -> bool:
    """Whether the last assistant message made a call whose result has not arrived."""
    assistants = [m for m in messages if m.role == "assistant"]
    if not assistants:
        return False
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    return any(c.id not in answered for c in assistants[-1].tool_calls or ())


def safe_cuts(messages: list[Message]) -> list[int]:
    """Cuts the brief allows: before a request or at the end, never inside a call and result."""
    n = len(messages)
    found = []
    for k in range(1, n + 1):
        if k < n and messages[k].role != "user":
            continue
        if answered_after(messages, k) or (k == n and waits_for_result(messages)):
            continue
        found.append(k)
    return found


@dataclass
class ReadBack:
    """The code-owned sections of a Checkpoint text, read by the reference parser."""

    headings: list[str]
    pending: list[str]
    current: list[str]
    carried_note: bool
    item_lines: list[str]


def read_back(text: str) -> ReadBack:
    """Read the headings and the two code-owned sections from a rendered Checkpoint.

    Per the format: each section is a ``## `` heading; a code-owned item is one line, ``- ``
    and a JSON string literal; an empty section reads ``(none)``; a carried list has a ``> ``
    note at the top of Pending Jobs.
    """
    lines = text.split("\n")
    headings = [line[3:] for line in lines if line.startswith("## ")]
    bodies: dict[str, list[str]] = {}
    current_name: str | None = None
    for line in lines:
        if line.startswith("## "):
            current_name = line[3:]
            bodies[current_name] = []
        elif current_name is not None and line.strip():
            bodies[current_name].append(line)

    def items(name: str) -> list[str]:
        body = [line for line in bodies.get(name, []) if not line.startswith("> ")]
        if body == ["(none)"]:
            return []
        assert all(line.startswith('- "') for line in body), body
        decoded = [json.loads(line[2:]) for line in body]
        assert all(isinstance(d, str) for d in decoded)
        return decoded

    item_lines = [
        line for name in ("Pending Jobs", "Current Work") for line in bodies.get(name, [])
    ]
    return ReadBack(
        headings=headings,
        pending=items("Pending Jobs"),
        current=items("Current Work"),
        carried_note=any(line.startswith("> ") for line in bodies.get("Pending Jobs", [])),
        item_lines=item_lines,
    )
