"""The compactor: replace the oldest span of the model's context with a Checkpoint.

`compact(session, policy)` picks a safe cut, has a summarizer write the narrative sections,
copies the tasks from the log, renders the Checkpoint and appends one ``compaction/checkpoint``
event. The context view then shows the system messages, the Checkpoint (one user message behind
a short preamble) and the kept tail; the todos view is untouched.

Where the tasks come from: `Session.latest_todos`, the latest todo list recorded in the whole log
at the moment of compaction (even when its ``todo/write`` sits in the kept tail), never the
``todos`` view, which a new turn empties. Every ``pending`` item goes into Pending Jobs and every
``in_progress`` item into Current Work, verbatim and in list order; ``completed`` items never do.

An unfinished list from an earlier turn (its ``todo/write`` came before the latest
``turn/start`` and the model has not rewritten it since) is still the latest list, so it is
carried: its unfinished items stay in Pending Jobs and Current Work, and the Checkpoint says, in
a note at the top of Pending Jobs, that the list predates the latest request. A task leaves the
Checkpoint only when the model marks it completed or rewrites the list without it.

The cut. The span replaced runs from just after the previous checkpoint's span to the cut; the
kept tail is everything after it. A cut is safe when

- it falls just before a user message (a turn boundary), or after the last message (everything
  is summarized, the tail is empty);
- no tool call is separated from its result: no call before the cut is answered after it, and no
  call of the last assistant message is still waiting for its result (a call in an earlier
  message that was never answered is taken as abandoned);
- so no answer is ever kept without its request; system messages are never summarized (they stay
  in the context whatever the span).

Of the safe cuts, the compactor takes the one that keeps the longest tail within
`CompactionPolicy.retain_tokens`; when none fits, the one with the shortest tail.

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
`compaction.invariants.check_checkpoint_cut`); its Pending Jobs and Current Work equal the
unfinished items of the latest list; the same log and policy give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from compaction.checkpoint import Checkpoint, Section, parse_checkpoint, render_checkpoint
from compaction.errors import CompactionError, ConfigError, SeqConflictError
from compaction.events import CheckpointData, CheckpointRecorded, Message, TodoItem
from compaction.secrets import redact
from compaction.session import Session
from compaction.summarizers import ExtractiveSummarizer, Summarizer, SummaryInput, check_output
from compaction.summarizers.recorded import recorded_checkpoint
from compaction.tokens import count_message
from compaction.views import checkpoint_message

DEFAULT_WINDOW: Final = 128_000
"""Default context window, in tokens."""


@dataclass(frozen=True)
class CompactionPolicy:
    """When to compact and how much to keep.

    Args:
        window_tokens: the model's context window, in tokens.
        threshold: compact when the context reaches this share of the window (default 0.8).
        retain: keep at most this share of the window verbatim as the tail (default 0.16).
        output_reserve: tokens kept free for the model's reply; compaction also triggers when
            the context passes ``window_tokens - output_reserve`` (default 0).
        summary_share: share of the window the narrative sections may use (default 0.03).

    Raises:
        ConfigError: naming every bad value, e.g. a retain share not below the threshold.
    """

    window_tokens: int = DEFAULT_WINDOW
    threshold: float = 0.8
    retain: float = 0.16
    output_reserve: int = 0
    summary_share: float = 0.03

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ConfigError("invalid CompactionPolicy: " + "; ".join(problems))

    def _problems(self) -> list[str]:
        problems: list[str] = []
        w, t, r, o, s = (
            self.window_tokens,
            self.threshold,
            self.retain,
            self.output_reserve,
            self.summary_share,
        )
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            return [f"window_tokens must be a positive integer, not {w!r}"]
        for name, value in (("threshold", t), ("retain", r), ("summary_share", s)):
            if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
                return [f"{name} must be a number, not {value!r}"]
        if not 0 < t <= 1:
            problems.append(f"threshold must be in (0, 1], not {t!r}")
        if not 0 <= r < 1:
            problems.append(f"retain must be in [0, 1), not {r!r}")
        if not 0 < s < 1:
            problems.append(f"summary_share must be in (0, 1), not {s!r}")
        if not problems and r + s >= t:
            problems.append(
                f"retain ({r!r}) + summary_share ({s!r}) must stay below threshold ({t!r}), "
                "or compaction could not shrink the context"
            )
        if isinstance(o, bool) or not isinstance(o, int) or not 0 <= o < w:
            problems.append(f"output_reserve must be an integer in [0, window_tokens), not {o!r}")
        return problems

    @property
    def trigger_tokens(self) -> int:
        """Context size at which compaction is due."""
        return min(
            int(self.threshold * self.window_tokens), self.window_tokens - self.output_reserve
        )

    @property
    def retain_tokens(self) -> int:
        """Most tokens of the kept tail."""
        return int(self.retain * self.window_tokens)

    @property
    def summary_tokens(self) -> int:
        """Budget of the narrative sections together."""
        return max(1, int(self.summary_share * self.window_tokens))

    def should_compact(self, context_tokens: int) -> bool:
        """Tell whether a context of this size is due for compaction (O(1), for agent loops)."""
        return context_tokens >= self.trigger_tokens


@dataclass(frozen=True)
class CompactionResult:
    """What a compaction did (or, with ``dry_run``, would do)."""

    checkpoint: Checkpoint
    """The Checkpoint written."""
    data: CheckpointData
    """The payload of the ``compaction/checkpoint`` event (its text, span and token counts)."""
    event: CheckpointRecorded | None
    """The event appended, or None for a dry run."""
    replaced_messages: int
    """How many messages the span replaced."""
    replaced_tokens: int
    """Tokens the span replaced, the previous checkpoint included."""
    kept_messages: int
    """How many non-system messages stay verbatim after the checkpoint."""

    @property
    def tokens_before(self) -> int:
        """Context tokens before the compaction."""
        return self.data.tokens_before

    @property
    def tokens_after(self) -> int:
        """Context tokens after it."""
        return self.data.tokens_after

    @property
    def reduction(self) -> float:
        """Share of the context the compaction removed (0..1; negative if it grew)."""
        before = self.data.tokens_before
        return (before - self.data.tokens_after) / before if before else 0.0


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction is about to do, handed to ``on_compact_start`` before the summarizer."""

    first_seq: int
    """First event the Checkpoint will replace."""
    last_seq: int
    """Last event it will replace."""
    replaced_messages: int
    """Messages of the span."""
    kept_messages: int
    """Messages that stay verbatim after the Checkpoint."""
    tokens_before: int
    """Context tokens now."""
    summarizer: str
    """The configured summarizer's name."""
    instructions: str | None
    """The focus instructions so far."""


