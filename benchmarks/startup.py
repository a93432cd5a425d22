"""CLI start-up: the CPU each command costs, as a ratio to a bare ``python -c pass``.

Each command runs `runs` times in a new interpreter (the same one that runs this module, with
``-m harness``), and its CPU time is the children's user + system time
(`resource.getrusage(RUSAGE_CHILDREN)`) around those runs, divided by the number of runs; the
bare interpreter is measured the same way, first and last, and the ratio is to the mean of the
two. CPU time, not wall time: on a shared machine, waiting for a core is not a cost of the code.

Run: ``python -m benchmarks.startup`` (writes ``benchmarks/results/startup.json``).

Invariants: every command runs on its own fresh log in a temporary folder; the figures are
ratios of CPU times taken in the same process, minutes apart at most.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "startup.json"
GOALS: dict[str, float] = {"--version": 2.5, "todos LOG": 6.0, "todo-write LOG": 8.0}
"""Issue 28's goals: CPU of each command over CPU of ``python -c pass``."""
WRITE = b'{"todos": [{"content": "Fix the bug", "status": "in_progress"}]}'


def child_cpu(argv: Sequence[str], runs: int, stdin: bytes = b"") -> float:
    """Return the mean CPU seconds (user + system) of running `argv` `runs` times."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        subprocess.run(
            argv, input=stdin, stdout=subprocess.DEVNULL, check=True, cwd=ROOT, timeout=120
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used / runs


def measure(runs: int = 10) -> dict[str, Any]:
    """Measure each command of `GOALS` against the bare interpreter; return plain figures."""
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="harness-startup-") as tmp:
        log = str(Path(tmp) / "s.jsonl")
        harness = [python, "-m", "harness"]
        subprocess.run([*harness, "todo-write", log], input=WRITE, check=True, cwd=ROOT)
        bare = child_cpu([python, "-c", "pass"], runs)
        commands = {
            "--version": child_cpu([*harness, "--version"], runs),
            "todos LOG": child_cpu([*harness, "todos", log], runs),
            "todo-write LOG": child_cpu([*harness, "todo-write", log], runs, WRITE),
        }
        bare = (bare + child_cpu([python, "-c", "pass"], runs)) / 2
    return {
        "runs": runs,
        "bare_ms": round(bare * 1e3, 2),
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "commands": {
            name: {
                "cpu_ms": round(cpu * 1e3, 2),
                "ratio": round(cpu / bare, 2),
                "goal": GOALS[name],
                "met": cpu / bare <= GOALS[name],
            }
            for name, cpu in commands.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and write the figures; print one line per command."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    figures = measure(args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for name, f in figures["commands"].items():
        print(f"harness {name}: {f['cpu_ms']} ms CPU, {f['ratio']}x python -c pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
