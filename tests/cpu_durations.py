"""A pytest plugin that measures each test's CPU time, its own and its subprocesses'.

Wall time on a shared machine says how loaded it was; CPU time says what a test costs. Load it
with ``-p cpu_durations`` (``tests/`` on the path) and name where to write::

    PYTHONPATH=tests CPU_DURATIONS=/tmp/cpu .venv/bin/pytest -q -p cpu_durations -n auto

Each process (each xdist worker, or the one process under ``-p no:xdist``) appends one JSON line
per test to ``$CPU_DURATIONS.<worker>.jsonl``: ``id``, ``self`` (CPU seconds of the process,
setup and teardown included), ``child`` (CPU seconds of the subprocesses it waited for) and
``wall``. Each process also writes ``$CPU_DURATIONS.<worker>.process.json``: its CPU seconds
(own and waited-for children's) at the end of collection (start-up and imports included) and at
the end of the session, so collection and whatever runs outside a test's protocol are counted
too, and the CPU seconds its cyclic garbage collector spent by then, per generation. Without
xdist the slowest 30 by CPU are also printed at the end.

Not counted anywhere: processes a test does not wait for (a daemon such as the throwaway
PostgreSQL server, a forked writer that is another process's child).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path

import pytest

ROWS: list[dict[str, object]] = []
PROCESS: dict[str, object] = {}
"""This process's CPU seconds at the end of collection and of the session."""


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def worker_name() -> str:
    """Return this process's xdist worker id (``main`` without xdist)."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


GC_CPU: dict[int, float] = {0: 0.0, 1: 0.0, 2: 0.0}
"""CPU seconds the cyclic garbage collector spent, per generation collected."""
_gc_started: list[float] = []


def gc_timer(phase: str, info: dict[str, int]) -> None:
    """A `gc.callbacks` entry: add each collection's CPU time to its generation's."""
    if phase == "start":
        _gc_started[:] = [time.process_time()]
    elif _gc_started:
        GC_CPU[info["generation"]] += time.process_time() - _gc_started.pop()


def pytest_configure(config: pytest.Config) -> None:
    """Time the garbage collector's passes from here on."""
    gc.callbacks.append(gc_timer)


def process_cpu(stage: str) -> None:
    """Record this process's CPU so far under `stage`; write the file when asked to."""
    own, kids = cpu_seconds()
    PROCESS[stage] = {
        "self": round(own, 3),
        "child": round(kids, 3),
        "gc": {str(gen): round(cpu, 3) for gen, cpu in GC_CPU.items()},
    }
    if os.environ.get("CPU_DURATIONS"):
        out = Path(f"{os.environ['CPU_DURATIONS']}.{worker_name()}.process.json")
        out.write_text(json.dumps(PROCESS, sort_keys=True) + "\n", encoding="utf-8")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Record the CPU spent starting up and collecting (importing every test module)."""
    process_cpu("collected")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Record the CPU of the whole process, session-scoped teardown included."""
    process_cpu("finished")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Measure the test's whole protocol: setup, call and teardown."""
    own, kids, wall = *cpu_seconds(), time.perf_counter()
    try:
        return (yield)
    finally:
        own_after, kids_after = cpu_seconds()
        row: dict[str, object] = {
            "id": item.nodeid,
            "self": round(own_after - own, 3),
            "child": round(kids_after - kids, 3),
            "wall": round(time.perf_counter() - wall, 3),
        }
        ROWS.append(row)
        if os.environ.get("CPU_DURATIONS"):
            with Path(f"{os.environ['CPU_DURATIONS']}.{worker_name()}.jsonl").open("a") as out:
                out.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the tests of this process that cost the most CPU."""
    if not ROWS:
        return

    def cost(row: dict[str, object]) -> float:
        return float(str(row["self"])) + float(str(row["child"]))

    total = sum(cost(r) for r in ROWS)
    terminalreporter.write_sep("=", f"CPU seconds: {total:.1f} over {len(ROWS)} tests")
    for row in sorted(ROWS, key=cost, reverse=True)[:30]:
        terminalreporter.write_line(f"{row['self']:8} {row['child']:8}  {row['id']}")
