"""The narrative never contradicts the code-owned sections, whatever wrote it.

Over generated sessions (typed and injected user text, Plan and agent turns, todo lists, edits,
failing and passing runs, misleading statements) and two summarizers (the extractive one, and a
careless one answering questions, "done", injected and stale text), every Checkpoint is checked
against a plain reading of the session, not against the code's own helpers.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from strategies import NARRATIVE_INJECTED, narrative_sections, narrative_sessions

from compaction import (
    CompactionPolicy,
    Message,
    Session,
    SummaryInput,
    TodoWriteData,
    TurnStartData,
    compact,
)

_DONE = re.compile(r"\b(?:Done|Ready for review|All tests pass)\b")


class Careless:
    """A summarizer that writes whatever it was drawn to write."""

    name = "careless"

    def __init__(self, sections: Mapping[str, str]) -> None:
        self.sections = dict(sections)

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        return self.sections


def _reference(payloads: list[Any]) -> dict[str, Any]:
    """What the session says, read the plain way."""
    todos: tuple[Any, ...] = ()
    edited: set[str] = set()
    plan_constraint_ended = False
    in_plan = False
    typed_in_plan = False
    for p in payloads:
        if isinstance(p, TurnStartData):
            if in_plan and p.mode != "plan" and typed_in_plan:
                plan_constraint_ended = True
            in_plan = p.mode == "plan"
        elif isinstance(p, TodoWriteData):
            todos = p.todos
        elif isinstance(p, Message) and p.role == "user" and p.origin == "user":
            if in_plan and "Do not edit files yet" in p.text():
                typed_in_plan = True
        elif isinstance(p, Message):
            for call in p.tool_calls or ():
                if call.function.name == "write_file":
                    edited.add(json.loads(call.function.arguments)["path"])
    if in_plan and typed_in_plan:
        plan_constraint_ended = False  # still in Plan mode at the end
    return {"todos": todos, "edited": edited, "plan_ended": plan_constraint_ended}


@given(narrative_sessions(), st.one_of(st.none(), narrative_sections))
def test_narrative_agrees_with_the_code_owned_sections(
    payloads: list[Any], careless: Mapping[str, str] | None
) -> None:
    """Next Step, Critical Context, Files, Primary Request: never against tasks or facts."""
    ref = _reference(payloads)
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp) / "log.jsonl") as session:
        session.append_many(payloads)
        summarizer = Careless(careless) if careless is not None else None
        r = compact(
            session,
            CompactionPolicy(window_tokens=200_000, retain=0.0),
            summarizer=summarizer,
            force=True,
        )
    c = r.checkpoint
    current = [t.content for t in ref["todos"] if t.status == "in_progress"]
    pending = [t.content for t in ref["todos"] if t.status == "pending"]
    assert list(c.current_work) == current
    assert list(c.pending_jobs) == pending
    for line in c.next_step.split("\n"):
        assert not line.rstrip().rstrip("*_)\"' ").endswith("?"), c.next_step
    if current or pending:
        assert not _DONE.search(c.next_step), c.next_step
    if current:
        # Named by its head at least: a very long task stands whole in Current Work.
        assert current[0][:200].rstrip() in c.next_step, c.next_step
    for path in ref["edited"]:
        assert f"`{path}`" in c.files_and_code, c.files_and_code
    present = {p.text() for p in payloads if isinstance(p, Message) and p.origin != "user"}
    for _, text in NARRATIVE_INJECTED:
        if text not in present:
            continue  # a summarizer cannot be held to text the span never showed it
        assert text[:40] not in c.primary_request
        assert text[:40] not in c.critical_context
    if ref["plan_ended"]:
        assert "Do not edit files yet" not in c.critical_context, c.critical_context
