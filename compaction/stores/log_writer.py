"""Writing a session log: the append-only JSONL file, one JSON event a line.

Invariants:
- seq runs 1..n with no gaps, in file order (`check_next_seq`, on append and on every read).
- No byte a log holds is destroyed or written twice:
  - an append writes its lines with unbuffered writes; if one fails (disk full, file-size
    limit, I/O error) the file is truncated back to its size before the append and `LogError`
    is raised, so a retry appends the event once;
  - a valid last event whose newline never landed is a complete event: the next append
    finishes its line and follows it;
  - a last line that is not a valid event is cut only when it can be a torn append (it starts
    like a line this toolkit writes, is shorter than `MAX_EVENT_BYTES`, and the file before it
    is a valid log); its bytes are first saved beside the log as ``LOG.torn-<offset>``
    (`compaction.stores._log_tail`) and the cut is reported (`SessionLog.repairs`, and a
    warning on the ``compaction.log`` logger);
  - anything else (a file that is not a log) is refused with `LogFormatError`, untouched;
  - "last line" means the last line that is not blank: blank lines are skipped by appends as
    by readers (`compaction.stores._log_tail.last_line`), and a blank last line without its
    newline gets one first.
- An append that returned is on disk: it was written and fsynced, unless the log was opened
  with `sync="batch"`, which fsyncs once when a `batch()` block closes (for imports).
- Several processes may append at once: each append holds an exclusive file lock
  (`compaction.stores._locking`: `flock`, or `msvcrt.locking` on Windows) while it reads the last
  seq and writes its lines, so lines never interleave and seqs never repeat.
  An append may name the last seq it expects (`expected_seq`); if another writer moved the log
  on, nothing is written and `SeqConflictError` says so (optimistic concurrency).
- Reading streams line by line (`LogReader`, the one reader); memory does not grow with the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from compaction.contract import MAX_EVENT_BYTES
from compaction.errors import ConfigError, LogError, LogFormatError, SeqConflictError
from compaction.events import (
    Event,
    EventData,
    dump_event_bytes,
    make_event,
)
from compaction.stores._locking import lock_exclusive, unlock
from compaction.stores._log_tail import (
    TailRepair,
    count_lines,
    last_line,
    not_torn_append,
    save_beside,
)
from compaction.stores.log_reader import (
    LogReader,
    ReadReport,
    error_reason,
    parse_line,
    read_events,
)

SyncPolicy = Literal["always", "batch"]
LOGGER = "compaction.log"
"""The logger a tail repair is reported on (a warning)."""


def event_line(event: Event) -> bytes:
    """Return the event's log line: `dump_event_bytes` and a line break."""
    return dump_event_bytes(event) + b"\n"


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
        self.last_append_start = 0
        """Offset where the last append's bytes began."""
        self.repairs: list[TailRepair] = []
        """Torn tails this handle cut, each saved beside the log first."""
        self._fd: int | None = None
        self._known_size = -1
        self._next_seq = 1
        self._open_line = False
        """The file ends with a whole event whose newline is missing: the next append adds it."""
        self._batch_depth = 0

    def _file(self) -> int:
        if self._fd is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:
                raise LogError(f"{self.path}: cannot open the log: {exc.strerror or exc}") from None
        return self._fd

    def close(self) -> None:
        """Fsync and close the file."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def batch(self) -> Iterator[SessionLog]:
        """Hold the file lock across many appends; fsync once when the block closes.

        Inside the block nobody else can append, so a read-then-append (compaction) sees the
        log as it is written.
        """
        fd = self._file()
        if self._batch_depth == 0:
            lock_exclusive(fd)
            try:
                # Another process may have appended since our last look: read the tail once
                # now; while we hold the lock nobody else can append.
                self._sync_tail(fd)
            except BaseException:
                unlock(fd)
                raise
        self._batch_depth += 1
        try:
            yield self
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                try:
                    os.fsync(fd)
                finally:
                    unlock(fd)

    def last_seq(self) -> int:
        """Return the seq of the log's last event (0 for an empty log), under the lock."""
        if self._batch_depth:
            return self._next_seq - 1
        fd = self._file()
        lock_exclusive(fd)
        try:
            return self._sync_tail(fd) - 1
        finally:
            unlock(fd)

    def append(self, data: EventData, *, expected_seq: int | None = None) -> Event:
        """Append one event recording `data`; return it with its seq. Durable on return."""
        return self.append_many([data], expected_seq=expected_seq)[0]

    def append_many(
        self, items: list[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append several events as one write under one lock; durable on return.

        Args:
            items: the payloads, appended in order with consecutive seqs.
            expected_seq: the last seq the caller has read; when given and the log's last seq
                is another, nothing is written.

        Raises:
            SeqConflictError: `expected_seq` is not the log's last seq.
            LogFormatError: the file's last line is neither an event nor a torn append (not a
                log, or damaged); the file is left untouched.
            LogError: the write failed (disk full, file too large, I/O error); the file was put
                back as it was, so the same append can be retried.
        """
        fd = self._file()
        in_batch = self._batch_depth > 0
        if not in_batch:
            lock_exclusive(fd)
        try:
            seq = self._next_seq if in_batch else self._sync_tail(fd)
            if expected_seq is not None and expected_seq != seq - 1:
                raise SeqConflictError(str(self.path), expected_seq, seq - 1)
            events = [make_event(seq + i, d) for i, d in enumerate(items)]
            lines = [event_line(e) for e in events]
            for e, raw in zip(events, lines, strict=True):
                if len(raw) > MAX_EVENT_BYTES:
                    raise LogError(
                        f"{self.path}: event seq {e.seq} ({e.type}) is {len(raw)} bytes, above "
                        f"the {MAX_EVENT_BYTES}-byte limit of one log line; nothing was written"
                    )
            payload = (b"\n" if self._open_line else b"") + b"".join(lines)
            start = self._known_size
            self._write(fd, payload, fsync=self.sync == "always")
            self._open_line = False
            self._next_seq = seq + len(events)
            self._known_size = start + len(payload)
            self.last_append_start = start
            self.last_append_bytes = len(payload)
            return events
        finally:
            if not in_batch:
                unlock(fd)

    def _write(self, fd: int, payload: bytes, *, fsync: bool) -> None:
        """Write all of `payload` at the end; on any failure, cut the file back and raise."""
        before = self._known_size
        view = memoryview(payload)
        done = 0
        try:
            while done < len(view):
                done += os.write(fd, view[done:])
            if fsync:
                os.fsync(fd)
        except OSError as exc:
            self._roll_back(fd, before, exc)

    def _roll_back(self, fd: int, size: int, exc: OSError) -> None:
        cause = exc.strerror or str(exc)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as again:
            self._known_size = -1
            raise LogError(
                f"{self.path}: append failed ({cause}) and the file could not be cut back to "
                f"{size} bytes ({again.strerror or again}); the next append will treat the "
                "partial line as a torn tail"
            ) from exc
        raise LogError(
            f"{self.path}: append failed: {cause}; the log is unchanged ({size} bytes), "
            "so the append can be retried once the cause is fixed"
        ) from exc

    def _sync_tail(self, fd: int) -> int:
        """Return the next seq, reading the file's tail if another process appended since.

        Called with the lock held. See the module's invariants for what a last line without its
        newline is taken to be. Blank lines at the end are skipped, as readers skip them.
        """
        size = os.fstat(fd).st_size
        if size == self._known_size:
            return self._next_seq
        found = last_line(fd, size)
        if found is not None and not found[1].endswith(b"\n"):
            begin, last = found
            try:
                next_seq = parse_line(last).seq + 1
            except ValueError as exc:
                self._cut_torn_tail(fd, size, last, error_reason(exc))
                size = begin
                found = last_line(fd, size)
            else:
                self._known_size, self._next_seq, self._open_line = size, next_seq, True
                return next_seq
        next_seq = 1
        if found is not None:
            begin, last = found
            try:
                next_seq = parse_line(last).seq + 1
            except ValueError as exc:
                raise LogFormatError(
                    self.path, count_lines(fd, begin) + 1, f"last line: {error_reason(exc)}"
                ) from None
        self._known_size = size
        self._next_seq = next_seq
        # A blank last line may lack its newline ("  "): the next append writes one first.
        self._open_line = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        return next_seq

    def _cut_torn_tail(self, fd: int, size: int, tail: bytes, reason: str) -> None:
        """Save a torn tail beside the log, then cut it; refuse if it cannot be a torn append."""
        offset = size - len(tail)
        why = not_torn_append(tail, MAX_EVENT_BYTES)
        if why is None:
            why = self._prefix_problem()
        if why is not None:
            raise LogFormatError(
                self.path,
                count_lines(fd, size),
                f"last line ({len(tail)} bytes, no newline) is not an event ({reason}) and "
                f"cannot be a torn append: {why}. Nothing was written and the file is "
                "unchanged; is this a session log?",
            )
        saved = save_beside(self.path, offset, tail)
        os.ftruncate(fd, offset)
        os.fsync(fd)
        repair = TailRepair(offset=offset, length=len(tail), saved_to=saved)
        self.repairs.append(repair)
        import logging  # loaded only to report a repair: a clean start imports no logging

        logging.getLogger(LOGGER).warning(repair.describe(self.path))

    def _prefix_problem(self) -> str | None:
        """Return why the file before its torn last line is not a valid log, or None if it is.

        The reader reports an unterminated last line that does not parse (the torn tail)
        instead of raising, so reading the whole file checks exactly the lines before it.
        """
        reader = LogReader(self.path)
        try:
            for _ in reader.read():
                pass
        except LogError as exc:
            return f"the file before it is not a valid log ({exc})"
        return None

    def events(
        self, *, skip_bad_lines: bool = False, report: ReadReport | None = None
    ) -> Iterator[Event]:
        """Stream this log's events (see `read_events`); nothing when the file does not exist."""
        if not self.path.exists():
            return iter(())
        return read_events(self.path, skip_bad_lines=skip_bad_lines, report=report)
