"""Telling a transcript's format from its first records.

Rules, first match wins: a ``.traj`` file, or one JSON object with a ``history`` or
``trajectory`` list, is ``swe-agent``; one JSON object with ``messages`` is ``gemini`` when it
has Gemini CLI's ``sessionId`` or its messages carry a ``type`` (``user``, ``gemini``,
``info``) and no ``role``; a file opening with ``[``, or another object with ``messages``, is
``openai``; otherwise the first records of a JSONL file decide: an envelope with a Codex record
type (``session_meta``, ``response_item``...) is ``codex``; Gemini CLI's chat-file header
(``sessionId`` and ``projectHash``) is ``gemini``; a record with Claude Code's
fields (``sessionId``, ``parentUuid``, ``leafUuid``) or types (``user``/``assistant`` with a
``message``, ``file-history-snapshot``) is ``claude-code``; a bare ``role`` is ``openai``.

Invariants: a JSONL file is told from a bounded prefix (64 KiB), never read whole; only a file
that is one JSON document is parsed whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compaction.errors import TranscriptError
from compaction.importers._formats import FORMATS, Format
from compaction.importers._records import read_document_bytes

_HEAD_BYTES = 65536
_PROBE_RECORDS = 20
CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
CLAUDE_KEYS = frozenset({"sessionId", "parentUuid", "leafUuid", "isSidechain"})
CLAUDE_TYPES = frozenset({"file-history-snapshot", "queue-operation", "summary", "progress"})


def detect_format(path: Path | str) -> Format:
    """Return the format of the transcript at `path`; raise `TranscriptError` if it is none."""
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    stripped = head.lstrip()
    if path.suffix == ".traj":
        return "swe-agent"
    if stripped.startswith("["):
        return "openai"
    if stripped.startswith("{"):
        found = _whole_document(path, head)
        if found is not None:
            return found
    for record in _first_records(head):
        found = _record_format(record)
        if found is not None:
            return found
    found = _sniff(head)
    if found is not None:
        return found
    raise TranscriptError(
        path,
        None,
        "cannot tell the transcript format from its first records",
        fix=f"Name it: one of {', '.join(FORMATS)}",
    )


def _whole_document(path: Path, head: str) -> Format | None:
    """Classify a file that is one JSON object (read whole only when the head is not JSONL)."""
    first_line = head.split("\n", 1)[0]
    try:
        doc: Any = json.loads(first_line)
    except ValueError:
        try:
            doc = json.loads(read_document_bytes(path))
        except (ValueError, UnicodeDecodeError, RecursionError, TranscriptError):
            doc = None
    else:
        # A first line that is JSON on its own is a JSONL record, or a one-line document.
        if not isinstance(doc, Mapping) or not _DOC_KEYS & doc.keys():
            return None
    keys = doc.keys() if isinstance(doc, Mapping) else _top_keys(head)
    if "history" in keys or "trajectory" in keys:
        return "swe-agent"
    if "messages" in keys:
        gemini = _is_gemini(doc) if isinstance(doc, Mapping) else '"sessionId"' in head
        return "gemini" if gemini else "openai"
    return None


_DOC_KEYS = frozenset({"history", "trajectory", "messages"})
GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def _is_gemini(doc: Mapping[str, Any]) -> bool:
    """Gemini CLI: a ``sessionId``, or messages typed by ``type`` with no chat ``role``."""
    if "sessionId" in doc:
        return True
    messages = doc.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    return isinstance(first, Mapping) and first.get("type") in GEMINI_TYPES and "role" not in first


def _top_keys(head: str) -> set[str]:
    """Guess the top-level keys of a truncated JSON object from its head."""
    return {k for k in ("history", "trajectory", "messages") if f'"{k}"' in head}


def _sniff(head: str) -> Format | None:
    """Last resort for a first record longer than the head: look for telling keys."""
    compact = head.replace(" ", "")
    if any(f'"type":"{t}"' in compact for t in CODEX_TYPES) and '"payload"' in compact:
        return "codex"
    if any(f'"{k}"' in compact for k in CLAUDE_KEYS):
        return "claude-code"
    return None


def _first_records(head: str) -> list[Any]:
    records: list[Any] = []
    for line in head.splitlines()[:_PROBE_RECORDS]:
        try:
            records.append(json.JSONDecoder().raw_decode(line.strip())[0])
        except ValueError:
            continue
    return records


def _record_format(record: object) -> Format | None:
    if not isinstance(record, Mapping):
        return None
    kind = record.get("type")
    if kind in CODEX_TYPES and "payload" in record:
        return "codex"
    if "record_type" in record:
        return "codex"
    if "projectHash" in record and "sessionId" in record:
        return "gemini"
    if CLAUDE_KEYS & record.keys() or kind in CLAUDE_TYPES:
        return "claude-code"
    if kind in ("user", "assistant") and isinstance(record.get("message"), Mapping):
        return "claude-code"
    if "role" in record and ("content" in record or "tool_calls" in record):
        return "openai"
    if kind in ("message", "function_call", "reasoning") and "payload" not in record:
        return "codex"
    return None
