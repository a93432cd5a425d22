"""What a session records for the approved plan and jobs: `plan/approve`, `job/start`, `job/end`.

`Session.start_turn` lives here too: a new turn is where a plan gets approved. A host that runs
sub-agents or background commands records each start and end; a host whose
user approves a plan records it (a turn in Plan mode followed by one in another mode records the
Plan turn's last answer by itself, in `Session.start_turn`). Every later Checkpoint carries the
plan and the jobs still running, by code (`compaction.compactor`).

Invariant: a job is ended only under the id it was started with; ending a job that is not
running appends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from compaction.events import (
    Event,
    EventData,
    JobEndData,
    JobEndStatus,
    JobKind,
    JobStartData,
    Message,
    PlanApproveData,
    TurnStartData,
)
from compaction.views import CarriedWork, plan_on_turn


class _Host(Protocol):
    @property
    def carried(self) -> CarriedWork: ...

    def refresh(self) -> list[Event]: ...

    def append(self, data: EventData, *, expected_seq: int | None = None) -> Event: ...

    def append_many(
        self, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]: ...


class CarryWrites:
    """The `Session` methods that record turns' starts, the approved plan and jobs."""

    def start_turn(self: _Host, request: str, *, mode: str | None = None) -> list[Event]:
        """Record a new user request: a `turn/start`, then the user's message.

        A turn in another mode after a Plan-mode turn first records the Plan turn's last
        answer as the approved plan (`plan/approve`, `compaction.views.plan_on_turn`).
        """
        turn: list[EventData] = [TurnStartData(mode=mode), Message(role="user", content=request)]
        plan = plan_on_turn(self.carried, mode)
        return self.append_many([plan, *turn] if plan is not None else turn)

    def approve_plan(self: _Host, text: str, *, source_seq: int | None = None) -> Event:
        """Record an approved plan (`plan/approve`); every later Checkpoint carries it.

        Raises:
            pydantic.ValidationError: `text` is empty.
        """
        return self.append(PlanApproveData(text=text, source_seq=source_seq, via="host"))

    def start_job(
        self: _Host, job_id: str, kind: JobKind, runs: str, *, owner: str | None = None
    ) -> Event:
        """Record a sub-agent (``agent``) or background command (``command``) started.

        Until `end_job` names it, every Checkpoint lists it under Current Work by its id.
        """
        return self.append(JobStartData(id=job_id, kind=kind, runs=runs, owner=owner))

    def end_job(
        self: _Host,
        job_id: str,
        status: JobEndStatus = "completed",
        *,
        detail: str | None = None,
    ) -> Event | None:
        """Record that a running job ended; None (nothing appended) when it is not running."""
        self.refresh()
        if job_id not in self.carried.running:
            return None
        return self.append(JobEndData(id=job_id, status=status, detail=detail))
