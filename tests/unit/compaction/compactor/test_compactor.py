"""The compactor: policy, cut selection, compaction of a live session, fold on re-compaction."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from compaction import (
    NARRATIVE_SECTIONS,
    Checkpoint,
    CheckpointData,
    CheckpointRecorded,
    CompactionError,
    CompactionPlan,
    CompactionPolicy,
    ConfigError,
    Event,
    EventData,
    ExtractiveSummarizer,
    FunctionCall,
    LogIntegrityError,
    Message,
    Session,
    SummaryInput,
    TodoItem,
    TodoWriteData,
    ToolCall,
    check_log,
    compact,
    count_message,
    maybe_compact,
    parse_checkpoint,
    render_checkpoint,
)
from compaction.compactor._carried import CARRIED_HEAD, clip_task
from compaction.compactor.compact import clip_carried, previous_checkpoint, unsafe_cuts
from compaction.contract import MAX_ITEM_CHARS
from compaction.cuts import cut_points, select_cut
from compaction.events import TaskRef, make_event
from compaction.invariants import check_checkpoint_cut
from compaction.views import checkpoint_message, checkpoint_message_for


def todos(*items: tuple[str, str]) -> str:
    return json.dumps({"todos": [{"content": c, "status": s} for c, s in items]})


def call(call_id: str) -> Message:
    return Message(
        role="assistant",
        tool_calls=(ToolCall(id=call_id, function=FunctionCall(name="bash", arguments="{}")),),
    )


def result(call_id: str, text: str = "ok") -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text)


def user(text: str = "do it") -> Message:
    return Message(role="user", content=text)


def say(text: str = "done") -> Message:
    return Message(role="assistant", content=text)


def turn(session: Session, n: int, *, size: int = 200) -> None:
    session.start_turn(f"Request {n}: fix src/mod{n}.py")
    session.add_message(call(f"c{n}"))
    session.add_message(result(f"c{n}", f"output {n} " * size))
    session.add_message(say(f"Fixed {n}.\n\nNext I will test mod{n}."))
    session.end_turn()


@pytest.fixture
def session(log_path: Path) -> Iterator[Session]:
    with Session(log_path) as s:
        s.add_message({"role": "system", "content": "You are a coding agent."})
        yield s


SMALL = CompactionPolicy(window_tokens=4000)


class TestPolicy:
    def test_defaults(self) -> None:
        """Defaults: 0.9 threshold, 0.05 tail, 0.4 boundary floor, no reserve (continuity grid)."""
        p = CompactionPolicy()
        assert (p.threshold, p.retain, p.output_reserve) == (0.9, 0.05, 0)
        assert (p.boundary_threshold, p.boundary_share) == ("auto", 0.4)
        assert p.trigger_tokens == int(0.9 * p.window_tokens)
        assert p.retain_tokens == int(0.05 * p.window_tokens)
        assert p.boundary_tokens == int(0.4 * p.window_tokens)

    def test_reserve_counts_in_the_request(self) -> None:
        """The output reserve counts in the request: due at threshold * window - reserve."""
        p = CompactionPolicy(window_tokens=10_000, threshold=0.95, output_reserve=2_000)
        assert p.trigger_tokens == 7_500
        assert p.should_compact(7_500)
        assert not p.should_compact(7_499)
        assert p.room_tokens == 8_000

    def test_fixed_part_counts_in_the_request(self) -> None:
        """System prompt and tools count: due when fixed + context reaches the trigger."""
        p = CompactionPolicy(window_tokens=10_000, threshold=0.8)
        assert p.trigger_tokens == 8_000
        assert p.should_compact(5_000, fixed_tokens=3_000)
        assert not p.should_compact(4_999, fixed_tokens=3_000)
        assert not p.should_compact(7_999)

    def test_tool_output_cap(self) -> None:
        """The tool-output cap is a share of the window (default 0.1)."""
        assert CompactionPolicy(window_tokens=8_192).tool_output_tokens == 819
        quarter = CompactionPolicy(window_tokens=1_000, tool_output_share=0.25)
        assert quarter.tool_output_tokens == 250

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"window_tokens": 0}, r"window_tokens must be a positive integer, not 0"),
            ({"window_tokens": True}, r"window_tokens .* not True"),
            ({"threshold": 0}, r"threshold must be in \(0, 1\], not 0"),
            ({"threshold": 1.5}, r"threshold must be in \(0, 1\], not 1.5"),
            ({"threshold": float("nan")}, r"threshold must be a number, not nan"),
            ({"retain": -0.1}, r"retain must be in \[0, 1\), not -0.1"),
            ({"retain": 0.9}, r"retain \(0.9\) \+ summary_share \(0.03\) must stay below"),
            ({"summary_share": 0}, r"summary_share must be in \(0, 1\), not 0"),
            ({"output_reserve": -1}, r"output_reserve must be an integer in \[0, window_tokens\)"),
            ({"output_reserve": 128_000}, r"output_reserve .* not 128000"),
            ({"output_reserve": 115_200}, r"output_reserve \(115200\) must stay below the trigger"),
            ({"tool_output_share": 0}, r"tool_output_share must be in \(0, 1\), not 0"),
            ({"tool_output_share": 1.0}, r"tool_output_share must be in \(0, 1\), not 1.0"),
            ({"threshold": 2, "retain": 2}, r"threshold .* not 2; retain .* not 2"),
        ],
    )
    def test_rejects_bad_values(self, kwargs: dict[str, object], match: str) -> None:
        """Bad values raise ConfigError naming them."""
        with pytest.raises(ConfigError, match=match):
            # A value of the wrong type on purpose: the runtime check is under test.
            CompactionPolicy(**kwargs)  # type: ignore[arg-type]


class TestCut:
    def test_unsafe_between_call_and_result(self) -> None:
        """A cut between a tool call and its result is unsafe; around them it is safe."""
        msgs = [user(), call("a"), result("a"), say()]
        assert unsafe_cuts(msgs) == [False, False, True, False, False]

    def test_waiting_call_blocks_every_later_cut(self) -> None:
        """A call of the last assistant message with no result yet blocks cuts after it."""
        msgs = [user(), say(), user(), call("a")]
        assert unsafe_cuts(msgs) == [False, False, False, False, True]

    def test_abandoned_earlier_call_does_not_block(self) -> None:
        """An unanswered call followed by later assistant messages is taken as abandoned."""
        msgs = [user(), call("a"), say(), user(), say()]
        assert not any(unsafe_cuts(msgs))

    def test_picks_longest_tail_that_fits(self) -> None:
        """The earliest user boundary whose tail fits the retain budget wins."""
        msgs = [user(), say(), user(), say(), user(), say()]
        assert select_cut(msgs, [10] * 6, retain_tokens=40) == 2
        assert select_cut(msgs, [10] * 6, retain_tokens=20) == 4
        assert select_cut(msgs, [10] * 6, retain_tokens=5) == 6

    def test_cut_points_inside_a_turn(self) -> None:
        """Cuts fall before a user, or an assistant once earlier calls are answered; not a tool.

        The end is a cut too (keep nothing).
        """
        msgs = [user(), call("a"), result("a"), say(), say()]
        assert cut_points(msgs) == [1, 3, 4, 5]
        assert select_cut(msgs, [1, 1, 1, 1, 50], retain_tokens=60) == 1
        assert select_cut(msgs, [1, 1, 1, 1, 50], retain_tokens=51) == 3
        assert select_cut(msgs, [1, 1, 1, 1, 50], retain_tokens=49) == 5

    def test_parallel_calls_answered_before_the_next_round(self) -> None:
        """An assistant with two calls: no cut until both results are in."""
        two = Message(
            role="assistant",
            tool_calls=(
                ToolCall(id="a", function=FunctionCall(name="bash", arguments="{}")),
                ToolCall(id="b", function=FunctionCall(name="bash", arguments="{}")),
            ),
        )
        msgs = [user(), two, result("b"), result("a"), call("c"), result("c")]
        assert cut_points(msgs) == [1, 4, 6]

    def test_answer_after_a_later_assistant_blocks_the_cut(self) -> None:
        """A call answered only after a later assistant message: no cut between them."""
        msgs = [user(), call("a"), say(), result("a"), say()]
        assert cut_points(msgs) == [1, 4, 5]

    def test_falls_back_to_shortest_tail(self) -> None:
        """When no safe cut fits, the one with the shortest tail is taken."""
        msgs = [user(), say(), user(), call("a")]
        assert select_cut(msgs, [10, 10, 10, 10], retain_tokens=5) == 3

    @pytest.mark.parametrize(
        ("messages", "code"),
        [
            ([], "nothing_to_compact"),
            ([call("a")], "no_safe_cut"),
        ],
    )
    def test_rejects(self, messages: list[Message], code: str) -> None:
        """No message, or no safe cut, raises CompactionError with its code."""
        with pytest.raises(CompactionError, match=code):
            select_cut(messages, [1] * len(messages), retain_tokens=0)


class TestCompact:
    def test_below_threshold_does_nothing(self, session: Session) -> None:
        """Below the trigger compact raises below_threshold and appends nothing."""
        turn(session, 1)
        seq = session.applied_seq
        with pytest.raises(CompactionError, match="below_threshold") as info:
            compact(session, CompactionPolicy())
        assert info.value.code == "below_threshold"
        assert session.applied_seq == seq
        assert maybe_compact(session, CompactionPolicy()) is None

    def test_tasks_copied_by_code(self, session: Session) -> None:
        """Pending/in_progress items go to their sections verbatim, in order; completed never."""
        turn(session, 1)
        session.todo_write(
            todos(
                ("Write ## Pending Jobs parser", "pending"),
                ("Done thing", "completed"),
                ("Now\nthis", "in_progress"),
                ('"(none)"', "pending"),
            )
        )
        turn(session, 2)
        r = compact(session, SMALL, force=True)
        assert r.checkpoint.pending_jobs == ("Write ## Pending Jobs parser", '"(none)"')
        assert r.checkpoint.current_work == ("Now\nthis",)
        assert r.data.pending == r.checkpoint.pending_jobs
        assert r.data.current == r.checkpoint.current_work
        assert "Done thing" not in r.data.text
        assert parse_checkpoint(r.data.text) == r.checkpoint

    def test_list_from_earlier_turn_is_carried_and_said(self, session: Session) -> None:
        """An unfinished list written before the latest turn is carried, with the note."""
        turn(session, 1)
        session.todo_write(todos(("Old task", "pending"), ("Doing", "in_progress")))
        turn(session, 2)
        assert session.todos.todos == ()
        r = compact(session, SMALL, force=True)
        assert r.checkpoint.carried_over
        assert r.checkpoint.pending_jobs == ("Old task",)
        assert r.checkpoint.current_work == ("Doing",)
        assert "before the latest user request" in r.data.text

    def test_list_of_current_turn_is_not_marked_carried(self, session: Session) -> None:
        """A list written in the current turn carries no note."""
        turn(session, 1)
        session.start_turn("next")
        session.todo_write(todos(("Task", "pending")))
        r = compact(session, SMALL, force=True)
        assert not r.checkpoint.carried_over
        assert r.checkpoint.pending_jobs == ("Task",)

    def test_todo_write_in_kept_tail_still_counts(self, session: Session) -> None:
        """The latest list is copied even when its todo/write sits in the kept tail."""
        for n in range(4):
            turn(session, n, size=30)
        session.start_turn("last request")
        session.todo_write(todos(("Tail task", "in_progress")))
        r = compact(session, CompactionPolicy(window_tokens=100_000), force=True)
        assert r.kept_messages >= 1
        assert r.data.last_seq < session.applied_seq - 1
        assert r.checkpoint.current_work == ("Tail task",)

    def test_context_view_after(self, session: Session) -> None:
        """The context shows system, the checkpoint as one user message, then the kept tail."""
        for n in range(6):
            turn(session, n)
        before = session.context_tokens
        r = compact(session, SMALL, force=True)
        ctx = session.context
        msgs = ctx.as_messages()
        assert msgs[0].role == "system"
        assert msgs[1] == checkpoint_message(r.data)
        assert msgs[1].role == "user"
        assert all(s > r.data.last_seq for s in ctx.seqs)
        assert len(ctx.messages) == r.kept_messages
        assert ctx.messages == () or ctx.messages[0].role in ("user", "assistant")
        assert r.tokens_before == before
        assert session.context_tokens == r.tokens_after < before
        recount = sum(count_message(session.tokenizer, m) for m in msgs)
        assert recount == r.tokens_after

    def test_todos_view_unaffected(self, session: Session) -> None:
        """Compaction does not change the task panel."""
        turn(session, 1)
        session.start_turn("go")
        session.todo_write(todos(("A", "pending")))
        panel = session.todos
        compact(session, SMALL, force=True)
        assert session.todos == panel

    def test_dry_run_appends_nothing(self, session: Session) -> None:
        """A dry run computes the checkpoint but leaves the log as it was."""
        for n in range(3):
            turn(session, n)
        seq = session.applied_seq
        r = compact(session, SMALL, force=True, dry_run=True)
        assert r.event is None
        assert session.applied_seq == seq
        assert session.context.checkpoint is None
        real = compact(session, SMALL, force=True)
        assert real.data == r.data
        assert isinstance(real.event, CheckpointRecorded)

    def test_recompaction_folds_previous(self, session: Session) -> None:
        """A second compaction starts after the first span and carries its narrative on."""
        session.start_turn("The original goal: build the parser")
        session.todo_write(todos(("Keep me", "pending")))
        for n in range(4):
            turn(session, n)
        first = compact(session, SMALL, force=True)
        for n in range(4, 8):
            turn(session, n)
        second = compact(session, SMALL, force=True)
        assert second.data.first_seq == first.data.last_seq + 1
        assert "The original goal: build the parser" in second.checkpoint.primary_request
        assert second.checkpoint.pending_jobs == ("Keep me",)
        assert second.replaced_tokens > 0
        check_log(session.events())

    def test_same_log_same_bytes(self, tmp_path: Path) -> None:
        """Compacting two copies of the same log appends identical bytes, but for its path."""
        outs = []
        for name in ("a.jsonl", "b.jsonl"):
            s = Session(tmp_path / name)
            for n in range(5):
                turn(s, n)
            s.todo_write(todos(("x", "pending")))
            compact(s, SMALL, force=True)
            s.close()
            text = (tmp_path / name).read_bytes()
            assert f'"log":"{name}"'.encode() in text  # the preamble names the log
            outs.append(text.replace(name.encode(), b"LOG"))
        assert outs[0] == outs[1]

    def test_summarizer_failure_falls_back(self, session: Session) -> None:
        """A failing summarizer is replaced by the extractive one and the reason recorded."""

        class Broken:
            name = "broken"

            def summarize(self, span: SummaryInput) -> Mapping[str, str]:
                raise RuntimeError("model unavailable")

        for n in range(3):
            turn(session, n)
        r = compact(session, SMALL, summarizer=Broken(), force=True)
        assert r.data.summarizer == "extractive"
        assert r.data.fallback_reason == "broken failed: RuntimeError: model unavailable"

    def test_summarizer_cannot_touch_tasks(self, session: Session) -> None:
        """A summarizer's Pending Jobs / Current Work are dropped; the log's list wins."""

        class Meddler:
            name = "meddler"

            def summarize(self, span: SummaryInput) -> Mapping[str, str]:
                return {"Pending Jobs": "- forged", "Current Work": "", "Next Step": "ok"}

        turn(session, 1)
        session.todo_write(todos(("Real", "pending")))
        session.add_message(call("c9"))  # inside a tool loop: Next Step is the summarizer's
        r = compact(session, SMALL, summarizer=Meddler(), force=True)
        assert r.checkpoint.pending_jobs == ("Real",)
        assert "forged" not in r.data.text
        assert r.checkpoint.next_step == "ok"
        # The summarizer left the request out: the output check adds the span's first request.
        assert r.checkpoint.primary_request == "- Request 1: fix src/mod1.py"
        assert r.data.summarizer == "meddler"

    def test_nothing_to_compact(self, session: Session) -> None:
        """A session with no message since the last checkpoint cannot be compacted."""
        with pytest.raises(CompactionError, match="nothing_to_compact"):
            compact(session, SMALL, force=True)

    def test_long_turn_keeps_its_latest_rounds(self, session: Session) -> None:
        """Inside one long turn the latest tool rounds stay verbatim, within the retain budget."""
        session.start_turn("one long job")
        for n in range(20):
            session.add_message(call(f"c{n}"))
            session.add_message(result(f"c{n}", f"data {n} " * 100))
        policy = CompactionPolicy(window_tokens=4000, retain=0.1)  # room for a round or two
        r = compact(session, policy, force=True)
        ctx = session.context
        assert r.kept_messages >= 2
        assert ctx.messages[0].role == "assistant"
        assert ctx.messages[-1] == result("c19", "data 19 " * 100)
        per_event = session.usage.per_event
        kept = sum(per_event[s - 1] for s in ctx.seqs)
        assert kept <= policy.retain_tokens
        one_more = kept + per_event[ctx.seqs[0] - 2] + per_event[ctx.seqs[0] - 3]
        assert one_more > policy.retain_tokens  # the longest tail that fits: one round more won't

    def test_fixed_part_triggers_at_the_boundary(self, session: Session) -> None:
        """maybe_compact counts the fixed part: one token under the trigger does nothing."""
        for n in range(3):
            turn(session, n)
        policy = CompactionPolicy(window_tokens=10_000)
        under = policy.trigger_tokens - session.context_tokens - 1
        assert maybe_compact(session, policy, fixed_tokens=under) is None
        r = maybe_compact(session, policy, fixed_tokens=under + 1)
        assert r is not None
        assert r.fixed_tokens == under + 1
        assert r.request_tokens_before == policy.trigger_tokens
        assert r.request_tokens_after == under + 1 + r.tokens_after

    def test_request_fits_the_window_after(self, session: Session) -> None:
        """With a large fixed part the tail shrinks so the whole request fits the window."""
        for n in range(8):
            turn(session, n, size=60)
        policy = CompactionPolicy(window_tokens=4_000, retain=0.5, output_reserve=300)
        free = compact(session, policy, force=True, dry_run=True)
        fixed = 4_000 - 300 - free.tokens_after + 200  # the free tail would overflow by 200
        tight = compact(session, policy, force=True, fixed_tokens=fixed)
        assert tight.kept_messages < free.kept_messages
        assert fixed + tight.tokens_after + policy.output_reserve <= policy.window_tokens

    def test_does_not_fit_names_the_parts(self, session: Session) -> None:
        """When system + tools + Checkpoint cannot fit, does_not_fit, and nothing is appended."""
        for n in range(3):
            turn(session, n)
        seq = session.applied_seq
        with pytest.raises(CompactionError, match="does_not_fit") as info:
            compact(session, SMALL, force=True, fixed_tokens=3_900)
        assert info.value.code == "does_not_fit"
        assert "3900 fixed (system prompt and tools)" in str(info.value)
        assert "over the 4000-token window" in str(info.value)
        assert session.applied_seq == seq

    def test_retain_changes_the_kept_tail(self, log_path: Path) -> None:
        """A larger retain share keeps more of a long turn verbatim."""
        kept = []
        for retain in (0.05, 0.1, 0.3):
            with Session(log_path.with_name(f"r{retain}.jsonl")) as s:
                s.start_turn("one long job")
                for n in range(30):
                    s.add_message(call(f"c{n}"))
                    s.add_message(result(f"c{n}", f"data {n} " * 60))
                policy = CompactionPolicy(window_tokens=6_000, retain=retain)
                kept.append(compact(s, policy, force=True).kept_messages)
        assert kept[0] < kept[1] < kept[2]


def _events(*payloads: EventData) -> list[Event]:
    return [make_event(i, p) for i, p in enumerate(payloads, start=1)]


def _cp(first: int, last: int) -> CheckpointData:
    return CheckpointData(
        text="x", first_seq=first, last_seq=last, tokens_before=0, tokens_after=0, summarizer="t"
    )


class TestCheckpointCutInvariant:
    @pytest.mark.parametrize(
        ("events", "match"),
        [
            (_events(user(), call("a"), _cp(1, 2), result("a")), r"separates tool call 'a'"),
            (_events(user(), call("a"), result("a"), call("b"), _cp(1, 4), result("b")), "'b'"),
            (_events(call("a"), user(), result("a"), _cp(1, 2)), r"\(seq 1\) from its result"),
        ],
    )
    def test_rejects_split_pairs(self, events: list[Event], match: str) -> None:
        """A checkpoint whose span ends between a call and its result breaks checkpoint_cut."""
        with pytest.raises(LogIntegrityError, match=match) as info:
            check_checkpoint_cut(events)
        assert info.value.rule == "checkpoint_cut"

    def test_accepts_safe_cuts(self) -> None:
        """Spans that end before a call or after its result pass."""
        check_checkpoint_cut(_events(user(), call("a"), result("a"), _cp(1, 3), user(), call("b")))
        check_checkpoint_cut(_events(user(), _cp(1, 1), call("a"), result("a")))

    def test_check_log_runs_it(self) -> None:
        """check_log includes the cut rule."""
        with pytest.raises(LogIntegrityError, match="checkpoint_cut"):
            check_log(_events(user(), call("a"), _cp(1, 2), result("a")))


class TestLongTaskInNextStep:
    """A very long task is named by its head in Next Step; it stands whole in its section."""

    @pytest.mark.parametrize("status", ["pending", "in_progress"])
    def test_a_10000_character_task_does_not_fill_next_step(
        self, tmp_path: Path, status: str
    ) -> None:
        task = "a" * 10_000
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("Do the long task")
            session.append(TodoWriteData(todos=(TodoItem(content=task, status=status),)))
            session.append(Message(role="assistant", content="Working on it."))
            session.start_turn("go on")
            session.append(Message(role="assistant", content="Shall I start?"))
            session.start_turn("yes")  # a request to answer: the compaction resumes the work
            result = compact(session, CompactionPolicy(window_tokens=4000, retain=0.0), force=True)
        checkpoint = result.checkpoint
        whole = checkpoint.current_work if status == "in_progress" else checkpoint.pending_jobs
        assert whole == (task,)
        assert task[:200] in checkpoint.next_step
        assert len(checkpoint.next_step) < 600  # was the whole 10,000 characters
        assert result.tokens_after <= 4000


class TestFailurePaths:
    def test_a_failing_extractive_summarizer_is_an_error_not_a_fallback(
        self, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """When the fallback itself raises, compaction stops with summarizer_failed.

        The error carries the cause; the log is left as it was.
        """

        def broken(self: ExtractiveSummarizer, span: object) -> dict[str, str]:
            raise RuntimeError("disk on fire")

        turn(session, 1)
        turn(session, 2)
        before = session.applied_seq
        monkeypatch.setattr(ExtractiveSummarizer, "summarize", broken)
        with pytest.raises(CompactionError) as caught:
            compact(session, CompactionPolicy(window_tokens=4_000), force=True)
        assert caught.value.code == "summarizer_failed"
        assert str(caught.value) == "summarizer_failed: RuntimeError: disk on fire"
        assert session.applied_seq == before

    def test_a_previous_summary_not_rendered_here_is_kept_as_context(self) -> None:
        """An imported summary that is no Checkpoint reads back as an earlier summary, by source."""
        data = CheckpointData(
            text="We fixed the parser.",
            first_seq=1,
            last_seq=2,
            tokens_before=10,
            tokens_after=5,
            summarizer="claude-code",
        )
        previous = previous_checkpoint(data)
        assert previous is not None
        assert previous.primary_request == (
            "- Earlier summary (claude-code):\n  > We fixed the parser."
        )
        assert previous.pending_jobs == ()

    @pytest.mark.parametrize(("fixed", "reserve"), [(0, 0), (700, 0), (0, 512), (700, 512)])
    def test_below_the_trigger_says_what_the_request_holds(
        self, session: Session, fixed: int, reserve: int
    ) -> None:
        """The refusal adds up the request (fixed part and context) and names the reserve."""
        turn(session, 1, size=20)
        policy = CompactionPolicy(window_tokens=100_000, output_reserve=reserve)
        context = session.context_tokens
        with pytest.raises(CompactionError) as caught:
            compact(session, policy, fixed_tokens=fixed)
        parts = f" ({fixed} fixed + {context} context)" if fixed else ""
        reserved = f", {reserve} reserved for the reply" if reserve else ""
        assert str(caught.value) == (
            f"below_threshold: the request holds {fixed + context} tokens{parts}{reserved}, "
            f"below the trigger of {policy.trigger_tokens} (0.9 of a 100000-token window); "
            "nothing was done (force it with force=True, CLI --force)"
        )


REQUESTS = [f"Request {i}: tidy module {i}" for i in range(10)]


class OverBudget:
    """A summarizer that writes far past its narrative budget, the same text for any span."""

    name = "over-budget"

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        return {
            "Primary Request and Intent": "\n".join(REQUESTS),
            "Critical Context": "context " * 600,
            "Next Step": "Keep going.",
        }


class TestCheckpointOverItsBudget:
    """A Checkpoint larger than planned moves the cut to the longest tail that fits beside it.

    That is the re-cut of `_Plan.fit`, checked exactly at the room's boundary too.
    """

    @staticmethod
    def ten_turns(log_path: Path) -> Session:
        session = Session(log_path)
        session.add_message({"role": "system", "content": "You are an agent."})
        for request in REQUESTS:
            session.start_turn(request)
            session.add_message({"role": "assistant", "content": "word " * 120})
            session.end_turn()
        return session

    @pytest.mark.parametrize("slack", [0, 1, 5])
    def test_the_cut_moves_to_the_longest_tail_that_fits(self, log_path: Path, slack: int) -> None:
        with self.ten_turns(log_path) as session:
            messages = list(session.context.messages)
            tokens = [session.event_tokens(s) for s in session.context.seqs]
            tails = [sum(tokens[c:]) for c in range(len(tokens) + 1)]
            system = sum(count_message(session.tokenizer, m) for m in session.context.system)
            roomy = CompactionPolicy(window_tokens=100_000, output_reserve=0)
            probe = compact(session, roomy, summarizer=OverBudget(), force=True, dry_run=True)
            size = count_message(session.tokenizer, checkpoint_message(probe.data))
            cuts = cut_points(messages)
            target = cuts[len(cuts) // 2]  # the tail this room fits exactly, plus the slack
            room = size + tails[target] + slack
            policy = CompactionPolicy(window_tokens=room + system, retain=0.7, output_reserve=0)
            result = compact(session, policy, summarizer=OverBudget(), force=True, dry_run=True)
            assert count_message(session.tokenizer, checkpoint_message(result.data)) == size
            expected = min(c for c in cuts if size + tails[c] <= room)
            assert result.replaced_messages == expected
            assert size + tails[expected] <= room < size + tails[expected - 1]
            assert result.request_tokens_after <= policy.window_tokens


class TestDoesNotFit:
    @pytest.mark.parametrize("waiting", [False, True])
    def test_the_refusal_adds_up_every_part(self, log_path: Path, waiting: bool) -> None:
        """Each part is its own count and the total their sum.

        A call waiting for its result is the tail that cannot be cut.
        """
        with Session(log_path) as session:
            session.add_message({"role": "system", "content": "You are an agent. " * 20})
            session.start_turn("Do the work")
            session.todo_write(todos(*[(f"Task {i} " * 10, "pending") for i in range(8)]))
            session.add_message(say("Working on it. " * 30))
            if waiting:
                session.add_message(call("c9"))
            system = sum(count_message(session.tokenizer, m) for m in session.context.system)
            tail = count_message(session.tokenizer, call("c9")) if waiting else 0
            policy = CompactionPolicy(window_tokens=600, output_reserve=100)
            with pytest.raises(CompactionError) as caught:
                compact(session, policy, force=True, fixed_tokens=250)
        found = re.fullmatch(
            r"does_not_fit: (.*) = (\d+) tokens, over the 600-token window even with nothing "
            r"kept; use a larger window, a smaller tool catalog or system prompt, fewer "
            r"unfinished tasks, or a smaller output reserve",
            str(caught.value),
        )
        assert found is not None, str(caught.value)
        parts = [p.split(" ", 1) for p in found.group(1).split(" + ")]
        labels = [label for _, label in parts]
        values = [int(n) for n, _ in parts]
        expected = ["fixed (system prompt and tools)", "system messages", "Checkpoint"]
        expected += ["of tail that cannot be cut (a tool call waiting for its result)"] * waiting
        assert labels == [*expected, "reserved for the reply"]
        assert values[:2] == [250, system]
        assert values[2] > 0
        assert values[3:] == ([tail, 100] if waiting else [100])
        assert int(found.group(2)) == sum(values) > 600


class TestMaybeCompactDefault:
    def test_without_a_fixed_part_the_trigger_is_the_context_alone(self, log_path: Path) -> None:
        """One token under the trigger is not due; at the trigger it is (fixed part 0)."""
        with Session(log_path) as session:
            turn(session, 1)
            turn(session, 2)
            context = session.context_tokens
            under = CompactionPolicy(window_tokens=100_000, output_reserve=90_000 - context - 1)
            assert under.trigger_tokens == context + 1
            assert maybe_compact(session, under) is None
            at = CompactionPolicy(window_tokens=100_000, output_reserve=90_000 - context)
            assert maybe_compact(session, at) is not None


class TestSpanSummarized:
    def test_the_checkpoint_does_not_summarize_the_kept_tail(self, log_path: Path) -> None:
        """Only the replaced messages are summarized: a request kept verbatim is not in it."""
        with Session(log_path) as session:
            turn(session, 1)
            turn(session, 2)
            session.start_turn("Request 3: only in the tail")
            session.add_message(say("Starting."))
            result = compact(session, CompactionPolicy(window_tokens=4_000), force=True)
        assert result.kept_messages > 0
        assert "only in the tail" not in result.data.text
        assert "Request 1" in result.data.text


class Failing:
    name = "failing"

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        raise TimeoutError("no answer")


class TestFallback:
    def test_the_fallback_writes_what_the_extractive_summarizer_writes(
        self, log_path: Path
    ) -> None:
        """A failed summarizer's Checkpoint is the extractive one, settled the same way."""
        with Session(log_path) as session:
            session.start_turn("Plan the flag; never touch main.py", mode="plan")
            session.add_message(say("Plan: add --verbose in cli.py."))
            session.end_turn()
            session.start_turn("Add the --verbose flag", mode="agent")
            session.todo_write(todos(("Add the flag", "in_progress"), ("Test it", "pending")))
            session.add_message(call("c1"))
            session.add_message(result("c1", "Error: cli.py:3: NameError: name 'x' is not defined"))
            session.add_message(say("Fixing the NameError in cli.py."))
            session.start_turn("<command-name>/clear</command-name> go on")
            session.add_message(say("Going on."))
            policy = CompactionPolicy(window_tokens=4_000)
            plain = compact(session, policy, force=True, dry_run=True)
            fell = compact(session, policy, summarizer=Failing(), force=True, dry_run=True)
        assert fell.data.summarizer == "extractive"
        assert fell.data.fallback_reason == "failing failed: TimeoutError: no answer"
        assert fell.data.text == plain.data.text


