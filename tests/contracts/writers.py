"""Writer processes for the store contract, forked from a server that imported the package once.

Each writer is a process of its own that opens the store afresh, as a separate program would;
forking it from a `forkserver` that imported `compaction` (and psycopg) spares it the half second
of imports a new interpreter pays, with eight writers per store and four stores. This module
imports nothing heavy itself: each writer unpickles its target from here.
"""

from __future__ import annotations

import io
import multiprocessing
import sys
import textwrap
import traceback
from contextlib import redirect_stdout
from multiprocessing.connection import Connection

WRITERS = multiprocessing.get_context("forkserver")
WRITERS.set_forkserver_preload(
    ["__main__", "compaction", "compaction.stores", "psycopg", "contracts.writers"]
)


def run_script(script: str, args: list[str], out: Connection) -> None:
    """In a writer process: run `script` with `args` as its argv; send back (stdout, error)."""
    sys.argv = ["-c", *args]
    printed = io.StringIO()
    try:
        with redirect_stdout(printed):
            exec(compile(script, "<writer>", "exec"), {"__name__": "__main__"})
    except BaseException:
        out.send((printed.getvalue(), traceback.format_exc()))
        raise SystemExit(1) from None
    out.send((printed.getvalue(), None))


def children(script: str, *argsets: list[str]) -> list[str]:
    """Run one process per argument list at once; return their stdouts (each must exit 0)."""
    pipes = [WRITERS.Pipe(duplex=False) for _ in argsets]
    procs = [
        WRITERS.Process(target=run_script, args=(textwrap.dedent(script), args, send))
        for args, (_, send) in zip(argsets, pipes, strict=True)
    ]
    for proc in procs:
        proc.start()
    outs = []
    for proc, (receive, send) in zip(procs, pipes, strict=True):
        send.close()
        assert receive.poll(300), "a writer process sent nothing in 300 s"
        out, error = receive.recv()
        proc.join(60)
        assert (proc.exitcode, error) == (0, None), error
        outs.append(out)
    return outs
