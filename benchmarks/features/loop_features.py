"""Loop features: the task-boundary trigger and the stale-list reminder, against the size trigger.

Each session is replayed event by event into a fresh log, as an agent loop would run it: before
every assistant message (each one is a model call) the loop may record the stale-list reminder
(`compaction.remind_if_stale`, every 10 assistant messages without a write) and then asks
`maybe_compact` (extractive summarizer). Four designs, side by side:

- ``size``: the plain trigger (0.8 of the window);
- ``boundary``: the same plus ``boundary_threshold=0.5`` (compact right after a todo item or
  task is completed, once the request is at least half the window);
- ``size+reminder`` and ``boundary+reminder``: the same with the reminder on.

Figures per design: model calls; prompt tokens sent over all calls (the context at each call,
what a provider bills before caching); compactions, and how many fell at a task boundary (an
item was completed since the previous model call) or mid-task (an item in progress, none just
completed); the boundary trigger's own compactions (the size trigger alone would not have
compacted) and how many of them fell right after a completion (``boundary_share``, over all
sessions: the goal is at least 90%); the tokens the compactions replaced (what an LLM
summarizer would read); reminders recorded, their own tokens and the tokens they added over
all later calls; and continuity:
unfinished items missing from a Checkpoint (always 0: the task sections are copied by code).

Sessions: generated ones shaped like real agents' (a list written rarely: once per item, long
tool work between; seeded, deterministic), and, when ``../shared/transcripts`` (or
``$HARNESS_TRANSCRIPTS``) holds it, a real Claude Code transcript (its own compactions dropped).

Run ``python -m benchmarks.features.loop_features`` (writes
``benchmarks/results/loop_features.json``; token figures are deterministic).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from compaction import (
    CheckpointData,
    CompactionError,
    CompactionPolicy,
    EventData,
    FunctionCall,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnStartData,
    get_tokenizer,
    maybe_compact,
    remind_if_stale,
)
from compaction.importers import load

ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "loop_features.json"
TRANSCRIPT = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
WINDOW = 32_000
DESIGNS: dict[str, tuple[float | None, bool]] = {
    "size": (None, False),
    "boundary": (0.5, False),
    "size+reminder": (None, True),
    "boundary+reminder": (0.5, True),
}
"""Design name -> (boundary_threshold, reminder on)."""


def generated_session(seed: int, items: int = 8) -> list[EventData]:
    """Return a session shaped like a real agent's: one list write per item, long work between."""
    rng = random.Random(seed)
    words = ["parser", "lexer", "config", "cache", "router", "schema", "loader", "report"]
    names = [f"Implement the {words[i % len(words)]} step {i + 1}" for i in range(items)]
    out: list[EventData] = [
        TurnStartData(mode="agent"),
        Message(role="user", content=" ".join(names)),
    ]
    for i in range(items):
        todos = tuple(
            TodoItem(
                content=n, status="completed" if j < i else "in_progress" if j == i else "pending"
            )
            for j, n in enumerate(names)
        )
        out.append(TodoWriteData(todos=todos))
        for step in range(rng.randint(15, 40)):
            cid = f"c{i}_{step}"
            path = f"src/{words[i % len(words)]}/file_{rng.randint(0, 30)}.py"
            args = json.dumps({"path": path})
            call = ToolCall(id=cid, function=FunctionCall(name="read_file", arguments=args))
            out.append(Message(role="assistant", content=None, tool_calls=(call,)))
            text = " ".join(
                f"line{k} of {path}: value = {rng.randint(0, 10**6)}"
                for k in range(rng.randint(20, 90))
            )
            out.append(Message(role="tool", tool_call_id=cid, content=text))
    done = tuple(TodoItem(content=n, status="completed") for n in names)
    out += [TodoWriteData(todos=done), Message(role="assistant", content="All steps are done.")]
    return out


def transcript_session(folder: Path) -> list[EventData] | None:
    """Return the real transcript's payloads (its recorded compactions dropped), or None."""
    path = folder / TRANSCRIPT
    if not path.is_file():
        return None
    return [
        e.data
        for e in load(path, tokenizer=get_tokenizer())
        if not isinstance(e.data, CheckpointData)
    ]


@dataclass
class Figures:
    """What one design did on one session."""

    calls: int = 0
    prompt_tokens: int = 0
    compactions: int = 0
    at_boundary: int = 0
    replaced_tokens: int = 0
    reminders: int = 0
    reminder_tokens: int = 0
    reminder_tokens_sent: int = 0
    lost_items: int = 0
    mid_task: int = 0
    refused: int = 0
    boundary_compactions: int = 0
    """Compactions the boundary trigger made (the size trigger alone would not have)."""
    boundary_after_completion: int = 0
    """Of those, the ones right after a completion (an item or task completed since the
    previous model call): the trigger's goal is all of them (at least 90%)."""


