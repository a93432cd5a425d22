"""The carry view: the approved plan and the jobs still running, as every Checkpoint carries them.

One fold reads ``plan/approve`` (the latest approved plan wins), ``job/start`` and ``job/end``
(a job runs from its start until an end under its id; one whose end never arrives stays
running, never dropped), and, to tell when a plan gets approved, the mode of the current turn
and its last answer: when a Plan-mode turn is followed by an execution turn, the Plan turn's
last answer is the approved plan (`plan_on_turn`, the rule's one home).

Invariants: a pure fold of the log, O(1) per event; replaying the same events gives the same
view; a job is listed from its ``job/start`` until a ``job/end`` with its id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from compaction.contract import PLAN_MODE
from compaction.events import (
    Event,
    JobEnded,
    JobRef,
    JobStarted,
    MessageAdded,
    PlanApproved,
    PlanApproveData,
    TurnStarted,
)


@dataclass
class CarriedWork:
    """The approved plan and the running jobs; with the current turn's mode and last answer."""

    plan: PlanApproveData | None = None
    """The latest approved plan (None: none was approved)."""
    plan_seq: int | None = None
    """The seq of its ``plan/approve`` event."""
    running: dict[str, JobRef] = field(default_factory=dict)
    """Jobs started and not ended, by id, in start order."""
    mode: str | None = None
    """The mode of the current turn (its ``turn/start``)."""
    last_answer: tuple[int, str] | None = None
    """The current turn's latest assistant text: its seq and the text."""
    approved_in_turn: bool = False
    """Whether a plan was approved during the current turn (an agent's own approval)."""

    @property
    def jobs(self) -> tuple[JobRef, ...]:
        """Return the running jobs, in start order."""
        return tuple(self.running.values())

    def to_json(self) -> dict[str, Any]:
        """Return the running jobs and the approved plan as plain JSON data (for hooks, CLI)."""
        plan = None
        if self.plan is not None:
            plan = {"seq": self.plan_seq, **self.plan.model_dump(mode="json")}
        return {"jobs": [j.model_dump(mode="json") for j in self.jobs], "plan": plan}

    def lines(self) -> list[str]:
        """Return one line per running job, then the approved plan's head (for panels)."""
        out = [
            f"▶ job {j.id} ({j.kind}{f', {j.owner}' if j.owner else ''}, since seq {j.since}): "
            f"{j.runs}"
            for j in self.jobs
        ]
        if self.plan is not None:
            head = next((ln.strip() for ln in self.plan.text.split("\n") if ln.strip()), "")
            out.append(f"plan approved (seq {self.plan_seq}): {head[:120]}")
        return out


def plan_on_turn(state: CarriedWork, mode: str | None) -> PlanApproveData | None:
    """Return the plan a new turn in `mode` approves, or None.

    A Plan-mode turn followed by a turn in another mode approves the Plan turn's last answer,
    unless the agent already had a plan approved during that turn (Claude Code's
    ``ExitPlanMode``), or the Plan turn gave no answer.
    """
    if state.mode != PLAN_MODE or mode == PLAN_MODE or state.approved_in_turn:
        return None
    if state.last_answer is None:
        return None
    seq, text = state.last_answer
    return PlanApproveData(text=text, source_seq=seq, via="plan_mode")


class CarryProjection:
    """Fold the log into its `CarriedWork` (see the module docstring)."""

    name: ClassVar[str] = "carry"
    state_version: ClassVar[int] = 1

    def init(self) -> CarriedWork:
        """Return no plan and no jobs."""
        return CarriedWork()

    def apply(self, state: CarriedWork, event: Event) -> CarriedWork:
        """Record a plan, a job's start or end, a turn's mode, or an answer."""
        if isinstance(event, PlanApproved):
            state.plan, state.plan_seq = event.data, event.seq
            state.approved_in_turn = True
        elif isinstance(event, JobStarted):
            data = event.data
            state.running.pop(data.id, None)
            state.running[data.id] = JobRef(
                id=data.id, kind=data.kind, runs=data.runs, since=event.seq, owner=data.owner
            )
        elif isinstance(event, JobEnded):
            state.running.pop(event.data.id, None)
        elif isinstance(event, TurnStarted):
            state.mode, state.last_answer, state.approved_in_turn = event.data.mode, None, False
        elif isinstance(event, MessageAdded) and event.data.role == "assistant":
            text = event.data.text().strip()
            if text:
                state.last_answer = (event.seq, text)
        return state

    def view(self, state: CarriedWork) -> CarriedWork:
        """Return the state (read it, never change it)."""
        return state


def carried_work(events: Iterable[Event]) -> CarriedWork:
    """Fold events into the approved plan and the running jobs (for hooks and scripts).

    ``carried_work(read_events("s.jsonl")).jobs`` lists the jobs still running;
    ``.plan`` is the latest approved plan.
    """
    projection = CarryProjection()
    state = projection.init()
    for event in events:
        state = projection.apply(state, event)
    return projection.view(state)
