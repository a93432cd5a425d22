"""`harness hooks run AGENT`: the entry the agents' hooks call, with the hook's JSON on stdin.

- before a compaction (Claude Code's and Codex's ``PreCompact``): fold the transcript, record
  the moment and the open items; where the agent accepts instructions for its summary (Claude
  Code), print them, so its own summary keeps the items;
- after it (``SessionStart`` with source ``compact``): fold the transcript again (only what was
  appended since: `harness.hooks._transcript`), read the agent's own summary, and print the
  restore block in the agent's format; the receipt says what the summary kept and dropped;
- on each model request (Gemini CLI's ``BeforeModel``): only a request that holds a
  ``<state_snapshot>`` (a compression happened) is read; it gets the restore block as one more
  user message.

Invariants: the hook never breaks the agent: it exits 0 whatever happens; a failure is one line
on stderr (redacted, no traceback); the whole run is bounded (`BUDGET_S`, stdin at most
`MAX_STDIN` bytes); nothing but the items and counts is printed.
"""

from __future__ import annotations

import hashlib
import json
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import IO, Any

from compaction import redact
from harness.hooks._agents import Agent, Point, agent
from harness.hooks._fold import Item
from harness.hooks._gate import MAX_STDIN, needs_reading
from harness.hooks._receipts import append, hooks_dir
from harness.hooks._restore import (
    kept_count,
    output_for,
    restore_block,
    summary_instructions,
)
from harness.hooks._transcript import fold_transcript

BUDGET_S = 20
"""Longest a hook run may take, in seconds, before it gives up (and exits 0)."""


class _OutOfTime(Exception):
    """The run passed `BUDGET_S`."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _OutOfTime


def run(agent_name: str, stdin: IO[bytes], stdout: IO[str], stderr: IO[str]) -> int:
    """Run one hook; return 0 always (a failure is one line on `stderr`).

    The time budget is an alarm, set only in the main thread (the hook process's); a caller
    running it in another thread bounds it itself.
    """
    timed = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _alarm) if timed else None
    if timed:
        signal.alarm(BUDGET_S)
    try:
        text = _handle(agent(agent_name), stdin.read(MAX_STDIN))
        if text:
            stdout.write(text + "\n")
    except _OutOfTime:
        stderr.write(f"context-harness hook: gave up after {BUDGET_S} s; the agent goes on\n")
    except KeyError:
        stderr.write(f"context-harness hook: unknown agent {agent_name!r}; nothing done\n")
    except Exception as exc:
        line = redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
        stderr.write(f"context-harness hook: {line}; the agent goes on\n")
    finally:
        if timed:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return 0


def _point(entry: Agent, data: Mapping[str, Any]) -> Point | None:
    event = data.get("hook_event_name")
    for point in entry.points:
        if point.event != event:
            continue
        if point.matcher is not None and data.get("source", data.get("trigger")) != point.matcher:
            return None
        return point
    return None


def _handle(entry: Agent, raw: bytes) -> str | None:
    """Return what the hook prints for this input (None: nothing)."""
    if not needs_reading(entry.name, raw):
        return None
    data = json.loads(raw or b"{}")
    if not isinstance(data, Mapping):
        raise ValueError("the hook input is not a JSON object")
    point = _point(entry, data)
    if point is None:
        return None
    started = time.process_time()
    transcript = Path(str(data.get("transcript_path") or ""))
    if not transcript.is_file():
        raise FileNotFoundError("the transcript the agent named does not exist")
    folded, picked = fold_transcript(transcript, entry.format, entry.needles, hooks_dir() / "cache")
    items = folded.open_items()
    receipt: dict[str, Any] = {
        "agent": entry.name,
        "session": str(data.get("session_id") or ""),
        "event": point.event,
        "role": point.role,
        "trigger": data.get("trigger") or data.get("source"),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "open": [i.line() for i in items],
        "bytes_read": picked.read,
    }
    if point.role == "before":
        text = summary_instructions(items) if items and entry.accepts_summary_instructions else None
        receipt["instructions_passed"] = text is not None
    else:
        summary = _summary(point, data, folded.latest_summary)
        if point.role == "request" and not _first_time(entry, data, summary):
            return _printed(entry, point, items, summary, data)
        receipt |= _audit(items, summary)
        text = _printed(entry, point, items, summary, data)
        receipt["printed"] = restore_block(items, summary) if text else ""
    receipt["cpu_s"] = round(time.process_time() - started, 4)
    append(receipt)
    return text


def _summary(point: Point, data: Mapping[str, Any], latest: str | None) -> str | None:
    """Return the agent's own summary: the transcript's latest, or the request's snapshot."""
    if point.role != "request":
        return latest
    request = data.get("llm_request")
    messages = request.get("messages") if isinstance(request, Mapping) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str) and "<state_snapshot>" in content:
            return content
    return latest


def _first_time(entry: Agent, data: Mapping[str, Any], summary: str | None) -> bool:
    """Tell whether this compression is met for the first time (its receipt not yet written)."""
    digest = hashlib.sha256(f"{data.get('session_id')}\0{summary}".encode()).hexdigest()[:32]
    mark = hooks_dir() / "seen" / entry.name / digest
    if mark.exists():
        return False
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        return True
    return True


def _audit(items: tuple[Item, ...], summary: str | None) -> dict[str, Any]:
    dropped = [i.line() for i in items if summary is None or i.kept_by(summary) is None]
    return {
        "kept": kept_count(items, summary),
        "dropped": dropped,
        "restored": [i.line() for i in items],
    }


def _printed(
    entry: Agent,
    point: Point,
    items: tuple[Item, ...],
    summary: str | None,
    data: Mapping[str, Any],
) -> str | None:
    if not items:
        return None
    request = data.get("llm_request")
    messages = request.get("messages") if isinstance(request, Mapping) else None
    return output_for(entry.name, point.event, restore_block(items, summary), messages)