class TestSecondCompaction:
    def test_it_folds_from_the_event_after_the_last_fold(self, session: Session) -> None:
        """A compaction after a compaction starts at the seq after the previous span's end."""
        policy = CompactionPolicy(window_tokens=4_000)
        turn(session, 1)
        turn(session, 2)
        first = compact(session, policy, force=True)
        turn(session, 3)
        turn(session, 4)
        plans: list[CompactionPlan] = []

        def record(plan: CompactionPlan) -> None:
            plans.append(plan)

        second = compact(session, policy, force=True, on_compact_start=record)
        assert first.data.first_seq == 1
        assert second.data.first_seq == first.data.last_seq + 1
        assert second.data.last_seq > second.data.first_seq
        assert [p.first_seq for p in plans] == [second.data.first_seq]  # the hook sees it too


class TestOverTheRoomEvenAlone:
    def test_a_narrative_too_big_for_the_room_is_left_empty(self, log_path: Path) -> None:
        """Only the carried items fit: a Checkpoint with an empty narrative, and a receipt note."""
        with TestCheckpointOverItsBudget.ten_turns(log_path) as session:
            session.todo_write(todos(("Fix the parser", "in_progress")))
            roomy = CompactionPolicy(window_tokens=100_000, output_reserve=0)
            probe = compact(session, roomy, summarizer=OverBudget(), force=True, dry_run=True)
            size = count_message(session.tokenizer, checkpoint_message(probe.data))
            system = sum(count_message(session.tokenizer, m) for m in session.context.system)
            policy = CompactionPolicy(window_tokens=size + system - 1, output_reserve=0)
            result = compact(session, policy, summarizer=OverBudget(), force=True)
        assert result.data.narrative_left_out is not None
        assert "narrative sections are empty" in result.data.narrative_left_out
        assert all(text == "" for text in result.checkpoint.narrative().values())
        assert result.checkpoint.current_work == ("Fix the parser",)
        assert result.tokens_after <= policy.window_tokens
        assert result.data.dropped  # the receipt lists what the narrative left out

    def test_a_checkpoint_too_big_even_bare_is_refused_with_nothing_kept(
        self, log_path: Path
    ) -> None:
        """The cut goes to the end (no tail) before refusing, so the refusal names no tail."""
        with TestCheckpointOverItsBudget.ten_turns(log_path) as session:
            session.todo_write(
                todos(*[(f"Task {i}: " + "detail " * 30, "pending") for i in range(8)])
            )
            system = sum(count_message(session.tokenizer, m) for m in session.context.system)
            roomy = CompactionPolicy(window_tokens=100_000, output_reserve=0)
            probe = compact(session, roomy, summarizer=OverBudget(), force=True, dry_run=True)
            size = count_message(session.tokenizer, checkpoint_message(probe.data))
            tight = CompactionPolicy(window_tokens=size + system - 1, output_reserve=0)
            bare = compact(session, tight, summarizer=OverBudget(), force=True, dry_run=True)
            assert bare.data.narrative_left_out is not None
            size = count_message(session.tokenizer, checkpoint_message(bare.data))
            policy = CompactionPolicy(window_tokens=size + system - 1, output_reserve=0)
            with pytest.raises(CompactionError) as caught:
                compact(session, policy, summarizer=OverBudget(), force=True, dry_run=True)
        assert caught.value.code == "does_not_fit"
        assert " Checkpoint + 0 reserved for the reply = " in str(caught.value)
        assert "tail" not in str(caught.value)


