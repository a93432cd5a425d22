"""Compaction never loses a task: properties over generated sessions and repeated compactions."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from reference import (
    ReadBack,
    ReferenceLog,
    carried,
    check_refusal,
    read_back,
    read_task_lines,
    safe_cuts,
)
from strategies import compaction_scripts, task_refs, valid_todo_lists

from compaction import (
    SECTION_NAMES,
    Checkpoint,
    CheckpointRecorded,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Message,
    Session,
    TaskRef,
    TodoItem,
    TodoWriteData,
    TurnStartData,
    check_log,
    compact,
    count_message,
    parse_checkpoint,
    read_events,
    render_checkpoint,
)
from compaction.compactor._carried import clip_plan
from compaction.compactor._resume import await_user_step
from compaction.compactor.compact import unfinished
from compaction.events import JobRef, Resume
from compaction.views import checkpoint_message, checkpoint_message_for

NARRATIVE = st.text(max_size=200) | st.sampled_from(
    ["## Pending Jobs", "```\n## Current Work", "(none)", "# Checkpoint\n\n## Next Step"]
)


Script = tuple[list[Any], list[int], int, float]


def run_script(path: Path, script: Script) -> list[CompactionResult]:
    """Append the payloads, compacting at each point; return the compactions that happened."""
    payloads, points, window, retain = script
    policy = CompactionPolicy(window_tokens=window, retain=retain)
    results: list[CompactionResult] = []
    for_room = False  # a refusal that check_does_not_fit justified
    ref = ReferenceLog()
    with Session(path) as session:
        done = 0
        for point in points:
            session.append_many(payloads[done:point])
            for payload in payloads[done:point]:
                ref.append(payload)
            done = point
            try:
                result = compact(session, policy, force=True)
            except CompactionError as exc:
                if exc.code == "does_not_fit":
                    check_does_not_fit(session, exc, policy, ref)
                    for_room = True
                else:
                    check_refusal(ref, exc, policy)  # the reference's: no message or no safe cut
                continue
            check_compaction(session, result, ref, policy)
            ref.append(result.data)
            assert result.tokens_after <= policy.window_tokens, "the request fits the window"
            results.append(result)
        session.append_many(payloads[done:])
    assert results or window < 1_000 or for_room, (
        "after a complete turn, compaction refuses only for room"
    )
    return results


def expected_resume(messages: Sequence[Message]) -> Resume:
    """The resume rule, written plainly: the last message that is a turn decides.

    An assistant message without tool calls is a final answer (``await_user``); anything else
    (a call, a tool result, a request) means the loop goes on (``continue``), except the
    user's interruption or a local command, which stop it (``await_user``).
    """
    for m in reversed(messages):
        if m.role == "system" or m.origin in ("reminder", "mode_switch"):
            continue
        if m.role == "assistant":
            return "continue" if m.tool_calls else "await_user"
        if m.role == "user" and m.origin in ("interruption", "command"):
            return "await_user"
        return "continue"
    return "await_user"


def check_does_not_fit(
    session: Session, exc: CompactionError, policy: CompactionPolicy, ref: ReferenceLog
) -> None:
    """Refused for room only when what no cut can remove comes close to the room.

    That is the code-owned sections, the system messages and the tail after the reference's last
    safe cut (a call still waiting for its result keeps its turn's end), plus the summary budget.
    """
    pending, current = unfinished(session.latest_todos)
    carried = ref.list_predates_request()
    messages = ref.context_messages()
    resume = expected_resume(messages)
    step = await_user_step() if resume == "await_user" else ""  # the shortest forced Next Step
    jobs = tuple(
        JobRef(id=i, kind=k, runs=r, owner=o, since=n) for i, k, r, o, n in ref.expected_jobs()
    )
    plan = ref.expected_plan()
    skeleton = render_checkpoint(
        Checkpoint(
            pending_jobs=pending,
            current_work=current,
            carried_over=carried,
            next_step=step,
            jobs=jobs,
            plan=clip_plan(plan[1], plan[0]) if plan else None,
        )
    )
    message = checkpoint_message_for(skeleton, last_seq=session.applied_seq, resume=resume)
    least = count_message(session.tokenizer, message)
    least += sum(count_message(session.tokenizer, m) for m in session.context.system)
    cuts = safe_cuts(messages)
    assert cuts, exc
    least += sum(count_message(session.tokenizer, m) for m in messages[max(cuts) :])
    assert least + policy.summary_tokens + 64 > policy.room_tokens, exc


def check_compaction(
    session: Session, result: CompactionResult, ref: ReferenceLog, policy: CompactionPolicy
) -> None:
    """Every property one compaction must hold, against the reference fold and the session."""
    expected_pending, expected_current = ref.expected_sections()
    completed = {c for c, status in ref.latest_list() if status == "completed"}
    text = result.data.text
    parsed = parse_checkpoint(text)
    back = read_back(text)
    # Every unfinished item is in its section, once, in list order, and parses back unchanged
    # (an item over the per-item cap may be clipped, and only when whole ones cannot fit).
    assert carried(expected_pending, back.pending)
    assert carried(expected_current, back.current)
    assert list(back.pending) == list(parsed.pending_jobs)
    assert list(back.current) == list(parsed.current_work)
    assert result.data.pending == parsed.pending_jobs
    assert result.data.current == parsed.current_work
    assert not completed & (set(parsed.pending_jobs) | set(parsed.current_work))
    # All eight sections, in order, and nothing else at level two.
    assert [ln[3:] for ln in text.split("\n") if ln.startswith("## ")] == list(SECTION_NAMES)
    assert parsed == result.checkpoint
    budget = min(PLAN_CHARS, 4 * policy.summary_tokens)  # the rule, written plainly
    check_carried_work(ref, back, parsed, budget, bare=result.data.narrative_left_out is not None)
    # The view: system, the checkpoint, the kept tail; no tool result without its call.
    ctx = session.context
    assert ctx.checkpoint == result.data
    called = {c.id for m in ctx.messages for c in m.tool_calls or ()}
    assert all(m.tool_call_id in called for m in ctx.messages if m.role == "tool")
    assert all(s > result.data.last_seq for s in ctx.seqs)
    assert not ctx.messages or ctx.messages[0].role in ("user", "assistant")
    # Token accounting, and the view shrinks when the span replaced outweighs the checkpoint.
    new_tokens = count_message(session.tokenizer, checkpoint_message(result.data))
    assert session.context_tokens == result.tokens_after
    assert result.tokens_after == result.tokens_before - result.replaced_tokens + new_tokens
    if result.replaced_tokens > new_tokens:
        assert result.tokens_after < result.tokens_before
    recount = sum(count_message(session.tokenizer, m) for m in ctx.as_messages())
    assert recount == result.tokens_after


PLAN_CHARS = 6000
"""The plan's largest budget, from the rule: whole up to 6,000 characters (fewer in a small
window: as many as the narrative budget's tokens hold, about 4 a token)."""
_STRUCTURE = re.compile(r"^(#{1,3} |\d+\. )")
"""The generated plans' headings and numbered steps (prose lines open with ``Note:``)."""


def check_carried_work(
    ref: ReferenceLog, back: ReadBack, parsed: Checkpoint, budget: int, *, bare: bool
) -> None:
    """The running jobs and the approved plan stand in Current Work exactly, per the reference.

    Jobs: every job started and not ended, in start order, with its kind, what it runs, its
    owner and its start's seq. The plan: the latest approved, whole up to `budget` characters
    (unless only the code-owned sections fit: `bare`); clipped, every heading and numbered step
    stays, verbatim and in order.
    """
    assert back.jobs == ref.expected_jobs()
    assert [(j.id, j.kind, j.runs, j.owner, j.since) for j in parsed.jobs] == back.jobs
    expected = ref.expected_plan()
    if expected is None:
        assert back.plan is None
        assert parsed.plan is None
        return
    seq, text = expected
    assert back.plan is not None
    got_seq, chars, clipped, carried = back.plan
    assert (got_seq, chars) == (seq, len(text))
    assert parsed.plan is not None
    assert (parsed.plan.seq, parsed.plan.text, parsed.plan.clipped) == (seq, carried, clipped)
    if len(text) <= budget and not bare:
        assert not clipped
    if not clipped:
        assert carried == text
        return
    kept = iter(carried.split("\n"))
    for line in text.split("\n"):
        if _STRUCTURE.match(line):
            assert line in kept, line  # a subsequence: in order, verbatim


@given(compaction_scripts())
def test_compactions_keep_every_unfinished_task(
    script: Script,
) -> None:
    """Over generated sessions and 1-5 compactions, tasks survive and the log stays sound."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        results = run_script(path, script)
        event(f"{len(results)} compactions")
        event("some tail kept" if any(r.kept_messages for r in results) else "no tail kept")
        event("jobs carried" if any(r.data.jobs for r in results) else "no job carried")
        plans = [r.data.plan for r in results if r.data.plan]
        event("a clipped plan" if any(p.clipped for p in plans) else f"{bool(plans)} plan")
        events = list(read_events(path))
        check_log(events)  # includes checkpoint_cut: no tool call split from its result
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert [c.data for c in checkpoints] == [r.data for r in results]
        for c in checkpoints:  # what reached the disk parses back too
            assert parse_checkpoint(c.data.text).pending_jobs == c.data.pending


@given(compaction_scripts())
def test_same_log_same_bytes(script: Script) -> None:
    """Replaying the same script into two logs gives byte-identical files, but for the path."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.jsonl", Path(tmp) / "b.jsonl"
        run_script(a, script)
        run_script(b, script)
        named = [p.read_bytes().replace(p.name.encode(), b"LOG") for p in (a, b)]
        assert named[0] == named[1]


@given(
    st.lists(valid_todo_lists(allow_parallel=True), min_size=1, max_size=4),
    st.integers(1, 5),
)
def test_tasks_survive_repeated_compaction(todo_lists: list[list[TodoItem]], times: int) -> None:
    """Compacting again and again, after each of several lists, carries exactly the latest one."""
    ref = ReferenceLog()
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp) / "s.jsonl") as session:
        for n, items in enumerate(todo_lists):
            for payload in (
                TurnStartData(),
                Message(role="user", content=f"request {n}"),
                TodoWriteData(todos=tuple(items)),
            ):
                session.append(payload)
                ref.append(payload)
            for k in range(times):
                step = Message(role="assistant", content=f"step {n}.{k}")
                session.append(step)
                ref.append(step)
                policy = CompactionPolicy(window_tokens=20_000)
                result = compact(session, policy, force=True)
                check_compaction(session, result, ref, policy)
                ref.append(result.data)
                assert result.checkpoint.carried_over is False


