"""Jobs and approved plans in agents' transcripts: what starts, ends or approves, by format.

A job is a sub-agent or background command started and not yet finished. Each agent records
them its own way; these readers turn a finished tool call (or a notice) into the events that
record them, and the `EventBuilder` appends those right after the call's result:

- **Claude Code**: a ``Bash`` result "Command running in background with ID: X" (or
  ``toolUseResult.backgroundTaskId``) starts a command; a ``Task``/``Agent`` result "Async agent
  launched successfully. agentId: X" starts a sub-agent; a ``<task-notification>`` with a final
  ``<status>``, a ``BashOutput``/``TaskOutput`` result with a final ``<status>`` (or
  ``toolUseResult.task.status``) ends one; ``KillShell``/``KillBash``/``TaskStop`` kill one. An
  ``ExitPlanMode`` call whose result says "User has approved your plan" approves its ``plan``.
- **Gemini CLI**: a ``run_shell_command`` whose output lists ``Background PIDs: 1234`` starts a
  command under each PID; a later ``kill PID`` command ends it.
- **Codex**: ``spawn_agent`` (its output names ``agent_id``) starts a sub-agent and
  ``close_agent`` stops it; a ``<subagent_notification>`` with a final status ends it; an
  ``exec_command`` whose output says "Process running with session ID N" starts a background
  terminal, and a ``write_stdin`` to it whose output says "Process exited with code C" ends it.

Invariants: a reader only returns events for what the transcript states; an id that is not a
short token is left out (counted by the caller), never rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from compaction.events import (
    JOB_ID_PATTERN,
    JobEndData,
    JobEndStatus,
    JobKind,
    JobStartData,
    PlanApproveData,
)
from compaction.importers._recorded_calls import RecordedCall

CarryData = JobStartData | JobEndData | PlanApproveData
"""What a transcript's call or notice records about jobs and the plan."""

RUNS_CHARS: Final = 300
"""Characters of what a job runs that its start records (one line)."""

_ID = re.compile(JOB_ID_PATTERN)
_TOKEN = r"([A-Za-z0-9_:-]+(?:\.[A-Za-z0-9_:-]+)*)"  # a sentence's full stop is not part of it
_BACKGROUND = re.compile(r"Command running in background with ID: " + _TOKEN)
_ASYNC_AGENT = re.compile(r"Async agent launched successfully\.?\s*agentId: " + _TOKEN)
_TAG = re.compile(r"<(task-id|task_id|status|agent_id|agent-id)>\s*([^<]*?)\s*</\1>")
_CODEX_SESSION = re.compile(r"Process running with session ID (\d+)")
_CODEX_EXIT = re.compile(r"Process exited with code (-?\d+)")
_JSON_FIELD = re.compile(r'"(agent_id|id|status)"\s*:\s*"([^"]{1,128})"')
FINAL: Final[dict[str, JobEndStatus]] = {
    "completed": "completed",
    "complete": "completed",
    "done": "completed",
    "succeeded": "completed",
    "failed": "failed",
    "error": "failed",
    "errored": "failed",
    "killed": "killed",
    "stopped": "killed",
    "cancelled": "killed",
    "canceled": "killed",
    "shutdown": "killed",
}
"""A job's recorded status that means it ended, and how."""


def _args(call: RecordedCall) -> Mapping[str, Any]:
    return call.input if isinstance(call.input, Mapping) else {}


