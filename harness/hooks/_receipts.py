"""The hooks' log: one receipt per hook run that did something, listed per agent session.

Receipts are JSON lines in ``HARNESS_HOOKS_DIR`` (default ``~/.context-harness/hooks``),
``receipts.jsonl``, beside the transcript cache (``cache/``). A receipt holds the agent, its
session id, the event, the moment, the open items, what the summary kept and dropped, and what
the hook restored, never the transcript's other text.

Invariants: a receipt is appended whole (one write of one line); a log that cannot be written
never fails the hook; reading skips lines it cannot parse.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

LOG_NAME = "receipts.jsonl"


def hooks_dir() -> Path:
    """Return the hooks' folder: ``HARNESS_HOOKS_DIR``, else ``~/.context-harness/hooks``."""
    env = os.environ.get("HARNESS_HOOKS_DIR")
    return Path(env) if env else Path.home() / ".context-harness" / "hooks"


def append(receipt: Mapping[str, Any], folder: Path | None = None) -> bool:
    """Append one receipt; return False when the log cannot be written."""
    log = (folder or hooks_dir()) / LOG_NAME
    line = json.dumps(dict(receipt), ensure_ascii=False, sort_keys=True) + "\n"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def receipts(folder: Path | None = None) -> Iterator[dict[str, Any]]:
    """Yield the receipts in the order they were written."""
    log = (folder or hooks_dir()) / LOG_NAME
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value
