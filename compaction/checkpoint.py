r"""The Checkpoint: the fixed-template summary that replaces old turns in the model's context.

A Checkpoint has eight sections, always all present, always in this order, each rendered as a
level-two Markdown heading (`## Pending Jobs`) with ``(none)`` under it when empty:

1. Primary Request and Intent   5. Pending Jobs  (code-owned)
2. Key Technical Concepts       6. Current Work  (code-owned)
3. Files and Code               7. Next Step
4. Errors and Fixes             8. Critical Context

The six narrative sections are written by a summarizer. `Pending Jobs` and `Current Work` are
*code-owned*: the compactor copies them from the latest todo list and from the shared task list
(both may exist in one session), and no summarizer can touch them. `render_checkpoint()` lays a
Checkpoint out with the jinja2 template ``compaction/templates/checkpoint.md.j2``;
`parse_checkpoint()` reads the text back.

Encoding (why no text can break the structure):

- **Code-owned items** are written one per line as ``- `` followed by the item as a JSON string
  literal (``- "Run the tests"``). JSON escapes quotes, backslashes and every control character,
  newlines included, so an item is always exactly one line. On top of JSON, the characters that
  are invisible or reorder or break lines without being control characters (bidi marks and
  overrides, zero-width characters, U+2028/U+2029, lone surrogates, the BOM) are written as
  ``\uXXXX`` escapes, so a right-to-left override cannot visually swallow the rest of the line.
  ``json.loads`` decodes every line back to the exact item: headings, list markers, code fences,
  template syntax, ``(none)`` and 10,000-character items all survive unchanged.
- **Shared tasks** follow the todo items of their section, one a line, with their id, owner and
  the tasks they still wait on: ``- task 3 (owner "worker-1", blocked by 1, 2): "Run the
  tests"`` or ``- task 4 (no owner): "Write docs"``. Ids are short tokens (letters, digits,
  ``_.:-``); owner and subject are JSON string literals escaped as above, so a task line parses
  back to the exact `TaskRef`.
- **Narrative sections** are Markdown text, escaped line by line: a line whose first
  non-blank character is ``#`` or ``\``, that opens a code fence (```` ``` ```` or
  ``~~~``), that is a setext underline or thematic break (only ``=`` or only ``-``), or that
  reads exactly ``(none)``, gets a backslash inserted before that character. So a summarizer's
  text holding
  ``## Pending Jobs`` renders as ``\## Pending Jobs``: literal text to a Markdown reader, never a
  section to the parser. Parsing removes exactly one such backslash. Narrative text is normalised
  when a Checkpoint is built: line endings become ``\n`` and whitespace-only text becomes empty.
- The template receives finished lines as values; jinja2 never evaluates a value, so template
  syntax in any text (``{{ x }}``, ``{% for %}``) is inert.

An unfinished list from an earlier turn (written before the latest ``turn/start`` and not
rewritten since) is still the latest list: it is carried into Pending Jobs and Current Work, and
`carried_over` makes the template say so in a quoted note at the top of Pending Jobs.

Invariants: ``parse_checkpoint(render_checkpoint(c)) == c`` for every Checkpoint ``c``; every
rendered Checkpoint has the eight headings, once each, in order, and no other level-two heading.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from functools import cache
from typing import Final

from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from pydantic import BaseModel, ConfigDict, field_validator

from compaction.errors import CompactionError
from compaction.events import TaskRef


class Section(StrEnum):
    """The eight section headings, in their fixed order; each value is the heading's text.

    A member equals its heading string (``Section.NEXT_STEP == "Next Step"``), so mappings keyed
    by sections can be read with either.
    """

    PRIMARY_REQUEST = "Primary Request and Intent"
    KEY_CONCEPTS = "Key Technical Concepts"
    FILES_AND_CODE = "Files and Code"
    ERRORS_AND_FIXES = "Errors and Fixes"
    PENDING_JOBS = "Pending Jobs"
    CURRENT_WORK = "Current Work"
    NEXT_STEP = "Next Step"
    CRITICAL_CONTEXT = "Critical Context"


SECTION_NAMES: Final[tuple[Section, ...]] = tuple(Section)
"""The eight section headings, in their fixed order."""

CODE_OWNED_SECTIONS: Final[tuple[Section, ...]] = (Section.PENDING_JOBS, Section.CURRENT_WORK)
"""Sections the compactor fills from the todo list; a summarizer never writes them."""

NARRATIVE_SECTIONS: Final[tuple[Section, ...]] = tuple(
    name for name in SECTION_NAMES if name not in CODE_OWNED_SECTIONS
)
"""Sections a summarizer writes, in order."""

FIELD_BY_SECTION: Final[dict[Section, str]] = {
    Section.PRIMARY_REQUEST: "primary_request",
    Section.KEY_CONCEPTS: "key_concepts",
    Section.FILES_AND_CODE: "files_and_code",
    Section.ERRORS_AND_FIXES: "errors_and_fixes",
    Section.PENDING_JOBS: "pending_jobs",
    Section.CURRENT_WORK: "current_work",
    Section.NEXT_STEP: "next_step",
    Section.CRITICAL_CONTEXT: "critical_context",
}
"""The `Checkpoint` field that holds each section."""

TASKS_BY_SECTION: Final[dict[Section, str]] = {
    Section.PENDING_JOBS: "pending_tasks",
    Section.CURRENT_WORK: "current_tasks",
}
"""The `Checkpoint` field that holds each code-owned section's shared tasks."""