CompactStart = Callable[[CompactionPlan], "str | bool | None"]
"""``on_compact_start``: None goes on, False vetoes, text adds to the focus instructions."""
CompactEnd = Callable[["CompactionResult"], None]
"""``on_compact_end``: called with the result once the compaction is done."""


# --- the cut -----------------------------------------------------------------------------------


def unsafe_cuts(messages: Sequence[Message]) -> list[bool]:
    """Return, for each cut position 0..n, whether it would split a tool call from its result.

    Position k means ``messages[:k]`` are replaced and ``messages[k:]`` kept.
    """
    n = len(messages)
    calls: dict[str, int] = {}
    delta = [0] * (n + 2)
    for i, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id in calls:
            start = calls.pop(message.tool_call_id)
            delta[start + 1] += 1
            delta[i + 1] -= 1
        for call in message.tool_calls or ():
            calls[call.id] = i
    last_assistant = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    for start in calls.values():
        if start == last_assistant:
            delta[start + 1] += 1  # still waiting for its result: no cut after it
            delta[n + 1] -= 1
    unsafe, depth = [], 0
    for k in range(n + 1):
        depth += delta[k]
        unsafe.append(depth > 0)
    return unsafe


def select_cut(messages: Sequence[Message], tokens: Sequence[int], retain_tokens: int) -> int:
    """Return the cut position k (replace ``messages[:k]``, keep the rest); k >= 1.

    Candidates are positions just before a user message, and the end (keep nothing); a candidate
    that splits a tool call from its result is skipped. The smallest candidate whose tail fits
    `retain_tokens` wins; when none fits, the largest.

    Raises:
        CompactionError: ``nothing_to_compact`` with no message, ``no_safe_cut`` with no safe
            candidate.
    """
    n = len(messages)
    if n == 0:
        raise CompactionError("nothing_to_compact", "no message since the last checkpoint")
    unsafe = unsafe_cuts(messages)
    candidates = [
        k for k in range(1, n + 1) if not unsafe[k] and (k == n or messages[k].role == "user")
    ]
    if not candidates:
        raise CompactionError(
            "no_safe_cut",
            "every cut would split a tool call from its result or keep an answer without its "
            "request; append the pending tool results, then compact",
        )
    tail = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        tail[i] = tail[i + 1] + tokens[i]
    fitting = [k for k in candidates if tail[k] <= retain_tokens]
    return fitting[0] if fitting else candidates[-1]


