"""Append-only session log: one JSON event a line, in a file.

Invariants:
- seq runs 1..n with no gaps, in file order (`check_seq` on append and on replay).
- An append that returned is on disk: it was flushed and fsynced, unless the log was opened
  with `sync="batch"`, which fsyncs once when a `batch()` block closes (for imports).
- Several processes may append at once: each append holds an exclusive file lock
  (`compaction.locking`: `flock`, or `msvcrt.locking` on Windows) while it reads the last seq
  and writes its line, so lines never interleave and seqs never repeat.
- Reading streams line by line; memory does not grow with the file.
- A crash can tear only the last line. A reader reports it (with its line number) and skips it;
  the next append truncates it away first, since no append that returned ever wrote it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from pydantic import ValidationError

from compaction.errors import ConfigError, LogError, LogFormatError, LogIntegrityError
from compaction.events import (
    SCHEMA_VERSION,
    Event,
    EventData,
    dump_event,
    make_event,
    parse_event,
)
from compaction.locking import lock_exclusive, unlock

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
        first = exc.errors(include_url=False)[0]
        if first["type"] == "json_invalid":
            return f"not JSON: {first['msg'].removeprefix('Invalid JSON: ')}"
        loc = ".".join(str(p) for p in first["loc"])
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"invalid event: {loc or 'line'}: {first['msg']}{more}"
    return str(exc)


def parse_line(raw: bytes) -> Event:
    """Parse one log line; raise ValueError (pydantic's ValidationError is one) if it is invalid.

    A line written by a newer toolkit (`v` above `SCHEMA_VERSION`) gets its own message, so the
    reader is told to upgrade rather than that the line is corrupt.
    """
    try:
        return parse_event(raw)
    except ValidationError as exc:
        try:
            obj = json.loads(raw)
        except ValueError:
            raise exc from None
        version = obj.get("v") if isinstance(obj, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ValueError(
                f"schema version {version} is newer than this toolkit reads ({SCHEMA_VERSION}); "
                "upgrade context-harness to read this log"
            ) from None
        raise


def read_events(
    path: Path | str,
    *,
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
    check_seq: bool = True,
) -> Iterator[Event]:
    """Stream the events of a log file, one line at a time.

    A last line with no trailing newline was torn by a crash (every append writes its newline in
    the same write, so no append that returned left one): it is reported in `report.torn_line`
    and skipped, whatever it holds. Any other malformed line raises `LogFormatError` naming the
    file and line, unless `skip_bad_lines` is set, in which case each is recorded in
    `report.bad_lines` (and seq gaps they leave are tolerated). Blank lines are ignored.

    Raises:
        LogError: the file does not exist or cannot be read.
        LogFormatError: a malformed line, unless `skip_bad_lines`.
        LogIntegrityError: seqs that do not run 1, 2, 3... (when `check_seq`).
    """
    rep = report if report is not None else ReadReport(path=str(path))
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below, after the check
    except OSError as exc:
        raise LogError(f"{path}: cannot read the log: {exc.strerror or exc}") from None
    expected = 1
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            rep.lines = lineno
            if not raw.endswith(b"\n"):
                rep.torn_line = lineno
                return
            if not raw.strip():
                continue
            try:
                event = parse_line(raw)
            except ValueError as exc:
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

    Raises:
        ConfigError: `sync` is neither ``"always"`` nor ``"batch"``.
    """

    def __init__(self, path: Path | str, *, sync: SyncPolicy = "always") -> None:
        if sync not in ("always", "batch"):
            raise ConfigError(f"sync must be 'always' or 'batch', not {sync!r}")
        self.path = Path(path)
        self.sync: SyncPolicy = sync
        self.last_append_bytes = 0
        """Bytes the last append wrote (its lines, newlines included)."""
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
        """Hold the file lock across many appends; flush and fsync once when the block closes."""
        fh = self._file()
        if self._batch_depth == 0:
            lock_exclusive(fh)
            try:
                # Another process may have appended since our last look: read the tail once
                # now; while we hold the lock nobody else can append.
                self._sync_tail(fh)
            except BaseException:
                unlock(fh)
                raise
        self._batch_depth += 1
        try:
            yield self
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                try:
                    fh.flush()
                    os.fsync(fh.fileno())
                finally:
                    unlock(fh)

    def append(self, data: EventData) -> Event:
        """Append one event recording `data`; return it with its seq. Durable on return."""
        return self.append_many([data])[0]

    def append_many(self, items: list[EventData]) -> list[Event]:
        """Append several events as one write under one lock; durable on return.

        Raises:
            LogFormatError: the log's last complete line is not a valid event, so the next seq
                is unknown.
        """
        fh = self._file()
        in_batch = self._batch_depth > 0
        if not in_batch:
            lock_exclusive(fh)
        try:
            seq = self._next_seq if in_batch else self._sync_tail(fh)
            events = [make_event(seq + i, d) for i, d in enumerate(items)]
            payload = "".join([dump_event(e) + "\n" for e in events]).encode()
            fh.write(payload)
            if not in_batch:
                fh.flush()
                if self.sync == "always":
                    os.fsync(fh.fileno())
            elif self.sync == "always":
                fh.flush()
                os.fsync(fh.fileno())
            self._next_seq = seq + len(events)
            self._known_size += len(payload)
            self.last_append_bytes = len(payload)
            return events
        finally:
            if not in_batch:
                unlock(fh)

    def _sync_tail(self, fh: IO[bytes]) -> int:
        """Return the next seq, reading the file's tail if another process appended since.

        Called with the lock held. A torn tail (a last line with no newline) was left by a
        writer that crashed mid-append; no append that returned wrote it, so it is cut off.
        """
        fh.flush()
        size = os.fstat(fh.fileno()).st_size
        if size == self._known_size:
            return self._next_seq
        last = _last_line(fh, size)
        if last is not None and not last.endswith(b"\n"):
            os.ftruncate(fh.fileno(), size - len(last))
            size -= len(last)
            last = _last_line(fh, size)
        try:
            next_seq = 1 if last is None else parse_line(last).seq + 1
        except ValueError as exc:
            raise LogFormatError(
                self.path, _count_lines(fh), f"last line: {error_reason(exc)}"
            ) from None
        self._known_size = size
        self._next_seq = next_seq
        return next_seq

    def events(
        self, *, skip_bad_lines: bool = False, report: ReadReport | None = None
    ) -> Iterator[Event]:
        """Stream this log's events (see `read_events`); nothing when the file does not exist."""
        if self._fh is not None:
            self._fh.flush()
        if not self.path.exists():
            return iter(())
        return read_events(self.path, skip_bad_lines=skip_bad_lines, report=report)


def _count_lines(fh: IO[bytes]) -> int:
    """Return the number of lines in the file (for an error message only)."""
    fh.seek(0)
    return sum(1 for _ in fh)


def _last_line(fh: IO[bytes], size: int) -> bytes | None:
    """Return the file's last line (with its newline, if it has one), or None if empty."""
    if size == 0:
        return None
    chunk = 4096
    buf = b""
    fh.seek(size - 1)
    tail_has_newline = fh.read(1) == b"\n"
    pos = size - 1 if tail_has_newline else size
    while pos > 0:
        start = max(0, pos - chunk)
        fh.seek(start)
        buf = fh.read(pos - start) + buf
        idx = buf.rfind(b"\n")
        if idx >= 0:
            fh.seek(start + idx + 1)
            return fh.read(size - (start + idx + 1))
        pos = start
    fh.seek(0)
    return fh.read(size)
