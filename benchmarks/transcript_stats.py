"""Statistics of the shared real transcripts that the `real` session profile is calibrated on.

`measure(folder)` imports every transcript of ``../shared/transcripts`` (`compaction.importers`)
and counts, per file: model calls, tool calls, writes of the todo list (``TodoWrite``) and of the
shared task list (``TaskCreate`` / ``TaskUpdate``), model calls between two list writes, tokens
of each tool output, model calls per user turn, and failed tool calls (Claude Code's
``is_error`` results). `pooled` pools them over the files. Run it as
``python -m benchmarks.transcript_stats`` to print the table ``benchmarks/README.md`` quotes.

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

from compaction import (
    Message,
    TaskCreateData,
    TaskUpdateData,
    TodoWriteData,
    TurnStartData,
    get_tokenizer,
)
from compaction.importers import load

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
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
    between_writes: list[int] = field(default_factory=list)
    """Model calls between two consecutive list writes (todo or task), and after the last."""
    output_tokens: list[int] = field(default_factory=list)
    """Tokens of each tool output."""
    turn_calls: list[int] = field(default_factory=list)
    """Model calls per user turn."""


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
    tok = get_tokenizer()
    out = FileStats(name=path.name, failures=_failures(path))
    since_write, in_turn, wrote = 0, 0, False
    task_ids: set[str] = set()
    for event in load(path):
        data = event.data
        if isinstance(data, TurnStartData):
            if in_turn:
                out.turn_calls.append(in_turn)
            in_turn = 0
        elif isinstance(data, Message) and data.role == "assistant":
            out.model_calls += 1
            in_turn += 1
            since_write += 1
            out.tool_calls += len(data.tool_calls or ())
        elif isinstance(data, Message) and data.role == "tool":
            out.output_tokens.append(tok.count(data.text()))
        elif isinstance(data, TodoWriteData | TaskCreateData | TaskUpdateData):
            if isinstance(data, TodoWriteData):
                out.todo_writes += 1
            else:
                out.task_events += 1
                task_ids.add(data.task.id)
            if wrote:
                out.between_writes.append(since_write)
            since_write, wrote = 0, True
    if in_turn:
        out.turn_calls.append(in_turn)
    if wrote:
        out.between_writes.append(since_write)
    out.tasks = len(task_ids)
    return out


def measure(folder: Path = TRANSCRIPTS) -> list[FileStats]:
    """Measure every transcript in `folder` (none when it is absent), sorted by name."""
    if not folder.is_dir():
        return []
    return [
        measure_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name not in SKIP
    ]


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


def _flat(rows: Iterable[FileStats], name: str) -> list[int]:
    return [v for r in rows for v in getattr(r, name)]


def pooled(rows: Sequence[FileStats]) -> dict[str, Any]:
    """Pool the files: totals, and the spread of every per-call series."""
    writers = [r for r in rows if r.todo_writes or r.task_events]
    return {
        "files": len(rows),
        "model_calls": sum(r.model_calls for r in rows),
        "tool_calls": sum(r.tool_calls for r in rows),
        "todo_writes": sum(r.todo_writes for r in rows),
        "task_events": sum(r.task_events for r in rows),
        "failures": sum(r.failures for r in rows),
        "between_writes": _spread(_flat(writers, "between_writes")),
        "output_tokens": _spread(_flat(rows, "output_tokens")),
        "turn_calls": _spread(_flat(rows, "turn_calls")),
    }


def as_json(rows: Sequence[FileStats]) -> dict[str, Any]:
    """Return the per-file figures (series summarized) and the pooled ones."""
    files: list[Mapping[str, Any]] = []
    for r in rows:
        d = asdict(r)
        for key in ("between_writes", "output_tokens", "turn_calls"):
            d[key] = _spread(d[key])
        files.append(d)
    return {"source": str(TRANSCRIPTS.name), "files": files, "pooled": pooled(rows)}


def markdown(rows: Sequence[FileStats]) -> list[str]:
    """Return the table of `benchmarks/README.md`: one row per transcript, then the pool."""
    lines = [
        "| transcript | model calls | tool calls | todo writes | task events (tasks) | "
        "calls between writes (median / max) | tool output tokens (median / p90 / max) | "
        "calls per turn (median / max) | failed tool calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        bw, ot, tc = _spread(r.between_writes), _spread(r.output_tokens), _spread(r.turn_calls)
        lines.append(
            f"| `{r.name}` | {r.model_calls} | {r.tool_calls} | {r.todo_writes} | "
            f"{r.task_events} ({r.tasks}) | {bw['median']:g} / {bw['max']:g} | "
            f"{ot['median']:g} / {ot['p90']:g} / {ot['max']:g} | {tc['median']:g} / {tc['max']:g} "
            f"| {r.failures} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (or the JSON with ``--json``) for the transcripts folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=TRANSCRIPTS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.folder)
    if args.json:
        print(json.dumps(as_json(rows), indent=1, sort_keys=True))
    else:
        print("\n".join(markdown(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
