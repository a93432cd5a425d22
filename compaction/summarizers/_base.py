"""What every summarizer shares: its input, its protocol and the check of its output.

A summarizer gets a `SummaryInput` (the messages of the span being replaced, the previous
Checkpoint if the session was compacted before, the latest todo list, and a token budget) and
returns narrative sections by heading name. It never owns the tasks: `Pending Jobs` and
`Current Work` are filled by the compactor from the log, and `check_output` drops them (and any
other unknown section) from whatever a summarizer returns, and fills a missing section with
``(none)``. So an LLM summarizer can be wrong, terse or verbose without ever losing a task.

`check_output(output, span)` also holds the narrative to the code-owned sections and to the
facts of the span (`compaction.summarizers.facts`), whatever wrote it:

- Next Step follows Pending Jobs and Current Work, todo items and shared tasks alike
  (`compaction.summarizers.next_step`);
- Critical Context keeps no constraint whose mode has ended;
- Files and Code names every file the span edited, and Errors and Fixes the latest failure of
  each command that has not passed since; Primary Request and Intent holds the first and the
  latest request; what a summarizer left out is added, in the extractive entry formats.

Invariants: a summarizer's output reaches a Checkpoint only through `check_output`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, Protocol, runtime_checkable

from compaction.checkpoint import NARRATIVE_SECTIONS, Checkpoint, Section
from compaction.events import JobRef, Message, Task, TodoItem
from compaction.summarizers._entries import clip, entry
from compaction.summarizers.facts import TRANSIENT_MODES, SpanFacts, read_span
from compaction.summarizers.next_step import Resume, next_step


@dataclass(frozen=True)
class SummaryInput:
    """What a summarizer reads: the span being replaced and what surrounds it."""

    messages: tuple[Message, ...]
    """The non-system messages being replaced, in log order (system messages are never here)."""
    seqs: tuple[int, ...]
    """The log seq of each message, aligned with `messages`."""
    previous: Checkpoint | None
    """The Checkpoint this compaction folds in, if the session was compacted before."""
    todos: tuple[TodoItem, ...]
    """The latest todo list, for context only: the compactor writes the task sections itself."""
    budget_tokens: int
    """The size all narrative sections together should stay within."""
    modes: tuple[str | None, ...] = ()
    """The mode each message was written in (`Session.turn_modes`), aligned with `messages`."""
    mode: str | None = None
    """The mode the session is in now: a constraint of an ended transient mode is dropped."""
    instructions: str | None = None
    """Focus instructions for this compaction (``compact(..., instructions=...)``)."""
    tasks: tuple[Task, ...] = ()
    """The shared task list's live tasks, creation order (context: the compactor copies them)."""
    agent: str | None = None
    """The agent compacting (`Session.agent`): its own task in progress leads Next Step."""
    cwd: str | None = None
    """The working directory the log recorded for the span (its latest ``turn/start`` with a
    ``cwd``): Files and Code shows paths relative to it. None: inferred from the paths."""
    resume: Resume | None = None
    """A resume decision made before this compaction (``continue`` / ``await_user``), which
    Next Step agrees with; None: Next Step follows the tasks alone."""
    jobs: tuple[JobRef, ...] = ()
    """The jobs still running (context: the compactor lists them under Current Work); Next
    Step never calls the work done while one runs."""

    def facts(self) -> SpanFacts:
        """Return what the span says: read on the first call, the same object after (pure)."""
        return self._facts

    @cached_property
    def _facts(self) -> SpanFacts:
        return read_span(self.messages, self.modes, self.mode)


@runtime_checkable
class Summarizer(Protocol):
    """Writes the narrative sections of a Checkpoint.

    An implementation returns a mapping from section heading (one of `NARRATIVE_SECTIONS`) to
    Markdown text. It may raise: the compactor then falls back to the extractive summarizer and
    records why in the checkpoint event. An LLM summarizer can parse its model's Markdown reply
    with `compaction.checkpoint.split_sections`.
    """

    @property
    def name(self) -> str:
        """A stable name recorded in each checkpoint event, e.g. ``extractive``."""
        ...

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        """Return narrative sections by heading name."""
        ...


def check_output(output: Mapping[str, str], span: SummaryInput | None = None) -> dict[Section, str]:
    """Return exactly the six narrative sections, in order, from a summarizer's output.

    A missing section becomes empty (rendered ``(none)``); a section with another name, the
    code-owned `Pending Jobs` and `Current Work` included, is dropped; a value that is not text
    is written as its JSON. With `span`, the narrative is then held to the tasks and the facts
    of the span (see the module docstring).
    """
    checked: dict[Section, str] = {}
    for name in NARRATIVE_SECTIONS:
        value: Any = output.get(name, "")
        checked[name] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return checked if span is None else settle(checked, span)


# --- the narrative held to the code-owned sections ---------------------------------------------

