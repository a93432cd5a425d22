"""Property: a reopened session's views are the live session's, whatever the log holds.

The live session counts tokens as it appends; a reopen folds the log again with a fresh
tokenizer, counting in batches (`compaction.session.live_views.COUNT_BATCH`, drawn small here so
that batch edges fall anywhere). Logs mix system, user and assistant messages, tool results
(some clipped on append), todo writes, shared tasks, turns with modes, provider usage reports,
retractions and forced compactions. Every view and every per-event count must come back equal.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction import (
    CompactionError,
    CompactionPolicy,
    FunctionCall,
    Message,
    Session,
    ToolCall,
    UsageReportData,
    compact,
)
from compaction.events import CheckpointRecorded, RetractData
from compaction.session import live_views
from compaction.session._recorded_count import trusted_count
from compaction.tokens import TiktokenTokenizer

Op = tuple[str, Any]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("system"), st.text(min_size=1, max_size=60)),
        st.tuples(st.just("user"), st.text(min_size=1, max_size=200)),
        st.tuples(st.just("assistant"), st.text(min_size=1, max_size=200)),
        st.tuples(st.just("tool"), st.integers(1, 2_000)),  # lines of output: some are clipped
        st.tuples(st.just("todo"), st.lists(st.sampled_from("abcde"), max_size=4, unique=True)),
        st.tuples(st.just("task"), st.text(alphabet="xyz ", min_size=1, max_size=20)),
        st.tuples(st.just("turn"), st.sampled_from([None, "agent", "plan"])),
        st.tuples(st.just("report"), st.integers(0, 50_000)),
        st.tuples(st.just("retract"), st.lists(st.integers(0, 50), min_size=1, max_size=3)),
        st.tuples(st.just("compact"), st.sampled_from([0.0, 0.05, 0.16])),
    ),
    min_size=1,
    max_size=30,
)


def _append_tool_round(session: Session, lines: int, step: int) -> None:
    call = ToolCall(id=f"c{step}", function=FunctionCall(name="bash", arguments="{}"))
    session.append(Message(role="assistant", tool_calls=(call,)))
    output = "".join(f"line {i}: output\n" for i in range(lines))
    session.append(Message(role="tool", tool_call_id=f"c{step}", content=output))


def _retract(session: Session, picks: list[int]) -> None:
    seqs = session.context.seqs + tuple(m for m in (1, 2, 3) if m <= session.applied_seq)
    if seqs:
        chosen = tuple(sorted({seqs[i % len(seqs)] for i in picks}))
        session.append(RetractData(seqs=chosen, reason="pop"))


def _compact(session: Session, retain: float) -> None:
    refused = None
    try:
        compact(session, CompactionPolicy(window_tokens=4_000, retain=retain), force=True)
    except CompactionError as exc:
        refused = exc.code
    assert refused in (None, "nothing_to_compact", "no_safe_cut", "does_not_fit")


def apply(session: Session, op: Op, step: int) -> None:
    """Append what one operation stands for."""
    kind, arg = op
    if kind in ("system", "user", "assistant"):
        session.append(Message(role=kind, content=arg))
    elif kind == "tool":
        _append_tool_round(session, arg, step)
    elif kind == "todo":
        todos = [{"content": c, "status": "pending"} for c in arg]
        session.todo_write({"todos": todos})
    elif kind == "task":
        session.task_create({"subject": arg, "description": arg})
    elif kind == "turn":
        session.start_turn(f"request {step}", mode=arg)
    elif kind == "report":
        data = UsageReportData(purpose="turn", model="m", prompt_tokens=arg, completion_tokens=1)
        session.report_usage(data)
    elif kind == "retract":
        _retract(session, arg)
    else:
        _compact(session, arg)


def every_view(session: Session) -> dict[str, Any]:
    """Every value the session's views expose, as plain data."""
    return {
        "todos": session.todos.model_dump(),
        "latest": [t.model_dump() for t in session.latest_todos],
        "latest_seq": session.latest_todos_seq,
        "tasks": session.tasks.model_dump(),
        "progress": asdict(session.progress),
        "context": session.context.model_dump(),
        "turn_modes": asdict(session.turn_modes),
        "mode": session.mode,
        "open_work": session.open_work().model_dump(),
        "applied_seq": session.applied_seq,
        "usage": session.usage.model_dump(),
        "context_tokens": session.context_tokens,
        "event_tokens": [session.event_tokens(s) for s in range(session.applied_seq + 2)],
        "token_scale": session.token_scale,
    }


@contextmanager
def count_batch(size: int) -> Iterator[None]:
    """Let the usage view wait for `size` events before counting them."""
    before = live_views.COUNT_BATCH
    live_views.COUNT_BATCH = size
    try:
        yield
    finally:
        live_views.COUNT_BATCH = before


@settings(max_examples=40, deadline=None)
@given(ops, st.integers(1, 6), st.booleans())
def test_reopened_views_equal_the_live_views(operations: list[Op], batch: int, lazy: bool) -> None:
    """Reopened with a fresh tokenizer (or none, loaded on first use), every view is the same."""
    with tempfile.TemporaryDirectory() as tmp, count_batch(batch):
        path = Path(tmp) / "s.jsonl"
        with Session(path, tool_output_cap=300, tokenizer=TiktokenTokenizer()) as live:
            for step, op in enumerate(operations):
                apply(live, op, step)
            if not path.exists():
                return
            expected = every_view(live)
        tokenizer = None if lazy else TiktokenTokenizer()
        with Session(path, tool_output_cap=300, tokenizer=tokenizer) as again:
            got = every_view(again)
    assert json.dumps(got, sort_keys=True, default=str) == json.dumps(
        expected, sort_keys=True, default=str
    )


@settings(max_examples=40, deadline=None)
@given(ops, st.text(min_size=1, max_size=80))
def test_a_recorded_count_is_the_count(operations: list[Op], more: str) -> None:
    """Read first on reopen (the log's recorded count, if any), `context_tokens` is the live one.

    Every checkpoint `compact` writes carries a record a reopen trusts; one more message after
    the reopen is counted on top of it, as a reopen that counts every event counts it.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with Session(path, tool_output_cap=300, tokenizer=TiktokenTokenizer()) as live:
            for step, op in enumerate(operations):
                apply(live, op, step)
            expected = live.context_tokens
        with Session(path, tool_output_cap=300) as again:
            checkpoints = [e for e in again.events() if isinstance(e, CheckpointRecorded)]
            assert all(trusted_count(e.data, again.tokenizer_name) for e in checkpoints)
            got = again.context_tokens
            again.append(Message(role="user", content=more))
            got_more = again.context_tokens
        with Session(path, tool_output_cap=300, tokenizer=TiktokenTokenizer()) as counted:
            expected_more = counted.context_tokens
    assert (got, got_more) == (expected, expected_more)
