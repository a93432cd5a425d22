r"""Reading the raw JSON records of a transcript, surviving the mess real files hold.

JSONL: one object a line, except where a writer glued two objects on one line (split with
`json.JSONDecoder.raw_decode`), a line is not JSON (reported with its number and skipped), or the
last line was cut off (reported as torn). A JSON array of records is read item by item, so a
truncated array still yields every item before the cut.

A lone UTF-16 surrogate (``"\ud83d"``, half an emoji cut off by a truncating tool) decodes to a
Python string that cannot be written back as UTF-8; each is replaced by U+FFFD and the record is
counted.

Invariants: memory is bounded by the largest record, not the file; with ``strict=True`` the first
line that would be skipped raises `TranscriptError` naming it instead; every string yielded can
be encoded as UTF-8.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compaction.errors import TranscriptError
from compaction.importers.import_report import ImportReport
from compaction.log import BadLine

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
        for lineno, raw in enumerate(fh, start=1):
            report.lines = lineno
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


def iter_json_array(path: Path, report: ImportReport, *, strict: bool) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, item)`` for every item of a file holding one JSON array."""
    text = _decode(path.read_bytes())
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
    text = _decode(path.read_bytes())
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            path,
            exc.lineno,
            f"not a JSON document ({exc.msg}, column {exc.colno})",
            fix="A truncated JSON document cannot be imported; restore the complete file",
        ) from None
    return repair_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value
