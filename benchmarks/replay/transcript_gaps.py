"""Gaps between model calls, measured from real Claude Code transcripts' timestamps.

Each Claude Code record carries an ISO ``timestamp``; one model call may write several
``assistant`` records (one per content block) sharing ``message.id``, so a call is timed by its
first record. Sub-agent records (``isSidechain``) are left out: they run in their own context.
A gap is the time from one call to the next, and falls in one of two pools by what came
between them:

- ``within``: the call follows a tool result (the agent's loop: model latency plus the tool);
- ``between``: the call follows a message the user sent (the user's reading and typing time
  included), the start of a turn.

The pools are read in file-name order, so they are a pure function of the files. Nothing of a
transcript is copied anywhere: only the gaps, in seconds, are kept in memory.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

PATTERN = "claude-code*.jsonl"
"""The transcripts read (Claude Code sessions)."""


@dataclass(frozen=True)
class GapPools:
    """Seconds between consecutive model calls of real sessions, by what came between."""

    within: tuple[float, ...]
    """Gaps before a call that follows a tool result."""
    between: tuple[float, ...]
    """Gaps before a call that follows a message the user sent."""
    files: tuple[str, ...]
    """The transcripts measured, by name."""

    def summary(self) -> dict[str, Any]:
        """Return the pools' sizes and quantiles, for the results file."""
        return {
            "source": "transcripts",
            "files": list(self.files),
            "within_turn": quantiles(self.within),
            "between_turns": quantiles(self.between),
        }


def quantiles(gaps: tuple[float, ...]) -> dict[str, float]:
    """Return count, median, 90th percentile and maximum of `gaps` (nearest rank)."""
    ordered = sorted(gaps)
    n = len(ordered)
    return {
        "count": n,
        "median_s": round(ordered[n // 2], 1),
        "p90_s": round(ordered[min(n - 1, int(n * 0.9))], 1),
        "max_s": round(ordered[-1], 1),
        "over_5_min": sum(g > 300 for g in ordered),
        "over_60_min": sum(g > 3600 for g in ordered),
    }


def records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file, surviving two objects on one line."""
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        for line in f:
            at = 0
            while at < len(line):
                try:
                    obj, end = decoder.raw_decode(line, at)
                except ValueError:
                    break
                if isinstance(obj, dict):
                    yield obj
                at = end
                while at < len(line) and line[at].isspace():
                    at += 1


def _after_tool(record: dict[str, Any]) -> bool:
    """Tell whether a user record carries a tool result (else the user sent it)."""
    content = (record.get("message") or {}).get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def calls(path: Path) -> list[tuple[float, str | None]]:
    """Return each main-thread model call's time and what preceded it (tool, user, None)."""
    out: list[tuple[float, str | None]] = []
    seen: set[str] = set()
    before: str | None = None
    for r in records(path):
        if r.get("isSidechain"):
            continue
        if r.get("type") == "user":
            before = "tool" if _after_tool(r) else "user"
        elif r.get("type") == "assistant" and isinstance(r.get("timestamp"), str):
            call_id = (r.get("message") or {}).get("id")
            if not isinstance(call_id, str) or call_id in seen:
                continue
            seen.add(call_id)
            at = datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()
            out.append((at, before))
            before = None
    return out


def gap_pools(folder: Path) -> GapPools | None:
    """Return the gap pools of the Claude Code transcripts in `folder` (None: none there)."""
    files = sorted(folder.glob(PATTERN)) if folder.is_dir() else []
    within: list[float] = []
    between: list[float] = []
    for path in files:
        timed = calls(path)
        for (a, _), (b, kind) in itertools.pairwise(timed):
            if b < a:
                continue
            if kind == "tool":
                within.append(b - a)
            elif kind == "user":
                between.append(b - a)
    if not within or not between:
        return None
    return GapPools(tuple(within), tuple(between), tuple(p.name for p in files))
