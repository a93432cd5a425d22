"""The context view: what the model sees, system messages, the newest Checkpoint, the kept messages.

The context projection's state is a buffer owned by the fold that created it: `apply` may extend
it in place, which keeps appends O(1).

Invariants: replaying the same events gives byte-identical views; a `todo/write` event never
enters the context view; a checkpoint folds the span it replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict

from compaction.events import (
    CheckpointData,
    CheckpointRecorded,
    Event,
    Message,
    MessageAdded,
    MessagesRetracted,
    Resume,
)
from compaction.views.clipping import shown_message

if TYPE_CHECKING:
    from jinja2 import Template


@cache
def _preamble_template() -> Template:
    # jinja2 loads on the first Checkpoint shown, not with the views: `harness todos` never needs it
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("compaction", "templates"),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    return env.get_template("checkpoint_preamble.md")


def checkpoint_preamble(
    first_seq: int | None = None,
    last_seq: int | None = None,
    resume: Resume | None = None,
    *,
    log: str | None = None,
    tasks: bool = False,
    todos: bool = True,
) -> str:
    """Return the text placed before a Checkpoint in the model's context.

    It names the span the Checkpoint replaced (``events 1..213 of this session``) and how to read
    any event of it back (``harness log LOG --seq N``, `Session.event`), and says how to go on:
    carry on from Current Work, or (``await_user``) wait for the user's next request. Without a
    span it speaks of "the earlier turns". `log` is the ``harness log`` argument naming the
    session (``LOG`` when unknown); with `tasks` it says the sections come from the shared task
    list (and, with `todos`, the todo list too).
    """
    return _preamble_template().render(
        first_seq=first_seq or 0,
        last_seq=last_seq or 0,
        resume=resume or "continue",
        log=log,
        tasks=tasks,
        todos=todos,
    )


@dataclass
class ContextState:
    """The model's context as a fold state: system messages, the checkpoint, the kept messages."""

    system: list[tuple[int, Message]] = field(default_factory=list)
    checkpoint: CheckpointRecorded | None = None
    messages: list[tuple[int, Message]] = field(default_factory=list)


class ContextWindow(BaseModel):
    """What the model sees now: system messages, then the checkpoint, then the kept messages."""

    model_config = ConfigDict(frozen=True)

    system: tuple[Message, ...] = ()
    checkpoint: CheckpointData | None = None
    messages: tuple[Message, ...] = ()
    seqs: tuple[int, ...] = ()
    """Seq of each kept message, aligned with `messages`."""

    def as_messages(self) -> list[Message]:
        """Return the chat messages in order, the checkpoint as one user message."""
        out = list(self.system)
        if self.checkpoint is not None:
            out.append(checkpoint_message(self.checkpoint))
        out += self.messages
        return out


def checkpoint_message(checkpoint: CheckpointData) -> Message:
    """Return the user message that carries a checkpoint into the context (preamble + text).

    The preamble names events ``1..last_seq``: a Checkpoint folds in every earlier one, so it
    stands for everything the context no longer shows.
    """
    tasks = bool(checkpoint.pending_tasks or checkpoint.current_tasks)
    preamble = checkpoint_preamble(
        1,
        checkpoint.last_seq,
        checkpoint.resume,
        log=checkpoint.log,
        tasks=tasks,
        todos=bool(checkpoint.pending or checkpoint.current) or not tasks,
    )
    return Message(role="user", content=preamble + checkpoint.text)


class ContextProjection:
    """The model's context: messages only, with each checkpoint folding the span it replaced.

    A clipped tool result shows as its head, a note and its tail (`compaction.views.clipping`).
    """

    name: ClassVar[str] = "context"
    state_version: ClassVar[int] = 2

    def init(self) -> ContextState:
        """Return an empty context."""
        return ContextState()

    def apply(self, state: ContextState, event: Event) -> ContextState:
        """Add messages; on a checkpoint, drop the messages of the span it replaced."""
        if isinstance(event, MessageAdded):
            shown = shown_message(event.data, event.seq)
            if shown.role == "system":
                state.system.append((event.seq, shown))
            else:
                state.messages.append((event.seq, shown))
        elif isinstance(event, CheckpointRecorded):
            last = event.data.last_seq
            state.messages = [(s, m) for s, m in state.messages if s > last]
            state.checkpoint = event
        elif isinstance(event, MessagesRetracted):
            gone = set(event.data.seqs)
            state.messages = [(s, m) for s, m in state.messages if s not in gone]
            state.system = [(s, m) for s, m in state.system if s not in gone]
        return state

    def view(self, state: ContextState) -> ContextWindow:
        """Return an immutable snapshot of the context."""
        return ContextWindow(
            system=tuple(m for _, m in state.system),
            checkpoint=state.checkpoint.data if state.checkpoint else None,
            messages=tuple(m for _, m in state.messages),
            seqs=tuple(s for s, _ in state.messages),
        )


def checkpoint_message_for(
    text: str,
    *,
    last_seq: int | None = None,
    resume: Resume | None = None,
    log: str | None = None,
    tasks: bool = False,
    todos: bool = True,
) -> Message:
    """Return the user message that would carry a Checkpoint of this text into the context.

    With `last_seq` the preamble names the span (``events 1..last_seq``), as `checkpoint_message`
    does for a recorded checkpoint; without it, it speaks of "the earlier turns". `log`,
    `tasks` and `todos` are those of `checkpoint_preamble`.
    """
    first = None if last_seq is None else 1
    last = None if last_seq is None else max(1, last_seq)
    preamble = checkpoint_preamble(first, last, resume, log=log, tasks=tasks, todos=todos)
    return Message(role="user", content=preamble + text)