class TestFirstCut:
    def test_the_tail_leaves_room_for_the_planned_checkpoint(self, log_path: Path) -> None:
        """The kept tail is the longest within retain and the room beside a planned Checkpoint.

        Planned: its code-owned sections plus its narrative budget, even when a smaller
        Checkpoint results.
        """
        with TestCheckpointOverItsBudget.ten_turns(log_path) as session:
            items = [(f"Task {i}: " + "detail " * 20, "pending") for i in range(10)]
            session.todo_write(todos(*items))
            messages = list(session.context.messages)
            tokens = [session.event_tokens(s) for s in session.context.seqs]
            tails = [sum(tokens[c:]) for c in range(len(tokens) + 1)]
            system = sum(count_message(session.tokenizer, m) for m in session.context.system)
            policy = CompactionPolicy(window_tokens=1000, retain=0.6, output_reserve=0)
            skeleton = Checkpoint(pending_jobs=tuple(content for content, _ in items))
            planned = count_message(
                session.tokenizer,
                checkpoint_message_for(
                    render_checkpoint(skeleton), last_seq=session.applied_seq, resume="await_user"
                ),
            )
            room = policy.room_tokens - system - planned - policy.summary_tokens
            budget = min(policy.retain_tokens, room)
            assert budget < policy.retain_tokens  # the room, not retain, bounds the tail here
            result = compact(session, policy, force=True, dry_run=True)
        expected = min(c for c in cut_points(messages) if tails[c] <= budget)
        assert result.replaced_messages == expected


