"""Which lines of a tool output are errors, and what names a failure no line shows.

`error_lines(text)` returns the error lines of one output: the lines that hold an `ERROR_MARK`
(compiler errors, test failures, panics, ``Exit code N``), source and diff lines left out, a
test failure header joined with the message line under it. `status_line` names a failure the
recorded status told of (`Message.failed`, `Message.exit_code`) when no line shows one.

Both run over every tool output of a compaction's span, so they cost time linear in the text
with small constants: literals found with `str.find`, the regex matched only where a mark
holding one would start (`_MARK_LITERALS`).

Invariants: `error_lines` returns the same lines as matching `ERROR_MARK` on each line alone.
"""

from __future__ import annotations

import re
from typing import Final

LINE_CHARS: Final = 240
"""Longest error, command or constraint line kept."""

ERROR_MARK: Final = re.compile(
    r"(?:rror|xception|(?<![\w-])fatal|(?<![\w-])panic)(?:\[\w+\])?:"
    r"|FAILED|\d failed\b|--- FAIL\b|^FAIL\b|\.go:\d+:\d+: |^E {2,}\S|^Exit code [1-9]",
    re.MULTILINE,
)
"""Marks of an error line: compiler errors (``x.go:3:5: undefined``), test failures, panics."""
_MARK_LITERALS: Final = {
    **dict.fromkeys(("rror", "xception", "fatal", "panic", ".go:", "E  ", "Exit code "), (0,)),
    "FAIL": (0, 4),
    "failed": (2,),
}
"""Every match of `ERROR_MARK` holds one of these literals, this many characters after its start
(``FAILED``, ``FAIL`` and ``--- FAIL``; ``1 failed``): a line holds a mark only where one is found,
so only those starts are tried (the regex has no literal prefix of its own, and searched over a
whole output it costs more than tokenizing it)."""
_FAILURE_HEADER = re.compile(r"^(?:--- FAIL\b|FAIL\b|_{3,} .* _{3,}$|Exit code [1-9])")
_CODE_LINE = re.compile(
    r"^(?:\d+\s+)?(?:except|raise|class|def|catch|throw|import|from|#|//)\b"
    r"|^[+-][\t ](?![A-Z]{1,3}\d{3,4} )|^@@"
)
"""Source and diff lines: they name errors without being one (a linter's listed finding,
``- E999 SyntaxError: ...`` as SWE-agent's edit prints it, is one)."""


def error_lines(text: str) -> list[str]:
    """Return the error lines of a tool output: each marked line, plus a failure's message line.

    A test failure header (``--- FAIL: TestX``, ``FAIL``, pytest's ``___ test_x ___``) brings
    the next non-blank line that is not itself a header, where the failure's message is.
    Source lines that merely mention an error (``raise KeyError(...)``) are not errors.
    """
    out: list[str] = []
    for start, end in _marked_lines(text):
        line = text[start:end].strip()
        if not line or _CODE_LINE.match(line):
            continue
        if _FAILURE_HEADER.match(line):
            message = next((m.strip() for m in _lines_after(text, end, 3) if m.strip()), "")
            if message and not ERROR_MARK.search(message):
                line = f"{line} {message}"
        out.append(line[:LINE_CHARS])
    return out


def _lines_after(text: str, end: int, n: int) -> list[str]:
    """Return the (at most) `n` lines after the line that ends at `end`."""
    lines: list[str] = []
    while end < len(text) and len(lines) < n:
        found = text.find("\n", end + 1)
        stop = len(text) if found == -1 else found
        lines.append(text[end + 1 : stop])
        end = stop
    return lines


def _marked_lines(text: str) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` of each line of `text` that holds an `ERROR_MARK`, in order.

    The same lines as searching each line on its own: each place one of `_MARK_LITERALS` is
    found (`str.find`), `ERROR_MARK` is matched only where a mark holding it would start,
    never searched over the whole line (a long line of JSON or minified code costs the regex
    more than tokenizing it).
    """
    marked: dict[int, int] = {}
    match = ERROR_MARK.match
    for literal, offsets in _MARK_LITERALS.items():
        at = text.find(literal)
        start = end = -1
        while at != -1:
            if at > end:  # a new line
                start = text.rfind("\n", 0, at) + 1
                found = text.find("\n", at)
                end = len(text) if found == -1 else found
            hit = start in marked
            for offset in () if hit else offsets:
                if at - offset >= start and match(text, at - offset, end):
                    hit = True
                    break
            if hit:
                marked[start] = end
                at = text.find(literal, end + 1) if end < len(text) else -1
            else:
                at = text.find(literal, at + 1)
    return sorted(marked.items())


_STATUS_HEADER = re.compile(
    r"^(?:Chunk ID|Wall time|Process exited with code|Exit code|Original token count|Command|"
    r"Directory|Total output lines|Signal|Background PIDs|Process Group PGID)\b"
    r"|^(?:Error|Output):\s*(?:\(none\)|\(empty\))?$",
    re.IGNORECASE,
)


def status_line(text: str, exit_code: int | None) -> str:
    """Name a failure the status told of but no error line shows: its exit code, first line.

    The header lines a format writes around the output (Codex's ``Chunk ID``, ``Wall time``,
    ``Process exited with code``; Gemini CLI's ``Command:``, ``Directory:``) are passed over.
    """
    first = ""
    for line in text.split("\n")[:40]:
        line = line.strip()
        if line.lower().startswith("output: "):
            line = line[len("output: ") :].strip()
        if line and not _STATUS_HEADER.match(line):
            first = line
            break
    if exit_code is None:
        return (first or "failed")[:LINE_CHARS]
    code = f"exit code {exit_code}"
    return f"{code}: {first}"[:LINE_CHARS] if first else code
