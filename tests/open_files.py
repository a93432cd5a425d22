"""Counting the file descriptors this process holds open on a file (Linux's /proc)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROC_FDS = Path("/proc/self/fd")

needs_proc = pytest.mark.skipif(not PROC_FDS.is_dir(), reason="counts descriptors in /proc")
"""Skip a test that counts descriptors where there is no /proc (macOS, Windows)."""


def open_fds(path: Path) -> int:
    """How many of this process's file descriptors are open on `path`."""
    target = str(path.resolve())
    count = 0
    for fd in os.listdir(PROC_FDS):
        try:
            count += os.readlink(PROC_FDS / fd) == target
        except OSError:  # the descriptor listdir itself used, closed since
            continue
    return count
