r"""Reading the raw JSON records of a transcript, surviving the mess real files hold.

JSONL: one object a line, except where a writer glued two objects on one line (split with
`json.JSONDecoder.raw_decode`), a line is not JSON (reported with its number and skipped), or the
last line was cut off (reported as torn). A JSON array of records is read item by item, so a
truncated array still yields every item before the cut.

A lone UTF-16 surrogate (``"\ud83d"``, half an emoji cut off by a truncating tool) decodes to a
Python string that cannot be written back as UTF-8; each is replaced by U+FFFD and the record is
counted.

Limits: a JSONL line longer than `MAX_LINE_BYTES` is counted and skipped without being read
into memory (it is skipped in 1 MiB chunks); a value nested deeper than `MAX_DEPTH` is counted
and skipped; a whole-document file (a JSON array, a ``.traj``) larger than `MAX_DOCUMENT_BYTES`
is refused before it is read.

Invariants: memory is bounded by `MAX_LINE_BYTES` (or `MAX_DOCUMENT_BYTES`), not the file; with
``strict=True`` the first line that would be skipped raises `TranscriptError` naming it instead;
every string yielded can be encoded as UTF-8.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from compaction.errors import TranscriptError
from compaction.importers._import_report import ImportReport
from compaction.stores.log_reader import BadLine

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest JSONL line read; a longer one is counted and skipped unread."""
TOO_LONG = "line longer than "
"""How the reason a line over `MAX_LINE_BYTES` is skipped with begins (an import that found
nothing else says so, rather than "no session events")."""
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest file read whole (one JSON array or object); a larger one is refused."""
MAX_DEPTH = 100
"""Deepest nesting of arrays and objects in one record."""
_SKIP_CHUNK = 1024 * 1024

_DECODER = json.JSONDecoder()
_STRICT_FIX = "Fix or remove that line, or import without --strict to count and skip it"
_WS = " \t\r\n"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
REPAIRED = "record with lone surrogates (each replaced by U+FFFD)"


def repair_surrogates(value: object) -> object:
    """Return `value` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [repair_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {repair_surrogates(k): repair_surrogates(v) for k, v in value.items()}
    return value


def _clean(raw: str, value: object, report: ImportReport) -> object:
    if not _SURROGATE_ESCAPE.search(raw):
        return value
    repaired = repair_surrogates(value)
    if repaired != value:
        report.handled[REPAIRED] += 1
    return repaired


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace")


def too_deep(value: object, limit: int | None = None) -> bool:
    """Tell whether `value` nests arrays and objects deeper than `limit` (default `MAX_DEPTH`)."""
    limit = MAX_DEPTH if limit is None else limit
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


def _split(text: str) -> tuple[list[Any], str | None]:
    """Decode every JSON value on one line; return them and why the rest failed, if it did."""
    values: list[Any] = []
    pos = len(text) - len(text.lstrip(_WS))
    end = len(text.rstrip(_WS))
    while pos < end:
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            return values, f"not JSON at column {exc.colno}: {exc.msg}"
        except RecursionError:
            return values, DEEP
        if too_deep(value):
            return values, DEEP
        values.append(value)
        while pos < end and text[pos] in _WS:
            pos += 1
    return values, None


def _bad(path: Path, report: ImportReport, lineno: int, reason: str, strict: bool) -> None:
    if strict:
        raise TranscriptError(path, lineno, reason, fix=_STRICT_FIX)
    report.broken_lines.append(BadLine(lineno, reason))


def iter_jsonl(path: Path, report: ImportReport, *, strict: bool) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, JSON value)`` for every value of a JSONL file."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(_lines(fh, MAX_LINE_BYTES), start=1):
            report.lines = lineno
            if raw is None:
                reason = f"{TOO_LONG}{MAX_LINE_BYTES} bytes (skipped unread)"
                _bad(path, report, lineno, reason, strict)
                continue
            text = _decode(raw)
            if not text.strip():
                continue
            values, error = _split(text)
            if len(values) > 1:
                report.glued_lines.append(lineno)
            for value in values:
                report.records += 1
                yield lineno, _clean(text, value, report)
            if error is None:
                continue
            if not raw.endswith(b"\n") and fh.read(1) == b"":
                if strict:
                    raise TranscriptError(path, lineno, f"truncated last line ({error})")
                report.torn_line = lineno
                return
            _bad(path, report, lineno, error, strict)


def _lines(fh: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Yield each line of `fh`, or None for a line longer than `limit` (skipped in chunks).

    A line is read in chunks of at most 1 MiB, so an over-long one costs at most `limit` bytes
    of memory, never its own size.
    """
    while True:
        buf = bytearray()
        while True:
            chunk = fh.readline(_SKIP_CHUNK)
            buf += chunk
            if not chunk or chunk.endswith(b"\n") or len(buf) > limit + 1:
                break
        if not buf:
            return
        if len(buf) <= limit or (len(buf) == limit + 1 and buf.endswith(b"\n")):
            yield bytes(buf)
            continue
        del buf
        while chunk and not chunk.endswith(b"\n"):
            chunk = fh.readline(_SKIP_CHUNK)
        yield None


def read_document_bytes(path: Path) -> bytes:
    """Read a whole-document transcript, refusing one above `MAX_DOCUMENT_BYTES`.

    Raises:
        TranscriptError: the file is too large to read whole.
    """
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise TranscriptError(
            path,
            None,
            f"{size} bytes is above the limit of {MAX_DOCUMENT_BYTES} for a file read whole",
            fix="Convert it to JSONL (one record a line), which is streamed",
        )
    return path.read_bytes()


def iter_json_array(path: Path, report: ImportReport, *, strict: bool) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, item)`` for every item of a file holding one JSON array."""
    text = _decode(read_document_bytes(path))
    report.lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    pos = len(text) - len(text.lstrip(_WS)) + 1  # past the "["
    lines = _LineCounter(text)
    while True:
        while pos < len(text) and text[pos] in _WS + ",":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            if pos >= len(text):
                _torn(path, report, text, pos, strict, "the array is not closed")
            return
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            _torn(path, report, text, pos, strict, f"not JSON: {exc.msg}")
            return
        except RecursionError:
            value, end = None, -1
        if end < 0 or too_deep(value):
            raise TranscriptError(path, _line_of(text, pos), DEEP, fix=_STRICT_FIX)
        report.records += 1
        yield lines.at(pos), _clean(text[pos:end], value, report)
        pos = end


def _torn(path: Path, report: ImportReport, text: str, pos: int, strict: bool, why: str) -> None:
    lineno = _line_of(text, min(pos, len(text) - 1))
    if strict:
        raise TranscriptError(path, lineno, f"truncated JSON array ({why})", fix=_STRICT_FIX)
    report.torn_line = lineno


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


class _LineCounter:
    """Line numbers of increasing offsets, counted incrementally (linear over the file)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def load_document(path: Path) -> object:
    """Read a whole-file JSON document; raise `TranscriptError` naming the line if it is not."""
    text = _decode(read_document_bytes(path))
    try:
        value = json.loads(text)
        if too_deep(value):
            raise RecursionError
    except RecursionError:
        raise TranscriptError(path, None, DEEP, fix="Flatten the document") from None
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            path,
            exc.lineno,
            f"not a JSON document ({exc.msg}, column {exc.colno})",
            fix="A truncated JSON document cannot be imported; restore the complete file",
        ) from None
    return repair_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value
