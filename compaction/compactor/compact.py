"""The compactor: replace the oldest span of the model's context with a Checkpoint.

`compact(session, policy)` picks a safe cut, has a summarizer write the narrative sections,
copies the tasks from the log, renders the Checkpoint and appends one ``compaction/checkpoint``
event. The context view then shows the system messages, the Checkpoint (one user message behind
a short preamble) and the kept tail; the todos view is untouched.

Where the tasks come from: `Session.latest_todos`, the latest todo list recorded in the whole log
at the moment of compaction (even when its ``todo/write`` sits in the kept tail), never the
``todos`` view, which a new turn empties. Every ``pending`` item goes into Pending Jobs and every
``in_progress`` item into Current Work, verbatim and in list order; ``completed`` items never do.
The shared task list (`Session.tasks`, every agent's; both lists may exist in one session) is
copied the same way after the todo items: ``pending`` tasks into Pending Jobs, ``in_progress``
ones into Current Work, each with its id and owner, in creation order. Only when that
Checkpoint cannot fit the window at all (``does_not_fit``) and an item is longer than the tools
now accept (`MAX_ITEM_CHARS`: one recorded before the cap, or imported) is each such item
carried as its head and a note naming its length and the seq that holds it whole
(`clip_carried`), and the plan is made again, so one item can never disable compaction.

An unfinished list from an earlier turn (its ``todo/write`` came before the latest
``turn/start`` and the model has not rewritten it since) is still the latest list, so it is
carried: its unfinished items stay in Pending Jobs and Current Work, and the Checkpoint says, in
a note at the top of Pending Jobs, that the list predates the latest request. A task leaves the
Checkpoint only when the model marks it completed or rewrites the list without it.

The budget. Everything the model receives counts: the fixed part of the request (system prompt
and tool catalog, which the caller measures and passes as ``fixed_tokens``: this package never
builds prompts; `prompts.fixed_tokens` does it), the context view (system messages from the log,
the Checkpoint, the kept messages) and the output reserved for the reply. Compaction is due when
``fixed + context + output_reserve`` reaches ``threshold`` (default 0.9) of the window, or, right
after a todo item or task turned completed, the boundary floor (`CompactionPolicy.boundary_share`:
by default 0.4 of the window).

The cut (`compaction.cuts`). The span replaced runs from just after the previous checkpoint's
span to the cut; the kept tail is everything after it. A cut falls before a user message, or
before an assistant message once every earlier tool call has its result (so inside a long turn),
or after the last message, and never between a tool call and its result. Of those cuts, the
compactor keeps the longest tail within `CompactionPolicy.retain_tokens` that also leaves room in
the window for the fixed part, the system messages, the Checkpoint and the reserve;
when no non-empty tail is within retain, it keeps the latest step if that fits the room (retain
0 asks for no tail).

The guarantee. After a compaction the whole request fits the window:
``fixed + tokens_after + output_reserve <= window_tokens``. When the Checkpoint turns out larger
than planned, the cut moves later (a shorter tail) and the span is summarized again; when even
an empty tail does not fit, compaction raises ``CompactionError("does_not_fit")`` naming the
parts, and appends nothing.

Focus and hooks. ``compact(..., instructions="keep the API decisions")`` hands focus
instructions to the summarizer (`SummaryInput.instructions`: the LLM summarizer appends them to
its instruction, the extractive one puts them under Critical Context) and records them in the
event. ``on_compact_start(plan)`` runs once the span is chosen and before the summarizer: it
returns None to go on, False to veto (`CompactionError` ``vetoed``, nothing appended) or text to
add to the instructions (a host's extra context, like Claude Code's PreCompact hooks).
``on_compact_end(result)`` runs after the event is appended (or the dry run computed).

A previous checkpoint another agent recorded (summarizer ``claude-code``, ``codex``) is read
by `compaction.summarizers.recorded` and folded in like one of ours.

Re-compaction folds the previous Checkpoint in: the summarizer gets it as `SummaryInput.previous`
and the new Checkpoint replaces it, so a session can be compacted any number of times; the task
sections are rebuilt from the log each time, so no unfinished task is ever lost.

Invariants: a checkpoint's span never splits a tool call from its result (checked by
`compaction.invariants.check_checkpoint_cut`); after a compaction the request fits the window;
its Pending Jobs and Current Work equal the unfinished items of the latest list; the same log and
policy give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

from compaction.backends.base import BackendSpan, CompactionBackend, record_backend
from compaction.compactor._carried import CARRIED_HEAD as CARRIED_HEAD
from compaction.compactor._carried import clip_carried as clip_carried
from compaction.compactor._carried import unfinished as unfinished
from compaction.compactor._carried import unfinished_tasks as unfinished_tasks
from compaction.compactor._outcomes import CompactEnd as CompactEnd
from compaction.compactor._outcomes import CompactionPlan as CompactionPlan
from compaction.compactor._outcomes import CompactionResult as CompactionResult
from compaction.compactor._outcomes import CompactStart as CompactStart
from compaction.compactor._outcomes import CompactStarts as CompactStarts
from compaction.compactor._planner import plan_compaction
from compaction.compactor._planner import previous_checkpoint as previous_checkpoint
from compaction.cuts import select_cut as select_cut
from compaction.cuts import unsafe_cuts as unsafe_cuts
from compaction.errors import CompactionError, ConfigError, SeqConflictError
from compaction.events import CheckpointRecorded, surrogate_problem
from compaction.policy import DEFAULT_WINDOW as DEFAULT_WINDOW
from compaction.policy import CompactionPolicy as CompactionPolicy
from compaction.session import Session
from compaction.summarizers import Summarizer
from compaction.views.provider_checkpoint import checkpoint_tokens

COMPACTION_ATTEMPTS: Final = 3
"""How often `compact` recomputes when other writers keep appending before giving up."""


def compact(
    session: Session,
    policy: CompactionPolicy | None = None,
    *,
    summarizer: Summarizer | None = None,
    force: bool = False,
    dry_run: bool = False,
    instructions: str | None = None,
    on_compact_start: CompactStarts | None = None,
    on_compact_end: CompactEnd | None = None,
    fixed_tokens: int = 0,
    backend: CompactionBackend | None = None,
) -> CompactionResult:
    """Compact the session's context into a Checkpoint and append the checkpoint event.

    One consistent view: the session first reads what any writer appended, the Checkpoint is
    computed from that state, and the event is appended only if the log's last seq is still the
    one read (`expected_seq`). If another process appended meanwhile (a new todo list, say),
    nothing is written and the compaction is recomputed from the new state, up to
    `COMPACTION_ATTEMPTS` times; on an SQL store, then once more inside the store's transaction
    (`Session.batch`), where no writer can overtake it, so it lands under any number of
    concurrent writers (a JSONL log is not held during a summary: its writers would wait on the
    file's lock). A checkpoint never carries an out-of-date list.

    Args:
        session: the live session (its views give the context and the token counts).
        policy: window, threshold and tail (default `CompactionPolicy()`).
        summarizer: writes the narrative sections (default `ExtractiveSummarizer`); if it
            raises, the extractive summarizer is used instead and the event records why.
        force: compact even below the policy's threshold.
        dry_run: compute everything but append nothing (`CompactionResult.event` is None).
        instructions: focus for the summarizer, recorded in the event.
        on_compact_start: a hook (or several, run in order) called with the `CompactionPlan`
            before the summarizer runs; each returns None to go on, False to veto, or text
            added to the instructions. The event's receipt (``hooks``) records each one.
        on_compact_end: called with the `CompactionResult` at the end.
        fixed_tokens: tokens of the request besides the context view: the system prompt and
            the tool catalog (`prompts.fixed_tokens` counts them).
        backend: a provider's compaction recorded beside the local Checkpoint
            (`compaction.backends`; None: local only); not called on a dry run; on any
            failure the local Checkpoint stands and the event records why.

    Raises:
        CompactionError: ``below_threshold`` (without `force`), ``nothing_to_compact``,
            ``no_safe_cut``, ``summarizer_failed``, ``vetoed`` (by `on_compact_start`),
            ``does_not_fit`` (the fixed part, the system messages, the Checkpoint and the
            reserve alone exceed the window), or ``conflict`` (retryable: other writers
            appended during every attempt).
        ConfigError: `instructions` (or a hook's text) hold a lone surrogate, which no log
            line can hold.
    """
    policy = policy or CompactionPolicy()
    if instructions and (problem := surrogate_problem("instructions", instructions)):
        raise ConfigError(f"{problem}; give valid Unicode text")

    def attempt() -> CompactionResult | None:
        session.refresh()
        seen = session.applied_seq
        result = plan_compaction(
            session,
            policy,
            summarizer,
            force=force,
            instructions=instructions,
            on_compact_start=on_compact_start,
            fixed=fixed_tokens,
        )
        if dry_run:  # with the count an append would record in it
            return replace(result, data=session.counted_checkpoint(result.data))
        result = _with_backend(backend, session, result)
        try:
            event = session.append(result.data, expected_seq=seen)
        except SeqConflictError:
            return None
        assert isinstance(event, CheckpointRecorded)
        # The data as appended: with the count the session recorded in it (`counted`).
        return replace(result, data=event.data, event=event)

    result = _land(session, attempt)
    if on_compact_end is not None:
        on_compact_end(result)
    return result


def _land(session: Session, attempt: Callable[[], CompactionResult | None]) -> CompactionResult:
    """Run `attempt` until no other writer overtakes it, or raise ``conflict``."""
    for _ in range(COMPACTION_ATTEMPTS):
        result = attempt()
        if result is not None:
            return result
    if session.in_store:
        # Writers kept winning the race: plan once more inside the store's transaction,
        # where no writer can overtake it, so this attempt lands.
        with session.batch():
            result = attempt()
        if result is not None:
            return result
    raise CompactionError(
        "conflict",
        f"{session.where}: other writers appended during each of {COMPACTION_ATTEMPTS} "
        "attempts, so no checkpoint was written (it would have carried an out-of-date "
        "view); retry",
    )


def _with_backend(
    backend: CompactionBackend | None, session: Session, result: CompactionResult
) -> CompactionResult:
    """Return the result with the provider backend's item (or its failure) in the event."""
    if backend is None:
        return result
    context, k = session.context, result.replaced_messages
    span = BackendSpan(
        messages=context.messages[:k],
        seqs=context.seqs[:k],
        previous=context.checkpoint,
        instructions=result.data.instructions,
    )
    data = record_backend(backend, span, result.data)
    # The provider's item is part of its next request: count it in tokens_after too.
    grown = checkpoint_tokens(session.tokenizer, data) - checkpoint_tokens(
        session.tokenizer, result.data
    )
    return replace(result, data=data.model_copy(update={"tokens_after": data.tokens_after + grown}))


def compaction_due(session: Session, policy: CompactionPolicy, fixed_tokens: int = 0) -> bool:
    """Tell whether `maybe_compact` would compact now: the same O(1) check it makes.

    In the provider's tokens once the session learned its scale, with the boundary trigger;
    a caller that prepares something only for a compaction (a summarizer) asks this.
    """
    policy = policy.in_counted_tokens(session.token_scale)
    completed = session.progress.completed_since_call
    return policy.is_due(session.context_tokens, fixed_tokens, completed=completed)


def maybe_compact(
    session: Session,
    policy: CompactionPolicy,
    *,
    summarizer: Summarizer | None = None,
    instructions: str | None = None,
    on_compact_start: CompactStarts | None = None,
    on_compact_end: CompactEnd | None = None,
    fixed_tokens: int = 0,
) -> CompactionResult | None:
    """Compact when the whole request is due; return None otherwise (for agent loops).

    `fixed_tokens` is the system prompt and tool catalog (`prompts.fixed_tokens`); the check is
    O(1): ``fixed_tokens + session.context_tokens`` against the trigger, or, with
    `CompactionPolicy.boundary_threshold`, against the boundary floor right after a todo item
    or task turned completed (since the previous model call; `CompactionPolicy.is_due`).
    `instructions` and the hooks are those of `compact`. Once the session has learned the
    provider's token scale (`Session.token_scale`), the policy's window is the provider's
    tokens: the check and the compaction use `CompactionPolicy.in_counted_tokens`. Once a
    provider refused a request as too long (a ``context/overflow`` event), the window is at
    most what that refusal proved (`Session.refused_window`, `CompactionPolicy.capped`).
    """
    policy = policy.capped(session.refused_window)
    if not compaction_due(session, policy, fixed_tokens):
        return None
    return compact(
        session,
        policy.in_counted_tokens(session.token_scale),
        summarizer=summarizer,
        instructions=instructions,
        on_compact_start=on_compact_start,
        on_compact_end=on_compact_end,
        fixed_tokens=fixed_tokens,
    )
