"""The payloads of compactions, provider usage reports and retractions.

Invariants: a checkpoint names the span it replaces (`first_seq..last_seq`) and the code-owned
sections (Pending Jobs, Current Work) it copied; a retraction removes messages from the context
view, never from the log.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from compaction.contract import MAX_TOKENIZER_NAME_CHARS
from compaction.events._base import MAX_INT, _Frozen
from compaction.events._carry_data import JobRef, PlanRef
from compaction.events._work_data import TaskRef

Seq = Annotated[int, Field(ge=0, le=MAX_INT)]
"""A seq named inside an event's data."""

Resume = Literal["continue", "await_user"]
"""What the agent does after a compaction: go on with its tool loop, or wait for the user."""
RESUMES: tuple[Resume, ...] = ("continue", "await_user")


class HookRun(_Frozen):
    """One ``on_compact_start`` hook that ran for a compaction (the receipt's ``hooks``)."""

    name: str
    """The hook's name (its ``__name__``, else its class name)."""
    vetoed: bool = False
    """True when the hook vetoed (then no checkpoint was written: see `CompactionError.hooks`)."""
    added: str | None = None
    """The text the hook added to the summarizer's instructions, if any."""


class DroppedItem(_Frozen):
    """One thing the replaced span held that a narrative section left out."""

    text: str
    """The request, term, path, failure or constraint (its head, at most 200 characters)."""
    seqs: tuple[Seq, ...] = ()
    """Seqs of the replaced messages that hold it (the first few): the way back to it."""


class DroppedSection(_Frozen):
    """What one narrative section of a Checkpoint left out for its budget."""

    section: str
    """The section's heading, e.g. ``Files and Code``."""
    items: tuple[DroppedItem, ...]
    """What was left out, in the order the span held it (capped)."""
    more: int = Field(default=0, ge=0, le=MAX_INT)
    """Further items left out beyond the cap."""


class ProviderCompactionData(_Frozen):
    """What a provider's compaction returned for one checkpoint (or why it did not).

    The item is opaque: only the provider that made it can read it. The checkpoint's local
    text stays beside it, so any other format (or another provider) gets the local Checkpoint.
    """

    backend: str
    """The backend asked: ``openai-responses`` or ``anthropic``."""
    item: dict[str, JsonValue] | None = None
    """The provider's compaction item (OpenAI) or block (Anthropic), whole, exactly as returned;
    None when the backend failed and the local Checkpoint stands."""
    usage: dict[str, JsonValue] | None = None
    """The token usage the provider reported for the compaction call, as returned."""
    model: str | None = None
    """The model that compacted."""
    fallback_reason: str | None = None
    """Why the provider's item is missing (one line, secrets redacted); None when it is there."""
    open_items_kept: tuple[str, ...] | None = None
    """Where the provider's summary is readable (Anthropic's block ``content``): the open items
    (unfinished todo items, task subjects, running jobs' ids) it names; None when unreadable.
    The code-owned items always travel beside the item, whatever it kept."""
    open_items_missed: tuple[str, ...] | None = None
    """The open items a readable summary does not name (None when unreadable)."""


class CountedContext(_Frozen):
    """The context's token count right after a checkpoint, as the session that wrote it counted.

    Recorded so that a reopen answers ``context_tokens`` without loading a tokenizer (see
    `compaction.session.live_views`). Untrusted like every line: used only when `tokenizer` is
    the reading session's and `tokens` equals the checkpoint's `tokens_after`; otherwise the
    session counts, as it does for a log written before this field.
    """

    tokenizer: str = Field(min_length=1, max_length=MAX_TOKENIZER_NAME_CHARS, strict=True)
    """The name of the tokenizer that counted (`compaction.Tokenizer.name`)."""
    tokens: int = Field(ge=0, le=MAX_INT, strict=True)
    """The context's tokens right after the checkpoint (system, Checkpoint, kept messages)."""


