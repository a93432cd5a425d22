"""Planning one compaction: the cut, the Checkpoint that fits beside the tail, the event's data.

`plan_compaction(session, policy, ...)` computes the compaction of the session as it is now and
appends nothing; `compaction.compactor.compact` appends what it returns. The plan keeps the
longest tail within `CompactionPolicy.retain_tokens` that leaves room in the window for the
fixed part, the system messages, the Checkpoint and the reserve; when no non-empty tail is
within retain, the latest step if it fits that room (`compaction.cuts.select_cut`); when the
Checkpoint comes out larger than planned, the cut moves later and the span is summarized again;
when even an empty tail does not fit, it raises ``CompactionError("does_not_fit")`` naming the
parts.

Invariants: the plan never splits a tool call from its result (`compaction.cuts`); the same
session and policy give the same plan, byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from compaction.checkpoint import (
    FIELD_BY_SECTION,
    Checkpoint,
    Section,
    parse_checkpoint,
    render_checkpoint,
)
from compaction.compactor._carried import (
    PLAN_CHARS,
    carried_checkpoint,
    log_argument,
    plan_budget,
    unfinished,
    unfinished_tasks,
)
from compaction.compactor._outcomes import (
    CompactionPlan,
    CompactionResult,
    CompactStart,
    CompactStarts,
)
from compaction.compactor._receipt import dropped_sections, run_hooks
from compaction.compactor._refusals import below_threshold, does_not_fit
from compaction.compactor._resume import agree_with_resume, resume_decision
from compaction.contract import MAX_ITEM_CHARS
from compaction.cuts import cut_points, select_cut, tail_tokens
from compaction.errors import CompactionError
from compaction.events import CheckpointData, HookRun, Message, Resume
from compaction.policy import CompactionPolicy
from compaction.secrets import redact
from compaction.summarizers import ExtractiveSummarizer, Summarizer, SummaryInput, check_output
from compaction.summarizers.next_step import target
from compaction.summarizers.recorded import recorded_checkpoint
from compaction.tokens import count_message
from compaction.views import ContextWindow, checkpoint_message_for
from compaction.views.provider_checkpoint import checkpoint_tokens

if TYPE_CHECKING:
    from compaction.session import Session


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


def plan_compaction(
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
    completed = session.progress.completed_since_call
    if not force and not policy.is_due(tokens_before, fixed, completed=completed):
        raise below_threshold(policy, tokens_before, fixed)
    plan = Plan.of(session, policy, fixed, summarizer)
    k = plan.first_cut()
    preview = plan.preview(k, tokens_before, instructions)
    instructions, hooks = _start(on_compact_start, instructions, preview)
    try:
        fitted = plan.fit(k, instructions)
    except CompactionError as exc:
        if exc.code != "does_not_fit":
            raise
        fitted = plan.refit(instructions, exc)
    return plan.result(fitted, tokens_before, instructions, hooks)


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


class Fitted(NamedTuple):
    """A Checkpoint that fits the window beside the tail after cut `k`."""

    k: int
    checkpoint: Checkpoint
    summarizer: str
    """The summarizer that wrote the narrative (the fallback's name when the first failed)."""
    fallback_reason: str | None
    span: SummaryInput
    bare: bool = False
    """True when only the code-owned sections fit: the narrative is left empty (the receipt
    says so in `CheckpointData.narrative_left_out`)."""


NARRATIVE_LEFT_OUT = (
    "only the carried items and the fixed prompt fit the window: the narrative sections are "
    "empty; every replaced event is whole in the log"
)
"""The receipt's note on a Checkpoint written with an empty narrative."""


@dataclass(frozen=True)
class Plan:
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
    """``continue`` or ``await_user``, from the context's last messages (`resume`)."""
    clip_items: bool = False
    """Carry items over `MAX_ITEM_CHARS` as head and note (`clip_carried`): set only when the
    Checkpoint with every item whole cannot fit the window."""
    plan_chars: int = PLAN_CHARS
    """The approved plan's budget (`plan_budget`); 0, its headings and steps only, when even
    the code-owned sections do not fit otherwise."""

    @classmethod
    def of(
        cls,
        session: Session,
        policy: CompactionPolicy,
        fixed: int,
        summarizer: Summarizer | None,
    ) -> Plan:
        """Start planning the compaction of `session` as it is now."""
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
            plan_chars=plan_budget(policy.summary_tokens),
        )

    @property
    def first_seq(self) -> int:
        """The first seq the new checkpoint replaces (just after the previous one's span)."""
        previous = self.context.checkpoint
        return previous.last_seq + 1 if previous else 1

    def last_seq(self, k: int) -> int:
        """Return the last seq a cut before message `k` replaces."""
        seqs = self.context.seqs
        return seqs[k] - 1 if k < len(seqs) else self.session.applied_seq

    def preview(self, k: int, tokens_before: int, instructions: str | None) -> CompactionPlan:
        """Return what the ``on_compact_start`` hooks are shown for a cut before message `k`."""
        return CompactionPlan(
            first_seq=self.first_seq,
            last_seq=self.last_seq(k),
            replaced_messages=k,
            kept_messages=len(self.context.messages) - k,
            tokens_before=tokens_before,
            summarizer=self.summarizer.name,
            instructions=instructions,
        )

    def first_cut(self) -> int:
        """Return the cut keeping the longest tail within retain and beside a planned Checkpoint.

        When no non-empty tail fits retain, the latest step is kept if it fits beside the
        planned Checkpoint (`select_cut`; not with retain 0, which asks for no tail); `fit`
        then checks it against the real one.
        """
        planned = self.checkpoint_tokens(self.skeleton(), len(self.context.seqs))
        planned += self.policy.summary_tokens
        beside = self.room - planned
        retain = self.policy.retain_tokens
        room = beside if retain > 0 else None  # retain 0 asks for no tail at all
        return select_cut(self.context.messages, self.tokens, min(retain, beside), room)

    def fit(self, k: int, instructions: str | None) -> Fitted:
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
                return Fitted(k, checkpoint, used, reason, span)
            later = [c for c in candidates if c > k and size + tail[c] <= self.room]
            if later:
                k = later[0]
            elif k < candidates[-1]:
                k = candidates[-1]
            else:
                raise does_not_fit(self.policy, self.fixed, self.system, size, tail[k])

    def refit(self, instructions: str | None, refusal: CompactionError) -> Fitted:
        """Fit again when no Checkpoint fits: long items clipped, then the narrative left empty.

        Only when even the code-owned sections alone (and the shortest tail) do not fit is the
        compaction refused (`refusal`, ``does_not_fit``).
        """
        plan = self
        if self.has_long_items():
            # Carried whole, one over-long item fills the window: clip long items, plan again.
            plan = replace(self, clip_items=True)
            try:
                return plan.fit(plan.first_cut(), instructions)
            except CompactionError as again:
                if again.code != "does_not_fit":
                    raise
                refusal = again
        for bare in (plan, replace(plan, plan_chars=0)):  # at last, the plan's structure only
            skeleton, tail = bare.skeleton(), tail_tokens(bare.tokens)
            for c in cut_points(bare.context.messages):
                if bare.checkpoint_tokens(skeleton, c) + tail[c] <= bare.room:
                    span = bare.span(c, instructions)
                    return Fitted(c, skeleton, bare.summarizer.name, None, span, bare=True)
        raise refusal

    def skeleton(self) -> Checkpoint:
        """Return the Checkpoint with its code-owned sections only (empty narrative)."""
        return carried_checkpoint(
            self.session, clip_items=self.clip_items, plan_chars=self.plan_chars
        )

    def has_long_items(self) -> bool:
        """Tell whether any carried item or task subject is over `MAX_ITEM_CHARS`."""
        pending, current = unfinished(self.session.latest_todos)
        tasks = [t.subject for pair in unfinished_tasks(self.session.tasks) for t in pair]
        return any(len(text) > MAX_ITEM_CHARS for text in (*pending, *current, *tasks))

    def checkpoint_tokens(self, checkpoint: Checkpoint, k: int) -> int:
        """Return the tokens a Checkpoint takes in the context, for a cut before message `k`."""
        text = render_checkpoint(checkpoint)
        message = self.message(checkpoint, text, self.last_seq(k))
        return count_message(self.session.tokenizer, message)

    def message(self, checkpoint: Checkpoint, text: str, last_seq: int) -> Message:
        """Return the user message that carries `checkpoint` (rendered as `text`) into context."""
        tasks = bool(checkpoint.pending_tasks or checkpoint.current_tasks)
        return checkpoint_message_for(
            text,
            last_seq=last_seq,
            resume=self.resume,
            log=log_argument(self.session),
            tasks=tasks,
            todos=bool(checkpoint.pending_jobs or checkpoint.current_work) or not tasks,
        )

    def span(self, k: int, instructions: str | None) -> SummaryInput:
        """Return what the summarizer reads for a cut before message `k`."""
        context, session = self.context, self.session
        return SummaryInput(
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
            jobs=session.carried.jobs,
        )

    def write(
        self, k: int, instructions: str | None
    ) -> tuple[Checkpoint, str, str | None, SummaryInput]:
        """Summarize ``messages[:k]``; return the Checkpoint, the summarizer, any reason, span."""
        session = self.session
        span = self.span(k, instructions)
        sections, used, reason = _summarize(self.summarizer, self.fallback, span)
        skeleton = self.skeleton()
        goal = target(session.latest_todos, session.tasks.live(), session.agent)
        current = (goal.name,) if goal is not None and goal.in_progress else ()
        sections = agree_with_resume(sections, self.resume, current)
        narrative = {FIELD_BY_SECTION[name]: text for name, text in sections.items()}
        checkpoint = Checkpoint(**{**dict(skeleton), **narrative})  # validated: text normalised
        return checkpoint, used, reason, span

    def result(
        self,
        fitted: Fitted,
        tokens_before: int,
        instructions: str | None,
        hooks: tuple[HookRun, ...],
    ) -> CompactionResult:
        """Return the compaction the fitted Checkpoint makes: the event's data and the figures."""
        k, checkpoint = fitted.k, fitted.checkpoint
        tokenizer, previous = self.session.tokenizer, self.context.checkpoint
        text = render_checkpoint(checkpoint)
        last_seq = self.last_seq(k)
        previous_tokens = checkpoint_tokens(tokenizer, previous) if previous else 0
        replaced = previous_tokens + sum(self.tokens[:k])
        new_tokens = count_message(tokenizer, self.message(checkpoint, text, last_seq))
        data = CheckpointData(
            text=text,
            first_seq=self.first_seq,
            last_seq=last_seq,
            tokens_before=tokens_before,
            tokens_after=tokens_before - replaced + new_tokens,
            summarizer=fitted.summarizer,
            fallback_reason=fitted.fallback_reason,
            instructions=instructions,
            pending=checkpoint.pending_jobs,
            current=checkpoint.current_work,
            pending_tasks=checkpoint.pending_tasks or None,
            current_tasks=checkpoint.current_tasks or None,
            jobs=checkpoint.jobs or None,
            plan=checkpoint.plan,
            hooks=hooks or None,
            dropped=dropped_sections(checkpoint, fitted.span) or None,
            resume=self.resume,
            log=log_argument(self.session),
            narrative_left_out=NARRATIVE_LEFT_OUT if fitted.bare else None,
        )
        return CompactionResult(
            checkpoint=checkpoint,
            data=data,
            event=None,
            replaced_messages=k,
            replaced_tokens=replaced,
            kept_messages=len(self.context.messages) - k,
            fixed_tokens=self.fixed,
        )