REQUEST_HEAD: Final = 60
"""Characters of a request's head that show it is present."""
INJECTED_HEAD: Final = 40
"""Characters of injected text's head that mark a line quoting it as a request."""
NEXT_STEP_SHARE: Final = 0.10
"""Share of the narrative budget Next Step may take (clipped at a sentence or clause end)."""
CHARS_PER_TOKEN: Final = 3
"""Characters counted per budget token when clipping Next Step (a cautious ratio)."""


def _present(needle: str, haystack: str) -> bool:
    return " ".join(needle.split())[:REQUEST_HEAD] in " ".join(haystack.split())


def _lines_without(text: str, drop: list[str]) -> str:
    kept = [line for line in text.split("\n") if not any(d in line for d in drop)]
    return "\n".join(kept).strip("\n")


def settle(sections: dict[Section, str], span: SummaryInput) -> dict[Section, str]:
    """Hold narrative sections to the tasks and to the facts of the span."""
    facts = span.facts()
    out = dict(sections)
    latest = facts.requests[-1] if facts.requests else ""
    out[Section.NEXT_STEP] = next_step(
        out[Section.NEXT_STEP],
        span.todos,
        latest,
        tasks=span.tasks,
        agent=span.agent,
        resume=span.resume,
        jobs=span.jobs,
        limit=max(200, int(span.budget_tokens * NEXT_STEP_SHARE * CHARS_PER_TOKEN)),
    )
    out[Section.CRITICAL_CONTEXT] = _lines_without(
        out[Section.CRITICAL_CONTEXT], [*facts.ended, *_ended_mode_marks(span.mode)]
    )
    for name in (Section.PRIMARY_REQUEST, Section.CRITICAL_CONTEXT):
        out[name] = _without_injected(out[name], facts.injected)
    out[Section.PRIMARY_REQUEST] = _with_requests(out[Section.PRIMARY_REQUEST], facts, span)
    out[Section.FILES_AND_CODE] = _with_files(out[Section.FILES_AND_CODE], facts, span.cwd)
    out[Section.ERRORS_AND_FIXES] = _with_errors(out[Section.ERRORS_AND_FIXES], facts)
    return out


def _without_injected(text: str, injected: list[str]) -> str:
    """Drop the lines that quote text no person typed (its head) as a request or constraint."""
    heads = [h for h in (" ".join(t.split())[:INJECTED_HEAD] for t in injected) if len(h) >= 20]
    if not heads:
        return text
    lines = text.split("\n")
    return "\n".join(ln for ln in lines if not any(h in " ".join(ln.split()) for h in heads))


def _with_files(text: str, facts: SpanFacts, cwd: str | None) -> str:
    """Add every file the span edited that the text does not name (exactly, with a ``cwd``)."""
    missing = [
        p
        for kind, p in facts.files(cwd=cwd)
        if kind == "edited" and f"`{p}`" not in text and (cwd or f"/{p}`" not in text)
    ]
    return _join(text, [entry("edited", path=p) for p in missing])


def _with_errors(text: str, facts: SpanFacts) -> str:
    """Add each unfixed failure, and the latest failure, that the text does not report."""
    runs = list(facts.runs.values())
    latest = max(runs, key=lambda r: r.failed_at, default=None)  # the failure seen last
    lost = [
        r for r in runs if (not r.fixed or r is latest) and r.failure[:REQUEST_HEAD] not in text
    ]
    return _join(
        text, [entry("failure", command=r.command, text=r.failure, fixed=r.fixed) for r in lost]
    )


def _ended_mode_marks(mode: str | None) -> list[str]:
    marks = [entry("mode_constraint", text="", mode=m).strip() for m in TRANSIENT_MODES]
    keep = entry("mode_constraint", text="", mode=mode).strip() if mode else None
    return [m for m in marks if m != keep]


def split_entries(text: str) -> list[str]:
    """Split a section's text into entries: a line starting ``- `` opens one, others continue."""
    entries: list[str] = []
    for line in text.split("\n"):
        if entries and not line.startswith("- "):
            entries[-1] += "\n" + line
        elif line.strip():
            entries.append(line)
    return entries


def _request(text: str) -> str:
    return entry("request", text=clip(text.strip(), 800).replace("\n", "\n  "))


def _with_requests(text: str, facts: SpanFacts, span: SummaryInput) -> str:
    """Hold Primary Request to the first request (the previous Checkpoint's) and the latest."""
    before = split_entries(span.previous.primary_request) if span.previous else []
    first = before[0] if before else (_request(facts.requests[0]) if facts.requests else "")
    latest = _request(facts.requests[-1]) if facts.requests else (before[-1] if before else "")
    head: list[str] = []
    if first.strip() and not _present(first.removeprefix("- "), text):
        head.append(first)
    tail: list[str] = []
    if latest.strip() and latest != first and not _present(latest.removeprefix("- "), text):
        tail.append(latest)
    return _join("\n".join([*head, text]) if head else text, tail)


def _join(text: str, entries: list[str]) -> str:
    return "\n".join([text.strip("\n"), *entries] if text.strip() else entries)
