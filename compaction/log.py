"""Append-only session log: one JSON event a line, in a file.

Invariants:
- seq runs 1..n with no gaps, in file order (`check_seq` on append and on replay).
- An append that returned is on disk: it was flushed and fsynced, unless the log was opened
  with `sync="batch"`, which fsyncs once when a `batch()` block closes (for imports).
- Several processes may append at once: each append holds an exclusive `flock` on the file while
  it reads the last seq and writes its line, so lines never interleave and seqs never repeat.
- Reading streams line by line; memory does not grow with the file.
- A crash can tear only the last line. A reader reports it (with its line number) and skips it;
  the next append truncates it away first, since no append that returned ever wrote it.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from pydantic import ValidationError

from compaction.errors import ConfigError, LogFormatError, LogIntegrityError
from compaction.events import Event, EventData, dump_event, make_event, parse_event

SyncPolicy = Literal["always", "batch"]


@dataclass
class BadLine:
    """A line that could not be read as an event."""

    line: int
    """1-based line number in the file."""
    reason: str
    """Why it was rejected."""


@dataclass
class ReadReport:
    """What reading a log met besides valid events."""

    path: str
    lines: int = 0
    """Lines read, valid or not."""
    events: int = 0
    """Valid events yielded."""
    torn_line: int | None = None
    """Number of a torn last line (a crash mid-append), skipped."""
    bad_lines: list[BadLine] = field(default_factory=list)
    """Malformed lines skipped because the caller asked to skip bad lines."""
    by_type: Counter[str] = field(default_factory=Counter)
    """Valid events counted by type."""


def error_reason(exc: Exception) -> str:
    """Describe why a line is not a valid event, in one line."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"invalid event: {loc}: {first['msg']}{more}"
    return f"not JSON: {exc}"


def parse_line(raw: bytes) -> Event:
    """Parse one log line; a newer schema version gets its own message. Raises ValueError."""
    try:
        return parse_event(raw)
    except ValidationError as exc:
        try:
            obj = json.loads(raw)
        except ValueError:
            raise exc from None
        if isinstance(obj, dict) and isinstance(obj.get("v"), int) and obj["v"] > 1:
            raise ValueError(
                f"schema version {obj['v']} is newer than this toolkit reads (1); upgrade "
                "context-harness"
            ) from None
        raise


def read_events(
    path: Path | str,
    *,
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
    check_seq: bool = True,
) -> Iterator[Event]:
    """Stream the events of a log file.

    A torn last line (no trailing newline, not valid) is reported in `report.torn_line` and
    skipped. Any other malformed line raises `LogFormatError` naming the file and line, unless
    `skip_bad_lines` is set, in which case each is recorded in `report.bad_lines`.
    """
    rep = report if report is not None else ReadReport(path=str(path))
    expected = 1
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            rep.lines = lineno
            if not raw.strip():
                continue
            try:
                event = parse_line(raw)
            except (ValidationError, ValueError) as exc:
                if not raw.endswith(b"\n") and fh.read(1) == b"":
                    rep.torn_line = lineno
                    return
                if not skip_bad_lines:
                    raise LogFormatError(path, lineno, error_reason(exc)) from None
                rep.bad_lines.append(BadLine(lineno, error_reason(exc)))
                continue
            if check_seq and event.seq != expected and not skip_bad_lines:
                raise LogIntegrityError(
                    "seq_contiguous",
                    f"line {lineno} has seq {event.seq}, expected {expected}",
                    seq=event.seq,
                    path=str(path),
                )
            expected = event.seq + 1
            rep.events += 1
            rep.by_type[event.type] += 1
            yield event


class SessionLog:
    """An append-only JSONL session log on disk.

    Args:
        path: the log file; created on first append.
        sync: ``"always"`` fsyncs every append before it returns; ``"batch"`` fsyncs when a
            `batch()` block closes (or on `close()`), for bulk imports and benchmarks.
    """

    def __init__(self, path: Path | str, *, sync: SyncPolicy = "always") -> None:
        if sync not in ("always", "batch"):
            raise ConfigError(f"sync must be 'always' or 'batch', not {sync!r}")
        self.path = Path(path)
        self.sync: SyncPolicy = sync
        self._fh: IO[bytes] | None = None
        self._known_size = -1
        self._next_seq = 1
        self._batch_depth = 0

    def _file(self) -> IO[bytes]:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a+b")  # noqa: SIM115 - kept open across appends
        return self._fh

    def close(self) -> None:
        """Flush, fsync and close the file."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def batch(self) -> Iterator[SessionLog]:
        """Hold the file lock across many appends; fsync once at the end."""
        fh = self._file()
        if self._batch_depth == 0:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        self._batch_depth += 1
        try:
            yield self
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                fh.flush()
                os.fsync(fh.fileno())
                self._known_size = -1
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def append(self, data: EventData) -> Event:
        """Append one event recording `data`; return it with its seq. Durable on return."""
        return self.append_many([data])[0]

    def append_many(self, items: list[EventData]) -> list[Event]:
        """Append several events as one write under one lock; durable on return."""
        fh = self._file()
        locked_here = self._batch_depth == 0
        if locked_here:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            seq = self._sync_tail(fh)
            events = [make_event(seq + i, d) for i, d in enumerate(items)]
            payload = "".join(dump_event(e) + "\n" for e in events).encode()
            fh.write(payload)
            if locked_here or self.sync == "always":
                fh.flush()
            if self.sync == "always":
                os.fsync(fh.fileno())
            self._next_seq = seq + len(events)
            self._known_size += len(payload)
            return events
        finally:
            if locked_here:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _sync_tail(self, fh: IO[bytes]) -> int:
        """Return the next seq, reading the file's tail if another process appended since."""
        if self._batch_depth > 0 and self._known_size >= 0:
            return self._next_seq  # we hold the lock: nobody else appended
        fh.flush()
        size = os.fstat(fh.fileno()).st_size
        if size == self._known_size:
            return self._next_seq
        last = _last_line(fh, size)
        if last is not None and not last.endswith(b"\n"):
            # A torn tail from a crashed writer: no append that returned wrote it.
            os.ftruncate(fh.fileno(), size - len(last))
            size -= len(last)
            last = _last_line(fh, size)
        next_seq = 1 if last is None else parse_line(last).seq + 1
        self._known_size = size
        self._next_seq = next_seq
        return next_seq

    def events(
        self, *, skip_bad_lines: bool = False, report: ReadReport | None = None
    ) -> Iterator[Event]:
        """Stream this log's events (see `read_events`)."""
        if self._fh is not None:
            self._fh.flush()
        if not self.path.exists():
            return iter(())
        return read_events(self.path, skip_bad_lines=skip_bad_lines, report=report)


def _last_line(fh: IO[bytes], size: int) -> bytes | None:
    """Return the file's last line (with its newline, if it has one), or None if empty."""
    if size == 0:
        return None
    chunk = 4096
    end = size
    buf = b""
    fh.seek(size - 1)
    tail_has_newline = fh.read(1) == b"\n"
    search_end = size - 1 if tail_has_newline else size
    pos = search_end
    while pos > 0:
        start = max(0, pos - chunk)
        fh.seek(start)
        buf = fh.read(pos - start) + buf
        idx = buf.rfind(b"\n")
        if idx >= 0:
            fh.seek(start + idx + 1)
            return fh.read(end - (start + idx + 1))
        pos = start
    fh.seek(0)
    return fh.read(end)