EMPTY: Final = "(none)"
"""What an empty section shows."""


def _normalise_narrative(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "" if not text.strip() else text


class Checkpoint(BaseModel):
    """A Checkpoint: six narrative sections and the two code-owned task sections."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    primary_request: str = ""
    """Primary Request and Intent: what the user asked for, and why."""
    key_concepts: str = ""
    """Key Technical Concepts: technologies, names and ideas the work relies on."""
    files_and_code: str = ""
    """Files and Code: files read or changed, commands run."""
    errors_and_fixes: str = ""
    """Errors and Fixes: what went wrong and how it was handled."""
    pending_jobs: tuple[str, ...] = ()
    """Pending Jobs: the latest list's `pending` items, verbatim, in list order (code-owned)."""
    current_work: tuple[str, ...] = ()
    """Current Work: the latest list's `in_progress` items, verbatim, in list order (code-owned)."""
    next_step: str = ""
    """Next Step: what the agent said it would do next."""
    critical_context: str = ""
    """Critical Context: constraints and facts that must not be lost."""
    carried_over: bool = False
    """True when the todo list was written before the latest user request (an earlier turn)."""
    pending_tasks: tuple[TaskRef, ...] = ()
    """Pending Jobs, continued: the shared list's `pending` tasks, creation order (code-owned)."""
    current_tasks: tuple[TaskRef, ...] = ()
    """Current Work, continued: the shared list's `in_progress` tasks, creation order."""

    @field_validator(
        "primary_request",
        "key_concepts",
        "files_and_code",
        "errors_and_fixes",
        "next_step",
        "critical_context",
    )
    @classmethod
    def _narrative(cls, value: str) -> str:
        return _normalise_narrative(value)

    def section(self, name: str) -> str | tuple[str, ...]:
        """Return the content of a section by its heading name (a `Section` or its text)."""
        value: str | tuple[str, ...] = getattr(self, FIELD_BY_SECTION[Section(name)])
        return value

    def tasks(self, name: str) -> tuple[TaskRef, ...]:
        """Return the shared tasks of a code-owned section (empty for any other section)."""
        key = TASKS_BY_SECTION.get(Section(name))
        return () if key is None else tuple(getattr(self, key))

    def narrative(self) -> dict[Section, str]:
        """Return the six narrative sections by heading name, in order."""
        return {name: str(self.section(name)) for name in NARRATIVE_SECTIONS}


# --- encoding ----------------------------------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u0085\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff]"
)
_NEEDS_ESCAPE = re.compile(r"^([ \t]*)(#|\\|```|~~~|=+[ \t]*$|-+[ \t]*$|\(none\)$)")
_ESCAPED = re.compile(r"^([ \t]*)\\")


def encode_item(text: str) -> str:
    """Encode one todo item as a single ``- "..."`` line (a JSON string literal)."""
    return "- " + _literal(text)


def decode_item(line: str) -> str:
    """Decode a line written by `encode_item`; raise ValueError if it is not one."""
    if not line.startswith('- "'):
        raise ValueError('an item line starts with - "')
    value = json.loads(line[2:])
    if not isinstance(value, str):
        raise ValueError("an item is a JSON string")
    return value


def _literal(text: str) -> str:
    """Return `text` as a JSON string literal with invisible characters escaped."""
    literal = json.dumps(text, ensure_ascii=False)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", literal)


_TASK_HEAD = re.compile(r"^- task ([A-Za-z0-9_.:-]{1,64}) \(")


_BLOCKERS = re.compile(r"^, blocked by ([A-Za-z0-9_.:-]{1,64}(?:, [A-Za-z0-9_.:-]{1,64})*)")


