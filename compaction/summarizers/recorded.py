"""Another agent's recorded summary (Claude Code, Codex) read into a Checkpoint's narrative.

A session imported from Claude Code or Codex carries the agent's own compactions as
``compaction/checkpoint`` events (summarizer ``claude-code``, ``codex``) whose text is not in
the eight-section form. The next Checkpoint folds such a summary in like one of its own:

- where the summary has sections (Claude Code's ``1. Primary Request and Intent:`` ...
  ``9. Optional Next Step:``, or Markdown headings), each goes under the matching section:
  Primary Request and Intent (also All user messages and Pending Tasks), Key Technical
  Concepts, Files and Code (the paths it names), Errors and Fixes (also Problem Solving), Next
  Step (Current Work and the next step);
- the summary's own Primary Request (or, with no section at all, the whole summary, clipped) is
  kept as a quoted prior summary at the head of Primary Request and Intent, so the goal never
  disappears.

Invariants: reading is a pure function of the text; no section of the result is a code-owned
one (the tasks always come from the log).
"""

from __future__ import annotations

import re
from typing import Final

from compaction.checkpoint import Checkpoint, Section
from compaction.summarizers._entries import entry
from compaction.summarizers.facts import find_paths

SUMMARY_CHARS: Final = 1_200
"""Longest quoted part of a recorded summary kept in Primary Request and Intent."""
ENTRY_CHARS: Final = 400
"""Longest single entry taken from a recorded summary's section."""

_HEADING = re.compile(
    r"^[ \t]{0,3}(?:\d{1,2}\.[ \t]+|#{1,6}[ \t]+|\*\*)([A-Z][^:\n*#]{2,60}?)(?:\*\*)?:?[ \t]*$"
)
_PREAMBLE = re.compile(r"^This session is being continued from a previous conversation.*$", re.M)

_MAP: Final[tuple[tuple[str, Section], ...]] = (
    ("primary request", Section.PRIMARY_REQUEST),
    ("user messages", Section.PRIMARY_REQUEST),
    ("pending tasks", Section.PRIMARY_REQUEST),
    ("key technical", Section.KEY_CONCEPTS),
    ("files", Section.FILES_AND_CODE),
    ("error", Section.ERRORS_AND_FIXES),
    ("problem solving", Section.ERRORS_AND_FIXES),
    ("current work", Section.NEXT_STEP),
    ("next step", Section.NEXT_STEP),
)
"""Heading words (lower case) and the section they feed, first match wins."""


def _section_of(heading: str) -> Section | None:
    lower = heading.casefold()
    return next((section for word, section in _MAP if word in lower), None)


def split_recorded(text: str) -> dict[str, str]:
    """Split a recorded summary into its headed parts, by heading as written (lower case).

    Text before the first recognised heading is kept under ``""``.
    """
    parts: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.replace("\r\n", "\n").split("\n"):
        match = _HEADING.match(line)
        if match is not None and _section_of(match.group(1)) is not None:
            current = match.group(1).strip().casefold()
            parts.setdefault(current, [])
            continue
        parts[current].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in parts.items()}


def _bullets(text: str) -> list[str]:
    """Return the top-level items of a part (lines opening with ``-`` or ``*``), joined."""
    items: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        if line.startswith(("- ", "* ")) and (not items or len(raw) - len(raw.lstrip()) <= 4):
            items.append(line[2:].strip())
        elif items:
            items[-1] += " " + line
        else:
            items.append(line)
    return [item[:ENTRY_CHARS] for item in items if item]


def _quote(text: str, limit: int) -> str:
    body = " ".join(line.strip() for line in text.split("\n") if line.strip())
    return body if len(body) <= limit else body[:limit].rstrip() + " …"


def read_recorded(text: str, source: str) -> dict[Section, list[str]]:
    """Read a recorded summary into narrative entries, by section.

    Args:
        text: the summary as the other agent wrote it.
        source: the summarizer that wrote it (``claude-code``, ``codex``).
    """
    text = _PREAMBLE.sub("", text)
    parts = split_recorded(text)
    out: dict[Section, list[str]] = {s: [] for s in Section}
    headed = {k: v for k, v in parts.items() if k}
    primary = next((v for k, v in headed.items() if "primary request" in k), "")
    quoted = primary or (parts[""] if not headed else "")
    if quoted.strip():
        out[Section.PRIMARY_REQUEST].append(
            entry("prior_summary", source=source, text=_quote(quoted, SUMMARY_CHARS))
        )
    # Pending tasks before the user's messages, so the latest message is the last entry.
    ordered = sorted(headed.items(), key=lambda kv: "user messages" in kv[0])
    for heading, body in ordered:
        section = _section_of(heading)
        if section is None or "primary request" in heading:
            continue
        if section is Section.FILES_AND_CODE:
            paths = dict.fromkeys(p for p in find_paths(body) if "/" in p or "." in p)
            out[section] += [entry("file_mention", path=p) for p in paths]
        elif section is Section.NEXT_STEP:
            out[section].append(_quote(body, ENTRY_CHARS))
        else:
            out[section] += [entry("request", text=item) for item in _bullets(body)]
    return out


def recorded_checkpoint(text: str, source: str) -> Checkpoint:
    """Return a recorded summary as a Checkpoint with only narrative sections (no tasks)."""
    sections = read_recorded(text, source)
    return Checkpoint(
        primary_request="\n".join(sections[Section.PRIMARY_REQUEST]),
        key_concepts="\n".join(sections[Section.KEY_CONCEPTS]),
        files_and_code="\n".join(sections[Section.FILES_AND_CODE]),
        errors_and_fixes="\n".join(sections[Section.ERRORS_AND_FIXES]),
        next_step="\n".join(sections[Section.NEXT_STEP][-1:]),
        critical_context="\n".join(sections[Section.CRITICAL_CONTEXT]),
    )
