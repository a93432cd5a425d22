"""Session rules that `scripts/mutate` showed untested (issue 25).

Each mutant changed which session a URL opens, which tool policy a task call runs under, what
the model reads when the shared list keeps changing, or which event a seq names:

- `Session.open` hands every argument on (tokenizer, sync, bad lines, agent, policies);
- `task_update` and `task_list` run under the `mode` given, and a refusal is an error result;
- a task write that loses every race says so and appends nothing;
- `Session.event` reads seqs 1..`applied_seq` and names the range otherwise.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from compaction import (
    LogError,
    LogFormatError,
    ModePolicy,
    Session,
    TaskCreated,
    ToolResult,
    read_events,
)
from compaction.errors import SeqConflictError
from compaction.tokens import get_tokenizer

REVIEW = {
    "review": ModePolicy(
        refusals={
            "task_create": "task_create: refused in review",
            "task_list": "task_list: refused in review",
            "task_update": "task_update: refused in review",
            "todo_write": "todo_write: refused in review",
        }
    ),
    "parallel": ModePolicy(allow_parallel_in_progress=True),
}
TWO_STARTED = {
    "todos": [
        {"content": "Parse", "status": "in_progress"},
        {"content": "Test", "status": "in_progress"},
    ]
}


class TestOpen:
    def test_every_argument_reaches_the_session(self, log_path: Path) -> None:
        """Session.open passes its tokenizer, sync, bad-line rule, agent and policies on."""
        tokenizer = get_tokenizer("cl100k_base")
        with Session.open(
            str(log_path),
            tokenizer=tokenizer,
            sync="batch",
            skip_bad_lines=True,
            agent="w-1",
            policies=REVIEW,
        ) as session:
            assert session.tokenizer is tokenizer
            assert session.log.sync == "batch"
            assert session.skip_bad_lines is True
            assert session.agent == "w-1"
            assert session.policies is REVIEW

    def test_defaults_are_the_constructors(self, log_path: Path) -> None:
        """By default: agent main, fsync always, built-in policies, bad lines refused."""
        with Session.open(str(log_path)) as session:
            assert (session.agent, session.log.sync) == ("main", "always")
            assert session.policies == Session(log_path).policies
            assert session.policy("plan").forbids("task_create")
            session.start_turn("go")
        with log_path.open("a", encoding="utf-8") as f:
            f.write("not an event\n")
        with pytest.raises(LogFormatError):
            Session.open(str(log_path))

    def test_the_usage_view_counts_with_the_tokenizer_given(self, log_path: Path) -> None:
        """The first count of the waiting events uses the session's tokenizer, not a default."""
        text = "Grüße, 東京; naïve façade — ünïcödé " * 20
        counts = []
        for name in ("cl100k_base", "o200k_base"):
            tokenizer = get_tokenizer(name)
            with Session(log_path.with_name(f"{name}.jsonl"), tokenizer=tokenizer) as session:
                session.start_turn(text)
                counts.append(session.event_tokens(2))
                assert counts[-1] > len(tokenizer.encode(text)) // 2
        assert counts[0] != counts[1]


