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
``fixed + context + output_reserve`` reaches ``threshold`` (default 0.8) of the window.

The cut (`compaction.cuts`). The span replaced runs from just after the previous checkpoint's
span to the cut; the kept tail is everything after it. A cut falls before a user message, or
before an assistant message once every earlier tool call has its result (so inside a long turn),
or after the last message, and never between a tool call and its result. Of those cuts, the
compactor keeps the longest tail within `CompactionPolicy.retain_tokens` that also leaves room in
the window for the fixed part, the system messages, the Checkpoint and the reserve.

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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from compaction.backends.base import BackendSpan, CompactionBackend, record_backend
from compaction.backends.view import checkpoint_tokens
from compaction.checkpoint import Checkpoint, Section, parse_checkpoint, render_checkpoint
from compaction.cuts import cut_points, tail_tokens
from compaction.cuts import select_cut as select_cut
from compaction.cuts import unsafe_cuts as unsafe_cuts
from compaction.errors import CompactionError, SeqConflictError
from compaction.events import CheckpointData, CheckpointRecorded, HookRun, Resume, TaskRef, TodoItem
from compaction.outcomes import CompactEnd as CompactEnd
from compaction.outcomes import CompactionPlan as CompactionPlan
from compaction.outcomes import CompactionResult as CompactionResult
from compaction.outcomes import CompactStart as CompactStart
from compaction.outcomes import CompactStarts as CompactStarts
from compaction.policy import DEFAULT_WINDOW as DEFAULT_WINDOW
from compaction.policy import CompactionPolicy as CompactionPolicy
from compaction.receipt import dropped_sections, run_hooks
from compaction.resume import agree_with_resume, resume_decision
from compaction.secrets import redact
from compaction.session import Session
from compaction.summarizers import ExtractiveSummarizer, Summarizer, SummaryInput, check_output
from compaction.summarizers.next_step import target
from compaction.summarizers.recorded import recorded_checkpoint
from compaction.tokens import count_message
from compaction.tools.arguments import MAX_ITEM_CHARS
from compaction.views import ContextWindow, checkpoint_message_for
from compaction.views.board import TaskBoard

# --- compaction --------------------------------------------------------------------------------


