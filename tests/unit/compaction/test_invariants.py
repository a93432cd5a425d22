"""The durable rules of a log's history: tables of logs they reject, and generated valid logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from strategies import compaction_scripts, event_payload_sequences

from compaction import (
    CheckpointData,
    CheckpointRecorded,
    CompactionError,
    CompactionPolicy,
    Event,
    EventData,
    FunctionCall,
    LogIntegrityError,
    Message,
    MessageAdded,
    Session,
    ToolCall,
    TurnStartData,
    TurnStarted,
    check_log,
    compact,
)
from compaction.events import make_event
from compaction.invariants import (
    RULES,
    LogChecker,
    check_checkpoint_span,
    check_next_seq,
    check_seq_contiguous,
    check_tool_result_paired,
)


def user(text: str = "do it") -> Message:
    return Message(role="user", content=text)


def call(call_id: str) -> Message:
    fn = FunctionCall(name="bash", arguments="{}")
    return Message(role="assistant", tool_calls=(ToolCall(id=call_id, function=fn),))


def result(call_id: str) -> Message:
    return Message(role="tool", tool_call_id=call_id, content="ok")


def cp(first: int, last: int) -> CheckpointData:
    return CheckpointData(
        text="x", first_seq=first, last_seq=last, tokens_before=0, tokens_after=0, summarizer="t"
    )


def events(*payloads: EventData) -> list[Event]:
    return [make_event(i, p) for i, p in enumerate(payloads, start=1)]


def reseq(evs: list[Event], *seqs: int) -> list[Event]:
    """Return the events with their seqs replaced."""
    return [e.model_copy(update={"seq": s}) for e, s in zip(evs, seqs, strict=True)]


class TestRejects:
    @pytest.mark.parametrize(
        ("log", "rule", "match"),
        [
            (reseq(events(user(), user()), 1, 3), "seq_contiguous", "event has seq 3, expected 2"),
            (reseq(events(user(), user()), 2, 3), "seq_contiguous", "event has seq 2, expected 1"),
            (reseq(events(user(), user()), 1, 1), "seq_contiguous", "event has seq 1, expected 2"),
            (events(user(), result("x")), "tool_result_paired", "unknown call id 'x'"),
            (events(result("a"), call("a")), "tool_result_paired", "unknown call id 'a'"),
            (events(user(), cp(1, 2)), "checkpoint_span", r"span 1\.\.2 is not before"),
            (events(user(), user(), cp(2, 1)), "checkpoint_span", r"span 2\.\.1 is not before"),
            (
                events(user(), cp(1, 1), user(), cp(1, 1)),
                "checkpoint_span",
                "not after the previous checkpoint's",
            ),
            (events(user(), call("a"), cp(1, 2), result("a")), "checkpoint_cut", "'a'"),
        ],
    )
    def test_table(self, log: list[Event], rule: str, match: str) -> None:
        """Each broken history raises LogIntegrityError naming its rule."""
        with pytest.raises(LogIntegrityError, match=match) as info:
            check_log(log)
        assert info.value.rule == rule
        assert info.value.seq is not None

    @pytest.mark.parametrize(
        ("check", "log"),
        [
            (check_seq_contiguous, reseq(events(user(), user()), 1, 3)),
            (check_tool_result_paired, events(result("x"))),
            (check_checkpoint_span, events(user(), cp(1, 2))),
        ],
    )
    def test_single_rule_checks(self, check: object, log: list[Event]) -> None:
        """Each check_<rule> function raises for its own rule."""
        assert callable(check)
        with pytest.raises(LogIntegrityError):
            check(log)

    def test_a_checker_checks_only_its_rules(self) -> None:
        """A checker limited to one rule lets the others pass."""
        LogChecker(["seq_contiguous"]).run(events(result("x")))
        with pytest.raises(LogIntegrityError, match="tool_result_paired"):
            LogChecker(RULES).run(events(result("x")))


class TestAccepts:
    def test_safe_history(self) -> None:
        """Calls answered, a checkpoint after a complete turn, a turn start: all pass."""
        log = events(TurnStartData(), user(), call("a"), result("a"), cp(2, 4), user())
        check_log(log)
        assert isinstance(log[0], TurnStarted)
        assert isinstance(log[4], CheckpointRecorded)
        assert isinstance(log[5], MessageAdded)

    def test_a_first_checkpoint_may_replace_only_seq_one(self) -> None:
        """The first checkpoint's span may end at seq 1: nothing came before it."""
        check_log(events(user(), cp(1, 1), user(), cp(2, 3)))

    @given(payloads=event_payload_sequences)
    def test_generated_logs_pass(self, payloads: list[EventData]) -> None:
        """Generated sessions, as an agent writes them, break no durable rule."""
        check_log(events(*payloads))

    @given(script=compaction_scripts())
    def test_generated_compacted_logs_pass(
        self,
        tmp_path_factory: pytest.TempPathFactory,
        script: tuple[list[Any], list[int], int, float],
    ) -> None:
        """Sessions compacted at generated points by the compactor break no durable rule."""
        payloads, points, window, retain = script
        path: Path = tmp_path_factory.mktemp("inv") / "s.jsonl"
        policy = CompactionPolicy(window_tokens=window, retain=retain, threshold=0.99)
        with Session(path, sync="batch") as session:
            done, compactions = 0, 0
            refusals: list[str] = []
            for point in points:
                session.append_many(payloads[done:point])
                done = point
                try:
                    compact(session, policy, force=True)
                    compactions += 1
                except CompactionError as exc:
                    refusals.append(exc.code)
            session.append_many(payloads[done:])
            check_log(session.events())
        # The first point always has a safe cut; only a window too small for the Checkpoint
        # itself (does_not_fit) may refuse every point.
        assert compactions >= 1 or set(refusals) == {"does_not_fit"}, refusals
        assert set(refusals) <= {"nothing_to_compact", "no_safe_cut", "does_not_fit"}


class TestNextSeq:
    def test_the_message_names_no_file_unless_given(self) -> None:
        """Without a path the message starts with the rule; with one, with the file."""
        with pytest.raises(LogIntegrityError) as bare:
            check_next_seq(1, 3)
        assert (str(bare.value), bare.value.path, bare.value.seq) == (
            "seq_contiguous at seq 3: event has seq 3, expected 2",
            "",
            3,
        )
        with pytest.raises(LogIntegrityError) as named:
            check_next_seq(1, 3, where="line 7", path="s.jsonl")
        assert str(named.value) == "s.jsonl: seq_contiguous at seq 3: line 7 has seq 3, expected 2"

    @pytest.mark.parametrize(("last", "seq"), [(3, 3), (3, 2), (0, 0)])
    def test_gaps_allowed_still_need_a_growing_seq(self, last: int, seq: int) -> None:
        """With gaps allowed a seq may jump ahead, but a repeat or a step back is refused."""
        check_next_seq(last, last + 5, allow_gaps=True)
        with pytest.raises(LogIntegrityError, match=f"has seq {seq}, expected {last + 1}"):
            check_next_seq(last, seq, allow_gaps=True)
