"""Exclusive whole-file locks for log appends, on POSIX and on Windows.

POSIX takes an advisory `flock` on the open file. Windows has no `fcntl`: there `msvcrt.locking`
locks one byte far past any real data (a Windows byte-range lock is mandatory, so locking the
data itself would block readers), retrying until the lock is granted, so a writer waits as
`flock` would.

Invariants: `lock_exclusive` returns only once this process holds the lock; every lock taken is
released by `unlock` on the same file; the file position is left as it was.
"""

from __future__ import annotations

import os
from typing import IO, Any

LOCK_OFFSET = 2**31 - 2
"""Where the Windows lock byte sits: past the data of any usual log, and within the C runtime's
32-bit file offsets, which `msvcrt.locking` may use."""

fcntl: Any
msvcrt: Any
try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt
else:
    msvcrt = None


def _fileno(fh: IO[bytes] | int) -> int:
    return fh if isinstance(fh, int) else fh.fileno()


def lock_exclusive(fh: IO[bytes] | int) -> None:
    """Block until this process holds the exclusive lock on `fh`'s file (an open file or a fd)."""
    if fcntl is not None:
        fcntl.flock(_fileno(fh), fcntl.LOCK_EX)
        return
    _windows_lock(fh, msvcrt.LK_LOCK)


def unlock(fh: IO[bytes] | int) -> None:
    """Release the lock `lock_exclusive` took on `fh`'s file."""
    if fcntl is not None:
        fcntl.flock(_fileno(fh), fcntl.LOCK_UN)
        return
    _windows_lock(fh, msvcrt.LK_UNLCK)


def _windows_lock(fh: IO[bytes] | int, mode: int) -> None:
    fd = _fileno(fh)
    position = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, LOCK_OFFSET, os.SEEK_SET)
    try:
        while True:
            try:
                msvcrt.locking(fd, mode, 1)
                return
            except OSError:
                # LK_LOCK gives up after ten one-second tries; a writer keeps waiting.
                if mode == msvcrt.LK_UNLCK:
                    raise
    finally:
        os.lseek(fd, position, os.SEEK_SET)
