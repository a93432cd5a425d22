"""Importing agent transcripts (Claude Code, Codex, Gemini CLI, OpenAI messages, SWE-agent).

`load(path, format="auto")` streams the session events a transcript holds, seqs from 1, ready
to be written to a new log; the `ImportReport` passed in says what was read, written and
skipped (a stream without one keeps its counts to itself). `import_transcript` writes them to a
new log file.

One module per format (`claude_code`, `codex`, `gemini`, `openai_messages`, `swe_agent`) drives
the shared `EventBuilder` of `base`; `formats` is the table of them (a new format is one entry
there); `detect` tells the format; `records` reads messy JSON lines;
`session_replay` appends an import to a live session, compacting whenever the context is due;
`import_report` counts what an import met.

Invariants:
- A real user request, and only that, starts a `turn/start`; a tool result that an agent stores
  as a user record is a `tool` message.
- Every tool call written is paired with exactly one `tool` message (a placeholder when the
  transcript holds no result), so `compaction.check_log` passes on every import.
- A recorded todo list is written as the agent wrote it, even where today's rules would reject
  it; such lists are counted in `ImportReport.rule_breaking_lists`.
- A transcript that imports to zero events is an error (`TranscriptError`), never an empty log.
- Import survives messy files (glued objects, broken or truncated lines, unknown records),
  counting what it skips; with ``strict=True`` the first such line raises `TranscriptError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from compaction.errors import ConfigError, TranscriptError
from compaction.events import Event
from compaction.importers._detect import detect_format
from compaction.importers._formats import (
    FORMAT_CHOICES,
    LABELS,
    FormatChoice,
    importer,
)
from compaction.importers._import_report import ImportReport
from compaction.importers._records import MAX_LINE_BYTES, TOO_LONG
from compaction.importers._session_replay import ReplayReport, replay
from compaction.stores import (
    EventStore,
    open_session_store,
    session_file,
    where_of,
    write_new_session,
)
from compaction.tokens import Tokenizer, get_tokenizer

_BATCH = 512
"""Events written per locked append while importing."""


def load(
    path: Path | str,
    format: FormatChoice = "auto",
    *,
    strict: bool = False,
    report: ImportReport | None = None,
    tokenizer: Tokenizer | None = None,
) -> Iterator[Event]:
    """Stream the session events of the transcript at `path`, seqs from 1.

    Args:
        path: the transcript file.
        format: one of `FORMAT_CHOICES`; ``"auto"`` tells it from the first records.
        strict: raise `TranscriptError` at the first broken line or unknown record instead of
            counting and skipping it.
        report: filled as the events stream (records read, events, skips, tokens).
        tokenizer: counts tokens for the report and recorded checkpoints (default o200k_base).

    Raises:
        TranscriptError: the file cannot be read as that format (named with file and line).
        ConfigError: `format` is not one of `FORMAT_CHOICES`.
    """
    path = Path(path)
    if format not in FORMAT_CHOICES:
        raise ConfigError(f"format must be one of {', '.join(FORMAT_CHOICES)}, not {format!r}")
    if not path.is_file():
        raise TranscriptError(path, None, "no such file")
    rep = report if report is not None else ImportReport(path=str(path))
    rep.format = detect_format(path) if format == "auto" else format
    return importer(rep.format).load(path, rep, tokenizer or get_tokenizer(), strict=strict)


def import_transcript(
    path: Path | str,
    out: Path | str,
    format: FormatChoice = "auto",
    *,
    session: str | None = None,
    strict: bool = False,
    overwrite: bool = False,
    tokenizer: Tokenizer | None = None,
    on_progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import the transcript at `path` into a new session at `out`; return the report.

    `out` is a JSONL log path, or a store URL with `session` (see
    `compaction.stores.open_store`); the import is written by `import_to_store`, atomically.

    Raises:
        TranscriptError: as `import_to_store`.
        ConfigError: a store URL without `session`, or a path with one.
    """
    store, name = open_session_store(out, session, sync="batch")
    try:
        return import_to_store(
            path,
            store,
            name,
            format,
            strict=strict,
            overwrite=overwrite,
            tokenizer=tokenizer,
            on_progress=on_progress,
        )
    finally:
        store.close()


