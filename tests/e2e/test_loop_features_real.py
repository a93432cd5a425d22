"""The loop features on a shared real transcript (read from ../shared/transcripts, never copied).

A real Claude Code session is replayed event by event as an agent loop would run it (its own
compactions dropped): the reminder before each model call, `maybe_compact` with the boundary
trigger. Every assertion is checked against the log with a plain oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from compaction import (
    CheckpointData,
    CheckpointRecorded,
    CompactionPolicy,
    Message,
    MessageAdded,
    Session,
    TodoWritten,
    get_tokenizer,
    maybe_compact,
    remind_if_stale,
)
from compaction.compactor._resume import resume_decision
from compaction.importers import load

TRANSCRIPT = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
POLICY = CompactionPolicy(window_tokens=32_000, boundary_threshold=0.5)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Replay the transcript once with reminders and the boundary trigger; return the log."""
    from conftest import TRANSCRIPTS

    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"real transcripts not found at {TRANSCRIPTS}")
    log = tmp_path_factory.mktemp("real") / "replay.jsonl"
    events = [e for e in load(TRANSCRIPTS / TRANSCRIPT, tokenizer=get_tokenizer())]
    with Session(log, sync="batch") as session, session.batch():
        for event in events:
            if isinstance(event.data, CheckpointData):
                continue
            if isinstance(event.data, Message) and event.data.role == "assistant":
                remind_if_stale(session)
                maybe_compact(session, POLICY)
            session.append(event.data)
    return log


def test_each_checkpoint_names_its_span_and_resume_agrees_with_the_log(replayed: Path) -> None:
    """Preamble span, resume decision and receipt seqs, each checked against the log."""
    with Session(replayed) as session:
        events = list(session.events())
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert len(checkpoints) >= 2
        for cp in checkpoints:
            before = [e for e in events if e.seq < cp.seq]
            shown = _context_messages(before)
            assert cp.data.resume == resume_decision(shown)
            for section in cp.data.dropped or ():
                for item in section.items:
                    for seq in item.seqs:
                        held = session.event(seq)
                        assert isinstance(held, MessageAdded)
                        calls = " ".join(c.function.arguments for c in held.data.tool_calls or ())
                        flat = " ".join(f"{held.data.text()} {calls}".split())
                        assert item.text[:60] in flat
        newest = session.context.as_messages()[0].text()
        assert f"replaces events 1..{checkpoints[-1].data.last_seq} of this session" in newest


def test_reminders_came_exactly_when_the_list_was_stale(replayed: Path) -> None:
    """Each reminder follows 10+ assistant messages since the last write or reminder."""
    with Session(replayed) as session:
        events = list(session.events())
    assistants = since_write = 0
    reminders = 0
    unfinished = False
    for e in events:
        if isinstance(e, TodoWritten):
            since_write = 0
            unfinished = any(t.status != "completed" for t in e.data.todos)
        elif isinstance(e, MessageAdded) and e.data.origin == "reminder":
            assert since_write >= 10
            assert unfinished
            reminders += 1
            since_write = 0
        elif isinstance(e, MessageAdded) and e.data.role == "assistant":
            assistants += 1
            since_write += 1
    assert reminders >= 1


def test_the_session_ends_with_its_open_work(replayed: Path) -> None:
    """end_turn on the replayed session reports the unfinished items of the latest list."""
    with Session(replayed) as session:
        latest = [e for e in session.events() if isinstance(e, TodoWritten)][-1].data.todos
        left = session.end_turn()
    assert left.todos_pending == sum(1 for t in latest if t.status == "pending")
    assert left.todos_in_progress == sum(1 for t in latest if t.status == "in_progress")
    assert left.total >= 1  # the transcript ends with work pending


def _context_messages(events: Sequence[object]) -> list[Message]:
    """The context's messages just before a checkpoint: after the previous one's span."""
    last = 0
    out: list[tuple[int, Message]] = []
    for e in events:
        if isinstance(e, CheckpointRecorded):
            last = e.data.last_seq
            out = [(s, m) for s, m in out if s > last]
        elif isinstance(e, MessageAdded) and e.data.role != "system":
            out.append((e.seq, e.data))
    return [m for _, m in out]
