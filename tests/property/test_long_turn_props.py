"""Compaction inside one long turn: the request fits, the latest rounds stay, both APIs accept it.

Checked against plain-Python references (the cut rule, the two APIs' message rules), not against
the compactor's own helpers.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from strategies import long_turn_loops, long_turn_payloads

from compaction import (
    Checkpoint,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Message,
    Session,
    check_log,
    compact,
    count_message,
    maybe_compact,
    render_checkpoint,
)
from compaction.compactor.compact import unfinished
from compaction.views import checkpoint_message_for
from prompts import PromptBuilder, anthropic_request, get_mode, openai_request

Loop = tuple[list[Any], int, int, float, int]


def reference_cuts(messages: Sequence[Message]) -> list[int]:
    """The cut rule written the slow, obvious way: each position checked on its own."""
    n = len(messages)
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    last = assistants[-1] if assistants else -1
    waiting = last >= 0 and any(c.id not in answered for c in messages[last].tool_calls or ())
    out = []
    for k in range(1, n + 1):
        if k < n and messages[k].role not in ("user", "assistant"):
            continue
        called_before = {c.id for m in messages[:k] for c in m.tool_calls or ()}
        answered_after = {m.tool_call_id for m in messages[k:] if m.role == "tool"}
        if called_before & answered_after:
            continue
        if waiting and k > last:
            continue
        out.append(k)
    return out


def check_openai(request: dict[str, Any]) -> None:
    """Check an OpenAI chat request: no tool result without its call, no call left unanswered.

    Each tool message answers a call of the assistant message before its run of tool messages,
    and every call is answered before the next non-tool message.
    """
    messages = request["messages"]
    assert messages[0]["role"] == "system"
    open_calls: set[str] = set()
    for m in messages[1:]:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, f"tool result without its call: {m}"
            open_calls.discard(m["tool_call_id"])
            continue
        assert not open_calls, f"calls {open_calls} left unanswered before a {m['role']} message"
        open_calls = {c["id"] for c in m.get("tool_calls") or ()}
        assert m["role"] in ("user", "assistant")


def check_anthropic(request: dict[str, Any]) -> None:
    """Check an Anthropic messages request: user first, roles alternate, tool blocks paired.

    Each tool_use is answered in the next user message; each tool_result answers a tool_use of
    the message just before.
    """
    messages = request["messages"]
    assert messages
    assert messages[0]["role"] == "user"
    for a, b in itertools.pairwise(messages):
        assert a["role"] != b["role"], "roles must alternate"
    for i, m in enumerate(messages):
        results = {b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"}
        if results:
            before = messages[i - 1] if i else {"content": []}
            uses = {b["id"] for b in before["content"] if b["type"] == "tool_use"}
            assert results <= uses, f"tool_result without its tool_use: {results - uses}"
        uses = {b["id"] for b in m["content"] if b["type"] == "tool_use"}
        if uses and i + 1 < len(messages):
            nxt = messages[i + 1]["content"]
            after = {b["tool_use_id"] for b in nxt if b["type"] == "tool_result"}
            assert uses <= after, f"tool_use without its result: {uses - after}"


def check_after(session: Session, result: CompactionResult, policy: CompactionPolicy) -> None:
    """The request fits the window, keeps a tail when one fits, and both APIs accept it."""
    fixed = result.fixed_tokens
    assert fixed + session.context_tokens + policy.output_reserve <= policy.window_tokens
    builder, mode = PromptBuilder(), get_mode("agent")
    check_openai(openai_request(builder, mode, session))
    check_anthropic(anthropic_request(builder, mode, session, max_tokens=1024))
    # Non-empty tail whenever a cut with a tail fits beside the Checkpoint and its budget.
    span = session.context.messages
    before = _before_compaction(session, result)
    tokens = [count_message(session.tokenizer, m) for m in before]
    size = count_message(session.tokenizer, checkpoint_message_for(result.data.text))
    system = sum(count_message(session.tokenizer, m) for m in session.context.system)
    room = policy.room_tokens - fixed - system - size - policy.summary_tokens
    budget = min(policy.retain_tokens, room)
    cuts = reference_cuts(before)
    k = result.replaced_messages
    assert k in cuts
    steps = [c for c in cuts if c < len(before)]
    latest = steps[-1] if steps else None  # over retain, the latest step may stay
    assert sum(tokens[k:]) <= policy.retain_tokens or k in (cuts[-1], latest)
    if any(c < len(before) and sum(tokens[c:]) <= budget for c in cuts):
        assert span, "a tail fits but none was kept"
    if latest is not None and policy.retain_tokens and sum(tokens[latest:]) <= room:
        assert span, "the latest step fits the room but no tail was kept"


def _before_compaction(session: Session, result: CompactionResult) -> list[Message]:
    """The non-system messages the compaction chose from (after the previous checkpoint)."""
    return [*_replaced(session, result), *session.context.messages]


def _replaced(session: Session, result: CompactionResult) -> list[Message]:
    first, last = result.data.first_seq, result.data.last_seq
    return [
        e.data
        for e in session.events()
        if first <= e.seq <= last and e.type == "message" and e.data.role != "system"
    ]


def check_refusal(
    session: Session, exc: CompactionError, policy: CompactionPolicy, fixed: int
) -> None:
    """Only the fixed part, the Checkpoint's code-owned sections and its budget may not fit."""
    assert exc.code == "does_not_fit", exc
    pending, current = unfinished(session.latest_todos)
    skeleton = render_checkpoint(Checkpoint(pending_jobs=pending, current_work=current))
    least = fixed + count_message(session.tokenizer, checkpoint_message_for(skeleton))
    assert least + policy.summary_tokens + 64 > policy.room_tokens, exc


