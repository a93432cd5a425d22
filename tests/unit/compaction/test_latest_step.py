"""The cut rule's fallback: a latest step over retain stays verbatim when it fits the room.

The regression traced on the benchmark session ``synthetic-stepwise-t12-s1`` (window 30,000,
retain 0.16: a 4,800-token budget): the latest step, an assistant message with two tool calls
and their results, held 4,948 tokens, so no non-empty tail fitted retain and the compaction kept
nothing verbatim, although about 27,000 tokens were free beside the Checkpoint.
"""

from __future__ import annotations

from pathlib import Path

from compaction import (
    CompactionPolicy,
    FunctionCall,
    Message,
    Session,
    ToolCall,
    compact,
    count_message,
)
from compaction.cuts import select_cut

WINDOW = 30_000


def step(n: int, words: int) -> list[Message]:
    """An assistant message with two tool calls, then both results of `words` words each."""
    calls = tuple(
        ToolCall(id=f"s{n}c{i}", function=FunctionCall(name="read_file", arguments="{}"))
        for i in (1, 2)
    )
    results = [
        Message(role="tool", tool_call_id=c.id, content=f"line {n} of {c.id} " * words)
        for c in calls
    ]
    return [Message(role="assistant", content=f"Reading part {n}.", tool_calls=calls), *results]


def traced_session(path: Path) -> Session:
    """Earlier work, then a latest step just over the 4,800-token retain budget."""
    session = Session(path)
    session.add_message({"role": "system", "content": "You are a coding agent."})
    session.start_turn("Port the parser to the new API, step by step.")
    for n in range(6):
        session.append_many(step(n, 300))
    session.append_many(step(6, 500))
    return session


def tail_of(session: Session, k: int) -> int:
    return sum(count_message(session.tokenizer, m) for m in session.context.messages[k:])


class TestLatestStepKept:
    def test_traced_shape_keeps_the_latest_step(self, log_path: Path) -> None:
        """The step over retain is kept whole, and the request still fits the window."""
        policy = CompactionPolicy(window_tokens=WINDOW)
        with traced_session(log_path) as session:
            latest = tail_of(session, len(session.context.messages) - 3)
            assert policy.retain_tokens < latest < WINDOW // 2  # over retain, within the room
            result = compact(session, policy, force=True)
            kept = session.context.messages[-result.kept_messages :]
            assert result.kept_messages == 3
            assert [m.role for m in kept] == ["assistant", "tool", "tool"]
            assert [m.tool_call_id for m in kept[1:]] == ["s6c1", "s6c2"]
            assert session.context_tokens <= policy.room_tokens

    def test_retain_zero_still_keeps_nothing(self, log_path: Path) -> None:
        """Retain 0 asks for no tail: the whole context is summarized, as before."""
        policy = CompactionPolicy(window_tokens=WINDOW, retain=0.0)
        with traced_session(log_path) as session:
            assert compact(session, policy, force=True).kept_messages == 0

    def test_step_over_the_room_falls_back_to_the_empty_tail(self) -> None:
        """A latest step larger than the room beside the Checkpoint is not kept."""
        messages = [Message(role="user", content="go"), *step(0, 1)]
        tokens = [5, 10, 4_000, 4_000]
        assert select_cut(messages, tokens, 4_800, room_tokens=8_010) == 1
        assert select_cut(messages, tokens, 4_800, room_tokens=8_009) == 4


class TestSelectCutRoom:
    def test_latest_step_within_the_room(self) -> None:
        """No tail fits retain: the shortest non-empty one is taken when it fits the room."""
        user = Message(role="user", content="go")
        messages = [user, *step(0, 1), *step(1, 1)]
        tokens = [5, 10, 2_000, 2_000, 10, 2_469, 2_469]  # the latest step: 4,948 tokens
        assert select_cut(messages, tokens, 4_800) == 7  # no room given: the empty tail
        assert select_cut(messages, tokens, 4_800, room_tokens=27_000) == 4
        assert select_cut(messages, tokens, 4_800, room_tokens=4_948) == 4
        assert select_cut(messages, tokens, 4_800, room_tokens=4_947) == 7

    def test_a_tail_within_retain_still_wins(self) -> None:
        """The room changes nothing when some non-empty tail fits retain."""
        user = Message(role="user", content="go")
        messages = [user, *step(0, 1), *step(1, 1)]
        tokens = [5, 10, 2_000, 2_000, 10, 1_000, 1_000]
        assert select_cut(messages, tokens, 6_020, room_tokens=27_000) == 1
        assert select_cut(messages, tokens, 4_800, room_tokens=27_000) == 4
        assert select_cut(messages, tokens, 4_800) == 4
