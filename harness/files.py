"""Checks on the files a command is given, before anything opens them.

A session log must be a regular file: a directory, a FIFO (whose read would block forever), a
device, a socket or a dangling symlink is refused with an `OSError` naming the path and the
cause, which `harness.cli.main` prints as one line (exit status 3).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def check_file(path: Path | str, *, must_exist: bool = True, what: str = "file") -> Path:
    """Return `path` when it is a usable regular file (or, unless `must_exist`, absent).

    Raises:
        OSError: the path is missing (with `must_exist`), a dangling symlink, a directory, or
            not a regular file; ``filename`` is the path.
    """
    file = Path(path)
    try:
        info = file.stat()
    except FileNotFoundError:
        if file.is_symlink():
            target = os.readlink(file)
            raise FileNotFoundError(
                errno.ENOENT, f"dangling symlink (to {target}); nothing is there", str(file)
            ) from None
        if must_exist:
            raise FileNotFoundError(errno.ENOENT, f"no such {what}", str(file)) from None
        return file
    except NotADirectoryError:
        raise NotADirectoryError(
            errno.ENOTDIR, "a parent of this path is a file, not a folder", str(file)
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"is a directory, not a {what}", str(file))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(
            errno.EINVAL, f"not a regular file (a FIFO, socket or device), not a {what}", str(file)
        )
    return file