@given(
    NARRATIVE,
    NARRATIVE,
    st.lists(st.text(max_size=50) | st.sampled_from(["(none)", "## Pending Jobs"]), max_size=5),
    st.lists(st.text(max_size=50), max_size=3),
    st.booleans(),
    st.lists(task_refs, max_size=3),
    st.lists(task_refs, max_size=2),
)
def test_render_parse_round_trip(
    narrative: str,
    other: str,
    pending: list[str],
    current: list[str],
    carried: bool,
    pending_tasks: list[TaskRef],
    current_tasks: list[TaskRef],
) -> None:
    """Any Checkpoint, tasks and blockers too, renders with the eight sections and parses back."""
    c = Checkpoint(
        primary_request=narrative,
        key_concepts=other,
        files_and_code=narrative,
        errors_and_fixes=other,
        pending_jobs=tuple(pending),
        current_work=tuple(current),
        next_step=narrative,
        critical_context=other,
        carried_over=carried,
        pending_tasks=tuple(pending_tasks),
        current_tasks=tuple(current_tasks),
    )
    text = render_checkpoint(c)
    assert read_task_lines(text) == [
        (t.id, t.owner, t.subject, t.blocked_by) for t in (*pending_tasks, *current_tasks)
    ]
    assert [ln[3:] for ln in text.split("\n") if ln.startswith("## ")] == list(SECTION_NAMES)
    assert parse_checkpoint(text) == c
