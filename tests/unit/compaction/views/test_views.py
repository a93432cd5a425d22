"""Views as folds: the task panel, the model's context, token usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import (
    CheckpointData,
    Event,
    EventData,
    FunctionCall,
    Message,
    Session,
    SessionLog,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnEndData,
    TurnStartData,
    count_message,
    get_tokenizer,
)
from compaction.events import make_event
from compaction.views import (
    ContextProjection,
    LatestTodosProjection,
    TodosProjection,
    UsageProjection,
    checkpoint_message,
)
from compaction.views._projection import fold

A = TodoItem(content="Write the parser", status="completed")
B = TodoItem(content="Run the tests", status="in_progress")
C = TodoItem(content="Update the docs", status="pending")


def events(*payloads: EventData) -> list[Event]:
    """Number payloads into events from seq 1."""
    return [make_event(i, p) for i, p in enumerate(payloads, start=1)]


def checkpoint(first: int, last: int, text: str = "## Summary\nwork so far") -> CheckpointData:
    """Return a checkpoint replacing first..last."""
    return CheckpointData(
        text=text, first_seq=first, last_seq=last, tokens_before=0, tokens_after=0, summarizer="t"
    )


class CountingTokenizer:
    """A tokenizer that counts whitespace-separated words and records every call."""

    name = "words"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def encode(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]

    def count(self, text: str) -> int:
        self.calls.append(text)
        return len(text.split())


class TestTodos:
    def test_follows_latest_write(self) -> None:
        """The panel shows the latest todo/write, in the model's order."""
        log = events(
            TurnStartData(),
            TodoWriteData(todos=(C,)),
            TodoWriteData(todos=(A, B, C)),
        )
        panel = fold(TodosProjection(), log)
        assert panel.todos == (A, B, C)
        assert panel.seq == 3

    def test_emptied_on_turn_start(self) -> None:
        """A new turn empties the panel; the latest-todos view keeps the list."""
        log = events(TodoWriteData(todos=(A, B)), TurnEndData(), TurnStartData())
        assert fold(TodosProjection(), log).todos == ()
        assert fold(TodosProjection(), log).seq is None
        assert fold(LatestTodosProjection(), log).todos == (A, B)

    @pytest.mark.parametrize(
        "other",
        [
            pytest.param(checkpoint(1, 2), id="checkpoint"),
            pytest.param(Message(role="user", content="more"), id="message"),
            pytest.param(TurnEndData(), id="turn-end"),
        ],
    )
    def test_untouched_by_other_events(self, other: EventData) -> None:
        """Compaction, messages and turn ends return the very same state."""
        log = events(TurnStartData(), TodoWriteData(todos=(A, B)), other)
        for projection in (TodosProjection(), LatestTodosProjection()):
            state = projection.init()
            for e in log[:2]:
                state = projection.apply(state, e)
            assert projection.apply(state, log[2]) is state

    def test_render(self) -> None:
        """The panel text is the counts line, then one marked line per item."""
        panel = fold(TodosProjection(), events(TodoWriteData(todos=(A, B, C))))
        assert panel.render() == (
            "1 completed, 1 in progress, 1 pending\n"
            "✓ Write the parser\n"
            "◉ Run the tests\n"
            "○ Update the docs"
        )
        assert fold(TodosProjection(), []).render() == "0 completed, 0 in progress, 0 pending"


class TestContext:
    def test_todo_write_never_in_context(self) -> None:
        """todo/write events cost the context nothing: the messages are the same without them."""
        msgs = [Message(role="user", content="go"), Message(role="assistant", content="ok")]
        with_writes = events(msgs[0], TodoWriteData(todos=(A,)), msgs[1], TodoWriteData(todos=()))
        window = fold(ContextProjection(), with_writes)
        assert window.messages == tuple(msgs)
        assert window.seqs == (1, 3)
        assert all("Write the parser" not in m.text() for m in window.as_messages())

    def test_system_messages_lead(self) -> None:
        """System messages come first, whatever their position in the log."""
        window = fold(
            ContextProjection(),
            events(
                Message(role="user", content="u"),
                Message(role="system", content="s"),
            ),
        )
        assert [m.role for m in window.as_messages()] == ["system", "user"]

    def test_checkpoint_folds_its_span(self) -> None:
        """A checkpoint replaces the messages up to its last seq; later ones stay, in order."""
        log = events(
            Message(role="system", content="sys"),
            TurnStartData(),
            Message(role="user", content="one"),
            Message(role="assistant", content="two"),
            Message(role="user", content="three"),
            checkpoint(2, 4),
            Message(role="assistant", content="four"),
        )
        window = fold(ContextProjection(), log)
        assert window.checkpoint == log[5].data
        assert [m.text() for m in window.messages] == ["three", "four"]
        assert window.seqs == (5, 7)
        out = window.as_messages()
        assert [m.role for m in out] == ["system", "user", "user", "assistant"]
        assert out[1] == checkpoint_message(checkpoint(2, 4))
        assert out[1].text().endswith("## Summary\nwork so far")

    def test_second_checkpoint_replaces_first(self) -> None:
        """Only the newest checkpoint is in the context."""
        log = events(
            Message(role="user", content="a"),
            checkpoint(1, 1, "first"),
            Message(role="user", content="b"),
            checkpoint(1, 3, "second"),
        )
        window = fold(ContextProjection(), log)
        assert window.checkpoint is not None
        assert window.checkpoint.text == "second"
        assert window.messages == ()

    def test_tool_calls_and_results_kept(self) -> None:
        """Assistant tool calls and tool results pass through unchanged."""
        call = ToolCall(id="c1", function=FunctionCall(name="bash", arguments='{"cmd": "ls"}'))
        msgs = [
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", tool_call_id="c1", content="file.py"),
        ]
        assert fold(ContextProjection(), events(*msgs)).messages == tuple(msgs)


