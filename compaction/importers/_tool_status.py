"""A tool call's status as a transcript records it: exit codes and failure flags.

Each format says it its own way: Codex writes ``Process exited with code N`` (or ``Exit code:
N``) above the output, Claude Code an ``is_error`` flag and ``Exit code N`` on a failed Bash
call's first line, Gemini CLI a ``status`` and ``Exit Code: N`` after the output. The importers
read it here and put it on the `tool` message (`Message.exit_code`, `Message.failed`), where
Errors and Fixes reads it.

Invariants: a status is read from the transcript, never guessed: no line, no exit code.
"""

from __future__ import annotations

import json
import re
from typing import Final

HEADER_CHARS: Final = 2000
"""Characters at the head of an output where a format writes its status above the output."""

_EXIT_CODE = re.compile(
    r"^[ \t]*(?:Process exited with code|Exit code:?)[ \t]+(-?\d{1,9})\b", re.MULTILINE | re.I
)


def exit_code_in(text: str, *, last: bool = False) -> int | None:
    """Return the exit status a tool output states on a line of its own, or None.

    Read: ``Process exited with code N`` and ``Exit code: N`` (Codex), ``Exit code N`` (Claude
    Code), ``Exit Code: N`` (Gemini CLI). The first such line, or with `last` the last one (a
    format that writes the status after the output).
    """
    found = None
    for match in _EXIT_CODE.finditer(text):
        found = int(match.group(1))
        if not last:
            break
    return found


def failed_by(exit_code: int | None, flag: bool | None = None) -> bool | None:
    """Return whether a call failed (a non-zero exit code, or the flag); None if neither says."""
    if exit_code is None and flag is None:
        return None
    return bool(flag) or (exit_code is not None and exit_code != 0)


def codex_exit_code(text: str) -> int | None:
    """Return the exit status of a Codex call's output: its header line, or its JSON metadata.

    Codex writes ``Process exited with code N`` / ``Exit code: N`` above the output, or (older
    rollouts) the output as ``{"output": ..., "metadata": {"exit_code": N}}``.
    """
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        meta = value.get("metadata") if isinstance(value, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return exit_code_in(text[:HEADER_CHARS])
