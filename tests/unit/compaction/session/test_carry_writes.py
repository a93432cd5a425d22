"""The approved plan and running jobs: recorded by the session, carried by every Checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_sessions import reads, say, todos

from compaction import CompactionPolicy, Session, compact, parse_checkpoint
from compaction.events import JobEnded, PlanApproved
from compaction.views._carry import carried_work

POLICY = CompactionPolicy(window_tokens=8_000)
PLAN = "# Migration plan\n\n## Steps\n1. Dump the database\n2. Run the v2 migration\n3. Verify"


def planned(path: Path) -> Session:
    """A Plan-mode turn answered with a plan, then an execution turn."""
    session = Session(path)
    session.start_turn("Plan the migration to v2", mode="plan")
    session.add_message(say("Let me look."))
    session.add_message(say(PLAN))
    session.start_turn("Approved, go ahead")
    return session


class TestPlanApproval:
    def test_leaving_plan_mode_approves_the_last_answer(self, tmp_path: Path) -> None:
        """A turn in another mode after a Plan-mode turn records the Plan turn's last answer."""
        with planned(tmp_path / "s.jsonl") as session:
            events = list(session.events())
        approvals = [e for e in events if isinstance(e, PlanApproved)]
        assert len(approvals) == 1
        assert approvals[0].data.text == PLAN
        assert approvals[0].data.via == "plan_mode"
        source = approvals[0].data.source_seq
        answer = events[source - 1] if source else None
        assert answer is not None
        assert answer.type == "message"
        # recorded before the new turn starts
        assert events[approvals[0].seq].type == "turn/start"

    @pytest.mark.parametrize("mode", ["plan", None])
    def test_no_plan_turn_no_approval(self, tmp_path: Path, mode: str | None) -> None:
        """Staying in Plan mode, or a turn after a normal turn, approves nothing."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("Plan it", mode=None if mode == "plan" else "agent")
            session.add_message(say(PLAN))
            session.start_turn("next", mode=mode)
            assert session.carried.plan is None

    def test_a_plan_turn_without_an_answer_approves_nothing(self, tmp_path: Path) -> None:
        """With no answer in the Plan turn there is nothing to approve."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("Plan it", mode="plan")
            session.start_turn("go")
            assert session.carried.plan is None

    def test_an_approval_in_the_turn_is_not_repeated(self, tmp_path: Path) -> None:
        """A plan the host approved during the Plan turn is not approved again on leaving it."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("Plan it", mode="plan")
            session.add_message(say("draft"))
            session.approve_plan(PLAN)
            session.start_turn("go")
            approvals = [e for e in session.events() if isinstance(e, PlanApproved)]
        assert [a.data.text for a in approvals] == [PLAN]

    def test_every_later_checkpoint_carries_the_plan_verbatim(self, tmp_path: Path) -> None:
        """The plan's headings and steps stand verbatim in each Checkpoint after approval."""
        with planned(tmp_path / "s.jsonl") as session:
            session.todo_write(todos(("Dump the database", "in_progress")))
            seqs = []
            for round_ in range(3):
                reads(session, [f"src/m{round_}_{i}.py" for i in range(4)])
                seqs.append(compact(session, POLICY, force=True))
        for result in seqs:
            checkpoint = parse_checkpoint(result.data.text)
            assert checkpoint.plan is not None
            assert checkpoint.plan.text == PLAN
            assert result.data.plan == checkpoint.plan
            for line in PLAN.split("\n"):
                assert (f"  | {line}" if line else "  |") in result.data.text.split("\n")


class TestJobs:
    def test_a_running_job_is_listed_until_it_ends(self, tmp_path: Path) -> None:
        """Started jobs are under Current Work by id until their end is recorded."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("Run everything")
            session.start_job("b7b23b2", "command", "npm test")
            session.start_job("a93ccab", "agent", "Check the schema", owner="main")
            reads(session, [f"src/m{i}.py" for i in range(4)])
            first = parse_checkpoint(compact(session, POLICY, force=True).data.text)
            assert session.end_job("b7b23b2", detail="exit code 0") is not None
            reads(session, [f"src/n{i}.py" for i in range(4)])
            second = parse_checkpoint(compact(session, POLICY, force=True).data.text)
        assert [(j.id, j.kind, j.runs, j.owner) for j in first.jobs] == [
            ("b7b23b2", "command", "npm test", None),
            ("a93ccab", "agent", "Check the schema", "main"),
        ]
        assert [j.id for j in second.jobs] == ["a93ccab"]  # never ended: still listed
        assert second.jobs[0].since == first.jobs[1].since

    def test_ending_a_job_that_is_not_running_appends_nothing(self, tmp_path: Path) -> None:
        """An end for an unknown (or already ended) job is refused: None, nothing appended."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_job("x1", "command", "make")
            assert session.end_job("x1", "killed") is not None
            before = session.applied_seq
            assert session.end_job("x1") is None
            assert session.end_job("nope") is None
            assert session.applied_seq == before
            ends = [e for e in session.events() if isinstance(e, JobEnded)]
        assert [e.data.status for e in ends] == ["killed"]

    def test_the_fold_hooks_call_reads_the_same(self, tmp_path: Path) -> None:
        """`carried_work` over the log gives what the live session shows."""
        with planned(tmp_path / "s.jsonl") as session:
            session.start_job("j1", "agent", "lint")
            live = session.carried
            folded = carried_work(session.events())
        assert folded.jobs == live.jobs
        assert folded.plan == live.plan
        assert folded.plan_seq == live.plan_seq
