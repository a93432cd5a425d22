"""Session rules that `scripts/mutate` showed untested (issue 25).

Each mutant changed which session a URL opens, which tool policy a task call runs under, what
the model reads when the shared list keeps changing, or which event a seq names:

- `Session.open` hands every argument on (tokenizer, sync, bad lines, agent, policies);
- `task_update` and `task_list` run under the `mode` given, and a refusal is an error result;
- a task write that loses every race says so and appends nothing;
- `Session.event` reads seqs 1..`applied_seq` and names the range otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction import LogError, LogFormatError, ModePolicy, Session, ToolResult
from compaction.errors import SeqConflictError
from compaction.tokens import get_tokenizer

REVIEW = {
    "review": ModePolicy(
        refusals={
            "task_list": "task_list: refused in review",
            "task_update": "task_update: refused in review",
        }
    )
}


class TestOpen:
    def test_every_argument_reaches_the_session(self, log_path: Path) -> None:
        """Session.open passes its tokenizer, sync, bad-line rule, agent and policies on."""
        tokenizer = get_tokenizer()
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
