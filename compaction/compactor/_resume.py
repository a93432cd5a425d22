"""The resume decision: after a compaction, go on with the tool loop or wait for the user.

Decided from the log, recorded in the ``compaction/checkpoint`` event (``resume``) and stated to
the model twice: in the preamble before the Checkpoint and in Next Step.

- ``continue``: the context (the span replaced and the tail kept) ends inside a tool loop: the
  last message is a tool result, or an assistant message with tool calls; or it ends with a
  request the agent has not answered yet;
- ``await_user``: the last assistant message was a final answer (no tool calls), or the last
  message is the user's interruption or a local command (``/exit``, ``/copy``, their output:
  origins ``interruption`` and ``command``): the user stopped the loop. Next Step then
  says to wait for the user's next request (`agree_with_resume`): the agent never starts the next
  pending item on its own; it still names the task in progress, to continue once the user asks
  (so Next Step keeps following Current Work).

Messages of origin ``reminder`` (this toolkit's stale-list reminders) and ``mode_switch`` do not
count: they are not a person's turn.

Invariants: the decision is a pure function of the context's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Final

from jinja2 import Template

from compaction.checkpoint import Section, template_environment
from compaction.events import Message, Resume

TASK_CHARS: Final = 300
"""Characters of the task in progress Next Step names (it stands whole in Current Work)."""

_NOT_A_TURN = frozenset({"reminder", "mode_switch"})
_STOPPED = frozenset({"interruption", "command"})
"""Origins of a last message by which the user stopped the loop: wait for the user."""


def resume_decision(messages: Sequence[Message]) -> Resume:
    """Return ``continue`` or ``await_user`` for a context ending with these messages."""
    for message in reversed(messages):
        if message.role == "system" or message.origin in _NOT_A_TURN:
            continue
        if message.role == "assistant":
            return "continue" if message.tool_calls else "await_user"
        return "await_user" if message.origin in _STOPPED else "continue"
    return "await_user"


@cache
def _template() -> Template:
    return template_environment().get_template("await_user.md.j2")


def await_user_step(current: Sequence[str] = ()) -> str:
    """Return the Next Step of an ``await_user`` Checkpoint (``templates/await_user.md.j2``)."""
    task = " ".join(current[0].split())[:TASK_CHARS] if current else ""
    return _template().render(task=task).strip()


def agree_with_resume(
    sections: dict[Section, str], resume: Resume, current: Sequence[str] = ()
) -> dict[Section, str]:
    """Return the narrative with Next Step agreeing with the resume decision.

    ``await_user`` replaces Next Step with `await_user_step` (wait for the user, never "start
    the next pending item"; `current`, the tasks in progress, named for when the user asks);
    ``continue`` leaves it as the summarizer and the output checks wrote it.
    """
    if resume != "await_user":
        return sections
    return {**sections, Section.NEXT_STEP: await_user_step(current)}


__all__ = [
    "resume_decision",
]
