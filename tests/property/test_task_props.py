"""Properties of the shared task list, checked against a plain-Python reference fold.

The reference below re-implements the rules of `compaction.tools.tasks` the slow, obvious way (dicts
and loops, no code of the package): which calls are accepted, what each task becomes, what each
agent was last shown. Several agents, each with its own `Session` on one log (as separate
processes would be), interleave calls; after every call the session's view must equal the
reference, and a rejected call must leave the file's bytes as they were.
"""

from __future__ import annotations

import builtins
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from reference import read_task_lines
from strategies import TASK_AGENTS, plan_mode_calls, task_call_sequences, task_sessions

from compaction import CompactionError, Session, call_tool, compact, parse_checkpoint

STATUSES = ("pending", "in_progress", "completed", "deleted")
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
TASK_ID = re.compile(r"^#?([A-Za-z0-9_.:-]{1,64})$")


def ref_id(value: object) -> str | None:
    """A task id the way the tool reads it, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value >= 0 else None
    if isinstance(value, str):
        m = TASK_ID.match(value.strip())
        return m.group(1) if m else None
    return None


def ref_subject(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 1000:
        return None
    return value.strip()


class Reference:
    """The shared list in plain Python: tasks by id, and what each agent was last shown."""

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.seen: dict[str, dict[str, int]] = {a: {} for a in TASK_AGENTS}

    def next_id(self) -> str:
        numbers = [int(i) for i in self.tasks if i.isdigit()]
        return str(max(numbers, default=0) + 1)

    def create(self, agent: str, args: dict[str, Any]) -> bool:
        if set(args) - {"subject", "description"} or "subject" not in args:
            return False
        subject = ref_subject(args["subject"])
        description = args.get("description")
        if subject is None or not (description is None or isinstance(description, str)):
            return False
        task_id = self.next_id()
        self.tasks[task_id] = {
            "subject": subject,
            "status": "pending",
            "owner": None,
            "blocked_by": [],
            "version": 1,
        }
        self.seen[agent][task_id] = 1
        return True

    def read(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The id and the changes of an update whose fields are well formed, else None."""
        if set(args) - {"id", "status", "owner", "blocked_by", "subject"} or "id" not in args:
            return None
        task_id = ref_id(args["id"])
        changes: dict[str, Any] = {}
        if "subject" in args:
            if ref_subject(args["subject"]) is None:
                return None
            changes["subject"] = ref_subject(args["subject"])
        if "status" in args:
            if args["status"] not in STATUSES:
                return None
            changes["status"] = args["status"]
        if "owner" in args:
            owner = args["owner"]
            if owner is not None and not (isinstance(owner, str) and AGENT_NAME.match(owner)):
                return None
            changes["owner"] = owner
        if "blocked_by" in args:
            ids = [ref_id(v) for v in args["blocked_by"]]
            if None in ids or len(set(ids)) != len(ids):
                return None
            changes["blocked_by"] = ids
        if task_id is None or not changes:
            return None
        return task_id, changes

    def reaches(self, start: list[str], target: str, edges: dict[str, list[str]]) -> bool:
        todo, seen = list(start), set()
        while todo:
            node = todo.pop()
            if node == target:
                return True
            if node not in seen:
                seen.add(node)
                todo += edges.get(node, [])
        return False

    def update(self, agent: str, args: dict[str, Any]) -> bool:
        parsed = self.read(args)
        if parsed is None:
            return False
        task_id, changes = parsed
        old = self.tasks.get(task_id)
        if old is None:
            return False
        shown = self.seen[agent].get(task_id)
        self.seen[agent][task_id] = old["version"]
        if old["status"] == "deleted" or (shown is not None and shown != old["version"]):
            return False
        new = {**old, **changes}
        if new["status"] == "in_progress" and new["owner"] is None:
            new["owner"] = agent
        if old["owner"] not in (None, agent):
            only_owner = set(changes) == {"owner"}
            if not only_owner and changes.get("owner") != agent:
                return False
        if "blocked_by" in changes:
            for b in new["blocked_by"]:
                if b == task_id or b not in self.tasks or self.tasks[b]["status"] == "deleted":
                    return False
        edges = {i: t["blocked_by"] for i, t in self.tasks.items() if t["status"] != "deleted"}
        edges[task_id] = new["blocked_by"]
        if self.reaches(list(new["blocked_by"]), task_id, edges):
            return False
        if new["status"] in ("in_progress", "completed"):
            for b in new["blocked_by"]:
                if b in self.tasks and self.tasks[b]["status"] in ("pending", "in_progress"):
                    return False
        if {k: v for k, v in new.items() if k != "version"} == {
            k: v for k, v in old.items() if k != "version"
        }:
            return True
        new["version"] = old["version"] + 1
        self.tasks[task_id] = new
        self.seen[agent][task_id] = new["version"]
        return True

    def list(self, agent: str) -> None:
        self.seen[agent] = {i: t["version"] for i, t in self.tasks.items()}

    def call(self, agent: str, tool: str, args: dict[str, Any]) -> bool:
        if tool == "task_create":
            return self.create(agent, args)
        if tool == "task_update":
            return self.update(agent, args)
        if set(args):
            return False
        self.list(agent)
        return True

    def live(self) -> builtins.list[tuple[str, str, str, str | None, tuple[str, ...], int]]:
        return [
            (i, t["subject"], t["status"], t["owner"], tuple(t["blocked_by"]), t["version"])
            for i, t in self.tasks.items()
            if t["status"] != "deleted"
        ]

    def unfinished(
        self, status: str
    ) -> builtins.list[tuple[str, str | None, str, tuple[str, ...]]]:
        """Tasks of one status: id, owner, subject and the blockers still unfinished."""
        open_ids = {i for i, t in self.tasks.items() if t["status"] in ("pending", "in_progress")}
        return [
            (i, t["owner"], t["subject"], tuple(b for b in t["blocked_by"] if b in open_ids))
            for i, t in self.tasks.items()
            if t["status"] == status
        ]