class Writes:
    """A summarizer that writes every narrative section with a text naming it."""

    name = "writes"

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        return {name: f"{name} text" for name in NARRATIVE_SECTIONS}


class TestNarrativeCarried:
    def test_every_narrative_section_reaches_the_checkpoint(self, session: Session) -> None:
        """What the summarizer wrote for each narrative section is in the Checkpoint."""
        turn(session, 1)
        turn(session, 2)
        session.start_turn("go on")  # ends on a request, so Next Step is the summarizer's
        result = compact(
            session, CompactionPolicy(window_tokens=4_000), summarizer=Writes(), force=True
        )
        narrative = result.checkpoint.narrative()
        for name in NARRATIVE_SECTIONS:
            assert f"{name} text" in narrative[name], (name, narrative[name])


class TestModesReachTheSummarizer:
    def test_a_plan_constraint_is_kept_in_plan_mode_and_dropped_after(self, log_path: Path) -> None:
        """The session's turn modes reach the span.

        Plan's constraint holds while in Plan mode and is gone once an agent turn follows.
        """
        policy = CompactionPolicy(window_tokens=4_000)
        with Session(log_path) as session:
            session.start_turn("Plan it. Do not edit files yet.", mode="plan")
            session.add_message(say("Plan: add --verbose in cli.py."))
            session.add_message(say("Waiting for approval."))
            still = compact(session, policy, force=True, dry_run=True)
            session.end_turn()
            session.start_turn("Go ahead.", mode="agent")
            session.add_message(say("Adding it."))
            ended = compact(session, policy, force=True, dry_run=True)
        assert "while in plan mode: Do not edit files yet." in still.checkpoint.critical_context
        assert "Do not edit" not in ended.checkpoint.critical_context