# --- compaction --------------------------------------------------------------------------------


def unfinished(todos: Sequence[TodoItem]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the pending and the in-progress item texts of a list, each in list order."""
    pending = tuple(t.content for t in todos if t.status == "pending")
    current = tuple(t.content for t in todos if t.status == "in_progress")
    return pending, current


def previous_checkpoint(data: CheckpointData | None) -> Checkpoint | None:
    """Read the previous checkpoint back; text this toolkit did not render is kept as context."""
    if data is None:
        return None
    try:
        return parse_checkpoint(data.text)
    except CompactionError:
        return recorded_checkpoint(data.text, data.summarizer)


def _summarize(
    summarizer: Summarizer, fallback: ExtractiveSummarizer, span: SummaryInput
) -> tuple[dict[Section, str], str, str | None]:
    try:
        return check_output(summarizer.summarize(span), span), summarizer.name, None
    except Exception as exc:  # any failure of a pluggable summarizer falls back, and says why
        if summarizer is fallback:
            raise CompactionError("summarizer_failed", f"{type(exc).__name__}: {exc}") from exc
        reason = redact(f"{summarizer.name} failed: {type(exc).__name__}: {exc}")
        return check_output(fallback.summarize(span), span), fallback.name, reason


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
    on_compact_start: CompactStart | None = None,
    on_compact_end: CompactEnd | None = None,
) -> CompactionResult:
    """Compact the session's context into a Checkpoint and append the checkpoint event.

    One consistent view: the session first reads what any writer appended, the Checkpoint is
    computed from that state, and the event is appended only if the log's last seq is still the
    one read (`expected_seq`). If another process appended meanwhile (a new todo list, say),
    nothing is written and the compaction is recomputed from the new state, up to
    `COMPACTION_ATTEMPTS` times; so a checkpoint never carries an out-of-date list.

    Args:
        session: the live session (its views give the context and the token counts).
        policy: window, threshold and tail (default `CompactionPolicy()`).
        summarizer: writes the narrative sections (default `ExtractiveSummarizer`); if it
            raises, the extractive summarizer is used instead and the event records why.
        force: compact even below the policy's threshold.
        dry_run: compute everything but append nothing (`CompactionResult.event` is None).
        instructions: focus for the summarizer, recorded in the event.
        on_compact_start: called with the `CompactionPlan` before the summarizer runs; returns
            None to go on, False to veto, or text added to the instructions.
        on_compact_end: called with the `CompactionResult` at the end.

    Raises:
        CompactionError: ``below_threshold`` (without `force`), ``nothing_to_compact``,
            ``no_safe_cut``, ``summarizer_failed``, ``vetoed`` (by `on_compact_start`), or
            ``conflict`` (retryable: other writers appended during every attempt).
    """
    policy = policy or CompactionPolicy()
    for _ in range(COMPACTION_ATTEMPTS):
        session.refresh()
        seen = session.applied_seq
        result = _plan(
            session,
            policy,
            summarizer,
            force=force,
            instructions=instructions,
            on_compact_start=on_compact_start,
        )
        if not dry_run:
            try:
                event = session.append(result.data, expected_seq=seen)
            except SeqConflictError:
                continue
            assert isinstance(event, CheckpointRecorded)
            result = replace(result, event=event)
        if on_compact_end is not None:
            on_compact_end(result)
        return result
    raise CompactionError(
        "conflict",
        f"{session.where}: other writers appended during each of {COMPACTION_ATTEMPTS} attempts, "
        "so no checkpoint was written (it would have carried an out-of-date view); retry",
    )


def _plan(
    session: Session,
    policy: CompactionPolicy,
    summarizer: Summarizer | None,
    *,
    force: bool,
    instructions: str | None,
    on_compact_start: CompactStart | None,
) -> CompactionResult:
    """Compute the compaction of the session as it is now, appending nothing."""
    tokens_before = session.context_tokens
    if not force and not policy.should_compact(tokens_before):
        raise CompactionError(
            "below_threshold",
            f"the context holds {tokens_before} tokens, below the trigger of "
            f"{policy.trigger_tokens} ({policy.threshold:g} of a {policy.window_tokens}-token "
            "window); nothing was done (force it with force=True, CLI --force)",
        )
    context = session.context
    tokens = [session.event_tokens(s) for s in context.seqs]
    k = select_cut(context.messages, tokens, policy.retain_tokens)
    previous_data = context.checkpoint
    previous = previous_checkpoint(previous_data)
    pending, current = unfinished(session.latest_todos)
    fallback = ExtractiveSummarizer(session.tokenizer)
    instructions = _start(
        on_compact_start,
        CompactionPlan(
            first_seq=previous_data.last_seq + 1 if previous_data else 1,
            last_seq=context.seqs[k] - 1 if k < len(context.seqs) else session.applied_seq,
            replaced_messages=k,
            kept_messages=len(context.messages) - k,
            tokens_before=tokens_before,
            summarizer=(summarizer or fallback).name,
            instructions=instructions,
        ),
    )
    span = SummaryInput(
        messages=context.messages[:k],
        seqs=context.seqs[:k],
        previous=previous,
        todos=session.latest_todos,
        budget_tokens=policy.summary_tokens,
        modes=session.turn_modes.modes_of(context.seqs[:k]),
        mode=session.turn_modes.mode_now,
        instructions=instructions,
    )
    sections, used, fallback_reason = _summarize(summarizer or fallback, fallback, span)
    checkpoint = Checkpoint(
        primary_request=sections[Section.PRIMARY_REQUEST],
        key_concepts=sections[Section.KEY_CONCEPTS],
        files_and_code=sections[Section.FILES_AND_CODE],
        errors_and_fixes=sections[Section.ERRORS_AND_FIXES],
        pending_jobs=pending,
        current_work=current,
        next_step=sections[Section.NEXT_STEP],
        critical_context=sections[Section.CRITICAL_CONTEXT],
        carried_over=bool(pending or current) and session.todos.seq is None,
    )
    text = render_checkpoint(checkpoint)
    previous_tokens = (
        count_message(session.tokenizer, checkpoint_message(previous_data)) if previous_data else 0
    )
    replaced = previous_tokens + sum(tokens[:k])
    new_tokens = count_message(session.tokenizer, checkpoint_message_for(text))
    data = CheckpointData(
        text=text,
        first_seq=previous_data.last_seq + 1 if previous_data else 1,
        last_seq=context.seqs[k] - 1 if k < len(context.seqs) else session.applied_seq,
        tokens_before=tokens_before,
        tokens_after=tokens_before - replaced + new_tokens,
        summarizer=used,
        fallback_reason=fallback_reason,
        instructions=instructions,
        pending=pending,
        current=current,
    )
    return CompactionResult(
        checkpoint=checkpoint,
        data=data,
        event=None,
        replaced_messages=k,
        replaced_tokens=replaced,
        kept_messages=len(context.messages) - k,
    )


def _start(hook: CompactStart | None, plan: CompactionPlan) -> str | None:
    """Run ``on_compact_start``; return the instructions it leaves, or raise its veto."""
    instructions = plan.instructions.strip() if plan.instructions else None
    if hook is None:
        return instructions or None
    answer = hook(plan)
    if answer is False:
        raise CompactionError("vetoed", "on_compact_start vetoed the compaction; nothing was done")
    if isinstance(answer, str) and answer.strip():
        return "\n".join(filter(None, [instructions, answer.strip()]))
    return instructions or None


def checkpoint_message_for(text: str) -> Message:
    """Return the user message that would carry a Checkpoint of this text into the context."""
    return checkpoint_message(
        CheckpointData(
            text=text, first_seq=1, last_seq=1, tokens_before=0, tokens_after=0, summarizer=""
        )
    )


def maybe_compact(
    session: Session,
    policy: CompactionPolicy,
    *,
    summarizer: Summarizer | None = None,
    instructions: str | None = None,
    on_compact_start: CompactStart | None = None,
    on_compact_end: CompactEnd | None = None,
) -> CompactionResult | None:
    """Compact when the policy says the context is due; return None otherwise (for agent loops).

    `instructions` and the hooks are those of `compact`.
    """
    if not policy.should_compact(session.context_tokens):
        return None
    return compact(
        session,
        policy,
        summarizer=summarizer,
        instructions=instructions,
        on_compact_start=on_compact_start,
        on_compact_end=on_compact_end,
    )
