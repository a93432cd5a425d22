"""benchmarks/quality: the plan and jobs probes pass when the Checkpoint carries them, else fail."""

from __future__ import annotations

from pathlib import Path

from benchmarks.quality.checkpoint_probes import PROBES, probe
from benchmarks.quality.probe_reading import Compaction, LogSoFar
from compaction import CompactionPolicy, Message, Session, compact

PLAN = "# Plan\n\n## Steps\n1. Dump the db \\ backup\n```\n# not a heading\n```\n2. Migrate"


def carried(tmp_path: Path) -> tuple[LogSoFar, Compaction]:
    """A plan approved on leaving Plan mode, one job ended and one running, then a compaction."""
    with Session(tmp_path / "s.jsonl") as session:
        session.start_turn("Plan the migration", mode="plan")
        session.add_message(Message(role="assistant", content=PLAN))
        session.start_turn("Go")
        session.start_job("b1", "command", "npm test")
        session.start_job("a2", "agent", "lint")
        session.end_job("b1")
        session.add_message(Message(role="assistant", content="Working."))
        result = compact(session, CompactionPolicy(), force=True)
        events = list(session.events())
    data = result.data
    return LogSoFar(events=events), Compaction(data.text, data.first_seq, data.last_seq, ())


def test_the_probes_are_listed() -> None:
    """Both probes are in the table the quality benchmark reports."""
    assert {"plan_carried", "jobs_carried"} <= set(PROBES)


def test_plan_and_jobs_carried_pass(tmp_path: Path) -> None:
    """The Checkpoint holds the plan's headings and steps and the running job: both pass."""
    log, compaction = carried(tmp_path)
    verdicts = probe(log, compaction)
    assert verdicts["plan_carried"] is True
    assert verdicts["jobs_carried"] is True


def test_a_missing_step_or_job_fails(tmp_path: Path) -> None:
    """A plan step or a running job taken out of the text makes its probe fail."""
    log, compaction = carried(tmp_path)
    no_step = compaction.text.replace("  | 2. Migrate\n", "")
    no_job = "\n".join(ln for ln in compaction.text.split("\n") if not ln.startswith("- job a2"))
    for text, name in ((no_step, "plan_carried"), (no_job, "jobs_carried")):
        broken = Compaction(text, compaction.first_seq, compaction.last_seq, ())
        assert probe(log, broken)[name] is False
