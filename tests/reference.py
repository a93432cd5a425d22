"""Reference models for the compaction tests: the slow, plain, obvious way, sharing no code.

Nothing here calls the toolkit's helpers (`Session.latest_todos`, `unfinished`, `unsafe_cuts`,
`parse_checkpoint`): the expected values are folded from the raw payloads a test appended, and
the Checkpoint text is read back with a parser written from the format's description alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction import (
    CheckpointData,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Message,
    TodoWriteData,
    TurnStartData,
    parse_checkpoint,
)
from compaction.compactor.compact import CARRIED_HEAD
from compaction.contract import MAX_ITEM_CHARS
from compaction.events import JobEndData, JobStartData, PlanApproveData

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

    def expected_jobs(self) -> list[tuple[str, str, str, str | None, int]]:
        """The jobs still running, in start order: (id, kind, runs, owner, since seq).

        A start puts its job last (a restart moves it); an end removes it; an end for a job
        not running changes nothing.
        """
        running: dict[str, tuple[str, str, str, str | None, int]] = {}
        for seq, payload in self.entries:
            if isinstance(payload, JobStartData):
                running.pop(payload.id, None)
                running[payload.id] = (payload.id, payload.kind, payload.runs, payload.owner, seq)
            elif isinstance(payload, JobEndData):
                running.pop(payload.id, None)
        return list(running.values())

    def expected_plan(self) -> tuple[int, str] | None:
        """The latest approved plan: the seq of its event and its whole text (None: none)."""
        plan = None
        for seq, payload in self.entries:
            if isinstance(payload, PlanApproveData):
                plan = (seq, payload.text)
        return plan

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


def waiting_from(messages: list[Message]) -> int | None:
    """Index of the last assistant message if one of its calls still waits for its result.

    A call in an earlier assistant message that was never answered counts as abandoned.
    """
    last = None
    for i, m in enumerate(messages):
        if m.role == "assistant":
            last = i
    if last is None:
        return None
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    if any(c.id not in answered for c in messages[last].tool_calls or ()):
        return last
    return None


def safe_cuts(messages: list[Message]) -> list[int]:
    """Cuts the brief allows (k: replace ``messages[:k]``, keep ``messages[k:]``).

    Before a user message, before an assistant message, or after the last message; never
    where a call before the cut is answered after it, and never after an assistant message
    whose call still waits for its result.
    """
    n = len(messages)
    waiting = waiting_from(messages)
    found = []
    for k in range(1, n + 1):
        if k < n and messages[k].role not in ("user", "assistant"):
            continue
        if answered_after(messages, k):
            continue
        if waiting is not None and k > waiting:
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
    jobs: list[tuple[str, str, str, str | None, int]] = field(default_factory=list)
    """Current Work's job lines: (id, kind, runs, owner, since)."""
    plan: tuple[int, int, bool, str] | None = None
    """Current Work's plan: (seq, characters, clipped, the text carried)."""


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

    jobs, plan = read_carried(bodies.get("Current Work", []))

    def items(name: str) -> list[str]:
        body = [
            line
            for line in bodies.get(name, [])
            if not line.startswith(("> ", "- job ", "- approved plan (", "  |"))
        ]
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
        jobs=jobs,
        plan=plan,
    )


_JOB_LINE = re.compile(
    r'^- job (\S+) \((agent|command)(?:, owner ("(?:[^"\\]|\\.)*"))?, since seq (\d+)\): (".*")$'
)
_PLAN_HEAD = re.compile(r"^- approved plan \(seq (\d+), (\d+) characters(, clipped)?\):$")


def _plan_line(line: str) -> str:
    r"""Decode one plan line: after ``  | ``, ``\\`` is a backslash and ``\uXXXX`` a character."""
    body = line[4:]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and body[i + 1] == "\\":
            out.append("\\")
            i += 2
        elif body[i] == "\\" and body[i + 1] == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def read_carried(
    body: list[str],
) -> tuple[list[tuple[str, str, str, str | None, int]], tuple[int, int, bool, str] | None]:
    """Read Current Work's job lines and its plan block, per the format's description.

    A job line: ``- job ID (KIND[, owner "x"], since seq N): "runs"`` (JSON literals); the plan:
    a head ``- approved plan (seq N, M characters[, clipped]):`` then one ``  | line`` (or
    ``  |`` for an empty line) per line of the plan, the last lines of the section.
    """
    jobs = []
    for line in body:
        match = _JOB_LINE.match(line)
        if match is None:
            continue
        owner = None if match.group(3) is None else json.loads(match.group(3))
        jobs.append(
            (match.group(1), match.group(2), json.loads(match.group(5)), owner, int(match.group(4)))
        )
    heads = [i for i, line in enumerate(body) if _PLAN_HEAD.match(line)]
    if not heads:
        return jobs, None
    assert len(heads) == 1, heads
    head = _PLAN_HEAD.match(body[heads[0]])
    assert head is not None
    rest = body[heads[0] + 1 :]
    assert all(line == "  |" or line.startswith("  | ") for line in rest), rest
    text = "\n".join("" if line == "  |" else _plan_line(line) for line in rest)
    return jobs, (int(head.group(1)), int(head.group(2)), head.group(3) is not None, text)