def unfinished(todos: Sequence[TodoItem]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the pending and the in-progress item texts of a list, each in list order."""
    pending = tuple(t.content for t in todos if t.status == "pending")
    current = tuple(t.content for t in todos if t.status == "in_progress")
    return pending, current


CARRIED_HEAD: Final = 1000
"""Characters of an over-long carried item the Checkpoint keeps, before the clipping note."""


def clip_carried(text: str, seq: int | None) -> str:
    """Return a carried item as the Checkpoint holds it: whole, or head and note when too long.

    An item over `MAX_ITEM_CHARS` (one recorded before the tools capped items, or imported)
    keeps its first `CARRIED_HEAD` characters and a note with its length and the seq of the
    event that holds it whole, so one item can never make the carried list outgrow the window.
    """
    if len(text) <= MAX_ITEM_CHARS:
        return text
    where = f"harness log LOG --seq {seq}" if seq is not None else "the session log"
    note = f"[... clipped: the item has {len(text)} characters; read it whole with {where}]"
    return f"{text[:CARRIED_HEAD]} {note}"


def _clip_task(task: TaskRef) -> TaskRef:
    if len(task.subject) <= MAX_ITEM_CHARS:
        return task
    text = clip_carried(task.subject, None).replace(
        "the session log", f"task_list (task {task.id})"
    )
    return task.model_copy(update={"subject": text})


def unfinished_tasks(board: TaskBoard) -> tuple[tuple[TaskRef, ...], tuple[TaskRef, ...]]:
    """Return the shared list's pending and in-progress tasks, each in creation order."""
    return board.unfinished("pending"), board.unfinished("in_progress")


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
    """
    policy = policy or CompactionPolicy()

    def attempt() -> CompactionResult | None:
        session.refresh()
        seen = session.applied_seq
        result = _plan(
            session,
            policy,
            summarizer,
            force=force,
            instructions=instructions,
            on_compact_start=on_compact_start,
            fixed=fixed_tokens,
        )
        if dry_run:
            return result
        result = _with_backend(backend, session, result)
        try:
            event = session.append(result.data, expected_seq=seen)
        except SeqConflictError:
            return None
        assert isinstance(event, CheckpointRecorded)
        return replace(result, event=event)

    for _ in range(COMPACTION_ATTEMPTS):
        result = attempt()
        if result is not None:
            break
    else:
        result = None
        if session.in_store:
            # Writers kept winning the race: plan once more inside the store's transaction,
            # where no writer can overtake it, so this attempt lands.
            with session.batch():
                result = attempt()
    if result is None:
        raise CompactionError(
            "conflict",
            f"{session.where}: other writers appended during each of {COMPACTION_ATTEMPTS} "
            "attempts, so no checkpoint was written (it would have carried an out-of-date "
            "view); retry",
        )
    if on_compact_end is not None:
        on_compact_end(result)
    return result


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


def _plan(
    session: Session,
    policy: CompactionPolicy,
    summarizer: Summarizer | None,
    *,
    force: bool,
    instructions: str | None,
    on_compact_start: CompactStarts | None,
    fixed: int,
) -> CompactionResult:
    """Compute the compaction of the session as it is now, appending nothing."""
    tokens_before = session.context_tokens
    completed = session.progress.completed_since_checkpoint
    if not force and not policy.is_due(tokens_before, fixed, completed=completed):
        raise _below_threshold(policy, tokens_before, fixed)
    plan = _Plan.of(session, policy, fixed, summarizer)
    context, tokens = plan.context, plan.tokens
    previous_data = context.checkpoint
    first_seq = previous_data.last_seq + 1 if previous_data else 1
    k = plan.first_cut()
    instructions, hooks = _start(
        on_compact_start,
        instructions,
        CompactionPlan(
            first_seq=first_seq,
            last_seq=context.seqs[k] - 1 if k < len(context.seqs) else session.applied_seq,
            replaced_messages=k,
            kept_messages=len(context.messages) - k,
            tokens_before=tokens_before,
            summarizer=plan.summarizer.name,
            instructions=instructions,
        ),
    )
    try:
        k, checkpoint, used, fallback_reason, span = plan.fit(k, instructions)
    except CompactionError as exc:
        if exc.code != "does_not_fit" or not plan.has_long_items():
            raise
        # Carried whole, one over-long item fills the window: clip long items, plan again.
        plan = replace(plan, clip_items=True)
        k, checkpoint, used, fallback_reason, span = plan.fit(plan.first_cut(), instructions)
    text = render_checkpoint(checkpoint)
    last_seq = plan.last_seq(k)
    previous_tokens = checkpoint_tokens(session.tokenizer, previous_data) if previous_data else 0
    replaced = previous_tokens + sum(tokens[:k])
    new_tokens = count_message(
        session.tokenizer, checkpoint_message_for(text, last_seq=last_seq, resume=plan.resume)
    )
    data = CheckpointData(
        text=text,
        first_seq=first_seq,
        last_seq=last_seq,
        tokens_before=tokens_before,
        tokens_after=tokens_before - replaced + new_tokens,
        summarizer=used,
        fallback_reason=fallback_reason,
        instructions=instructions,
        pending=checkpoint.pending_jobs,
        current=checkpoint.current_work,
        pending_tasks=checkpoint.pending_tasks or None,
        current_tasks=checkpoint.current_tasks or None,
        hooks=hooks or None,
        dropped=dropped_sections(checkpoint, span) or None,
        resume=plan.resume,
    )
    return CompactionResult(
        checkpoint=checkpoint,
        data=data,
        event=None,
        replaced_messages=k,
        replaced_tokens=replaced,
        kept_messages=len(context.messages) - k,
        fixed_tokens=fixed,
    )


def _below_threshold(policy: CompactionPolicy, context: int, fixed: int) -> CompactionError:
    parts = f" ({fixed} fixed + {context} context)" if fixed else ""
    reserve = f", {policy.output_reserve} reserved for the reply" if policy.output_reserve else ""
    return CompactionError(
        "below_threshold",
        f"the request holds {fixed + context} tokens{parts}{reserve}, below the trigger of "
        f"{policy.trigger_tokens} ({policy.threshold:g} of a {policy.window_tokens}-token "
        "window); nothing was done (force it with force=True, CLI --force)",
    )


@dataclass(frozen=True)
class _Plan:
    """One compaction being planned: the context, its token counts and the room in the window."""

    session: Session
    policy: CompactionPolicy
    context: ContextWindow
    tokens: list[int]
    room: int
    """Tokens the Checkpoint and the kept tail may take together."""
    fixed: int
    system: int
    summarizer: Summarizer
    fallback: ExtractiveSummarizer
    resume: Resume
    """``continue`` or ``await_user``, from the context's last messages (`compaction.resume`)."""
    clip_items: bool = False
    """Carry items over `MAX_ITEM_CHARS` as head and note (`clip_carried`): set only when the
    Checkpoint with every item whole cannot fit the window."""

    @classmethod
    def of(
        cls,
        session: Session,
        policy: CompactionPolicy,
        fixed: int,
        summarizer: Summarizer | None,
    ) -> _Plan:
        context = session.context
        system = sum(count_message(session.tokenizer, m) for m in context.system)
        fallback = ExtractiveSummarizer(session.tokenizer)
        return cls(
            session=session,
            policy=policy,
            context=context,
            tokens=[session.event_tokens(s) for s in context.seqs],
            room=policy.room_tokens - fixed - system,
            fixed=fixed,
            system=system,
            summarizer=summarizer or fallback,
            fallback=fallback,
            resume=resume_decision(context.messages),
        )

    def last_seq(self, k: int) -> int:
        """Return the last seq a cut before message `k` replaces."""
        seqs = self.context.seqs
        return seqs[k] - 1 if k < len(seqs) else self.session.applied_seq

    def first_cut(self) -> int:
        """Return the cut keeping the longest tail within retain and beside a planned Checkpoint."""
        planned = self.checkpoint_tokens(self.skeleton(), len(self.context.seqs))
        planned += self.policy.summary_tokens
        budget = min(self.policy.retain_tokens, self.room - planned)
        return select_cut(self.context.messages, self.tokens, budget)

    def fit(
        self, k: int, instructions: str | None
    ) -> tuple[int, Checkpoint, str, str | None, SummaryInput]:
        """Return the cut, the Checkpoint, the summarizer used, any fallback reason, the span.

        Starting from cut `k`, if the Checkpoint comes out larger than planned, the cut moves
        to the longest tail that fits beside it and the span is summarized again.
        """
        candidates = cut_points(self.context.messages)
        tail = tail_tokens(self.tokens)
        while True:
            checkpoint, used, reason, span = self.write(k, instructions)
            size = self.checkpoint_tokens(checkpoint, k)
            if size + tail[k] <= self.room:
                return k, checkpoint, used, reason, span
            later = [c for c in candidates if c > k and size + tail[c] <= self.room]
            if later:
                k = later[0]
            elif k < candidates[-1]:
                k = candidates[-1]
            else:
                raise self.does_not_fit(size, tail[k])

    def skeleton(self) -> Checkpoint:
        """Return the Checkpoint with its code-owned sections only (empty narrative)."""
        pending, current = unfinished(self.session.latest_todos)
        pending_tasks, current_tasks = unfinished_tasks(self.session.tasks)
        if self.clip_items:
            seq = self.session.latest_todos_seq
            pending = tuple(clip_carried(t, seq) for t in pending)
            current = tuple(clip_carried(t, seq) for t in current)
            pending_tasks = tuple(_clip_task(t) for t in pending_tasks)
            current_tasks = tuple(_clip_task(t) for t in current_tasks)
        return Checkpoint(
            pending_jobs=pending,
            current_work=current,
            carried_over=bool(pending or current) and self.session.todos.seq is None,
            pending_tasks=pending_tasks,
            current_tasks=current_tasks,
        )

    def has_long_items(self) -> bool:
        """Tell whether any carried item or task subject is over `MAX_ITEM_CHARS`."""
        pending, current = unfinished(self.session.latest_todos)
        tasks = [t.subject for pair in unfinished_tasks(self.session.tasks) for t in pair]
        return any(len(text) > MAX_ITEM_CHARS for text in (*pending, *current, *tasks))

    def checkpoint_tokens(self, checkpoint: Checkpoint, k: int) -> int:
        """Return the tokens a Checkpoint takes in the context, for a cut before message `k`."""
        text = render_checkpoint(checkpoint)
        message = checkpoint_message_for(text, last_seq=self.last_seq(k), resume=self.resume)
        return count_message(self.session.tokenizer, message)

    def write(
        self, k: int, instructions: str | None
    ) -> tuple[Checkpoint, str, str | None, SummaryInput]:
        """Summarize ``messages[:k]``; return the Checkpoint, the summarizer, any reason, span."""
        context, session = self.context, self.session
        span = SummaryInput(
            messages=context.messages[:k],
            seqs=context.seqs[:k],
            previous=previous_checkpoint(context.checkpoint),
            todos=session.latest_todos,
            budget_tokens=self.policy.summary_tokens,
            modes=session.turn_modes.modes_of(context.seqs[:k]),
            mode=session.turn_modes.mode_now,
            instructions=instructions,
            tasks=session.tasks.live(),
            agent=session.agent,
            cwd=session.turn_modes.cwd_at(context.seqs[k - 1]) if k else None,
        )
        sections, used, reason = _summarize(self.summarizer, self.fallback, span)
        skeleton = self.skeleton()
        goal = target(session.latest_todos, session.tasks.live(), session.agent)
        current = (goal.name,) if goal is not None and goal.in_progress else ()
        sections = agree_with_resume(sections, self.resume, current)
        checkpoint = Checkpoint(
            primary_request=sections[Section.PRIMARY_REQUEST],
            key_concepts=sections[Section.KEY_CONCEPTS],
            files_and_code=sections[Section.FILES_AND_CODE],
            errors_and_fixes=sections[Section.ERRORS_AND_FIXES],
            pending_jobs=skeleton.pending_jobs,
            current_work=skeleton.current_work,
            next_step=sections[Section.NEXT_STEP],
            critical_context=sections[Section.CRITICAL_CONTEXT],
            carried_over=skeleton.carried_over,
            pending_tasks=skeleton.pending_tasks,
            current_tasks=skeleton.current_tasks,
        )
        return checkpoint, used, reason, span

    def does_not_fit(self, checkpoint: int, tail: int) -> CompactionError:
        """Return the error naming each part of a request that cannot fit the window."""
        p = self.policy
        parts = [
            f"{self.fixed} fixed (system prompt and tools)",
            f"{self.system} system messages",
            f"{checkpoint} Checkpoint",
        ]
        if tail:
            parts.append(f"{tail} of tail that cannot be cut (a tool call waiting for its result)")
        parts.append(f"{p.output_reserve} reserved for the reply")
        total = self.fixed + self.system + checkpoint + tail + p.output_reserve
        return CompactionError(
            "does_not_fit",
            f"{' + '.join(parts)} = {total} tokens, over the {p.window_tokens}-token window "
            "even with nothing kept; use a larger window, a smaller tool catalog or system "
            "prompt, fewer unfinished tasks, or a smaller output reserve",
        )


def _start(
    hooks: CompactStarts | None, instructions: str | None, plan: CompactionPlan
) -> tuple[str | None, tuple[HookRun, ...]]:
    """Run the ``on_compact_start`` hooks; return the instructions left and the hooks' receipt."""
    if hooks is None:
        listed: Sequence[CompactStart] = ()
    elif callable(hooks):
        listed = (hooks,)
    else:
        listed = tuple(hooks)
    return run_hooks(listed, plan, instructions)


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
    `CompactionPolicy.boundary_threshold`, against the boundary floor once a todo item or task
    turned completed since the last compaction (`CompactionPolicy.is_due`). `instructions` and
    the hooks are those of `compact`. Once the session has learned the provider's token scale
    (`Session.token_scale`), the policy's window is the provider's tokens: the check and the
    compaction use `CompactionPolicy.in_counted_tokens`.
    """
    policy = policy.in_counted_tokens(session.token_scale)
    completed = session.progress.completed_since_checkpoint
    if not policy.is_due(session.context_tokens, fixed_tokens, completed=completed):
        return None
    return compact(
        session,
        policy,
        summarizer=summarizer,
        instructions=instructions,
        on_compact_start=on_compact_start,
        on_compact_end=on_compact_end,
        fixed_tokens=fixed_tokens,
    )
