"""benchmarks/bench_loop_features: its replay counts what the log shows, deterministically."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from benchmarks.features.loop_features import boundary_share, generated_session, run
from compaction import MessageAdded, Session


def test_a_small_generated_session_gives_consistent_figures(tmp_path: Path) -> None:
    """Calls equal assistant messages; reminders equal the log's; nothing lost; repeatable."""
    payloads = generated_session(7, items=3)
    first = run(payloads, 0.5, True, tmp_path)
    with Session(tmp_path / "log.jsonl") as session:
        events = list(session.events())
    assistants = [e for e in events if isinstance(e, MessageAdded) and e.data.role == "assistant"]
    reminders = [e for e in events if isinstance(e, MessageAdded) and e.data.origin == "reminder"]
    assert first.calls == len(assistants)
    assert first.reminders == len(reminders) > 0
    assert first.compactions >= 1
    assert first.at_boundary + first.mid_task <= first.compactions
    assert first.lost_items == 0
    (tmp_path / "log.jsonl").unlink()
    assert run(payloads, 0.5, True, tmp_path) == first


def test_the_boundary_design_compacts_at_least_as_often_as_the_size_trigger(
    tmp_path: Path,
) -> None:
    """The boundary adds a trigger; it never removes the size one."""
    payloads = generated_session(7, items=3)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    size = run(payloads, None, False, tmp_path / "a")
    boundary = run(payloads, 0.5, False, tmp_path / "b")
    assert boundary.compactions >= size.compactions
    assert size.reminders == boundary.reminders == 0


def test_boundary_compactions_fall_right_after_a_completion(tmp_path: Path) -> None:
    """Every compaction the boundary trigger adds falls right after a completion; share 1.0."""
    payloads = generated_session(1, items=6)
    figures = run(payloads, 0.5, False, tmp_path)
    assert figures.boundary_compactions >= 1
    assert figures.boundary_after_completion == figures.boundary_compactions
    sessions = {"s": {"boundary": asdict(figures), "boundary+reminder": asdict(figures)}}
    assert boundary_share(sessions)["boundary"]["share"] == 1.0
