"""Reading a rendered Checkpoint back: `parse_checkpoint` (strict) and `split_sections` (loose).

`parse_checkpoint` accepts only what `render_checkpoint` writes: the eight headings, once each,
in order, each between blank lines, with ``(none)`` for an empty section; anything else is a
`CompactionError` (``bad_checkpoint``) naming the line. `split_sections` reads a summarizer's
Markdown leniently, by heading, for the sections it names.

Invariants: ``parse_checkpoint(render_checkpoint(c)) == c`` for every Checkpoint ``c``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from compaction.checkpoint._encoding import (
    NEEDS_ESCAPE,
    PLAN_LINE,
    decode_item,
    decode_job,
    decode_plan,
    decode_task,
    unescape_narrative,
)
from compaction.checkpoint._model import (
    CODE_OWNED_SECTIONS,
    EMPTY,
    FIELD_BY_SECTION,
    SECTION_NAMES,
    TASKS_BY_SECTION,
    Checkpoint,
    Section,
)
from compaction.errors import CompactionError
from compaction.events import JobRef, PlanRef, TaskRef


def _bad(line: int, reason: str) -> CompactionError:
    return CompactionError(
        "bad_checkpoint",
        f"line {line}: {reason}. Only text written by render_checkpoint() reads back as a "
        "Checkpoint",
    )


def _headings(lines: list[str]) -> list[int]:
    """Return the line index of each section heading, checking names and order."""
    found: list[int] = []
    for i, line in enumerate(lines):
        if not line.startswith("## "):
            continue
        if len(found) == len(SECTION_NAMES):
            raise _bad(i + 1, f"unexpected heading {line!r} after the last section")
        expected = SECTION_NAMES[len(found)]
        if line != f"## {expected}":
            raise _bad(i + 1, f"expected heading '## {expected}', found {line!r}")
        found.append(i)
    if len(found) < len(SECTION_NAMES):
        raise _bad(len(lines), f"missing section '## {SECTION_NAMES[len(found)]}'")
    return found


def _body(lines: list[str], start: int, end: int) -> list[str]:
    """Return the body lines of a section whose heading is at `start`, next heading at `end`."""
    if start + 1 >= len(lines) or lines[start + 1] != "" or lines[end - 1] != "":
        raise _bad(start + 1, "a heading is followed and preceded by one blank line")
    body = lines[start + 2 : end - 1]
    if not body:
        raise _bad(start + 1, f"empty section; an empty section reads {EMPTY}")
    return body


class _Lines(NamedTuple):
    """A code-owned section read back: items, tasks, jobs, the plan, the carried-over note."""

    items: tuple[str, ...]
    tasks: tuple[TaskRef, ...]
    jobs: tuple[JobRef, ...]
    plan: PlanRef | None
    carried: bool


def _split_plan(body: list[str], first_line: int) -> tuple[list[str], PlanRef | None]:
    """Return the lines before the plan, and the plan (None when the section has none)."""
    for offset, line in enumerate(body):
        if line.startswith("- approved plan ("):
            try:
                return body[:offset], decode_plan(line, body[offset + 1 :])
            except ValueError as exc:
                raise _bad(first_line + offset, f"not a plan ({exc})") from None
    return body, None


def _parse_items(body: list[str], first_line: int) -> _Lines:
    carried = False
    while body and body[0].startswith("> "):
        carried = True
        body = body[1:]
        first_line += 1
    if carried and body and body[0] == "":
        body = body[1:]
        first_line += 1
    if body == [EMPTY]:
        return _Lines((), (), (), None, carried)
    body, plan = _split_plan(body, first_line)
    items: list[str] = []
    tasks: list[TaskRef] = []
    jobs: list[JobRef] = []
    for offset, line in enumerate(body):
        try:
            if line.startswith("- task "):
                tasks.append(decode_task(line))
            elif line.startswith("- job "):
                jobs.append(decode_job(line))
            elif line.startswith(PLAN_LINE):
                raise ValueError("a plan line without its head")
            else:
                items.append(decode_item(line))
        except ValueError as exc:
            raise _bad(first_line + offset, f"not an item line ({exc}): {line[:60]!r}") from None
    return _Lines(tuple(items), tuple(tasks), tuple(jobs), plan, carried)


def _parse_narrative(body: list[str], first_line: int) -> str:
    if body == [EMPTY]:
        return ""
    for offset, line in enumerate(body):
        stripped = line.lstrip(" \t")
        if NEEDS_ESCAPE.match(line) and not stripped.startswith("\\"):
            raise _bad(first_line + offset, f"unescaped line in a narrative section: {line[:60]!r}")
    return unescape_narrative("\n".join(body))


def parse_checkpoint(text: str) -> Checkpoint:
    """Read a rendered Checkpoint back into the model (the inverse of `render_checkpoint`).

    Raises:
        CompactionError: code ``bad_checkpoint``, naming the line, when `render_checkpoint`
            did not write the text (a section missing or out of order, a badly encoded body).
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines.append("")  # a sentinel blank line, so the last section ends like the others
    heads = _headings(lines)
    ends = [*heads[1:], len(lines)]
    fields: dict[str, object] = {}
    for name, start, end in zip(SECTION_NAMES, heads, ends, strict=True):
        body = _body(lines, start, end)
        key = FIELD_BY_SECTION[name]
        if name in CODE_OWNED_SECTIONS:
            read = _parse_items(body, start + 3)
            fields[key] = read.items
            fields[TASKS_BY_SECTION[name]] = read.tasks
            if name == CODE_OWNED_SECTIONS[0]:
                fields["carried_over"] = read.carried
            if read.jobs or read.plan is not None:
                if name != Section.CURRENT_WORK:
                    raise _bad(start + 3, "jobs and the plan belong under Current Work")
                fields["jobs"], fields["plan"] = read.jobs, read.plan
        else:
            fields[key] = _parse_narrative(body, start + 3)
    return Checkpoint.model_validate(fields)


# --- lenient section splitting, for summarizer output ------------------------------------------

_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")


def split_sections(text: str) -> dict[Section, str]:
    """Split a summarizer's Markdown reply into sections by heading (lenient, for LLM output).

    Any ATX heading (``#`` to ``######``) starts a section; its name is matched to the eight
    section names ignoring case and surrounding whitespace. Text under an unknown heading, or
    before the first heading, is dropped; a repeated section keeps its first occurrence. The
    result still goes through the summarizer output check, which drops code-owned sections.
    """
    canonical = {name.casefold(): name for name in SECTION_NAMES}
    out: dict[Section, list[str]] = {}
    current: list[str] | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = _HEADING.match(line)
        if match is not None:
            name = canonical.get(match.group(1).strip().casefold())
            current = None if name is None or name in out else out.setdefault(name, [])
            continue
        if current is not None:
            current.append(line)
    return {name: "\n".join(body).strip("\n") for name, body in out.items()}
