"""`harness todos LOG` drawn plainly: into a pipe and on a terminal, what the full path prints.

The oracle is the full path itself (a `Session` and rich): on a terminal, rich is handed a
stdout that says it is one, and the plain path must write the same ANSI bytes.
"""

from __future__ import annotations

import argparse
import io
import typing
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction import Message, Session, TodoItem, TodoWriteData, TurnStartData
from compaction.contract import EVENT_TYPES, TODO_STATUSES
from compaction.events import Event
from harness.commands import todos_cmd


class Terminal(io.StringIO):
    """A stdout that says it is a terminal, as rich asks."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def plain_term(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain terminal's environment: no forced or disabled colour."""
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def namespace(log: str, **options: object) -> argparse.Namespace:
    base: dict[str, object] = {
        "log": log,
        "session": None,
        "json": False,
        "follow": False,
        "interval": 0.5,
        "lock_timeout": None,
    }
    return argparse.Namespace(**(base | options))


def full_path(log: Path, *, terminal: bool = False) -> str:
    """What the full path (Session, rich) prints for `harness todos LOG`."""
    out = Terminal() if terminal else io.StringIO()
    with redirect_stdout(out), Session(log) as session:
        assert todos_cmd._show(namespace(str(log)), session) == 0
    return out.getvalue()


def plain(log: Path, *, terminal: bool = False, **options: object) -> str | None:
    return todos_cmd.plain_panel(namespace(str(log), **options), terminal=terminal)


def todo(*items: tuple[str, str]) -> TodoWriteData:
    return TodoWriteData(todos=tuple(TodoItem(content=c, status=s) for c, s in items))


LOGS: dict[str, list[object]] = {
    "empty": [],
    "one list": [todo(("Fix the bug", "in_progress"), ("Test it", "pending"))],
    "rewritten": [
        todo(("a", "pending")),
        Message(role="user", content="x"),
        todo(("a", "completed")),
    ],
    "new turn empties": [TurnStartData(), todo(("a", "completed")), TurnStartData(mode="plan")],
    "carried": [
        TurnStartData(),
        todo(("Ship it", "in_progress")),
        TurnStartData(),
        TurnStartData(),
    ],
    "carried before any turn": [todo(("Ship it", "pending")), TurnStartData()],
    "unicode": [todo(("naïve café ✓ 中文 🎉", "pending"), ("  indented", "completed"))],
}


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("name", sorted(LOGS))
def test_plain_equals_the_full_path(tmp_path: Path, name: str, terminal: bool) -> None:
    """Every shape of panel (empty, rewritten, emptied by a turn, carried) prints the same."""
    log = tmp_path / "s.jsonl"
    log.touch()
    with Session(log) as s:
        for data in LOGS[name]:
            s.append(data)  # type: ignore[arg-type]
    text = plain(log, terminal=terminal)
    assert text is not None
    assert text == full_path(log, terminal=terminal)
    assert ("\x1b[" in text) is terminal


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=30), st.sampled_from(TODO_STATUSES)), max_size=5
    ),
    st.booleans(),
    st.booleans(),
)
def test_any_content_prints_the_same_or_falls_back(
    tmp_path_factory: pytest.TempPathFactory,
    items: list[tuple[str, str]],
    turn: bool,
    terminal: bool,
) -> None:
    """Any content: the plain text is the full path's, or None (the full path answers)."""
    log = tmp_path_factory.mktemp("plain") / "s.jsonl"
    with Session(log) as s:
        s.append(todo(*items))
        if turn:
            s.append(TurnStartData())
    text = plain(log, terminal=terminal)
    if text is not None:
        assert text == full_path(log, terminal=terminal)


@pytest.mark.parametrize(
    "lines",
    [
        [
            '{"v":1,"seq":1,"type":"turn/start","data":{}}',
            '{"v":1,"seq":3,"type":"turn/start","data":{}}',
        ],
        ['{"v":1,"seq":1,"type":"no/such","data":{}}'],
        ['{"v":2,"seq":1,"type":"turn/start","data":{}}'],
        ['{"v":1,"seq":1,"type":"turn/start"}'],
        ['{"v":1,"seq":1,"type":"todo/write","data":{"todos":[{"content":"a"}]}}'],
        ['{"v":1,"seq":1,"type":"todo/write","data":{"todos":[{"content":"a","status":"x"}]}}'],
        ['{"v":1,"seq":1,"type":"turn/start","data":{}}', ""],
        ["not json"],
    ],
)
def test_anything_unusual_falls_back(tmp_path: Path, lines: list[str]) -> None:
    """A gap, an unknown type or version, a missing field, a bad list, a blank line: None."""
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert plain(log) is None


def test_a_log_with_a_job_or_a_plan_falls_back(tmp_path: Path) -> None:
    """A running job or an approved plan is drawn by the full path (under the panel): None."""
    log = tmp_path / "s.jsonl"
    with Session(log) as session:
        session.start_turn("go")
        session.start_job("b1", "command", "npm test")
    assert plain(log) is None
    assert "npm test" in full_path(log)


def test_a_torn_last_line_a_store_and_options_fall_back(tmp_path: Path) -> None:
    """No final newline, a store URL, --session, --json, --follow, a missing file: None."""
    log = tmp_path / "s.jsonl"
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}', encoding="utf-8")
    assert plain(log) is None
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}\n', encoding="utf-8")
    assert plain(log) is not None
    assert plain(log, session="x") is None
    assert plain(log, json=True) is None
    assert plain(log, follow=True) is None
    assert plain(Path(f"sqlite:///{tmp_path}/x.db")) is None
    assert plain(tmp_path / "missing.jsonl") is None


@pytest.mark.parametrize(
    ("name", "value", "terminal"),
    [
        ("FORCE_COLOR", "1", False),
        ("FORCE_COLOR", "1", True),
        ("NO_COLOR", "1", True),
        ("TERM", "dumb", True),
        ("TTY_COMPATIBLE", "1", False),
    ],
)
def test_a_styled_environment_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, terminal: bool
) -> None:
    """Rich styles otherwise (forced or no colour, a dumb terminal): the full path answers."""
    log = tmp_path / "s.jsonl"
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}\n', encoding="utf-8")
    assert plain(log, terminal=terminal) is not None
    monkeypatch.setenv(name, value)
    assert plain(log, terminal=terminal) is None


def test_the_contract_is_the_models() -> None:
    """The contract's event types and statuses are the ones the event models accept."""
    kinds = {cls.model_fields["type"].default for cls in typing.get_args(typing.get_args(Event)[0])}
    assert kinds == set(EVENT_TYPES)
    assert typing.get_args(TodoItem.model_fields["status"].annotation) == TODO_STATUSES
