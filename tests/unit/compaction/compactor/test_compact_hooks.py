"""Focus instructions and the compaction hooks (`instructions`, `on_compact_start/_end`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction import (
    CheckpointRecorded,
    CompactionError,
    CompactionPlan,
    CompactionPolicy,
    CompactionResult,
    Message,
    Session,
    compact,
    maybe_compact,
    read_events,
)
from compaction.summarizers._llm import instruction

POLICY = CompactionPolicy(window_tokens=40_000)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with Session(tmp_path / "log.jsonl") as s:
        for i in range(1, 4):
            s.start_turn(f"Request {i}: rename parse_config in src/config.py")
            s.add_message(Message(role="assistant", content=f"Working on request {i}. " * 40))
        yield s


class TestInstructions:
    def test_recorded_in_event_and_under_critical_context(self, session: Session) -> None:
        """The extractive summarizer puts the focus under Critical Context; the event keeps it."""
        r = compact(session, POLICY, force=True, instructions="keep the API decisions")
        assert r.data.instructions == "keep the API decisions"
        assert r.checkpoint.critical_context.split("\n")[0] == (
            "- Focus asked for at this compaction: keep the API decisions"
        )
        events = [e for e in read_events(session.path) if isinstance(e, CheckpointRecorded)]
        assert events[-1].data.instructions == "keep the API decisions"

    def test_absent_by_default(self, session: Session) -> None:
        """Without instructions the event records none and Critical Context has no focus line."""
        r = compact(session, POLICY, force=True)
        assert r.data.instructions is None
        assert "Focus asked for" not in r.data.text

    def test_appended_to_the_llm_instruction(self) -> None:
        """The LLM summarizer's instruction ends with the focus text when one is given."""
        plain = instruction(kept=0, previous=False, budget=500)
        focused = instruction(kept=0, previous=False, budget=500, focus="keep the API decisions")
        assert focused.startswith(plain.rstrip("\n"))
        assert focused.rstrip("\n").endswith("keep the API decisions")
        assert "keep the API" not in plain


class TestHooks:
    def test_start_sees_the_plan_and_end_the_result(self, session: Session) -> None:
        """on_compact_start gets the span before the summarizer; on_compact_end the result."""
        plans: list[CompactionPlan] = []
        results: list[CompactionResult] = []
        r = compact(
            session,
            POLICY,
            force=True,
            instructions="focus A",
            on_compact_start=plans.append,
            on_compact_end=results.append,
        )
        assert len(plans) == 1
        assert results == [r]
        plan = plans[0]
        assert (plan.first_seq, plan.last_seq) == (r.data.first_seq, r.data.last_seq)
        assert plan.replaced_messages == r.replaced_messages
        assert plan.kept_messages == r.kept_messages
        assert plan.tokens_before == r.tokens_before
        assert plan.summarizer == "extractive"
        assert plan.instructions == "focus A"

    def test_veto_appends_nothing(self, session: Session) -> None:
        """Returning False vetoes: CompactionError 'vetoed', the log unchanged, no end call."""
        size = session.path.stat().st_size
        ended: list[CompactionResult] = []
        with pytest.raises(CompactionError, match="vetoed") as info:
            compact(
                session,
                POLICY,
                force=True,
                on_compact_start=lambda plan: False,
                on_compact_end=ended.append,
            )
        assert info.value.code == "vetoed"
        assert session.path.stat().st_size == size
        assert ended == []

    def test_text_adds_context(self, session: Session) -> None:
        """Returned text is added to the instructions: summarized and recorded."""
        r = compact(
            session,
            POLICY,
            force=True,
            instructions="keep the API decisions",
            on_compact_start=lambda plan: "the deploy is frozen until Friday",
        )
        assert r.data.instructions == "keep the API decisions\nthe deploy is frozen until Friday"
        assert "the deploy is frozen until Friday" in r.checkpoint.critical_context

    def test_maybe_compact_passes_them_on(self, session: Session) -> None:
        """The agent-loop entry point forwards instructions and hooks."""
        tiny = CompactionPolicy(window_tokens=400, threshold=0.5, retain=0.1)
        seen: list[CompactionResult] = []
        r = maybe_compact(session, tiny, instructions="keep X", on_compact_end=seen.append)
        assert r is not None
        assert seen == [r]
        assert r.data.instructions == "keep X"
