"""Statistics of the shared real transcripts that the `real` session profile is calibrated on.

`measure(folder)` imports every transcript of ``../shared/transcripts`` (`compaction.importers`)
and counts, per file: model calls, tool calls, writes of the todo list (``TodoWrite``) and of the
shared task list (``TaskCreate`` / ``TaskUpdate``), model calls between two list writes, tokens
of each tool output, model calls per user turn, and failed tool calls (Claude Code's
``is_error`` results), and the tokens of each summary the agent wrote at its own compactions.
`pooled` pools them over the files. Run it as
``python -m benchmarks.replay.transcript_stats`` to print the table ``benchmarks/README.md`` quotes.

Invariants: the figures are a pure function of the files' bytes; a missing folder gives no rows,
never an error.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import SHARED_TRANSCRIPTS
from compaction import (
    CheckpointData,
    EventData,
    Message,
    TodoWriteData,
    TurnStartData,
    get_tokenizer,
)
from compaction.events import TaskCreateData, TaskUpdateData
from compaction.importers import load

TRANSCRIPTS = SHARED_TRANSCRIPTS
"""The shared real transcripts (``../shared/transcripts``)."""
SKIP = frozenset({"SOURCES.md"})


@dataclass
class FileStats:
    """What one transcript holds, counted."""

    name: str
    model_calls: int = 0
    tool_calls: int = 0
    todo_writes: int = 0
    task_events: int = 0
    tasks: int = 0
    failures: int = 0
    task_owners: list[str] = field(default_factory=list)
    """Owners named on the shared tasks, in order of appearance."""
    between_writes: list[int] = field(default_factory=list)
    """Model calls between two consecutive todo-list writes."""
    between_task_events: list[int] = field(default_factory=list)
    """Model calls between two consecutive task events (create or update)."""
    output_tokens: list[int] = field(default_factory=list)
    """Tokens of each tool output."""
    turn_calls: list[int] = field(default_factory=list)
    """Model calls per user turn."""
    summary_tokens: list[int] = field(default_factory=list)
    """Tokens of each summary the agent itself wrote at its own compactions (Claude Code's
    recorded compact summaries): the output a summary call is priced at."""


def _failures(path: Path) -> int:
    """Count Claude Code tool results flagged ``is_error`` (0 for other formats)."""
    if path.suffix != ".jsonl":
        return 0
    count = 0
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            count += line.count('"is_error":true')
    return count


def measure_file(path: Path) -> FileStats:
    """Count one transcript's calls, list writes, output sizes, turn lengths and failures."""
    out = measure_payloads(path.name, [e.data for e in load(path)])
    out.failures = _failures(path)
    return out


def measure_payloads(name: str, payloads: Iterable[EventData]) -> FileStats:
    """Count a session's calls, list writes, output sizes and turn lengths (not failures).

    The same counts for a transcript and for a generated session, so the two compare.
    """
    tok = get_tokenizer()
    out = FileStats(name=name)
    in_turn = 0
    since: dict[str, int | None] = {"todo": None, "task": None}
    task_ids: set[str] = set()
    for data in payloads:
        if isinstance(data, TurnStartData):
            if in_turn:
                out.turn_calls.append(in_turn)
            in_turn = 0
        elif isinstance(data, Message) and data.role == "assistant":
            out.model_calls += 1
            in_turn += 1
            out.tool_calls += len(data.tool_calls or ())
            since = {k: None if v is None else v + 1 for k, v in since.items()}
        elif isinstance(data, Message) and data.role == "tool":
            out.output_tokens.append(tok.count(data.text()))
        elif isinstance(data, CheckpointData):
            out.summary_tokens.append(tok.count(data.text))
        elif isinstance(data, TodoWriteData):
            out.todo_writes += 1
            if since["todo"] is not None:
                out.between_writes.append(since["todo"])
            since["todo"] = 0
        elif isinstance(data, TaskCreateData | TaskUpdateData):
            _count_task(out, data, task_ids, since)
    if in_turn:
        out.turn_calls.append(in_turn)
    out.tasks = len(task_ids)
    return out


