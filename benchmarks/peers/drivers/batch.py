"""Run one driver on several sessions in one process, so its framework is imported once.

Importing a peer's framework is most of a short replay's cost (OpenHands' SDK pulls in LiteLLM:
about 13 s of CPU per interpreter, a session of the quick run about 3 s more), so the runner
(`benchmarks.peers.driver_batches`) starts one process per peer configuration and hands it every
session. Each job is the argument list the driver takes on its own; the driver's ``main`` runs
once per job with ``sys.argv`` set to it, exactly as a process of its own would. Standard library
only (this runs under each peer's interpreter).

Command: ``python -m benchmarks.peers.drivers.batch DRIVER JOBS.json``, where ``JOBS.json`` is a
JSON list of argument lists (each with its own ``--out``).

Invariants: the jobs run in order; a job that fails writes its reason to ``OUT.err`` (its
``--out`` plus ``.err``) and the next job still runs; the exit status is 1 when any failed.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["error_path", "main", "out_path"]


def out_path(args: Sequence[str]) -> Path:
    """Return the record path a job's arguments name (the value after ``--out``)."""
    return Path(args[list(args).index("--out") + 1])


def error_path(out: Path) -> Path:
    """Return where a failed job's reason goes, beside its record."""
    return out.with_name(out.name + ".err")


def _run_one(main: Callable[[], None], module: str, args: list[str]) -> str | None:
    """Run the driver's `main` on one job; return why it failed, or None."""
    sys.argv = [module, *args]
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return f"driver exited {exc.code}"
    except Exception as exc:  # a framework error must not stop the other sessions
        traceback.print_exc()
        return f"{type(exc).__name__}: {exc}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run every job of the jobs file through the named driver; return the exit status."""
    driver, jobs_file = list(sys.argv[1:] if argv is None else argv)
    module = f"benchmarks.peers.drivers.{driver}"
    entry = importlib.import_module(module).main
    jobs = json.loads(Path(jobs_file).read_text(encoding="utf-8"))
    failed = 0
    for args in jobs:
        reason = _run_one(entry, module, [str(a) for a in args])
        if reason is not None:
            failed += 1
            error_path(out_path(args)).write_text(reason, encoding="utf-8")
            print(f"{out_path(args).name}: {reason}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