def _lost(session: Session, pending: tuple[str, ...], current: tuple[str, ...]) -> int:
    data = session.context.checkpoint
    if data is None:
        return 0
    return sum(1 for p in pending if p not in data.pending) + sum(
        1 for c in current if c not in data.current
    )


def run(
    payloads: Sequence[EventData], boundary: float | None, remind: bool, folder: Path
) -> Figures:
    """Replay `payloads` under one design; return its figures."""
    policy = CompactionPolicy(window_tokens=WINDOW, boundary_threshold=boundary)
    figures = Figures()
    reminder_seqs: set[int] = set()
    with Session(folder / "log.jsonl", sync="batch") as session, session.batch():
        completions = 0
        for data in payloads:
            if isinstance(data, Message) and data.role == "assistant":
                completions = _before_call(
                    session, policy, remind, figures, reminder_seqs, completions
                )
            session.append(data)
    return figures


def _before_call(
    session: Session,
    policy: CompactionPolicy,
    remind: bool,
    figures: Figures,
    reminder_seqs: set[int],
    completions: int,
) -> int:
    """Remind (if on), compact when due, count the call; return the completions seen."""
    if remind and (event := remind_if_stale(session)) is not None:
        figures.reminders += 1
        figures.reminder_tokens += session.event_tokens(event.seq)
        reminder_seqs.add(event.seq)
    boundary = session.progress.completed_since_checkpoint > completions
    just_completed = session.progress.completed_since_call > 0
    size_due = policy.in_counted_tokens(session.token_scale).should_compact(session.context_tokens)
    todos = session.latest_todos
    pending = tuple(t.content for t in todos if t.status == "pending")
    current = tuple(t.content for t in todos if t.status == "in_progress")
    try:
        result = maybe_compact(session, policy)
    except CompactionError:
        figures.refused += 1
        result = None
    if result is not None:
        figures.compactions += 1
        figures.at_boundary += int(boundary)
        figures.replaced_tokens += result.replaced_tokens
        figures.lost_items += _lost(session, pending, current)
        figures.mid_task += int(bool(current) and not boundary)
        if not size_due:
            figures.boundary_compactions += 1
            figures.boundary_after_completion += int(just_completed)
    figures.calls += 1
    figures.prompt_tokens += session.context_tokens
    figures.reminder_tokens_sent += sum(
        session.event_tokens(s) for s in session.context.seqs if s in reminder_seqs
    )
    return session.progress.completed_since_checkpoint


def sessions(seeds: Iterable[int], transcripts: Path) -> dict[str, list[EventData]]:
    """Return the sessions to replay, by name."""
    out = {f"generated-{s}": generated_session(s) for s in seeds}
    real = transcript_session(transcripts)
    if real is not None:
        out["real:" + TRANSCRIPT] = real
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run every design on every session; print a table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    default = os.environ.get("HARNESS_TRANSCRIPTS") or str(ROOT.parent / "shared" / "transcripts")
    parser.add_argument("--transcripts", type=Path, default=Path(default))
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"window_tokens": WINDOW, "reminder_after": 10, "sessions": {}}
    for name, payloads in sessions(args.seeds, args.transcripts).items():
        row: dict[str, Any] = {}
        for design, (boundary, remind) in DESIGNS.items():
            with tempfile.TemporaryDirectory() as tmp:
                row[design] = asdict(run(payloads, boundary, remind, Path(tmp)))
        results["sessions"][name] = row
        _print(name, row)
    results["boundary_share"] = boundary_share(results["sessions"])
    print(f"\nboundary compactions right after a completion: {results['boundary_share']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def boundary_share(sessions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return how many boundary compactions fell right after a completion, per design.

    Over all sessions, for each design with a boundary; the share's goal is at least 0.9.
    """
    out: dict[str, Any] = {}
    for design, (boundary, _) in DESIGNS.items():
        if boundary is None:
            continue
        fired = sum(row[design]["boundary_compactions"] for row in sessions.values())
        right = sum(row[design]["boundary_after_completion"] for row in sessions.values())
        out[design] = {
            "boundary_compactions": fired,
            "right_after_completion": right,
            "share": round(right / fired, 3) if fired else None,
        }
    return out


def _print(name: str, row: dict[str, Any]) -> None:
    print(f"\n{name}")
    print(
        f"{'design':<19}{'calls':>6}{'prompt tok':>12}{'compact':>8}{'at bnd':>7}{'mid-task':>9}"
        f"{'replaced':>10}{'remind':>7}{'rem tok':>8}{'rem sent':>9}{'lost':>5}"
    )
    for design, f in row.items():
        print(
            f"{design:<19}{f['calls']:>6}{f['prompt_tokens']:>12}{f['compactions']:>8}"
            f"{f['at_boundary']:>7}{f['mid_task']:>9}{f['replaced_tokens']:>10}"
            f"{f['reminders']:>7}{f['reminder_tokens']:>8}{f['reminder_tokens_sent']:>9}"
            f"{f['lost_items']:>5}"
        )


if __name__ == "__main__":
    sys.exit(main())
