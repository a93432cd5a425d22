"""The token scale: how many tokens the provider counts for each token this toolkit counts.

Every count in the toolkit comes from one local tokenizer (``o200k_base`` by default), but a
provider bills and limits requests by its own: Claude's reported prompt tokens grow about 1.25x
faster than o200k counts the same messages. The log already holds what the provider counted:
each agent call's `usage/report` (purpose ``turn``) carries its ``prompt_tokens``. Between two
consecutive calls of one model the fixed part (system prompt, tools) is the same, so the growth
of ``prompt_tokens`` is the provider's count of the messages added in between; divided by this
toolkit's count of those messages it gives one sample of the scale.

Which messages a call's prompt holds: a report written before its reply (the importers' order)
covers every message before it; a report written just after its reply (an adapter that logs the
reply first) does not cover that reply, so the reply moves to the next call's span.

The scale is the median of the samples (robust to a cache rewrite, an edited system prompt or a
call that failed and was retried), learned only once `MIN_PAIRS` samples of at least
`MIN_DELTA_TOKENS` counted tokens each exist, and only from the model of the newest report.
Every pair counts, a shrinking prompt included: dropping the pairs whose reported prompt did
not grow would keep only the noise that points up, and noisy reports would push the scale to
its clamp. A sample is taken only from a span the fold measured whole: a compaction, a
retraction or a turn in another mode (its system prompt differs) between two calls breaks the
pair, and a report that names its ``context_seq`` counts only the messages up to it (the rest
belong to the next call). The value is kept within `SCALE_BOUNDS`.

Invariants: the view is a pure fold of the log (no tokenizer inside: the caller passes the
counts); the same log gives the same scale; None until enough evidence exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Final

from compaction.events import (
    CheckpointRecorded,
    Event,
    MessageAdded,
    MessagesRetracted,
    TurnStarted,
    UsageReported,
)

MIN_PAIRS: Final = 8
"""Samples (consecutive calls of one model) needed before a scale is learned."""
MIN_DELTA_TOKENS: Final = 32
"""A sample whose messages count fewer tokens than this is too noisy to use."""
SCALE_BOUNDS: Final = (0.5, 3.0)
"""The learned scale is clamped to this range (a log that says otherwise is not a tokenizer's)."""


@dataclass(frozen=True)
class ScaleSample:
    """Two consecutive calls of one model: the provider's growth and the messages in between."""

    model: str
    delta_prompt: int
    """The second call's ``prompt_tokens`` minus the first's."""
    seqs: tuple[int, ...]
    """The `message` events the second call's prompt added to the first's."""


@dataclass
class ScaleState:
    """The samples so far and the span being collected since the newest report."""

    samples: list[ScaleSample] = field(default_factory=list)
    model: str | None = None
    prompt: int | None = None
    """The newest report's prompt tokens; None after a compaction or retraction."""
    span: list[int] = field(default_factory=list)
    reply: int | None = None
    """Seq of the newest event when it is an assistant message (a reply logged before its
    report)."""
    mode: str | None = None
    """The mode of the newest `turn/start`: another mode's system prompt breaks a pair."""


@dataclass(frozen=True)
class TokenEvidence:
    """The samples of a log, turned into a scale with the caller's token counts."""

    samples: tuple[ScaleSample, ...]
    model: str | None
    """The model of the newest `turn` report (the one the agent talks to now)."""

    def ratios(self, tokens_of: Callable[[int], int], model: str | None = None) -> list[float]:
        """Return each usable sample's provider tokens per counted token, for `model`."""
        want = self.model if model is None else model
        out: list[float] = []
        for sample in self.samples:
            if sample.model != want:
                continue
            counted = sum(tokens_of(seq) for seq in sample.seqs)
            if counted >= MIN_DELTA_TOKENS:
                out.append(sample.delta_prompt / counted)
        return out

    def scale(self, tokens_of: Callable[[int], int], model: str | None = None) -> float | None:
        """Return the learned scale (median of the samples, clamped), or None without evidence.

        Args:
            tokens_of: this toolkit's token count of the event with a seq
                (`compaction.Session.event_tokens`).
            model: the model to learn for (default: the newest report's).
        """
        ratios = self.ratios(tokens_of, model)
        if len(ratios) < MIN_PAIRS:
            return None
        low, high = SCALE_BOUNDS
        from statistics import median  # loaded with the first scale learned, not at start

        return round(min(high, max(low, median(ratios))), 4)


class TokenScaleProjection:
    """Fold the log into scale samples (O(1) per event; no tokenizer needed)."""

    name: ClassVar[str] = "token_scale"
    state_version: ClassVar[int] = 2

    def init(self) -> ScaleState:
        """Return no samples."""
        return ScaleState()

    def apply(self, state: ScaleState, event: Event) -> ScaleState:
        """Collect messages into the span; close a sample at each agent call's report."""
        reply = None
        if isinstance(event, MessageAdded):
            state.span.append(event.seq)
            reply = event.seq if event.data.role == "assistant" else None
        elif isinstance(event, CheckpointRecorded | MessagesRetracted):
            state.prompt, state.span = None, []
        elif isinstance(event, TurnStarted):
            if event.data.mode != state.mode:  # another system prompt: not a whole span
                state.prompt, state.span, state.mode = None, [], event.data.mode
        elif isinstance(event, UsageReported) and event.data.purpose == "turn":
            self._report(state, event)
        else:
            reply = state.reply
        state.reply = reply
        return state

    def _report(self, state: ScaleState, event: UsageReported) -> None:
        span, carried = state.span, []
        end = event.data.context_seq
        if end is not None:  # the request held the messages up to context_seq only
            span, carried = [s for s in span if s <= end], [s for s in span if s > end]
        elif state.reply is not None and span and span[-1] == state.reply:
            span, carried = span[:-1], [state.reply]  # the reply this report follows
        data = event.data
        if state.prompt is not None and state.model == data.model:
            delta = data.prompt_tokens - state.prompt
            state.samples.append(ScaleSample(data.model, delta, tuple(span)))
        state.model, state.prompt, state.span = data.model, data.prompt_tokens, carried

    def view(self, state: ScaleState) -> TokenEvidence:
        """Return the samples and the newest report's model."""
        return TokenEvidence(samples=tuple(state.samples), model=state.model)


def scaled_tokens(tokens: int, scale: float | None) -> int:
    """Return a counted figure in the provider's tokens (unchanged while the scale is unknown)."""
    return tokens if scale is None else round(tokens * scale)