def import_to_store(
    path: Path | str,
    store: EventStore,
    session: str,
    format: FormatChoice = "auto",
    *,
    strict: bool = False,
    overwrite: bool = False,
    tokenizer: Tokenizer | None = None,
    on_progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import the transcript at `path` into a new session of `store`; return the report.

    The one import writer, atomic on every backend (`write_new_session`): a JSONL log is
    written beside its file under a temporary name and renamed into place once complete; a SQL
    session is written in one transaction. A failed (say, strict) import leaves no
    half-written session, and a replaced one (`overwrite`) as it was.

    `on_progress`, when given, is called with the report after each batch of events read
    (``report.lines`` tells how far the file has been read).

    Raises:
        TranscriptError: as `load`; the output would replace the transcript; the session
            already holds events (or its file bytes) and `overwrite` is false; or the
            transcript imports to zero events (nothing is written).
    """
    _refuse_existing(path, store, session, overwrite)
    report = ImportReport(path=str(path))
    events = load(path, format, strict=strict, report=report, tokenizer=tokenizer)

    def nonempty(written: int) -> None:
        if written == 0:
            raise _empty_import(path, report)

    write_new_session(
        store,
        session,
        _progress(events, report, on_progress),
        replace=overwrite,
        before_commit=nonempty,
    )
    return report


def _empty_import(path: Path | str, report: ImportReport) -> TranscriptError:
    """Say why an import wrote nothing: the lines over the size limit, else no session events."""
    too_long = [bad.line for bad in report.broken_lines if bad.reason.startswith(TOO_LONG)]
    if too_long:
        lines = ", ".join(map(str, too_long[:5])) + (", ..." if len(too_long) > 5 else "")
        return TranscriptError(
            path,
            None,
            f"every record with session events was skipped: {len(too_long)} line(s) over the "
            f"size limit of {MAX_LINE_BYTES} bytes (line {lines}), read as {report.format}",
            fix="Write the transcript as JSONL with one record a line, each under the limit",
        )
    return TranscriptError(
        path,
        None,
        f"the transcript holds no session events when read as {report.format}",
        fix="Check the file, or name its format (harness import FORMAT FILE)",
    )


def _refuse_existing(path: Path | str, store: EventStore, session: str, overwrite: bool) -> None:
    """Refuse to write over the transcript, or (unless `overwrite`) over a session with events.

    A file-backed session counts as existing when its file holds any byte, log or not.
    """
    where = where_of(store, session)
    file = session_file(store, session)
    if file is not None and file.resolve() == Path(path).resolve():
        raise TranscriptError(where, None, "the output log would replace the transcript itself")
    if overwrite:
        return
    if file is not None and file.exists() and file.stat().st_size > 0:
        raise TranscriptError(
            where, None, "the output log already exists", fix="Choose a new path, or pass --force"
        )
    if file is None and store.last_seq(session):
        raise TranscriptError(
            where,
            None,
            "the output session already exists",
            fix="Choose a new --session, or pass --force",
        )


def _progress(
    events: Iterator[Event],
    report: ImportReport,
    on_progress: Callable[[ImportReport], None] | None,
) -> Iterator[Event]:
    """Pass `events` on, calling `on_progress` after every `_BATCH` of them."""
    for n, event in enumerate(events, start=1):
        yield event
        if on_progress is not None and n % _BATCH == 0:
            on_progress(report)


__all__ = [
    "FORMAT_CHOICES",
    "LABELS",
    "ImportReport",
    "ReplayReport",
    "detect_format",
    "import_to_store",
    "load",
    "replay",
]
