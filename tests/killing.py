"""Kill a process inside a tool call: the crash the resume tests recover from.

The host tool of the loop under test opens a FIFO; `kill_inside_tool` opens its other end, which
returns only once the child is inside the tool (no sleep, no guess), then kills the child with
SIGKILL, as an out-of-memory killer or a closed laptop would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

WAIT = 120.0
"""Longest wait for the child to reach the tool, in seconds."""


def kill_inside_tool(
    command: Sequence[str], fifo: Path, *, cwd: Path, env: Mapping[str, str] | None = None
) -> None:
    """Run `command`, wait until it opens `fifo` (its tool call), then SIGKILL it.

    Raises:
        AssertionError: the child ended, or took over `WAIT` seconds, before reaching the tool.
    """
    os.mkfifo(fifo)
    child = subprocess.Popen(
        command, cwd=cwd, env=None if env is None else dict(env),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    held: list[int] = []
    opener = threading.Thread(target=lambda: held.append(os.open(fifo, os.O_WRONLY)), daemon=True)
    opener.start()
    waited = 0.0
    while not held and child.poll() is None and waited < WAIT:
        opener.join(timeout=0.5)
        waited += 0.5
    if not held:  # release the opener, then say why the child never got there
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        opener.join(timeout=5)
        child.kill()
        out, err = child.communicate(timeout=30)
        raise AssertionError(f"the child never reached its tool call: {out}\n{err}")
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    for fd in held:
        os.close(fd)