def one_line(text: object) -> str:
    """Return text as one line of at most `RUNS_CHARS` characters."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= RUNS_CHARS else flat[: RUNS_CHARS - 1] + "…"


def _start(job_id: str, kind: JobKind, runs: object) -> list[CarryData]:
    if not _ID.match(job_id):
        return []
    return [JobStartData(id=job_id, kind=kind, runs=one_line(runs) or kind)]


def _end(job_id: object, status: str, detail: str | None = None) -> list[CarryData]:
    ended = FINAL.get(status.strip().lower())
    if not isinstance(job_id, str) or ended is None or not _ID.match(job_id):
        return []
    return [JobEndData(id=job_id, status=ended, detail=detail)]


def claude_code_call(call: RecordedCall) -> list[CarryData]:
    """Return what a finished Claude Code call records: a plan approved, a job started or ended."""
    if call.is_error or call.result is None:
        return []
    text, args = call.result_text(), _args(call)
    if call.name == "ExitPlanMode":
        plan = args.get("plan")
        approved = text.lstrip().startswith("User has approved your plan")
        ok = approved and isinstance(plan, str) and plan.strip()
        return [PlanApproveData(text=str(plan), via="ExitPlanMode")] if ok else []
    if call.name in ("KillShell", "KillBash", "TaskStop"):
        job = args.get("shell_id") or args.get("bash_id") or args.get("task_id")
        return _end(job, "killed")
    if call.name in ("BashOutput", "TaskOutput"):
        return _claude_output(args, text, call.meta)
    background = _BACKGROUND.search(text)
    meta = call.meta if isinstance(call.meta, Mapping) else {}
    job_id = background.group(1) if background else meta.get("backgroundTaskId")
    if isinstance(job_id, str):
        return _start(job_id, "command", args.get("description") or args.get("command"))
    agent = _ASYNC_AGENT.search(text)
    if agent is not None:
        runs = args.get("description") or args.get("prompt")
        return _start(agent.group(1), "agent", runs)
    return []


def _claude_output(args: Mapping[str, Any], text: str, meta: object) -> list[CarryData]:
    """A ``BashOutput``/``TaskOutput`` result: the job ended when its status is final."""
    task = meta.get("task") if isinstance(meta, Mapping) else None
    if isinstance(task, Mapping) and isinstance(task.get("status"), str):
        return _end(task.get("task_id"), task["status"])
    tags = dict(_TAG.findall(text[:2000]))
    job = args.get("bash_id") or args.get("task_id") or tags.get("task_id")
    return _end(job, tags.get("status", ""))


def claude_code_notice(text: str) -> list[CarryData]:
    """Return the job a ``<task-notification>`` ends, when its status is final."""
    if not text.lstrip().startswith("<task-notification>"):
        return []
    tags = dict(_TAG.findall(text[:4000]))
    return _end(tags.get("task-id"), tags.get("status", ""))


def codex_call(call: RecordedCall) -> list[CarryData]:
    """Return what a finished Codex call records: a sub-agent or background terminal."""
    if call.result is None:
        return []
    text, args = call.result_text(), _args(call)
    if call.name == "spawn_agent" and not call.is_error:
        fields = dict(_JSON_FIELD.findall(text[:2000]))
        job = fields.get("agent_id") or fields.get("id")
        runs = args.get("message") or args.get("agent_type")
        return _start(job, "agent", runs) if job else []
    if call.name == "close_agent":
        return _end(args.get("id") or args.get("agent_id"), "killed")
    if call.name == "exec_command":
        session = _CODEX_SESSION.search(text)
        runs = args.get("cmd") or args.get("command")
        return _start(session.group(1), "command", runs) if session else []
    if call.name == "write_stdin":
        exited = _CODEX_EXIT.search(text)
        status = "" if exited is None else "completed" if exited.group(1) == "0" else "failed"
        detail = f"exit code {exited.group(1)}" if exited else None
        return _end(str(args.get("session_id", "")), status, detail)
    return []


def codex_notice(text: str) -> list[CarryData]:
    """Return the sub-agent a ``<subagent_notification>`` ends, when its status is final."""
    body = text.strip()
    if not body.startswith("<subagent_notification>"):
        return []
    inner = body.removeprefix("<subagent_notification>").removesuffix("</subagent_notification>")
    tags = dict(_TAG.findall(inner))
    fields = dict(_JSON_FIELD.findall(inner))
    try:
        parsed = json.loads(inner)
    except ValueError:
        parsed = None
    if isinstance(parsed, Mapping):
        fields.update({k: str(v) for k, v in parsed.items() if isinstance(v, str | int)})
        status = parsed.get("status")
        if isinstance(status, Mapping) and status:  # {"completed": "..."}: the key says it
            fields["status"] = str(next(iter(status)))
    job = tags.get("agent_id") or fields.get("agent_id") or fields.get("id")
    return _end(job, tags.get("status") or fields.get("status", ""))


_GEMINI_PIDS = re.compile(r"^Background PIDs: ([0-9][0-9, ]*)$", re.M)
_KILL = re.compile(r"^\s*kill(?:\s+-\S+)*((?:\s+\d+)+)\s*$")


def gemini_call(call: RecordedCall) -> list[CarryData]:
    """Return what a Gemini CLI shell call records: background PIDs started, or killed."""
    if call.name != "run_shell_command" or call.result is None:
        return []
    text, command = call.result_text(), str(_args(call).get("command") or "")
    killed = _KILL.match(command)
    if killed is not None and not call.is_error:
        return [e for pid in killed.group(1).split() for e in _end(pid, "killed")]
    pids = _GEMINI_PIDS.search(text)
    if pids is None:
        return []
    started = [p.strip() for p in pids.group(1).split(",") if p.strip()]
    return [e for pid in started for e in _start(pid, "command", command)]
