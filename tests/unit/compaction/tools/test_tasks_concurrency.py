"""Several processes updating one shared task list: nothing is lost, the state is the fold.

Four writer processes send 500 accepted `task_update` calls each, all cycling over the same two
tasks, so most updates race another writer's: a stale one is rejected with the current state and
sent again (`benchmarks.speed.task_writers.writer`). Afterwards the log must hold every accepted
update exactly once, each built on the one before it (versions run 1, 2, 3... per task with no gap),
and the session's board must equal a plain sequential fold of the log's task events.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.speed.task_writers import agent_name, run_writers
from compaction import Session, TaskCreated, TaskUpdated, read_events

WRITERS, UPDATES, SHARED = 4, 500, 2


def sequential_fold(path: Path) -> dict[str, tuple[str, str, int]]:
    """Each task's (subject, status, version) after replaying the task events in log order."""
    state: dict[str, tuple[str, str, int]] = {}
    for event in read_events(path):
        if isinstance(event, TaskCreated | TaskUpdated):
            task = event.data.task
            state[task.id] = (task.subject, task.status, task.version)
    return state


@pytest.mark.slow
def test_four_agents_five_hundred_updates_each(tmp_path: Path) -> None:
    """4 processes x 500 updates on one log: every update recorded once, in order, none lost."""
    path = tmp_path / "shared.jsonl"
    result = run_writers(path, WRITERS, UPDATES, shared=SHARED)
    assert result.updates == WRITERS * UPDATES
    updates = [e for e in read_events(path) if isinstance(e, TaskUpdated)]
    assert len(updates) == WRITERS * UPDATES
    for i in range(WRITERS):
        mine = [e.data.task.subject for e in updates if e.data.agent == agent_name(i)]
        assert mine == [f"{agent_name(i)} step {n}" for n in range(UPDATES)]
    versions: dict[str, list[int]] = {}
    for event in updates:
        versions.setdefault(event.data.task.id, []).append(event.data.task.version)
    assert sorted(versions) == ["1", "2"]
    for seen in versions.values():
        assert seen == list(range(2, len(seen) + 2)), "each update builds on the one before it"
    with Session(path) as session:
        board = {t.id: (t.subject, t.status, t.version) for t in session.tasks.live()}
    assert board == sequential_fold(path)
    assert sum(v for _, _, v in board.values()) == WRITERS * UPDATES + SHARED
