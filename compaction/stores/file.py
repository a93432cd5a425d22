"""One JSONL log file as an `EventStore` that holds one session: the seam's file door.

``Session("s.jsonl")`` runs on this store, as ``Session.open("sqlite:///s.db", session=...)``
runs on a SQLite one: the session reads and appends through the protocol either way. The bytes
on disk are exactly the log `SessionLog` writes and `LogReader` reads; this class only puts the
protocol in front of them.

Invariants:
- those of `compaction.stores.log_writer` and `compaction.stores.log_reader` (seqs 1..n, no
  byte destroyed or written twice, one flock per file, streaming reads);
- the store holds exactly one session, named by the file's stem (``s.jsonl`` holds ``s``);
  any other session id is refused with `ConfigError`, never mapped to another file;
- one `LogReader` follows the file, so a session reads only what was appended since its last
  read; an append it made itself, with nothing unread before it, is taken as read unread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from compaction.errors import ConfigError
from compaction.events import CheckpointRecorded, Event, EventData
from compaction.stores.log_reader import LogReader, ReadReport
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.protocol import SessionInfo, check_session_id


class FileStore:
    """A JSONL log file, seen as a store of one session.

    Args:
        path: the log file (created on the first append).
        sync: fsync every append (``"always"``) or once per `transaction` (``"batch"``).
        skip_bad_lines: skip and count malformed lines (in `report`) instead of raising.
        report: where reads are counted (a new one by default).

    Raises:
        ConfigError: `sync` is neither ``"always"`` nor ``"batch"``.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        sync: SyncPolicy = "always",
        skip_bad_lines: bool = False,
        report: ReadReport | None = None,
    ) -> None:
        self.path = Path(path)
        self.log = SessionLog(self.path, sync=sync)
        """The writer of the file."""
        self.session = self.path.name.removesuffix(".jsonl") or self.path.name
        """The one session's id: the file's name without ``.jsonl``."""
        self.skip_bad_lines = skip_bad_lines
        self.report = report if report is not None else ReadReport(path=str(path))
        """What reading the file met: lines, events, bad lines, a torn last line."""
        self._reader = self._new_reader()

    def _new_reader(self) -> LogReader:
        return LogReader(self.path, skip_bad_lines=self.skip_bad_lines, report=self.report)

    @property
    def read_seq(self) -> int:
        """Seq of the last event the store's reader took (read, or appended here unread)."""
        return self._reader.last_seq

    @property
    def url(self) -> str:
        """The file's path, as given: `open_store` opens it again."""
        return str(self.path)

    def _check(self, session: str) -> None:
        if session != self.session:
            check_session_id(session)
            raise ConfigError(
                f"{self.path}: a JSONL file holds one session ({self.session!r}), not "
                f"{session!r}; use a store URL (jsonl:///folder, sqlite:///file.db) for several"
            )

    def path_of(self, session: str) -> Path:
        """Return the file that holds the session (the store's file).

        Raises:
            ConfigError: `session` is not this store's session.
        """
        self._check(session)
        return self.path

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events to the file in one locked write (see `SessionLog.append_many`)."""
        self._check(session)
        events = self.log.append_many(list(items), expected_seq=expected_seq)
        if events:
            start = self.log.last_append_start
            self._reader.skip_appended(events, start, start + self.log.last_append_bytes)
        return events

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        """Stream the events above seq `after`, resuming where the last read ended.

        A read from further back than the last one re-reads the file from its start with a
        reader of its own, leaving `report` as it was.
        """
        self._check(session)
        if not self.path.exists():
            return iter(())
        reader = self._reader
        if reader.last_seq > after:
            reader = LogReader(self.path, skip_bad_lines=self.skip_bad_lines)
        return (event for event in reader.read() if event.seq > after)

    def checkpoint_horizon(self) -> int:
        """Return the largest ``last_seq`` of the file's checkpoint records (0 when none).

        Scans the raw lines: only a line whose envelope names the checkpoint type is parsed, so
        the scan costs a read of the file. A line that does not parse is passed over (the fold
        checks the horizon against the checkpoints it applies).
        """
        if not self.path.exists():
            return 0
        horizon = 0
        with self.path.open("rb") as fh:
            for line in fh:
                if _CHECKPOINT_MARK in line[:_ENVELOPE_BYTES]:
                    horizon = max(horizon, _last_seq(line))
        return horizon

    def last_seq(self, session: str) -> int:
        """Return the last seq, read from the file's tail under its lock (0 when absent)."""
        self._check(session)
        if not self.path.exists():
            return 0
        return self.log.last_seq()

    @contextmanager
    def transaction(self, session: str) -> Iterator[None]:
        """Hold the file's lock (`SessionLog.batch`): appends inside stay, even on an error."""
        self._check(session)
        with self.log.batch():
            yield

    def sessions(self) -> list[SessionInfo]:
        """List the one session, when the file holds at least one event."""
        last = self.last_seq(self.session)
        if not last:
            return []
        return [SessionInfo(self.session, last, os.stat(self.path).st_mtime)]

    def release(self, session: str) -> None:
        """Close the file and forget how far it was read: the next use opens it anew.

        For a writer that replaces the file (`write_new_session`).
        """
        self._check(session)
        self.log.close()
        self.log = SessionLog(self.path, sync=self.log.sync)
        self._reader = self._new_reader()

    def delete(self, session: str) -> bool:
        """Delete the file; return whether it existed."""
        self.release(session)
        existed = self.path.exists()
        self.path.unlink(missing_ok=True)
        return existed

    def close(self) -> None:
        """Fsync and close the file."""
        self.log.close()


_CHECKPOINT_MARK = b'"type":"' + CheckpointRecorded.model_fields["type"].default.encode() + b'"'
"""How a checkpoint record's envelope names its type (the writer's compact JSON)."""
_ENVELOPE_BYTES = 64
"""The envelope (``{"v":1,"seq":N,"type":...``) lies within a line's first bytes."""


def _last_seq(line: bytes) -> int:
    """Return a checkpoint line's ``data.last_seq``, or 0 when the line does not parse."""
    try:
        value = json.loads(line)["data"]["last_seq"]
    except (ValueError, KeyError, TypeError):
        return 0
    return value if isinstance(value, int) else 0