def _count_task(
    out: FileStats,
    data: TaskCreateData | TaskUpdateData,
    task_ids: set[str],
    since: dict[str, int | None],
) -> None:
    """Count one shared-task event: its task, its owner, the calls since the previous one."""
    out.task_events += 1
    task_ids.add(data.task.id)
    if data.task.owner and data.task.owner not in out.task_owners:
        out.task_owners.append(data.task.owner)
    if since["task"] is not None:
        out.between_task_events.append(since["task"])
    since["task"] = 0


def measure(folder: Path = TRANSCRIPTS) -> list[FileStats]:
    """Measure every transcript in `folder` (none when it is absent), sorted by name."""
    if not folder.is_dir():
        return []
    return [measure_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name not in SKIP]


def _spread(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"n": 0, "median": 0.0, "p90": 0.0, "max": 0.0, "mean": 0.0}
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median": float(statistics.median(ordered)),
        "p90": float(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]),
        "max": float(ordered[-1]),
        "mean": round(statistics.fmean(ordered), 1),
    }


def _pair(values: Sequence[int]) -> str:
    """Return "median / max" of a series, or "-" when it is empty."""
    if not values:
        return "-"
    spread = _spread(values)
    return f"{spread['median']:g} / {spread['max']:g}"


def _flat(rows: Iterable[FileStats], name: str) -> list[int]:
    return [v for r in rows for v in getattr(r, name)]


def pooled(rows: Sequence[FileStats]) -> dict[str, Any]:
    """Pool the files: totals, and the spread of every per-call series."""
    return {
        "files": len(rows),
        "model_calls": sum(r.model_calls for r in rows),
        "tool_calls": sum(r.tool_calls for r in rows),
        "todo_writes": sum(r.todo_writes for r in rows),
        "task_events": sum(r.task_events for r in rows),
        "failures": sum(r.failures for r in rows),
        "between_writes": _spread(_flat(rows, "between_writes")),
        "between_task_events": _spread(_flat(rows, "between_task_events")),
        "output_tokens": _spread(_flat(rows, "output_tokens")),
        "turn_calls": _spread(_flat(rows, "turn_calls")),
        "summary_tokens": _spread(_flat(rows, "summary_tokens")),
    }


def as_json(rows: Sequence[FileStats]) -> dict[str, Any]:
    """Return the per-file figures (series summarized) and the pooled ones."""
    files: list[Mapping[str, Any]] = []
    for r in rows:
        d = asdict(r)
        keys = ("between_writes", "between_task_events", "output_tokens", "turn_calls")
        for key in (*keys, "summary_tokens"):
            d[key] = _spread(d[key])
        files.append(d)
    return {"source": str(TRANSCRIPTS.name), "files": files, "pooled": pooled(rows)}


def markdown(rows: Sequence[FileStats]) -> list[str]:
    """Return the table of `benchmarks/README.md`: one row per transcript, then the pool."""
    lines = [
        "| transcript | model calls | tool calls | todo writes | task events (tasks) | "
        "calls between todo writes (median / max) | calls between task events (median / max) | "
        "tool output tokens (median / p90 / max) | "
        "calls per turn (median / max) | failed tool calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        bw, bt = _pair(r.between_writes), _pair(r.between_task_events)
        ot, tc = _spread(r.output_tokens), _pair(r.turn_calls)
        lines.append(
            f"| `{r.name}` | {r.model_calls} | {r.tool_calls} | {r.todo_writes} | "
            f"{r.task_events} ({r.tasks}) | {bw} | {bt} | "
            f"{ot['median']:g} / {ot['p90']:g} / {ot['max']:g} | {tc} | {r.failures} |"
        )
    return lines


def generated_rows(turns: int = 24, seeds: Sequence[int] = (0, 1, 2, 7)) -> list[FileStats]:
    """Measure generated sessions of every profile, one row per (profile, seed)."""
    from harness.simulation import PROFILES, generate

    return [
        measure_payloads(f"generated {name} t{turns}-s{seed}", generate(turns, seed, name))
        for name in PROFILES
        for seed in seeds
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (or the JSON with ``--json``) for the transcripts folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=TRANSCRIPTS)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--generated", action="store_true", help="add the generated profiles' sessions"
    )
    args = parser.parse_args(argv)
    rows = measure(args.folder)
    if args.generated:
        rows += generated_rows()
    if args.json:
        print(json.dumps(as_json(rows), indent=1, sort_keys=True))
    else:
        print("\n".join(markdown(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
