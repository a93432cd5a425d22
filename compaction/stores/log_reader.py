"""Reading a session log: one streaming reader for the JSONL file, line by line.

Invariants:
- seq runs 1..n with no gaps, in file order (`check_next_seq`, on every read).
- Reading streams line by line (`LogReader`, the one reader); memory does not grow with the file.
- A line still being written (no newline yet, not a complete event) is not read, and never read
  as two lines; blank lines are skipped and still counted, so refusals name the right line.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from compaction.errors import LogError, LogFormatError
from compaction.events import (
    SCHEMA_VERSION,
    Event,
    parse_event,
)
from compaction.invariants import check_next_seq

LINE_START: Final = b'{"v":'
"""How every line this toolkit writes begins (`dump_event`); a torn tail begins the same way."""

_CHUNK: Final = 4096
"""Bytes read at a time when stepping back through a log's tail."""


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
    """Number of a last line that is not (yet) a whole event: torn by a crash, or still being
    written by another process. Skipped; the next read looks at it again."""
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


def parse_line(raw: bytes | str) -> Event:
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


class LogReader:
    """The one reader of a log file: streams its events, resuming where the last read stopped.

    `read_events`, `Session.refresh`, `SessionLog.events` and `harness log` all read through it,
    and every event it yields has passed `check_next_seq` against the one before.

    A last line without its newline is a whole event when it parses (an append whose newline has
    not landed yet, or never will): it is yielded, and the newline that follows later is taken
    as its end. A last line that does not parse is reported in `report.torn_line` and left for a
    later read: it is being written, or was torn by a crash. Blank lines are ignored.

    Args:
        path: the log file.
        skip_bad_lines: record malformed lines in `report.bad_lines` and go on (seqs may then
            skip the numbers the bad lines held, but must still grow) instead of raising.
        report: where to count lines, events and problems (a new one by default).
        check_seq: check that seqs run 1, 2, 3... (off only for tools that inspect damage).
    """

    def __init__(
        self,
        path: Path | str,
        *,
        skip_bad_lines: bool = False,
        report: ReadReport | None = None,
        check_seq: bool = True,
    ) -> None:
        self.path = Path(path)
        self.skip_bad_lines = skip_bad_lines
        self.report = report if report is not None else ReadReport(path=str(path))
        self.check_seq = check_seq
        self.offset = 0
        """Bytes consumed so far: the next read starts here."""
        self.line = 0
        """Lines consumed so far."""
        self.last_seq = 0
        """Seq of the last event yielded."""
        self._open_line = False
        """The last line consumed was a whole event whose newline had not landed yet."""

    def read(self) -> Iterator[Event]:
        """Yield the events after `offset`, up to the end of the file.

        Raises:
            LogError: the file cannot be read.
            LogFormatError: a malformed complete line, unless `skip_bad_lines`.
            LogIntegrityError: a seq that does not follow the one before.
        """
        self.report.torn_line = None
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise LogError(f"{self.path}: cannot read the log: {exc.strerror or exc}") from None
        with fh:
            fh.seek(self.offset)
            for raw in fh:
                if self._open_line and raw.startswith(b"\n"):
                    # The newline that ends the event read before it was still unwritten.
                    self._open_line = False
                    self.offset += 1
                    raw = raw[1:]
                    if not raw:
                        continue
                event = self._consume(raw)
                if event is not None:
                    yield event
                elif not raw.endswith(b"\n"):
                    # All there is of a line still being written: stop, or the rest of it,
                    # landing while we read, would be taken for a line of its own.
                    return

    def _consume(self, raw: bytes) -> Event | None:
        """Take one line (or an unterminated last line); return its event, if it holds one."""
        complete = raw.endswith(b"\n")
        if not raw.strip():
            if complete:
                self._advance(raw, complete)
            return None
        try:
            event = parse_line(raw)
        except ValueError as exc:
            if not complete:
                self.report.torn_line = self.report.lines = self.line + 1
                return None
            self._advance(raw, complete)
            if not self.skip_bad_lines:
                raise LogFormatError(self.path, self.line, error_reason(exc)) from None
            self.report.bad_lines.append(BadLine(self.line, error_reason(exc)))
            return None
        self.accept(event, where=f"line {self.line + 1}")
        self._advance(raw, complete)
        return event

    def _advance(self, raw: bytes, complete: bool) -> None:
        self.offset += len(raw)
        self.line += 1
        self.report.lines = self.line
        self._open_line = not complete

    def accept(self, event: Event, *, where: str) -> None:
        """Check `event`'s seq against the last one and count it (also for events appended here).

        Raises:
            LogIntegrityError: the seq does not follow the last one.
        """
        if self.check_seq:
            check_next_seq(
                self.last_seq,
                event.seq,
                allow_gaps=self.skip_bad_lines,
                where=where,
                path=str(self.path),
            )
        self.last_seq = event.seq
        self.report.events += 1
        self.report.by_type[event.type] += 1

    def skip_appended(self, events: list[Event], start: int, end: int) -> bool:
        """Take events this process appended at bytes `start`..`end` as read, without reading.

        Only when the reader stopped exactly where the append began (nothing unread before
        them); returns whether it did.
        """
        if start != self.offset:
            return False
        for e in events:
            self.accept(e, where=f"line {self.line + 1}")
            self.line += 1
        self.report.lines = self.line
        self.report.torn_line = None
        self.offset = end
        self._open_line = False
        return True


def read_events(
    path: Path | str,
    *,
    skip_bad_lines: bool = False,
    report: ReadReport | None = None,
    check_seq: bool = True,
) -> Iterator[Event]:
    """Stream the events of a log file, one line at a time (through `LogReader`).

    A valid last event without its newline is yielded; a last line that does not parse is
    reported in `report.torn_line` and skipped. Any other malformed line raises
    `LogFormatError` naming the file and line, unless `skip_bad_lines` is set, in which case
    each is recorded in `report.bad_lines` (and seq gaps they leave are tolerated).

    Raises:
        LogError: the file does not exist or cannot be read.
        LogFormatError: a malformed line, unless `skip_bad_lines`.
        LogIntegrityError: seqs that do not run 1, 2, 3... (when `check_seq`).
    """
    reader = LogReader(path, skip_bad_lines=skip_bad_lines, report=report, check_seq=check_seq)
    return reader.read()