class CheckpointData(_Frozen):
    """A compaction: a Checkpoint that replaces the events `first_seq..last_seq` in the context."""

    text: str
    """The rendered Checkpoint, as the model will read it."""
    first_seq: int = Field(ge=1, le=MAX_INT)
    """First event replaced (inclusive)."""
    last_seq: int = Field(ge=1, le=MAX_INT)
    """Last event replaced (inclusive)."""
    tokens_before: int = Field(ge=0, le=MAX_INT)
    """Context tokens just before the compaction."""
    tokens_after: int = Field(ge=0, le=MAX_INT)
    """Context tokens just after it."""
    summarizer: str
    """Which summarizer wrote the narrative sections."""
    fallback_reason: str | None = None
    """Why the configured summarizer was replaced by the fallback, if it was."""
    instructions: str | None = None
    """Focus instructions given to the summarizer for this compaction, if any."""
    pending: tuple[str, ...] = ()
    """Pending Jobs, copied by code from the latest todo list."""
    current: tuple[str, ...] = ()
    """Current Work, copied by code from the latest todo list."""
    pending_tasks: tuple[TaskRef, ...] | None = None
    """The shared list's `pending` tasks in Pending Jobs, copied by code (None: no tasks)."""
    current_tasks: tuple[TaskRef, ...] | None = None
    """The shared list's `in_progress` tasks in Current Work, copied by code (None: no tasks)."""
    log: str | None = None
    """The ``harness log`` argument that names this session (a path, or a store URL and
    ``--session ID``, passwords redacted), which the preamble shows (None: ``LOG``)."""
    jobs: tuple[JobRef, ...] | None = None
    """The jobs still running in Current Work, copied by code (None: no job ran)."""
    plan: PlanRef | None = None
    """The approved plan at the end of Current Work, carried by code (None: none approved)."""
    narrative_left_out: str | None = None
    """The receipt: why the narrative sections are empty (only the carried items and the fixed
    prompt fit the window), or None when a summarizer wrote them."""
    hooks: tuple[HookRun, ...] | None = None
    """The receipt: each ``on_compact_start`` hook that ran (None: no hook ran)."""
    dropped: tuple[DroppedSection, ...] | None = None
    """The receipt: per narrative section, what the span held that it left out (None: nothing)."""
    resume: Resume | None = None
    """``continue`` when the context ended inside a tool loop, ``await_user`` when it ended with
    the agent's answer (None in logs written before this field)."""
    provider: ProviderCompactionData | None = None
    """A provider backend's compaction beside the local Checkpoint (None: local only)."""
    counted: CountedContext | None = None
    """The context's count right after this checkpoint and the tokenizer that made it, recorded
    by the session that appended it (None in logs written before this field, or when the
    session could not be sure of the count: another writer may have appended first)."""


class UsageReportData(_Frozen):
    """Token figures a model provider reported for one API call (e.g. a summary call)."""

    purpose: str
    """What the call was for: ``summary`` for a compaction's summarizer, ``turn`` for the agent."""
    model: str
    """The model that answered."""
    prompt_tokens: int = Field(ge=0, le=MAX_INT)
    """Prompt tokens the provider processed."""
    completion_tokens: int = Field(ge=0, le=MAX_INT)
    """Tokens of the answer."""
    cached_tokens: int | None = Field(default=None, ge=0, le=MAX_INT)
    """Prompt tokens served from the provider's prefix cache; None when it did not say."""
    cache_write_tokens: int | None = Field(default=None, ge=0, le=MAX_INT)
    """Prompt tokens written to the provider's cache (Anthropic's ``cache_creation_input_tokens``);
    None when it did not say."""
    at: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """When the request was sent, in seconds on the host's clock (e.g. ``time.time()``), as the
    host passed it; None when it did not say. Cache-aware clearing reads the gaps between these
    (`compaction.backends.ToolResultClearer.from_log`); the model never sees it."""
    context_seq: int | None = Field(default=None, ge=0, le=MAX_INT)
    """The log's last seq when the request was built: its context is the context view through
    this seq. None: the events before the answer (the newest assistant message before this
    report), as a host that appends the answer and then its usage writes them."""


class OverflowData(_Frozen):
    """A provider refused a request as too long (a ``context/overflow`` event).

    The refusal proves the provider's real window is below the refused request (or the limit its
    message named): from then on the session's compactions use the smaller of the configured
    window and this one (`compaction.views.overflow_refusals`).
    """

    request_tokens: int = Field(ge=1, le=MAX_INT)
    """The refused request's size as this toolkit counted it (system prompt, tools, context)."""
    limit_tokens: int | None = Field(default=None, ge=1, le=MAX_INT)
    """The context window the provider's message named, in its own tokens; None when none."""


class RetractData(_Frozen):
    """Messages taken back out of the conversation (a tombstone: the log keeps them).

    Written by a host whose own protocol removes items (the OpenAI Agents SDK's ``pop_item`` and
    ``clear_session``); the context view drops the named messages, the log keeps every byte.
    """

    seqs: tuple[Seq, ...]
    """Seqs of the `message` events taken out of the context."""
    reason: str | None = None
    """Why, e.g. ``pop_item`` or ``clear_session``."""
