"""What B's task-boundary trigger brings: B with it and without it, against each peer, per session.

B's policy compacts at the matched whole-request budget like every peer, and also right after a
todo item or task turned completed once the request holds the boundary floor
(`compaction.CompactionPolicy.boundary_share`; the floor was picked on the tuning split by the
continuity rule). The peers have no such trigger, so this section sets B's figures with the floor
beside B's with the size trigger alone (the same replay, `benchmarks/quality/continuity.py`, at
the run's retain and matched threshold) and each peer's, session by session: how much of B's lead
is the boundary trigger is read off, not claimed.

`collect` reads the rows of ``continuity.json`` at the run's setting; `section` joins them to the
comparison's peers (same sessions, calls, budget, tokenizer and serialization).

Invariants: every figure is read from the two result files; a session missing from either is left
out of that cell, never estimated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.splits import split_of

_STEPWISE = re.compile(r"^synthetic-stepwise-(t\d+-s\d+)$")


def bench_name(row_session: str) -> str | None:
    """Return the benchmark's name of a continuity row's session (None: not a bench session).

    The benchmark replays the generated sessions in the ``stepwise`` shape under the plain name
    (``synthetic-t12-s0``) and the real transcripts under their own names.
    """
    found = _STEPWISE.match(row_session)
    if found:
        return f"synthetic-{found.group(1)}"
    if row_session.startswith("real-"):
        return row_session
    return None


def collect(continuity: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Return B's summed input per session with the run's boundary floor and without one.

    Only rows at the run's retain and threshold count. The result maps session -> ``{"with":
    tokens, "without": tokens}`` (a side absent when its row is), under ``sessions``, with the
    floor under ``boundary``.
    """
    floor = config.get("boundary")
    out: dict[str, dict[str, int]] = {}
    for row in continuity.get("rows", ()):
        name = bench_name(row["session"])
        if name is None or (row["retain"], row["threshold"]) != (
            config.get("retain"),
            config.get("threshold"),
        ):
            continue
        boundary = row.get("boundary")
        side = "without" if boundary is None else "with" if boundary == floor else None
        if side is not None:
            out.setdefault(name, {})[side] = int(row["summed_input_tokens"])
    return {"boundary": floor, "sessions": dict(sorted(out.items()))}


def run_words(boundary: float | None) -> str:
    """Return the run line's words for B's task-boundary floor (none: the size trigger alone)."""
    if boundary is None:
        return ", size trigger only"
    return (
        f", and right after a todo item or task is completed once the request holds "
        f"{boundary:g} of the window"
    )


def _pct(ours: int, theirs: int) -> str:
    """B against a peer: positive when B sends fewer tokens."""
    return f"{(theirs - ours) / theirs:+.1%}"


def section(effect: Mapping[str, Any] | None, comparison: Mapping[str, Any]) -> list[str]:
    """Return the report's section: per session, B without and with the floor against each peer.

    Each cell: how much less B sends than the peer (positive: B sends less), size trigger alone
    -> with the boundary floor. Peers are the comparison's matched peer runs.
    """
    if not effect or effect.get("boundary") is None or not effect.get("sessions"):
        return []
    sessions: Mapping[str, Mapping[str, int]] = effect["sessions"]
    per_session = comparison.get("sessions", {})
    peers: list[str] = []
    for name in sessions:
        for entry in per_session.get(name, ()):
            if entry.get("kind") == "peer" and entry.get("matched") and entry["name"] not in peers:
                peers.append(entry["name"])
    head = ["session", "split", "B, size trigger only", f"B, boundary {effect['boundary']:g}"]
    lines = [
        "## What the task-boundary trigger brings (B with and without it)",
        "",
        f"B compacts at the matched budget like every peer, and also right after a todo item or "
        f"task is completed once the request holds {effect['boundary']:g} of the window (its "
        "default, picked on the tuning split by the continuity rule: `continuity.md`). The "
        "peers have no such trigger. Each peer cell: how much less B sends than the peer, with "
        "the size trigger alone -> with the boundary floor (positive: B sends less; the same "
        "replay as `continuity.json`, at the run's retain and threshold).",
        "",
        "| " + " | ".join([*head, *peers]) + " |",
        "|---|---|" + "---:|" * (len(head) - 2 + len(peers)),
    ]
    for name, figures in sessions.items():
        entries = {e["name"]: e for e in per_session.get(name, ())}
        cells = [
            f"`{name}`",
            split_of(name),
            _tokens(figures.get("without")),
            _tokens(figures.get("with")),
        ]
        for peer in peers:
            cells.append(_peer_cell(figures, entries.get(peer)))
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _tokens(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _peer_cell(figures: Mapping[str, int], peer: Mapping[str, Any] | None) -> str:
    """Return ``without -> with`` against one peer, ``-`` where a figure is missing."""
    if peer is None:
        return "-"
    theirs = int(peer["summed_input"])
    sides: Sequence[int | None] = (figures.get("without"), figures.get("with"))
    return " -> ".join("-" if v is None else _pct(v, theirs) for v in sides)


__all__ = ["bench_name", "collect", "run_words", "section"]