_TASK_LINE = re.compile(
    r'^- task (\S+) \((?:owner ("(?:[^"\\]|\\.)*")|no owner)(?:, blocked by ([^)]*))?\): (".*")$'
)


def read_task_lines(text: str) -> list[tuple[str, str | None, str, tuple[str, ...]]]:
    """Read every shared-task line of a Checkpoint: id, owner, subject, blockers.

    Per the format: ``- task ID (owner "x", blocked by 1, 2): "subject"`` or ``(no owner)``;
    owner and subject are JSON string literals, blockers a comma-separated list of ids.
    """
    out: list[tuple[str, str | None, str, tuple[str, ...]]] = []
    for line in text.split("\n"):
        if not line.startswith("- task "):
            continue
        match = _TASK_LINE.match(line)
        assert match is not None, line
        owner = None if match.group(2) is None else json.loads(match.group(2))
        blockers = tuple(match.group(3).split(", ")) if match.group(3) else ()
        out.append((match.group(1), owner, json.loads(match.group(4)), blockers))
    return out


# --- checks of a compaction's outcome against the reference ------------------------------------


def carried(expected: Sequence[str], shown: Sequence[str]) -> bool:
    """Tell whether each unfinished item is shown whole, in order, or clipped as the rule says.

    Only an item over `MAX_ITEM_CHARS` may be clipped: its first `CARRIED_HEAD` characters, then
    a note naming its length (written here from the rule, not with the code's helper).
    """
    if len(expected) != len(shown):
        return False
    for want, got in zip(expected, shown, strict=True):
        if got == want:
            continue
        note = f" [... clipped: the item has {len(want)} characters; read it whole with "
        if len(want) <= MAX_ITEM_CHARS or not got.startswith(want[:CARRIED_HEAD] + note):
            return False
    return True


def check_against_reference(ref: ReferenceLog, result: CompactionResult) -> None:
    """The Checkpoint holds exactly the reference's unfinished items, by status, in order."""
    pending, current = ref.expected_sections()
    back = read_back(result.data.text)
    assert back.headings == list(SECTIONS)
    assert carried(pending, back.pending)
    assert carried(current, back.current)
    assert list(result.data.pending) == back.pending
    assert list(result.data.current) == back.current
    predates = bool(pending or current) and ref.list_predates_request()
    assert back.carried_note is predates
    assert result.checkpoint.carried_over is predates
    for line in back.item_lines:  # nothing invisible, line-breaking or unpaired stands raw
        assert not any(0xD800 <= ord(ch) <= 0xDFFF or ch in "\u200b\ufeff\u2028\r" for ch in line)
        assert line.isascii() or not any(ch in line for ch in ("\u202e", "\u200e", "\u2029"))
    # The code's own parser agrees with the reference one on the same text.
    parsed = parse_checkpoint(result.data.text)
    assert (list(parsed.pending_jobs), list(parsed.current_work)) == (back.pending, back.current)


def check_refusal(ref: ReferenceLog, exc: CompactionError, policy: CompactionPolicy) -> None:
    """A refusal is justified only by the reference: no message, no safe cut, or no room.

    ``does_not_fit`` is justified when the reference finds a cut, the error names the
    shortest tail the reference allows (none when it may cut after the last message), and
    its parts add up to a total over the window.
    """
    messages = ref.context_messages()
    match exc.code:
        case "nothing_to_compact":
            assert messages == []
        case "no_safe_cut":
            assert messages
            assert safe_cuts(messages) == []
        case "does_not_fit":
            assert messages
            cuts = safe_cuts(messages)
            assert cuts, "does_not_fit where the reference finds no cut at all"
            parts, total, window = does_not_fit_parts(str(exc))
            assert window == policy.window_tokens
            assert sum(parts.values()) == total > window
            assert parts["fixed"] == 0
            assert parts["reserved"] == policy.output_reserve
            assert parts["Checkpoint"] > 0
            if cuts[-1] == len(messages):
                assert "tail" not in parts
            else:
                assert parts["tail"] > 0
        case _:
            raise AssertionError(f"unjustified refusal: {exc}")


def does_not_fit_parts(text: str) -> tuple[dict[str, int], int, int]:
    """Read ``a fixed + b system messages + ... = total tokens, over the W-token window``."""
    found = re.search(r"does_not_fit: (.*?) = (\d+) tokens, over the (\d+)-token window", text)
    assert found, text
    parts: dict[str, int] = {}
    for part in found.group(1).split(" + "):
        number, _, label = part.partition(" ")
        name = next(w for w in ("fixed", "system", "Checkpoint", "tail", "reserved") if w in label)
        assert name not in parts, text
        parts[name] = int(number)
    assert {"fixed", "system", "Checkpoint", "reserved"} <= parts.keys(), text
    return parts, int(found.group(2)), int(found.group(3))
