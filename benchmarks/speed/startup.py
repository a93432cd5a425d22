"""CLI start-up: the CPU each command costs, as a ratio to a bare ``python -c pass``.

Each command runs `runs` times in a new interpreter (the same one that runs this module, with
``-m harness``), interleaved with a bare interpreter's runs; a run's CPU time is the children's
user + system time (`resource.getrusage(RUSAGE_CHILDREN)`) around it, and each figure is the
median of its runs; the ratio is to the bare interpreter's median. CPU time, not wall time: on
a shared machine, waiting for a core is not a cost of the code.

Run: ``python -m benchmarks.speed.startup`` (20 runs of each; writes
``benchmarks/results/startup.json``).

``harness todos LOG`` is measured twice: into a pipe, and drawn for a terminal (its stdout a
pseudo-terminal, `pty.openpty`, with ``TERM=xterm`` and no variable that forces or disables
colour), since the two take different paths to the same panel and both must stay light.

Every run starts in an empty temporary folder, as a user's shell would be (not in the checkout,
whose folders would be on the import path first).

Bytecode: an installed package has its modules compiled (pip writes the ``.pyc`` files; an
editable install writes them on first import). A shell with ``PYTHONDONTWRITEBYTECODE`` set (as
some sandboxes and CI images are) compiles every module of the toolkit from source at every
start instead, which is not the start a user gets. So by default the children write and read
their bytecode under a temporary ``PYTHONPYCACHEPREFIX`` (the checkout is left as it is), and each
command runs once, unmeasured, before the timed runs; ``--compile-each-run`` measures the other
way (``PYTHONDONTWRITEBYTECODE=1``: every run compiles), and the figures say which they are.

Invariants: every command runs on its own fresh log in a temporary folder; the figures are
ratios of CPU times taken in the same process, minutes apart at most.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT

ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "startup.json"
GOALS: dict[str, float] = {
    "--version": 2.5,
    "todos LOG (pipe)": 4.0,
    "todos LOG (terminal)": 4.0,
    "todo-write LOG": 8.0,
}
"""The goals (issues 28 and 38): CPU of each command over CPU of ``python -c pass``."""
TERMINAL = " (terminal)"
"""The suffix of a command whose stdout is a pseudo-terminal."""
STYLED_ENV = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
WRITE = b'{"todos": [{"content": "Fix the bug", "status": "in_progress"}]}'


def child_cpu(
    argv: Sequence[str],
    stdin: bytes = b"",
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    *,
    terminal: bool = False,
) -> float:
    """Return the CPU seconds (user + system) of one run of `argv` in a child process.

    With `terminal`, the child's stdout is a pseudo-terminal (read and dropped after the run).
    """
    main_fd, out = pty.openpty() if terminal else (-1, subprocess.DEVNULL)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run(argv, input=stdin, stdout=out, check=True, cwd=cwd, env=env, timeout=120)
    finally:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if terminal:
            os.close(out)
            _drain(main_fd)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _drain(fd: int) -> None:
    """Read a pty's main side to its end (EIO once the child's side is closed), then close it."""
    try:
        while os.read(fd, 1 << 16):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def child_env(tmp: str, *, compile_each_run: bool) -> dict[str, str]:
    """Return the children's environment: bytecode cached under `tmp`, or compiled every run."""
    env = {k: v for k, v in os.environ.items() if k not in STYLED_ENV} | {"TERM": "xterm"}
    if compile_each_run:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
    return env


def measure(runs: int = 20, *, compile_each_run: bool = False) -> dict[str, Any]:
    """Measure each command of `GOALS` against the bare interpreter; return plain figures.

    The runs interleave (bare, then each command, `runs` times over), so a change in the
    machine's load reaches every figure alike; each figure is the median of its runs. Each
    command first runs once unmeasured (with the bytecode cached, that run writes it).
    """
    python = sys.executable
    harness = [python, "-m", "harness"]
    with tempfile.TemporaryDirectory(prefix="harness-startup-") as tmp:
        env = child_env(tmp, compile_each_run=compile_each_run)
        log = str(Path(tmp) / "s.jsonl")
        subprocess.run(
            [*harness, "todo-write", log],
            input=WRITE,
            stdout=subprocess.DEVNULL,
            check=True,
            env=env,
        )
        argvs: dict[str, tuple[list[str], bytes]] = {
            "bare": ([python, "-c", "pass"], b""),
            "--version": ([*harness, "--version"], b""),
            "todos LOG (pipe)": ([*harness, "todos", log], b""),
            "todos LOG (terminal)": ([*harness, "todos", log], b""),
            "todo-write LOG": ([*harness, "todo-write", log], WRITE),
        }
        for name, (argv, stdin) in argvs.items():
            child_cpu(argv, stdin, cwd=tmp, env=env, terminal=name.endswith(TERMINAL))
        times: dict[str, list[float]] = {name: [] for name in argvs}
        for _ in range(runs):
            for name, (argv, stdin) in argvs.items():
                terminal = name.endswith(TERMINAL)
                times[name].append(child_cpu(argv, stdin, cwd=tmp, env=env, terminal=terminal))
    cpu = {name: statistics.median(t) for name, t in times.items()}
    bare = cpu.pop("bare")
    return {
        "runs": runs,
        "bytecode": "compiled every run" if compile_each_run else "cached",
        "bare_ms": round(bare * 1e3, 2),
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "commands": {
            name: {
                "cpu_ms": round(c * 1e3, 2),
                "ratio": round(c / bare, 2),
                "goal": GOALS[name],
                "met": c / bare <= GOALS[name],
            }
            for name, c in cpu.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and write the figures; print one line per command."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.startup")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--compile-each-run",
        action="store_true",
        help="PYTHONDONTWRITEBYTECODE=1 in every child: each start compiles the toolkit",
    )
    args = parser.parse_args(argv)
    figures = measure(args.runs, compile_each_run=args.compile_each_run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"bytecode {figures['bytecode']}; bare python -c pass {figures['bare_ms']} ms CPU")
    for name, f in figures["commands"].items():
        print(f"harness {name}: {f['cpu_ms']} ms CPU, {f['ratio']}x python -c pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
