"""`harness todos LOG` into a pipe: the standard-library fold prints what the full path prints."""

from __future__ import annotations

import argparse
import io
import json
import typing
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction import Message, Session, TodoItem, TodoWriteData, TurnStartData
from compaction.events import Event
from compaction.views import STATUS_MARKS
from harness.commands import todos_cmd
from harness.commands.todos_plain import EVENT_TYPES, TODO_STATUSES, plain_todos
from harness.commands.todos_plain import STATUS_MARKS as PLAIN_MARKS


def full_path(log: Path) -> str:
    """What the full path (Session, rich) prints for `harness todos LOG` into a pipe."""
    args = argparse.Namespace(
        log=str(log), session=None, json=False, follow=False, interval=0.5, lock_timeout=None
    )
    out = io.StringIO()
    with redirect_stdout(out), Session(log) as session:
        assert todos_cmd._show(args, session) == 0
    return out.getvalue()


def plain(log: Path) -> str | None:
    return plain_todos(str(log), session=None, json_out=False, follow=False)


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


@pytest.mark.parametrize("name", sorted(LOGS))
def test_plain_equals_the_full_path(tmp_path: Path, name: str) -> None:
    """Every shape of panel (empty, rewritten, emptied by a turn, carried) prints the same."""
    log = tmp_path / "s.jsonl"
    log.touch()
    with Session(log) as s:
        for data in LOGS[name]:
            s.append(data)  # type: ignore[arg-type]
    text = plain(log)
    assert text is not None
    assert text == full_path(log)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=30), st.sampled_from(TODO_STATUSES)), max_size=5
    ),
    st.booleans(),
)
def test_any_content_prints_the_same_or_falls_back(
    tmp_path_factory: pytest.TempPathFactory, items: list[tuple[str, str]], turn: bool
) -> None:
    """Any content: the plain text is the full path's, or None (the full path answers)."""
    log = tmp_path_factory.mktemp("plain") / "s.jsonl"
    with Session(log) as s:
        s.append(todo(*items))
        if turn:
            s.append(TurnStartData())
    text = plain(log)
    if text is not None:
        assert text == full_path(log)


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


def test_a_torn_last_line_a_store_and_options_fall_back(tmp_path: Path) -> None:
    """No final newline, a store URL, --session, --json, --follow, a forced colour: None."""
    log = tmp_path / "s.jsonl"
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}', encoding="utf-8")
    assert plain(log) is None
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}\n', encoding="utf-8")
    assert plain(log) is not None
    assert plain_todos(str(log), session="x", json_out=False, follow=False) is None
    assert plain_todos(str(log), session=None, json_out=True, follow=False) is None
    assert plain_todos(str(log), session=None, json_out=False, follow=True) is None
    assert (
        plain_todos(f"sqlite:///{tmp_path}/x.db", session=None, json_out=False, follow=False)
        is None
    )
    assert (
        plain_todos(str(tmp_path / "missing.jsonl"), session=None, json_out=False, follow=False)
        is None
    )


def test_forced_colour_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich styles a pipe when FORCE_COLOR is set: the full path answers then."""
    log = tmp_path / "s.jsonl"
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}\n', encoding="utf-8")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert plain(log) is None


def test_the_constants_are_the_models() -> None:
    """Event types, statuses and marks are the ones `compaction` defines."""
    kinds = {cls.model_fields["type"].default for cls in typing.get_args(typing.get_args(Event)[0])}
    assert kinds == EVENT_TYPES
    assert set(TODO_STATUSES) == set(typing.get_args(TodoItem.model_fields["status"].annotation))
    assert PLAIN_MARKS == STATUS_MARKS
    assert json.loads(json.dumps(PLAIN_MARKS)) == STATUS_MARKS
