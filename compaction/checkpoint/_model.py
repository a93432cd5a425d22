r"""The Checkpoint model: its eight sections, in order, and which of them code owns.

The six narrative sections are written by a summarizer; `Pending Jobs` and `Current Work` are
code-owned (the compactor copies them from the latest todo list and the shared task list; Current
Work also lists the jobs still running and ends with the approved plan).

Invariants: a Checkpoint is frozen; narrative text is normalised when it is built (line endings
become ``\n``, whitespace-only text becomes empty); `SECTION_NAMES` is the template's order.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, field_validator

from compaction.events import JobRef, PlanRef, TaskRef


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
    jobs: tuple[JobRef, ...] = ()
    """Current Work, continued: the jobs still running (sub-agents, background commands), in
    start order (code-owned)."""
    plan: PlanRef | None = None
    """Current Work, last: the approved plan, whole or clipped to its budget (code-owned)."""

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
