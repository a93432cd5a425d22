"""The cut rule's room: when a non-empty allowed tail fits the room, a non-empty tail is kept.

Checked against plain-Python references (the cut rule written position by position, tails
summed by hand), not against the compactor's own helpers.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from reference import safe_cuts
from strategies import long_turn_loops

from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    FunctionCall,
    Message,
    Session,
    ToolCall,
    count_message,
    maybe_compact,
)
from compaction.cuts import select_cut
from compaction.views import checkpoint_message_for

CALLED = FunctionCall(name="f", arguments="")


@st.composite
def cut_cases(draw: st.DrawFn) -> tuple[list[Message], list[int], int, int | None]:
    """Messages in valid order (turns, tool rounds, replies), their tokens, retain and room."""
    messages: list[Message] = []
    for t in range(draw(st.integers(1, 4))):
        messages.append(Message(role="user", content=f"request {t}"))
        for r in range(draw(st.integers(0, 4))):
            ids = [f"t{t}r{r}c{i}" for i in range(draw(st.integers(1, 3)))]
            calls = tuple(ToolCall(id=i, function=CALLED) for i in ids)
            messages.append(Message(role="assistant", tool_calls=calls))
            messages += [Message(role="tool", tool_call_id=i, content="r") for i in ids]
        if draw(st.booleans()):
            messages.append(Message(role="assistant", content="done"))
    tokens = draw(st.lists(st.integers(1, 3_000), min_size=len(messages), max_size=len(messages)))
    retain = draw(st.integers(0, 6_000))
    room = draw(st.none() | st.integers(0, 20_000))
    return messages, tokens, retain, room


@given(cut_cases())
def test_select_cut_keeps_the_latest_step_within_the_room(
    case: tuple[list[Message], list[int], int, int | None],
) -> None:
    """The longest non-empty tail within retain, else the latest step within the room.

    Else the shortest tail: whenever some non-empty allowed tail fits the room, one is kept.
    """
    messages, tokens, retain, room = case
    n = len(messages)
    cuts = safe_cuts(messages)
    k = select_cut(messages, tokens, retain, room)
    assert k in cuts
    tail = sum(tokens[k:])
    within_retain = [c for c in cuts if c < n and sum(tokens[c:]) <= retain]
    within_room = [c for c in cuts if c < n and room is not None and sum(tokens[c:]) <= room]
    if within_retain:
        assert k == within_retain[0]
        event("a tail within retain")
    elif within_room:
        assert k < n
        assert room is not None
        assert tail <= room
        assert k == max(within_room)
        event("the latest step, over retain, within the room")
    else:
        assert k == cuts[-1]
        event("the shortest tail")


@settings(max_examples=8)  # each example runs an agent loop of up to 100 tool rounds (~1.5 s)
@given(long_turn_loops())
def test_agent_loop_keeps_a_tail_whenever_one_fits_the_room(
    loop: tuple[list[Any], int, int, float, int],
) -> None:
    """Every compaction of a long turn fits the window and keeps a tail when one fits the room.

    The room: beside the Checkpoint written and a full narrative budget.
    """
    payloads, window, fixed, retain, reserve = loop
    retain = max(retain, 0.01)  # retain 0 asks for no tail
    policy = CompactionPolicy(window_tokens=window, retain=retain, output_reserve=reserve)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Session(Path(tmp) / "s.jsonl", tool_output_cap=policy.tool_output_tokens) as session,
    ):
        for p in payloads:
            if isinstance(p, Message) and p.role == "assistant":
                before = list(session.context.messages)
                result = _compact(session, policy, fixed)
                if result is not None:
                    _check(session, result, policy, before)
                assert fixed + session.context_tokens + reserve <= window
            session.append(p)


def _check(
    session: Session, result: CompactionResult, policy: CompactionPolicy, before: list[Message]
) -> None:
    """A non-empty tail when one fits beside the Checkpoint written and a full narrative."""
    tok = session.tokenizer
    tokens = [count_message(tok, m) for m in before]
    size = count_message(tok, checkpoint_message_for(result.data.text))
    system = sum(count_message(tok, m) for m in session.context.system)
    room = policy.room_tokens - result.fixed_tokens - system - size - policy.summary_tokens
    cuts = safe_cuts(before)
    fits = [c for c in cuts if c < len(before) and sum(tokens[c:]) <= room]
    assert result.replaced_messages in cuts
    if fits:
        assert result.kept_messages > 0, "a non-empty tail fits the room but none was kept"
        event("a tail fits the room")
    over = sum(tokens[result.replaced_messages :]) > policy.retain_tokens
    event("kept the latest step over retain" if result.kept_messages and over else "within")


def _compact(session: Session, policy: CompactionPolicy, fixed: int) -> CompactionResult | None:
    try:
        return maybe_compact(session, policy, fixed_tokens=fixed)
    except CompactionError as exc:
        if exc.code != "does_not_fit":  # only a window too small for the fixed part may refuse
            raise
        return None