class TestCarriedBoundaries:
    """The items carried by code: list order kept, and the clipping cap tested at its edge."""

    def test_pending_jobs_keep_a_list_order_that_is_not_alphabetical(
        self, session: Session
    ) -> None:
        """Several pending items, out of alphabetical order, among others: the list's order."""
        turn(session, 1)
        order = ["Zip the release", "Bump the version", "Merge the docs", "Add a changelog"]
        items = [(order[0], "pending"), ("Read the code", "completed"), (order[1], "pending")]
        items += [("Fix the lexer", "in_progress"), (order[2], "pending"), (order[3], "pending")]
        session.todo_write(todos(*items))
        turn(session, 2)
        r = compact(session, SMALL, force=True)
        assert list(r.checkpoint.pending_jobs) == order
        assert order != sorted(order)
        assert r.checkpoint.current_work == ("Fix the lexer",)

    def test_an_item_exactly_at_the_cap_is_carried_whole(self) -> None:
        """MAX_ITEM_CHARS characters: what the tools accept is never clipped."""
        text = "x" * MAX_ITEM_CHARS
        assert clip_carried(text, 7) == text
        task = TaskRef(id="3", subject=text)
        assert clip_task(task) == task

    def test_one_character_over_the_cap_is_clipped_with_its_way_back(self) -> None:
        """MAX_ITEM_CHARS + 1: the head, then a note naming the length and where it is whole."""
        text = "y" * (MAX_ITEM_CHARS + 1)
        assert clip_carried(text, 7) == (
            "y" * CARRIED_HEAD + f" [... clipped: the item has {MAX_ITEM_CHARS + 1} characters; "
            "read it whole with harness log LOG --seq 7]"
        )
        task = TaskRef(id="3", subject=text)
        assert clip_task(task).subject == (
            "y" * CARRIED_HEAD + f" [... clipped: the item has {MAX_ITEM_CHARS + 1} characters; "
            "read it whole with task_list (task 3)]"
        )
