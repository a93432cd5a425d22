"""The payloads of the approved plan and of jobs (sub-agents, background commands).

A plan is approved when a Plan-mode turn is followed by an execution turn (the Plan turn's last
answer), or when an agent's own tool says so (Claude Code's approved ``ExitPlanMode``): a
``plan/approve`` event holds it whole. A job is a sub-agent or a background command: started
(``job/start``: its id, kind, what it runs, its owner) and later ended (``job/end``); a job
whose end never arrives is still running.

Invariants: a payload carries the whole fact it records (the whole plan, a job's whole start),
never a delta; a job id is a short token, never free text.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from compaction.events._base import _Frozen

JOB_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
"""A job id: the agent's own id for it (``b7b23b2``, ``call_Ab3``), never free text."""
JobKind = Literal["agent", "command"]
"""A sub-agent (``agent``) or a background shell command (``command``)."""
JOB_KINDS: tuple[JobKind, ...] = get_args(JobKind)
JobEndStatus = Literal["completed", "failed", "killed"]
"""How a job ended: it finished, it failed, or it was stopped."""
JOB_END_STATUSES: tuple[JobEndStatus, ...] = get_args(JobEndStatus)


class PlanApproveData(_Frozen):
    """A plan was approved (`plan/approve`): the plan's whole text, and where it was written."""

    text: str = Field(min_length=1)
    """The approved plan, whole, as the agent wrote it."""
    source_seq: int | None = Field(default=None, ge=1)
    """The seq of the message that holds the plan (the Plan turn's last answer, or the call
    that presented it); None when the writer does not know."""
    via: str | None = None
    """How it was approved: ``plan_mode`` (a Plan-mode turn followed by an execution turn) or
    the agent's tool (``ExitPlanMode``); None when the writer does not say."""


class JobStartData(_Frozen):
    """A sub-agent or background command was started (`job/start`) and runs on its own."""

    id: str = Field(pattern=JOB_ID_PATTERN)
    """The job's id, as the agent names it (it ends under the same id)."""
    kind: JobKind
    runs: str
    """What it runs: the command line, or the sub-agent's task (one line, as recorded)."""
    owner: str | None = None
    """The agent that started it; None when the writer does not say."""


class JobEndData(_Frozen):
    """A job ended (`job/end`): it finished, failed, or was stopped."""

    id: str = Field(pattern=JOB_ID_PATTERN)
    status: JobEndStatus = "completed"
    detail: str | None = None
    """One line on how it ended (an exit code, a summary), when the writer has one."""


class JobRef(_Frozen):
    """A running job as a Checkpoint carries it: id, kind, owner, since which seq, what it runs."""

    id: str = Field(pattern=JOB_ID_PATTERN)
    kind: JobKind
    runs: str
    since: int = Field(ge=1)
    """The seq of its ``job/start`` event."""
    owner: str | None = None


class PlanRef(_Frozen):
    """The approved plan as a Checkpoint carries it: the text kept, and where it is whole."""

    seq: int = Field(ge=1)
    """The seq of the ``plan/approve`` event that holds it whole."""
    chars: int = Field(ge=0)
    """The whole plan's length, in characters."""
    text: str
    """The plan as carried: whole, or its headings and numbered steps and what else fits."""
    clipped: bool = False
    """True when `text` is not the whole plan (read it whole at `seq`)."""