def encode_task(task: TaskRef) -> str:
    """Encode one shared task as one ``- task ID (owner "x", blocked by 1, 2): "subject"`` line."""
    owner = "no owner" if task.owner is None else f"owner {_literal(task.owner)}"
    blockers = f", blocked by {', '.join(task.blocked_by)}" if task.blocked_by else ""
    return f"- task {task.id} ({owner}{blockers}): {_literal(task.subject)}"


def decode_task(line: str) -> TaskRef:
    """Decode a line written by `encode_task`; raise ValueError if it is not one."""
    head = _TASK_HEAD.match(line)
    if head is None:
        raise ValueError("a task line starts with - task ID (")
    rest, owner = line[head.end() :], None
    if rest.startswith("owner "):
        value, end = json.JSONDecoder().raw_decode(rest, len("owner "))
        if not isinstance(value, str):
            raise ValueError("a task's owner is a JSON string")
        owner, rest = value, rest[end:]
    elif rest.startswith("no owner"):
        rest = rest[len("no owner") :]
    else:
        raise ValueError("a task line names its owner or says no owner")
    blockers = _BLOCKERS.match(rest)
    blocked_by = tuple(blockers.group(1).split(", ")) if blockers else ()
    rest = rest[blockers.end() :] if blockers else rest
    if not rest.startswith("): "):
        raise ValueError('the owner (and blockers) are followed by "): "')
    subject = json.loads(rest[3:])
    if not isinstance(subject, str):
        raise ValueError("a task's subject is a JSON string")
    return TaskRef(id=head.group(1), owner=owner, subject=subject, blocked_by=blocked_by)


def escape_narrative(text: str) -> str:
    """Escape narrative text so that no line of it reads as a heading, fence or ``(none)``."""
    return "\n".join(_NEEDS_ESCAPE.sub(r"\1\\\2", line) for line in text.split("\n"))


def unescape_narrative(text: str) -> str:
    """Undo `escape_narrative`: remove one backslash at the start of each escaped line."""
    return "\n".join(_ESCAPED.sub(r"\1", line, count=1) for line in text.split("\n"))


# --- rendering ---------------------------------------------------------------------------------


@cache
def template_environment() -> Environment:
    """Return the jinja2 environment of compaction's templates (strict, no autoescape)."""
    return Environment(
        loader=PackageLoader("compaction", "templates"),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _template() -> Template:
    return template_environment().get_template("checkpoint.md.j2")


def render_checkpoint(checkpoint: Checkpoint) -> str:
    """Render a Checkpoint as Markdown: every section, in order, ``(none)`` when empty."""
    sections = []
    for name in SECTION_NAMES:
        value = checkpoint.section(name)
        if isinstance(value, tuple):
            lines = [encode_item(item) for item in value]
            lines += [encode_task(task) for task in checkpoint.tasks(name)]
        else:
            lines = [escape_narrative(value)] if value else []
        carried = checkpoint.carried_over and name == CODE_OWNED_SECTIONS[0]
        sections.append({"name": str(name), "lines": lines, "carried": carried})
    return _template().render(sections=sections)


# --- parsing -----------------------------------------------------------------------------------


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


def _parse_items(
    body: list[str], first_line: int
) -> tuple[tuple[str, ...], tuple[TaskRef, ...], bool]:
    carried = False
    while body and body[0].startswith("> "):
        carried = True
        body = body[1:]
        first_line += 1
    if carried and body and body[0] == "":
        body = body[1:]
        first_line += 1
    if body == [EMPTY]:
        return (), (), carried
    items: list[str] = []
    tasks: list[TaskRef] = []
    for offset, line in enumerate(body):
        try:
            if line.startswith("- task "):
                tasks.append(decode_task(line))
            else:
                items.append(decode_item(line))
        except ValueError as exc:
            raise _bad(first_line + offset, f"not an item line ({exc}): {line[:60]!r}") from None
    return tuple(items), tuple(tasks), carried


def _parse_narrative(body: list[str], first_line: int) -> str:
    if body == [EMPTY]:
        return ""
    for offset, line in enumerate(body):
        stripped = line.lstrip(" \t")
        if _NEEDS_ESCAPE.match(line) and not stripped.startswith("\\"):
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
            items, tasks, carried = _parse_items(body, start + 3)
            fields[key] = items
            fields[TASKS_BY_SECTION[name]] = tasks
            if name == CODE_OWNED_SECTIONS[0]:
                fields["carried_over"] = carried
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


__all__ = [
    "CODE_OWNED_SECTIONS",
    "NARRATIVE_SECTIONS",
    "SECTION_NAMES",
    "Checkpoint",
    "Section",
    "parse_checkpoint",
    "render_checkpoint",
    "split_sections",
]
