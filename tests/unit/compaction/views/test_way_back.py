"""The way back: the Checkpoint message names the span it replaced and how to read it back."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from loop_sessions import reads, say, todos

from compaction import (
    CheckpointData,
    CompactionPolicy,
    LogError,
    MessageAdded,
    Session,
    TaskRef,
    compact,
)
from compaction.views import checkpoint_message, checkpoint_preamble

POLICY = CompactionPolicy(window_tokens=6_000)


def build(path: Path, files: int = 6) -> Session:
    """A turn that reads `files` files and ends with an answer."""
    session = Session(path)
    session.start_turn("Fix the parser in src/parse.py")
    session.todo_write(todos(("Fix the parser", "in_progress"), ("Write docs", "pending")))
    reads(session, [f"src/m{i}.py" for i in range(files)])
    session.add_message(say("Fixed the parser."))
    return session


class TestPreamble:
    def test_the_checkpoint_message_names_the_span_and_the_way_back(self, log_path: Path) -> None:
        """Before the Checkpoint the model reads the span and the two ways to read it back."""
        with build(log_path) as session:
            r = compact(session, POLICY, force=True)
            message = session.context.as_messages()[0]
        text = message.text()
        assert f"replaces events 1..{r.data.last_seq} of this session" in text
        assert f"`harness log {log_path.name} --seq N`" in text  # a temporary log: its name
        assert "LOG" not in text
        assert "`Session.event(seq)`" in text
        assert "copied from your todo list, exactly as you last wrote it" in text
        assert text.endswith(r.data.text)

    def test_a_store_session_is_named_by_url_and_id_without_password(self) -> None:
        """A session in a store is named by its URL (no password) and ``--session ID``."""
        data = CheckpointData(
            text="# Checkpoint\n",
            first_seq=1,
            last_seq=7,
            tokens_before=10,
            tokens_after=5,
            summarizer="x",
            log="'postgresql://u:***@h/db' --session abc",
        )
        text = checkpoint_message(data).text()
        assert "`harness log 'postgresql://u:***@h/db' --session abc --seq N`" in text

    def test_shared_tasks_are_named_as_tasks(self) -> None:
        """A Checkpoint that carries shared tasks says they come from the shared task list."""
        base = {"text": "x", "first_seq": 1, "last_seq": 3, "tokens_before": 1}
        base |= {"tokens_after": 1, "summarizer": "x"}
        only = CheckpointData(**base, current_tasks=(TaskRef(id="1", subject="a"),))
        both = CheckpointData(**base, pending=("b",), current_tasks=(TaskRef(id="1", subject="a"),))
        assert "copied from the shared task list, exactly as last written" in (
            checkpoint_message(only).text()
        )
        assert "from your todo list and the shared task list" in checkpoint_message(both).text()
        assert "your todo list, exactly" not in checkpoint_message(only).text()

    def test_a_second_compaction_names_everything_before_its_cut(self, log_path: Path) -> None:
        """A Checkpoint folds in the previous one, so it stands for events 1..its last seq."""
        with build(log_path) as session:
            compact(session, POLICY, force=True)
            session.start_turn("Now src/lex.py")
            reads(session, [f"src/n{i}.py" for i in range(6)])
            second = compact(session, POLICY, force=True)
            text = session.context.as_messages()[0].text()
        assert second.data.first_seq > 1
        assert f"replaces events 1..{second.data.last_seq} of this session" in text

    def test_an_old_checkpoint_without_resume_carries_on(self) -> None:
        """A checkpoint event from before the resume field reads as before: carry on."""
        old = CheckpointData(
            text="# Checkpoint\n",
            first_seq=1,
            last_seq=7,
            tokens_before=10,
            tokens_after=5,
            summarizer="x",
        )
        text = checkpoint_message(old).text()
        assert "events 1..7 of this session" in text
        assert "Carry on from Current Work" in text

    def test_without_a_span_the_preamble_speaks_of_the_earlier_turns(self) -> None:
        """`checkpoint_preamble()` without a span (for size estimates) says "the earlier turns"."""
        assert "replaces the earlier turns;" in checkpoint_preamble()

    @pytest.mark.parametrize("files", [1, 4, 30])
    def test_the_recorded_token_count_is_the_context_the_model_gets(
        self, log_path: Path, files: int
    ) -> None:
        """tokens_after counts the preamble with its real seqs (1-, 2- and 3-digit spans)."""
        with build(log_path, files) as session:
            r = compact(session, CompactionPolicy(window_tokens=40_000), force=True)
            assert session.context_tokens == r.data.tokens_after


class TestReadBack:
    def test_session_event_returns_each_replaced_message_whole(self, log_path: Path) -> None:
        """Every message of the replaced span is read back, byte for byte, by its seq."""
        with build(log_path) as session:
            before = {e.seq: e for e in session.events() if isinstance(e, MessageAdded)}
            r = compact(session, POLICY, force=True)
            assert r.replaced_messages > 0
            for seq in range(1, r.data.last_seq + 1):
                if seq in before:
                    assert session.event(seq) == before[seq]

    @pytest.mark.parametrize("seq", [0, -1, 10_000])
    def test_a_seq_outside_the_log_is_a_clear_error(self, log_path: Path, seq: int) -> None:
        """`Session.event` names the seqs the log holds."""
        with build(log_path) as session, pytest.raises(LogError, match=r"the log holds 1\.\."):
            session.event(seq)

    def test_harness_log_seq_prints_a_replaced_tool_result_whole(self, log_path: Path) -> None:
        """The command the preamble names prints a replaced event's whole text."""
        with build(log_path) as session:
            compact(session, POLICY, force=True)
            replaced = session.event(5)
            assert 5 not in session.context.seqs
        assert isinstance(replaced, MessageAdded)
        assert replaced.data.role == "tool"
        run = run_cli("log", log_path, "--seq", "5")
        assert run.returncode == 0
        assert run.stdout == replaced.data.text() + "\n"
        assert "contents of src/m0.py" in run.stdout
