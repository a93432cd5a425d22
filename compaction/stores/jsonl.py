"""JSONL store: one append-only JSONL file per session in a folder, the default backend.

The files are exactly the logs `SessionLog` writes (`<folder>/<session>.jsonl`), so a session
kept here opens with `Session("<folder>/<session>.jsonl")` too, and the reverse.

Invariants: those of `compaction.stores.log_writer` (one flock per file serializes writers on
one host); a session id names one file inside the folder, never outside it (`check_session_id`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from compaction.errors import HarnessError
from compaction.events import Event, EventData
from compaction.stores.log_reader import LogReader
from compaction.stores.log_writer import SessionLog, SyncPolicy
from compaction.stores.protocol import SessionInfo, check_session_id

SUFFIX = ".jsonl"


class JsonlStore:
    """Sessions as JSONL files in one folder (created on the first append).

    Args:
        root: the folder.
        sync: fsync every append (``"always"``) or once per `transaction` (``"batch"``).
    """

    def __init__(self, root: Path | str, *, sync: SyncPolicy = "always") -> None:
        self.root = Path(root)
        self.sync: SyncPolicy = sync
        self._logs: dict[str, SessionLog] = {}
        self._readers: dict[str, LogReader] = {}
        self.bad_entries: list[str] = []
        """What the last `sessions` call skipped: one line per file that is not a session."""

    @property
    def url(self) -> str:
        """``jsonl://`` and the folder's absolute path."""
        return f"jsonl:///{self.root.resolve()}"

    def path_of(self, session: str) -> Path:
        """Return the file that holds a session."""
        return self.root / f"{check_session_id(session)}{SUFFIX}"

    def _log(self, session: str) -> SessionLog:
        log = self._logs.get(session)
        if log is None:
            log = self._logs[session] = SessionLog(self.path_of(session), sync=self.sync)
        return log

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        """Append events to the session's file in one locked write."""
        return self._log(session).append_many(list(items), expected_seq=expected_seq)

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        """Stream the session's events above seq `after` (resuming where the last read ended)."""
        path = self.path_of(session)
        if not path.exists():
            return
        reader = self._readers.get(session)
        if reader is None or reader.last_seq > after:
            reader = self._readers[session] = LogReader(path)
        for event in reader.read():
            if event.seq > after:
                yield event

    def last_seq(self, session: str) -> int:
        """Return the session's last seq, read from the file's tail under its lock."""
        if not self.path_of(session).exists():
            return 0
        return self._log(session).last_seq()

    @contextmanager
    def transaction(self, session: str) -> Iterator[None]:
        """Hold the session file's lock (`SessionLog.batch`)."""
        with self._log(session).batch():
            yield

    def sessions(self) -> list[SessionInfo]:
        """List the folder's ``*.jsonl`` files that hold at least one event.

        A file that is not a session (a name that is not a session id, or content that is not
        a log) is skipped and described in `bad_entries`.
        """
        self.bad_entries = []
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob(f"*{SUFFIX}")):
            session = path.name.removesuffix(SUFFIX)
            try:
                check_session_id(session)
                with SessionLog(path) as log:
                    last = log.last_seq()
            except HarnessError as exc:  # one stray file never hides the other sessions
                text = " ".join(str(exc).split())[:300]
                self.bad_entries.append(text if str(path) in text else f"{path}: {text}")
                continue
            if last:
                found.append(SessionInfo(session, last, os.stat(path).st_mtime))
        return found

    def release(self, session: str) -> None:
        """Close the session's file and forget how far it was read (the file was replaced)."""
        log = self._logs.pop(session, None)
        if log is not None:
            log.close()
        self._readers.pop(session, None)

    def delete(self, session: str) -> bool:
        """Delete the session's file; return whether it existed."""
        self.release(session)
        path = self.path_of(session)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed

    def close(self) -> None:
        """Close every open file."""
        for log in self._logs.values():
            log.close()
        self._logs.clear()
        self._readers.clear()