def view(session: Session) -> list[tuple[str, str, str, str | None, tuple[str, ...], int]]:
    return [
        (t.id, t.subject, t.status, t.owner, t.blocked_by, t.version) for t in session.tasks.live()
    ]


@settings(max_examples=100)  # fewer miss the stale and ownership rules (mutation-checked)
@given(calls=task_call_sequences)
def test_interleaved_agents_match_the_reference(calls: list[tuple[str, str, Any]]) -> None:
    """Any interleaving of several agents' calls gives the reference's accepts and board."""
    path = Path(tempfile.mkdtemp()) / "s.jsonl"
    sessions = {a: Session(path, agent=a, sync="batch") for a in TASK_AGENTS}
    ref = Reference()
    try:
        for agent, tool, args in calls:
            before = path.read_bytes() if path.exists() else b""
            result = call_tool(sessions[agent], tool, args)
            accepted = ref.call(agent, tool, args)
            assert result.is_error is not accepted, (agent, tool, args, result.content)
            if result.is_error:
                assert (path.read_bytes() if path.exists() else b"") == before
            sessions[agent].refresh()
            assert view(sessions[agent]) == ref.live()
        for session in sessions.values():
            session.refresh()
            assert view(session) == ref.live()
        with Session(path) as fresh:
            assert view(fresh) == ref.live(), "a fresh replay gives the same board"
    finally:
        for session in sessions.values():
            session.close()


@example(
    script=[
        ("call", ("lead", "task_create", {"subject": "Parse"})),
        ("call", ("lead", "task_create", {"subject": "Test"})),
        ("call", ("worker-1", "task_update", {"id": "1", "status": "in_progress"})),
        ("compact", None),
        ("call", ("worker-2", "task_update", {"id": "2", "status": "in_progress"})),
        ("call", ("worker-1", "task_update", {"id": "1", "status": "completed"})),
    ]
)
@given(script=task_sessions)
def test_compactions_never_drop_an_unfinished_task(script: list[tuple[str, Any]]) -> None:
    """After any number of compactions, the newest checkpoint carries every unfinished task."""
    path = Path(tempfile.mkdtemp()) / "s.jsonl"
    ref = Reference()
    compactions = 0
    with Session(path, agent="lead") as session:
        session.start_turn("Split the work", mode="team")
        sessions = {"lead": session}
        for kind, payload in [*script, ("compact", None)]:
            if kind == "call":
                agent, tool, args = payload
                other = sessions.setdefault(agent, Session(path, agent=agent))
                ref.call(agent, tool, args)
                call_tool(other, tool, args)
            elif kind == "message":
                session.add_message({"role": "user", "content": payload or "go on"})
            else:
                session.add_message({"role": "user", "content": "compact now"})
                try:
                    result = compact(session, force=True)
                except CompactionError as exc:
                    if exc.code not in ("nothing_to_compact", "no_safe_cut"):
                        raise
                    continue
                compactions += 1
                carried = parse_checkpoint(result.data.text)
                pending = [(t.id, t.owner, t.subject, t.blocked_by) for t in carried.pending_tasks]
                current = [(t.id, t.owner, t.subject, t.blocked_by) for t in carried.current_tasks]
                assert pending == ref.unfinished("pending")
                assert current == ref.unfinished("in_progress")
                lines = read_task_lines(result.data.text)
                assert lines == [*ref.unfinished("pending"), *ref.unfinished("in_progress")]
                assert (result.data.pending_tasks or ()) == carried.pending_tasks
                assert (result.data.current_tasks or ()) == carried.current_tasks
        for other in sessions.values():
            other.close()
    assert compactions >= 1, "the final compaction always runs"


@given(calls=plan_mode_calls)
def test_plan_mode_appends_nothing(calls: tuple[str, Any]) -> None:
    """In a Plan-mode turn every write tool is refused, whatever its arguments."""
    tool, args = calls
    path = Path(tempfile.mkdtemp()) / "s.jsonl"
    with Session(path, agent="lead") as session:
        session.start_turn("Split the work", mode="team")
        call_tool(session, "task_create", {"subject": "Write the parser"})
        session.start_turn("Plan the next step", mode="plan")
        before = path.read_bytes()
        result = call_tool(session, tool, args)
        assert result.is_error
        assert result.content.startswith(f"{tool}: refused, nothing was changed. You are in Plan")
        assert path.read_bytes() == before
        assert [t.version for t in session.tasks.live()] == [1]
