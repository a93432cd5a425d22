"""The compactor: policy, cut selection, compaction of a live session, fold on re-compaction."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from compaction import (
    CheckpointData,
    CheckpointRecorded,
    CompactionError,
    CompactionPolicy,
    ConfigError,
    Event,
    FunctionCall,
    LogIntegrityError,
    Message,
    Session,
    SummaryInput,
    ToolCall,
    check_log,
    compact,
    count_message,
    maybe_compact,
    parse_checkpoint,
    select_cut,
)
from compaction.compactor import unsafe_cuts
from compaction.events import make_event
from compaction.invariants import check_checkpoint_cut
from compaction.views import checkpoint_message


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
        """Defaults: 0.8 threshold, 0.16 tail, no reserve."""
        p = CompactionPolicy()
        assert (p.threshold, p.retain, p.output_reserve) == (0.8, 0.16, 0)
        assert p.trigger_tokens == int(0.8 * p.window_tokens)
        assert p.retain_tokens == int(0.16 * p.window_tokens)

    def test_reserve_can_lower_the_trigger(self) -> None:
        """With a large output reserve the context compacts before the threshold share."""
        p = CompactionPolicy(window_tokens=10_000, threshold=0.95, output_reserve=2_000)
        assert p.trigger_tokens == 8_000
        assert p.should_compact(8_000)
        assert not p.should_compact(7_999)

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
            ({"threshold": 2, "retain": 2}, r"threshold .* not 2; retain .* not 2"),
        ],
    )
    def test_rejects_bad_values(self, kwargs: dict[str, object], match: str) -> None:
        """Bad values raise ConfigError naming them."""
        with pytest.raises(ConfigError, match=match):
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

    def test_never_cuts_before_an_answer(self) -> None:
        """Cuts fall before user messages or at the end, never before an assistant or tool."""
        msgs = [user(), call("a"), result("a"), say(), say()]
        assert select_cut(msgs, [1, 1, 1, 1, 50], retain_tokens=60) == 5

    def test_falls_back_to_shortest_tail(self) -> None:
        """When no safe cut fits, the one with the shortest tail is taken."""
        msgs = [user(), say(), user(), call("a")]
        assert select_cut(msgs, [10, 10, 10, 10], retain_tokens=5) == 2

    @pytest.mark.parametrize(
        ("messages", "code"),
        [
            ([], "nothing_to_compact"),
            ([user(), call("a")], "no_safe_cut"),
            ([say(), call("a")], "no_safe_cut"),
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
        assert ctx.messages == () or ctx.messages[0].role == "user"
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
        """Compacting two copies of the same log appends identical bytes."""
        outs = []
        for name in ("a.jsonl", "b.jsonl"):
            s = Session(tmp_path / name)
            for n in range(5):
                turn(s, n)
            s.todo_write(todos(("x", "pending")))
            compact(s, SMALL, force=True)
            s.close()
            outs.append((tmp_path / name).read_bytes())
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

    def test_compacts_mid_turn_at_end(self, session: Session) -> None:
        """One long turn with no later user message is summarized whole (empty tail)."""
        session.start_turn("one long job")
        for n in range(20):
            session.add_message(call(f"c{n}"))
            session.add_message(result(f"c{n}", "data " * 100))
        r = compact(session, SMALL, force=True)
        assert r.kept_messages == 0
        assert r.data.last_seq == session.applied_seq - 1


def _events(*payloads: object) -> list[Event]:
    return [make_event(i, p) for i, p in enumerate(payloads, start=1)]  # type: ignore[arg-type]


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