@settings(max_examples=8)  # each example runs an agent loop of up to 100 tool rounds (~1.5 s)
@given(long_turn_loops())
def test_long_turn_agent_loop(loop: Loop) -> None:
    """An agent loop over one long turn: every model call's request fits the window.

    Tool outputs larger than the window are clipped on append; each compaction leaves a request
    both APIs accept, with the longest tail that fits.
    """
    payloads, window, fixed, retain, reserve = loop
    policy = CompactionPolicy(window_tokens=window, retain=retain, output_reserve=reserve)
    compactions = kept = 0
    cap = policy.tool_output_tokens
    with (
        tempfile.TemporaryDirectory() as tmp,
        Session(Path(tmp) / "s.jsonl", tool_output_cap=cap) as session,
    ):
        for p in payloads:
            if isinstance(p, Message) and p.role == "assistant":
                try:
                    result = maybe_compact(session, policy, fixed_tokens=fixed)
                except CompactionError as exc:
                    check_refusal(session, exc, policy, fixed)
                    continue
                if result is not None:
                    compactions += 1
                    kept += result.kept_messages > 0
                    check_after(session, result, policy)
                # The request of every model call fits the window.
                assert fixed + session.context_tokens + reserve <= window
            session.append(p)
        check_log(session.events())
    event(f"{compactions} compactions" if compactions < 3 else "3+ compactions")
    event("some tail kept" if kept else "no tail kept")


@settings(max_examples=10)
@given(long_turn_payloads(max_rounds=40))
def test_retain_grows_the_kept_tail(payloads: list[Any]) -> None:
    """A larger retain share never keeps less of a long turn verbatim."""
    kept = []
    # One session, appended once (clipping counts every large output); dry runs append
    # nothing, so the three compactions see the same log.
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp) / "s.jsonl") as session:
        session.append_many(payloads)
        for retain in (0.05, 0.16, 0.4):
            policy = CompactionPolicy(window_tokens=8_192, retain=retain)
            result = compact(session, policy, force=True, dry_run=True)
            tail = session.context.messages[result.replaced_messages :]
            kept.append(sum(count_message(session.tokenizer, m) for m in tail))
    assert kept == sorted(kept)
