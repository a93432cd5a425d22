"""Shared task list: task_update throughput with 1, 4 and 16 writer processes, against appends.

Each writer is a separate process with its own `Session` on one log (``sync="always"``: every
update is fsynced before it returns, as an agent loop runs). A `task_update` takes the log's lock,
reads what the others appended, checks the update against the board and appends one event, so
its cost is one locked append plus the catch-up read. The baseline is the same event appended by
one process with `SessionLog.append` (also fsynced), with no check and no read.

Figures, per writer count: accepted updates per second (wall time from the start signal to the
last writer's end, all writers together), and that rate as a ratio to single-process appends per
second, measured just before that run (the top-level figure is their median). Each writer
updates its own task (``--shared`` makes all writers update the same tasks, so stale updates are
rejected and retried; the retries are counted).

Run: ``python -m benchmarks.speed.task_writers`` (writes ``benchmarks/results/tasks.json``);
``--updates N`` per writer (default 200), ``--writers 1 4 16``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchmarks import CHECKOUT
from compaction import Session, SessionLog, Task, call_tool
from compaction.events import TaskUpdateData


class EventLike(Protocol):
    """A process-shared start signal (`multiprocessing.Event`)."""

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal is set."""


class QueueLike(Protocol):
    """A process-shared queue (`multiprocessing.Queue`)."""

    def put(self, obj: object) -> None:
        """Put one result on the queue."""


ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "tasks.json"
DEFAULT_WRITERS = (1, 4, 16)
DEFAULT_UPDATES = 200
STALE = "changed since you last listed it"


@dataclass(frozen=True)
class WritersRun:
    """What one run of concurrent writers did."""

    writers: int
    updates: int
    """Accepted updates, all writers together."""
    retries: int
    """Updates rejected as stale and sent again."""
    seconds: float
    """Wall time from the start signal to the last writer's end."""


def agent_name(i: int) -> str:
    """Return the name of writer `i`."""
    return f"agent-{i}"


def writer(path: str, agent: str, updates: int, task_ids: Sequence[str], start: EventLike) -> int:
    """Send `updates` subject changes, cycling over `task_ids`; retry stale ones. Return retries.

    Any rejection but a stale one is a bug, and raises.
    """
    retries = 0
    with Session(path, agent=agent) as session:
        call_tool(session, "task_list")
        start.wait()
        for i in range(updates):
            args = {"id": task_ids[i % len(task_ids)], "subject": f"{agent} step {i}"}
            while True:
                result = call_tool(session, "task_update", args)
                if not result.is_error:
                    break
                if STALE not in result.content:
                    raise RuntimeError(f"{agent}: unexpected rejection: {result.content}")
                retries += 1
    return retries


def _writer_entry(
    path: str, agent: str, updates: int, ids: list[str], start: EventLike, out: QueueLike
) -> None:
    out.put((agent, writer(path, agent, updates, ids, start)))


def run_writers(path: Path, writers: int, updates: int, *, shared: int = 0) -> WritersRun:
    """Create the tasks, then run `writers` processes of `updates` updates each on one log.

    Args:
        path: the log (created here).
        writers: how many processes write at once.
        updates: accepted updates per writer.
        shared: when above 0, all writers cycle over this many shared tasks; otherwise each
            writer has a task of its own.
    """
    count = shared if shared > 0 else writers
    with Session(path, agent="lead") as lead:
        lead.start_turn("Share the work", mode="team")
        for n in range(count):
            call_tool(lead, "task_create", {"subject": f"task {n + 1}"})
    ctx = multiprocessing.get_context()
    start, out = ctx.Event(), ctx.Queue()
    procs = []
    for i in range(writers):
        ids = [str(n + 1) for n in range(count)] if shared > 0 else [str(i + 1)]
        args = (str(path), agent_name(i), updates, ids, start, out)
        procs.append(ctx.Process(target=_writer_entry, args=args))
    for p in procs:
        p.start()
    time.sleep(0.2 + 0.02 * writers)  # let every writer open the log and list the tasks
    began = time.perf_counter()
    start.set()
    results = [out.get(timeout=600) for _ in procs]
    seconds = time.perf_counter() - began
    for p in procs:
        p.join(timeout=60)
        if p.exitcode != 0:
            raise RuntimeError(f"a writer process exited with {p.exitcode}")
    return WritersRun(writers, writers * updates, sum(r for _, r in results), seconds)


def appends_per_second(path: Path, count: int) -> float:
    """Return single-process `SessionLog.append` calls per second of one task/update event."""
    task = Task(id="1", subject="agent-0 step 0", version=2)
    with SessionLog(path) as log:
        began = time.perf_counter()
        for i in range(count):
            log.append(
                TaskUpdateData(agent="agent-0", task=task.model_copy(update={"version": i + 2}))
            )
        return count / (time.perf_counter() - began)


def run(
    writer_counts: Sequence[int], updates: int, workdir: Path, *, shared: int
) -> dict[str, Any]:
    """Run every figure; return the results document."""
    rows, baselines = [], []
    for n in writer_counts:
        # The baseline is measured next to each run: an fsync's cost drifts on a shared disk.
        base = appends_per_second(workdir / f"appends-{n}.jsonl", max(updates, 50))
        baselines.append(base)
        result = run_writers(workdir / f"writers-{n}.jsonl", n, updates, shared=shared)
        rate = result.updates / result.seconds
        rows.append(
            {
                "writers": n,
                "updates": result.updates,
                "retries": result.retries,
                "seconds": round(result.seconds, 4),
                "updates_per_second": round(rate, 1),
                "appends_per_second": round(base, 1),
                "ratio_to_appends": round(rate / base, 3),
            }
        )
    return {
        "benchmark": "tasks",
        "command": "python -m benchmarks.speed.task_writers " + " ".join(sys.argv[1:]),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "sync": "always",
        "updates_per_writer": updates,
        "shared_tasks": shared,
        "single_process_appends_per_second": round(sorted(baselines)[len(baselines) // 2], 1),
        "writers": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write the JSON results."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed.task_writers", description=__doc__
    )
    parser.add_argument("--writers", type=int, nargs="+", default=list(DEFAULT_WRITERS))
    parser.add_argument("--updates", type=int, default=DEFAULT_UPDATES, help="per writer")
    parser.add_argument("--shared", type=int, default=0, help="writers share this many tasks")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON path")
    parser.add_argument("--workdir", type=Path, help="where the logs go (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        doc = run(args.writers, args.updates, args.workdir or Path(tmp), shared=args.shared)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for row in doc["writers"]:
        print(
            f"{row['writers']:>3} writers: {row['updates_per_second']:>8.1f} updates/s "
            f"({row['ratio_to_appends']:.2f}x single-process appends), {row['retries']} retries"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