class TestUsage:
    def test_counts_each_event_once(self, log_path: Path) -> None:
        """Each event is tokenized once (with a tokenizer given, by the next read); rereads none."""
        tok = CountingTokenizer()
        with Session(log_path, tokenizer=tok) as session:
            session.start_turn("add a flag")
            session.todo_write('{"todos": [{"content": "Add it", "status": "in_progress"}]}')
            session.add_message({"role": "assistant", "content": "done now"})
            session.end_turn()
            _ = session.context_tokens
            calls = len(tok.calls)
            assert calls == 3  # user message, todo/write, assistant message
            for _ in range(3):
                _ = session.usage, session.context_tokens, session.context
            assert len(tok.calls) == calls
            session.add_message({"role": "user", "content": "thanks"})
            _ = session.context_tokens
            assert len(tok.calls) == calls + 1  # counted once, by the read after it
            assert session.usage.per_event[0] == 0
            assert session.usage.events == 6

    def test_replay_counts_once_per_event(self, log_path: Path) -> None:
        """Opening a session on an existing log counts each event once."""
        with Session(log_path, tokenizer=CountingTokenizer()) as session:
            session.start_turn("x y z")
        tok = CountingTokenizer()
        with Session(log_path, tokenizer=tok) as session:
            assert session.usage.total_tokens == 3 + 4  # overhead + "user\nx y z"
            assert len(tok.calls) == 1
            assert session.usage.total_tokens == 3 + 4
            assert len(tok.calls) == 1

    def test_context_tokens_agrees_with_recount(self, log_path: Path) -> None:
        """The O(1) context size equals counting the context's messages afresh."""
        tok = get_tokenizer()
        with Session(log_path, tokenizer=tok) as session:
            session.add_message({"role": "system", "content": "You are a coding agent."})
            session.start_turn("Add a --verbose flag")
            session.add_message({"role": "assistant", "content": "Looking at the CLI."})
            session.todo_write('{"todos": [{"content": "Add flag", "status": "in_progress"}]}')
            session.start_turn("Now write tests")
            session.add_message({"role": "assistant", "content": "Tests written."})

            def recount() -> int:
                return sum(count_message(tok, m) for m in session.context.as_messages())

            assert session.context_tokens == recount()
            before = session.context_tokens
            session.append(checkpoint(2, 6, "## Summary\nflag added"))
            assert session.context_tokens == recount()
            assert session.context_tokens != before
            session.add_message({"role": "user", "content": "thanks"})
            assert session.context_tokens == recount()
            assert session.usage.context_tokens == session.context_tokens
            usage = fold(UsageProjection(tok), SessionLog(log_path).events())
            assert usage == session.usage

    def test_context_tokens_with_skipped_bad_line(self, log_path: Path) -> None:
        """A skipped bad line (a seq gap) does not shift the checkpoint's token arithmetic."""
        tok = get_tokenizer()
        with SessionLog(log_path) as log:
            log.append_many([Message(role="user", content=f"message {i}") for i in range(4)])
        lines = log_path.read_bytes().splitlines(keepends=True)
        lines[1] = b"garbage\n"
        log_path.write_bytes(b"".join(lines))
        with Session(log_path, tokenizer=tok, skip_bad_lines=True) as session:
            session.append(checkpoint(1, 3))
            session.add_message({"role": "user", "content": "after"})
            expected = sum(count_message(tok, m) for m in session.context.as_messages())
            assert [m.text() for m in session.context.messages] == ["message 3", "after"]
            assert session.context_tokens == expected
            assert [b.line for b in session.report.bad_lines] == [2]
