"""The tail of a session log: finding its last line, and saving a torn tail before a cut.

Invariants:
- `last_line` returns the last line that is not blank (ASCII whitespace only, as for the
  reader), reading each 4 KiB step back once and the line itself in one call.
- A torn tail is saved byte for byte in a new ``LOG.torn-<offset>`` file (never over another
  file, fsynced) before the log is cut; `TailRepair` records the cut.
- Nothing here takes the file lock: the callers (`compaction.stores.log_writer`) hold it.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path

from compaction.errors import LogError
from compaction.stores.log_reader import _CHUNK, LINE_START

__all__ = ["TailRepair", "count_lines", "last_line", "not_torn_append", "save_beside"]


@dataclass(frozen=True)
class TailRepair:
    """A torn tail an append cut off, after saving its bytes."""

    offset: int
    """Where the torn line began: the log's size after the cut."""
    length: int
    """How many bytes were cut."""
    saved_to: Path
    """The file holding them (``LOG.torn-<offset>``), byte for byte."""

    def describe(self, log: Path) -> str:
        """Return one line saying what was cut and where its bytes are."""
        return (
            f"{log}: cut a torn last line of {self.length} bytes at offset {self.offset} "
            f"(a crash mid-append); its bytes are saved in {self.saved_to}"
        )


def not_torn_append(tail: bytes, limit: int) -> str | None:
    """Return why `tail` cannot be the start of a line this toolkit wrote, or None if it can.

    `limit` is the longest line an event may take (`MAX_EVENT_BYTES`).
    """
    if len(tail) >= limit:
        return f"it is not shorter than the longest event ({limit} bytes)"
    head = tail[: len(LINE_START)]
    if not LINE_START.startswith(head):
        return f"it does not begin like a log line ({LINE_START.decode()}...)"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(tail, final=False)
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    return None


def save_beside(path: Path, offset: int, tail: bytes) -> Path:
    """Write `tail` to a new ``<path>.torn-<offset>`` file (never over another), fsynced."""
    for n in range(1000):
        target = path.with_name(f"{path.name}.torn-{offset}" + (f".{n}" if n else ""))
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if target.read_bytes() == tail:
                return target
            continue
        try:
            view = memoryview(tail)
            done = 0
            while done < len(view):
                done += os.write(fd, view[done:])
            os.fsync(fd)
        except OSError as exc:
            target.unlink(missing_ok=True)
            raise LogError(
                f"{path}: cannot save the torn tail to {target} ({exc.strerror or exc}); "
                "nothing was cut or written"
            ) from exc
        finally:
            os.close(fd)
        return target
    raise LogError(f"{path}: too many saved torn tails at offset {offset}; nothing was written")


def count_lines(fd: int, size: int) -> int:
    """Return the number of lines in the file's first `size` bytes (for an error message)."""
    lines, pos = 0, 0
    while pos < size:
        chunk = os.pread(fd, min(1 << 20, size - pos), pos)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        pos += len(chunk)
    last = os.pread(fd, 1, size - 1) if size else b"\n"
    return lines + (last != b"\n")


def last_line(fd: int, size: int) -> tuple[int, bytes] | None:
    """Return the file's last non-blank line (with its newline, if any) and where it begins.

    None if the file holds nothing but blank lines. A blank line holds only ASCII whitespace
    (what `bytes.strip` removes), as for the reader.
    Steps back in 4 KiB chunks, each read once, then reads the line in one call.
    """
    end = size
    while end > 0:  # step back over the blank bytes at the end
        start = max(0, end - _CHUNK)
        kept = len(os.pread(fd, end - start, start).rstrip())
        if kept:
            end = start + kept
            break
        end = start
    if end == 0:
        return None
    begin = end
    while begin > 0:  # step back to the newline before the last visible byte
        start = max(0, begin - _CHUNK)
        idx = os.pread(fd, begin - start, start).rfind(b"\n")
        if idx >= 0:
            begin = start + idx + 1
            break
        begin = start
    stop = end
    while stop < size:  # step on to the line's own newline (only whitespace comes before it)
        chunk = os.pread(fd, min(_CHUNK, size - stop), stop)
        idx = chunk.find(b"\n")
        if idx >= 0 or not chunk:  # (nothing read: the file shrank under us)
            stop += idx + 1
            break
        stop += len(chunk)
    return begin, os.pread(fd, stop - begin, begin)
