"""Run the `harness` command line in-process, as a subprocess would, for fast golden tests.

`run_cli` calls `harness.cli.main(argv)` with stdin, stdout, stderr and (optionally) environment
variables swapped for the call, and returns a `subprocess.CompletedProcess` like
`subprocess.run(..., capture_output=True, text=True)` would, so a test can switch between the two
by changing one helper. Tests that need a real process (signals, `--follow`, the installed entry
point) keep using `subprocess`.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from harness.cli import main


@contextmanager
def swapped_environ(env: Mapping[str, str] | None) -> Iterator[None]:
    """Replace os.environ by `env` for the block (unchanged when `env` is None)."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(
    *args: str | Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in this process; return its exit status, stdout and stderr."""
    argv = [str(a) for a in args]
    here = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    saved_stdin = sys.stdin
    sys.stdin = fake_stdin
    try:
        with swapped_environ(env), redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help exits 0, a usage error exits 2
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdin = saved_stdin
        fake_stdin.close()
        os.chdir(here)
    return subprocess.CompletedProcess(["harness", *argv], code, out.getvalue(), err.getvalue())
