"""The usage view's running sums agree with what the model sees, whatever happened to the log.

`Session.context_tokens` is kept in O(1) by prefix sums (`UsageProjection`); the oracle here is
plain: count every message of the context view (`ContextWindow.as_messages`) one by one. The
operations mix everything that moves the sums: system messages, oversized tool results (clipped
on append), retractions of any message in the context (a tombstone, as the Agents SDK adapter
writes), and compactions whose span may or may not take in a retracted message.
"""

from __future__ import annotations

import tempfile
from collections import Counter
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
    compact,
    count_message,
    read_events,
)
from compaction.events import RetractData

Op = tuple[str, Any]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("system"), st.text(min_size=1, max_size=80)),
        st.tuples(st.just("user"), st.text(min_size=1, max_size=200)),
        st.tuples(st.just("assistant"), st.text(min_size=1, max_size=200)),
        st.tuples(st.just("tool"), st.integers(1, 3_000)),  # lines of output: some are clipped
        st.tuples(st.just("retract"), st.lists(st.integers(0, 50), min_size=1, max_size=3)),
        st.tuples(st.just("compact"), st.sampled_from([0.0, 0.05, 0.16])),
    ),
    min_size=1,
    max_size=30,
)


def seen_by_model(session: Session) -> int:
    """The oracle: every message the model would be sent, counted one by one."""
    return sum(count_message(session.tokenizer, m) for m in session.context.as_messages())


def apply(session: Session, op: Op, step: int) -> None:
    kind, arg = op
    if kind in ("system", "user"):
        session.append(Message(role=kind, content=arg))
    elif kind == "assistant":
        session.append(Message(role="assistant", content=arg))
    elif kind == "tool":
        call = ToolCall(id=f"c{step}", function=FunctionCall(name="bash", arguments="{}"))
        session.append(Message(role="assistant", tool_calls=(call,)))
        output = "".join(f"line {i}: output\n" for i in range(arg))
        session.append(Message(role="tool", tool_call_id=f"c{step}", content=output))
    elif kind == "retract":
        seqs = session.context.seqs + tuple(m for m in (1, 2, 3) if m <= session.applied_seq)
        if seqs:
            chosen = tuple(sorted({seqs[i % len(seqs)] for i in arg}))
            session.append(RetractData(seqs=chosen, reason="pop"))
    else:
        refused = None
        try:
            compact(session, CompactionPolicy(window_tokens=4_000, retain=arg), force=True)
        except CompactionError as exc:
            refused = exc.code
        assert refused in (None, "nothing_to_compact", "no_safe_cut", "does_not_fit")


@settings(max_examples=40)
@given(ops)
def test_context_tokens_are_what_the_model_sees(operations: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with Session(path, tool_output_cap=300) as session:
            for step, op in enumerate(operations):
                apply(session, op, step)
                assert session.context_tokens == seen_by_model(session), op
            usage = session.usage
        # A replay of the log folds to the same figures.
        with Session(path) as again:
            assert again.context_tokens == seen_by_model(again)
            assert again.usage == usage
        events = list(read_events(path)) if path.exists() else []
    assert usage.events_by_type == dict(Counter(e.type for e in events))
    assert usage.events == len(events) == len(usage.per_event)
    assert sum(usage.tokens_by_type.values()) == sum(usage.per_event)
    messages = [n for e, n in zip(events, usage.per_event, strict=True) if e.type == "message"]
    assert usage.tokens_by_type.get("message", 0) == sum(messages)
