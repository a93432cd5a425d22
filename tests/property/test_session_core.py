"""Properties of the session core: todo_write against a plain reference, replay, robustness."""

from __future__ import annotations

import json
import shutil
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from strategies import (
    chat_messages,
    event_payload_sequences,
    raw_todo_arguments,
    session_ops,
    todo_write_calls,
)

from compaction import (
    Message,
    Session,
    SessionLog,
    ToolResult,
    dump_event,
    parse_event,
    read_events,
)
from compaction.contract import MAX_ARGUMENT_BYTES
from compaction.views import (
    ContextProjection,
    LatestTodosProjection,
    TodosProjection,
    UsageProjection,
)
from compaction.views._projection import Projection, fold

STATUSES = ("pending", "in_progress", "completed")
Todo = tuple[str, str]


SHOWS_NOTHING = frozenset("\u115f\u1160\u2800\u3164\uffa0")
"""Hangul fillers and the blank braille pattern: render as nothing, yet not format characters."""


def reference_blank(content: str) -> bool:
    """Blank, as the contract says: whitespace, format (Cf) and control (Cc) characters, fillers."""
    for ch in content:
        if not (ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc") or ch in SHOWS_NOTHING):
            return False
    return True


def reference_todo_write(raw: str | bytes, allow_parallel: bool) -> list[Todo] | None:
    """The todo_write rules in plain Python: the new list, or None when the call is rejected."""
    if len(raw) > MAX_ARGUMENT_BYTES:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or set(obj) != {"todos"} or not isinstance(obj["todos"], list):
        return None
    out: list[Todo] = []
    for item in obj["todos"]:
        if not isinstance(item, dict) or set(item) != {"content", "status"}:
            return None
        content, status = item["content"], item["status"]
        if not isinstance(content, str) or not isinstance(status, str) or status not in STATUSES:
            return None
        content = content.strip()
        if reference_blank(content) or content in {c for c, _ in out} or len(content) > 2000:
            return None
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            return None
        out.append((content, status))
    if not allow_parallel and [s for _, s in out].count("in_progress") > 1:
        return None
    return out


def counts_line(todos: list[Todo]) -> str:
    """The accepted result, computed plainly."""
    n = {s: [x for _, x in todos].count(s) for s in STATUSES}
    return (
        f"Todo list updated: {n['pending']} pending, {n['in_progress']} in progress, "
        f"{n['completed']} completed."
    )


def panel_of(session: Session) -> list[Todo]:
    """The session's task panel as plain pairs."""
    return [(t.content, t.status) for t in session.todos.todos]


def views_json(session: Session) -> tuple[str, str, str, str]:
    """Every view of a session, serialized."""
    return (
        session.todos.model_dump_json(),
        json.dumps([t.model_dump() for t in session.latest_todos]),
        session.context.model_dump_json(),
        session.usage.model_dump_json(),
    )


@given(ops=session_ops)
def test_todos_view_matches_reference(ops: list[tuple[str, Any]]) -> None:
    """Calls, turns and messages give the reference panel; a rejection keeps the log's bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        panel: list[Todo] = []
        with Session(path, sync="batch") as session:
            for kind, arg in ops:
                if kind == "turn":
                    session.start_turn(arg)
                    panel = []
                elif kind == "message":
                    session.add_message(arg)
                else:
                    raw, allow = arg
                    before = path.read_bytes() if path.exists() else b""
                    expected = reference_todo_write(raw, allow)
                    result = session.todo_write(raw, allow_parallel_in_progress=allow)
                    if expected is None:
                        assert result.is_error, raw
                        assert (path.read_bytes() if path.exists() else b"") == before
                    else:
                        assert result == ToolResult(counts_line(expected)), raw
                        panel = expected
                assert panel_of(session) == panel


@given(ops=session_ops)
def test_replay_rebuilds_identical_views(ops: list[tuple[str, Any]]) -> None:
    """Reopening a log rebuilds byte-identical views; dump(load(log)) is the file itself."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with Session(path, sync="batch") as session:
            for kind, arg in ops:
                if kind == "turn":
                    session.start_turn(arg)
                elif kind == "message":
                    session.add_message(arg)
                else:
                    session.todo_write(arg[0], allow_parallel_in_progress=arg[1])
            live = views_json(session)
        if not path.exists():
            return
        with Session(path) as replayed:
            assert views_json(replayed) == live
        events = list(read_events(path))
        dumped = "".join(dump_event(e) + "\n" for e in events)
        assert dumped.encode() == path.read_bytes()
        reloaded = [parse_event(line) for line in dumped.split("\n")[:-1]]
        assert reloaded == events
        projections: tuple[Projection[Any, object], ...] = (
            TodosProjection(),
            LatestTodosProjection(),
            ContextProjection(),
        )
        for projection in projections:
            assert fold(projection, reloaded) == fold(projection, events)
        assert fold(UsageProjection(), reloaded) == fold(UsageProjection(), events)


@given(payloads=event_payload_sequences)
def test_fold_load_dump_roundtrip(payloads: list[Any]) -> None:
    """fold(load(dump(log))) == fold(log) for generated conversations with tool calls."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with SessionLog(path, sync="batch") as log:
            events = log.append_many(payloads)
        loaded = list(read_events(path))
        assert loaded == events
        projections: tuple[Projection[Any, object], ...] = (
            TodosProjection(),
            ContextProjection(),
            UsageProjection(),
        )
        for projection in projections:
            assert fold(projection, loaded) == fold(projection, events)
        assert fold(ContextProjection(), loaded).model_dump_json() == (
            fold(ContextProjection(), events).model_dump_json()
        )


@given(raw=st.one_of(st.binary(max_size=300), raw_todo_arguments), allow=st.booleans())
def test_any_arguments_yield_a_result(raw: str | bytes, allow: bool) -> None:
    """Whatever bytes or text a model sends, todo_write returns a ToolResult and never raises."""
    with tempfile.TemporaryDirectory() as tmp:
        with Session(Path(tmp) / "s.jsonl", sync="batch") as session:
            result = session.todo_write(raw, allow_parallel_in_progress=allow)
        assert isinstance(result, ToolResult)
        assert result.is_error is (reference_todo_write(raw, allow) is None)
        result.content.encode("utf-8")


class SessionMachine(RuleBasedStateMachine):
    """Drive a session with appends, todo_write calls, turns, another writer and reloads."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.path = self.dir / "s.jsonl"
        self.session = Session(self.path, sync="batch")
        self.panel: list[Todo] = []
        self.latest: list[Todo] = []
        self.messages: list[Message] = []
        self.events = 0
        self.stale = False
        """Another writer appended; the session sees it on its next append or reload."""

    def _appended(self, n: int) -> None:
        self.events += n
        self.stale = False

    @rule(message=chat_messages)
    def append(self, message: Message) -> None:
        """Append a chat message through the session."""
        self.session.add_message(message)
        self.messages.append(message)
        self._appended(1)

    @rule(call=todo_write_calls)
    def write_todos(self, call: tuple[str | bytes, bool]) -> None:
        """Call todo_write; the model panel changes only when the reference accepts."""
        raw, allow = call
        size = self.path.stat().st_size if self.path.exists() else 0
        result = self.session.todo_write(raw, allow_parallel_in_progress=allow)
        expected = reference_todo_write(raw, allow)
        # Every tool call first reads what other writers appended (the turn's mode may change).
        self.stale = False
        if expected is None:
            assert result.is_error
            assert (self.path.stat().st_size if self.path.exists() else 0) == size
            return
        assert not result.is_error
        self.panel = self.latest = expected
        self._appended(1)

    @rule(request=st.text(max_size=30))
    def turn_start(self, request: str) -> None:
        """A new user request empties the panel and adds the user's message."""
        self.session.start_turn(request)
        self.panel = []
        self.messages.append(Message(role="user", content=request))
        self._appended(2)

    @rule(message=chat_messages)
    def other_writer_appends(self, message: Message) -> None:
        """Another handle (as another process would) appends to the same file."""
        with SessionLog(self.path) as other:
            other.append(message)
        self.messages.append(message)
        self.events += 1
        self.stale = True

    @rule()
    def reload(self) -> None:
        """Close the session and replay the log from disk."""
        self.session.close()
        self.session = Session(self.path, sync="batch")
        self.stale = False

    @precondition(lambda self: self.stale)
    @rule()
    def refresh(self) -> None:
        """Pick up the other writer's events."""
        assert len(self.session.refresh()) >= 1
        self.stale = False

    @invariant()
    def views_match_model(self) -> None:
        """The views equal the plain model (once the session has seen every write)."""
        if self.stale:
            return
        assert panel_of(self.session) == self.panel
        assert [(t.content, t.status) for t in self.session.latest_todos] == self.latest
        assert list(self.session.context.messages) == self.messages
        assert self.session.usage.events == self.events
        assert self.session.applied_seq == self.events

    @invariant()
    def log_has_every_event(self) -> None:
        """The file holds exactly the events appended, seqs 1..n."""
        if self.events:
            seqs = [e.seq for e in read_events(self.path)]
            assert seqs == list(range(1, self.events + 1))

    def teardown(self) -> None:
        self.session.close()
        shutil.rmtree(self.dir, ignore_errors=True)


TestSessionMachine = SessionMachine.TestCase