class TestModes:
    def test_task_list_refused_under_the_mode_given(self, log_path: Path) -> None:
        """task_list(mode=...) checks that mode's policy, and a refusal is an error result."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert not session.task_list().is_error
            assert session.task_list(mode="review") == ToolResult(
                "task_list: refused in review", is_error=True
            )
            session.start_turn("review it", mode="review")
            assert session.task_list() == ToolResult("task_list: refused in review", is_error=True)

    def test_task_update_refused_under_the_mode_given(self, log_path: Path) -> None:
        """task_update(mode=...) checks that mode's policy; nothing is appended."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert not session.task_create({"subject": "A"}).is_error
            before = log_path.read_bytes()
            refused = session.task_update({"id": "1", "status": "completed"}, mode="review")
            assert refused == ToolResult("task_update: refused in review", is_error=True)
            assert log_path.read_bytes() == before

    @pytest.mark.parametrize(
        ("tool", "arguments"), [("task_create", {"subject": "B"}), ("todo_write", TWO_STARTED)]
    )
    def test_writes_refused_under_the_mode_given(
        self, log_path: Path, tool: str, arguments: Any
    ) -> None:
        """task_create(mode=...) and todo_write(mode=...) check that mode's policy."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            before = log_path.read_bytes()
            refused = getattr(session, tool)(arguments, mode="review")
            assert refused == ToolResult(f"{tool}: refused in review", is_error=True)
            assert log_path.read_bytes() == before

    def test_parallel_in_progress_follows_the_mode_given(self, log_path: Path) -> None:
        """Two in-progress todos pass only under a mode that allows them."""
        with Session(log_path, policies=REVIEW) as session:
            session.start_turn("look", mode="agent")
            assert session.todo_write(TWO_STARTED).is_error
            assert not session.todo_write(TWO_STARTED, mode="parallel").is_error
            assert [t.status for t in session.latest_todos] == ["in_progress", "in_progress"]


class TestAgents:
    def test_task_create_records_the_calling_agent(self, log_path: Path) -> None:
        """task_create(agent=...) records that agent, not the session's."""
        with Session(log_path, agent="lead") as session:
            session.task_create({"subject": "A"}, agent="w-2")
        (event,) = read_events(log_path)
        assert isinstance(event, TaskCreated)
        assert event.data.agent == "w-2"

    def test_stale_after_an_accepted_update(self, log_path: Path) -> None:
        """After its own update an agent has seen that version: a later change makes it stale."""
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            assert not a.task_create({"subject": "A"}).is_error
            assert not a.task_update({"id": "1", "subject": "A2"}).is_error
            assert not b.task_update({"id": "1", "subject": "A3"}).is_error
            stale = a.task_update({"id": "1", "status": "completed"})
            assert stale.is_error
            assert "task 1 changed since you last listed it" in stale.content

    def test_stale_again_after_a_rejection(self, log_path: Path) -> None:
        """A rejection shows the current state; a change after it makes the retry stale too."""
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            assert not a.task_create({"subject": "A"}).is_error
            assert not b.task_update({"id": "1", "subject": "A2"}).is_error
            assert a.task_update({"id": "1", "status": "completed"}).is_error
            assert not b.task_update({"id": "1", "subject": "A3"}).is_error
            again = a.task_update({"id": "1", "status": "completed"})
            assert again.is_error
            assert '#1 pending "A3" (no owner, v3)' in again.content
            assert not a.task_update({"id": "1", "status": "completed"}).is_error


class TestRaces:
    def test_a_write_that_loses_once_is_planned_again(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A writer that gets in between the check and the append makes the call check again.

        The file lock would keep the other writer out; it is lifted here, as on a store whose
        transactions do not serialize writers, so only the expected seq guards the append.
        """
        with Session(log_path, agent="a") as a, Session(log_path, agent="b") as b:
            monkeypatch.setattr(a, "batch", contextlib.nullcontext)
            real_append = a.append
            calls: list[int] = []

            def racing(*args: Any, **kwargs: Any) -> Any:
                calls.append(1)
                if len(calls) == 1:
                    assert not b.task_create({"subject": "B"}).is_error
                return real_append(*args, **kwargs)

            monkeypatch.setattr(a, "append", racing)
            result = a.task_create({"subject": "A"})
        assert result.content == 'Created task 2: "A" (pending, no owner).'
        assert len(calls) == 2
        created = [e.data.task.id for e in read_events(log_path) if isinstance(e, TaskCreated)]
        assert created == ["1", "2"]


class TestBusy:
    @pytest.mark.parametrize(
        ("tool", "arguments"),
        [("task_create", {"subject": "B"}), ("task_update", {"id": "1", "status": "completed"})],
    )
    def test_a_write_that_always_loses_the_race(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, arguments: Any
    ) -> None:
        """When another writer always gets in first, the model is told to list and retry."""
        with Session(log_path) as session:
            assert not session.task_create({"subject": "A"}).is_error
            before = log_path.read_bytes()
            tries: list[int] = []

            def lose(*_: object, **__: object) -> None:
                tries.append(1)
                raise SeqConflictError(str(log_path), 1, 2)

            monkeypatch.setattr(session, "append", lose)
            result = getattr(session, tool)(arguments)
        assert result == ToolResult(
            f"{tool}: rejected, nothing was changed. The shared task list kept changing while "
            "this call was checked; call task_list, then call again.",
            is_error=True,
        )
        assert len(tries) == 50
        assert log_path.read_bytes() == before


class TestEvent:
    def test_first_last_and_out_of_range(self, log_path: Path) -> None:
        """event(seq) returns that seq's event for 1..applied_seq; others name the range."""
        with Session(log_path) as session:
            session.start_turn("one")
            session.start_turn("two")
            assert [session.event(s).seq for s in (1, 2, 4)] == [1, 2, 4]
            assert session.event(2).data.model_dump()["content"] == "one"
            for seq in (0, 5):
                with pytest.raises(LogError) as caught:
                    session.event(seq)
                assert str(caught.value) == f"no event with seq {seq} (the log holds 1..4)"
