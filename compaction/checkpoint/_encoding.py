r"""How the Checkpoint writes its lines, so that no text can break the structure.

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
- **Running jobs** follow the shared tasks of Current Work, one a line: ``- job b7b23b2
  (command, since seq 40): "npm test"``, with ``owner "x"`` after the kind when known.
- **The approved plan** closes Current Work: a head line ``- approved plan (seq 12, 1834
  characters):`` (``, clipped`` when only part is carried), then each line of the plan after
  ``  | ``, with backslashes doubled and control or invisible characters written ``\uXXXX``.
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

Invariants: ``decode_item(encode_item(t)) == t``, ``decode_task(encode_task(t)) == t`` and
``unescape_narrative(escape_narrative(t)) == t`` for every text and task; an encoded item or task
is one line.
"""

from __future__ import annotations

import json
import re
from typing import Final

from compaction.events import JobRef, PlanRef, TaskRef

_INVISIBLE = re.compile(
    "[\u0085\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff]"
)
NEEDS_ESCAPE = re.compile(r"^([ \t]*)(#|\\|```|~~~|=+[ \t]*$|-+[ \t]*$|\(none\)$)")
"""A narrative line that would read as structure (a heading, a fence, a break, ``(none)``)."""
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
    return "\n".join(NEEDS_ESCAPE.sub(r"\1\\\2", line) for line in text.split("\n"))


def unescape_narrative(text: str) -> str:
    """Undo `escape_narrative`: remove one backslash at the start of each escaped line."""
    return "\n".join(_ESCAPED.sub(r"\1", line, count=1) for line in text.split("\n"))


_JOB = re.compile(
    r"^- job ([A-Za-z0-9_.:-]{1,128}) \((agent|command)(?:, owner (\"(?:[^\"\\]|\\.)*\"))?"
    r", since seq ([1-9][0-9]*)\): (\".*\")$"
)


def encode_job(job: JobRef) -> str:
    """Encode one running job as ``- job ID (command, owner "x", since seq 40): "what it runs"``."""
    owner = "" if job.owner is None else f", owner {_literal(job.owner)}"
    return f"- job {job.id} ({job.kind}{owner}, since seq {job.since}): {_literal(job.runs)}"


def decode_job(line: str) -> JobRef:
    """Decode a line written by `encode_job`; raise ValueError if it is not one."""
    match = _JOB.match(line)
    if match is None:
        raise ValueError('a job line reads - job ID (KIND, since seq N): "..."')
    owner = None if match.group(3) is None else json.loads(match.group(3))
    runs = json.loads(match.group(5))
    if not isinstance(runs, str) or not (owner is None or isinstance(owner, str)):
        raise ValueError("a job's owner and what it runs are JSON strings")
    kind = "agent" if match.group(2) == "agent" else "command"
    return JobRef(id=match.group(1), kind=kind, runs=runs, since=int(match.group(4)), owner=owner)


PLAN_LINE: Final = "  |"
"""What every line of a carried plan starts with (then a space and the line, when not empty)."""
_PLAN_HEAD = re.compile(
    r"^- approved plan \(seq ([1-9][0-9]*), ([0-9]+) characters(, clipped)?\):$"
)
_PLAN_ESCAPED = re.compile(r"\\(\\|u[0-9a-f]{4})")
_PLAN_ESCAPE = re.compile("[\\\\\x00-\x08\x0b-\x1f\x7f" + _INVISIBLE.pattern[1:-1] + "]")


def encode_plan(plan: PlanRef) -> list[str]:
    r"""Encode the carried plan: a head line (its seq, length, whether clipped), then its lines.

    Each line of the plan follows ``  | ``, so no line of it can read as a heading, an item or
    ``(none)``; a backslash is doubled and a control or invisible character is written
    ``\uXXXX``, so headings and numbered steps stand verbatim and every line decodes exactly.
    """
    clipped = ", clipped" if plan.clipped else ""
    head = f"- approved plan (seq {plan.seq}, {plan.chars} characters{clipped}):"
    body = [
        f"{PLAN_LINE} {_PLAN_ESCAPE.sub(_escape_char, line)}" if line else PLAN_LINE
        for line in plan.text.split("\n")
    ]
    return [head, *body]


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return "\\\\" if char == "\\" else f"\\u{ord(char):04x}"


def decode_plan(head: str, body: list[str]) -> PlanRef:
    """Decode the lines written by `encode_plan`; raise ValueError if they are not."""
    match = _PLAN_HEAD.match(head)
    if match is None:
        raise ValueError("a plan head reads - approved plan (seq N, M characters):")
    lines = []
    for line in body:
        if line != PLAN_LINE and not line.startswith(PLAN_LINE + " "):
            raise ValueError(f"a plan line starts with {PLAN_LINE!r}")
        lines.append(_PLAN_ESCAPED.sub(_unescape_char, line[len(PLAN_LINE) + 1 :]))
    return PlanRef(
        seq=int(match.group(1)),
        chars=int(match.group(2)),
        text="\n".join(lines),
        clipped=match.group(3) is not None,
    )


def _unescape_char(match: re.Match[str]) -> str:
    code = match.group(1)
    return "\\" if code == "\\" else chr(int(code[1:], 16))
