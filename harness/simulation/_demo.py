"""The demo behind `harness demo`: a generated long session through prompts, views and compaction.

`run_demo` writes a seeded synthetic session (`harness.simulation._sessions.generate`) into a live
`compaction.Session` as an agent loop would: before each model call it compacts when the whole
request (system prompt, tool catalog and context) is due, it switches modes by appending a mode
message (the default), and in the Plan-mode phase it tries one `todo_write`, which the mode
refuses by code. Then it replays the same session request by request
(`harness.simulation._request_replay`) under this toolkit's strategy (B), under the
no-compaction baseline, and under the two designs it is set against (`CONTRASTS`): the todo list
kept only in the messages (strategy A, extractive summary) and a content-blind summary with no
code-owned tasks (A with the peers' one-line summary), where unfinished tasks are lost at
compactions; each is priced under every provider's prices (`harness.simulation._pricing`), and
its every-call retention counted.

Invariants: the same `(turns, seed, window)` gives the same figures (wall time aside); every
unfinished todo of the latest list stands in each checkpoint the demo wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction import (
    CompactionPolicy,
    CompactionResult,
    EventData,
    Message,
    Session,
    TodoPanel,
    TurnStartData,
    get_tokenizer,
    maybe_compact,
)
from harness.simulation._blind import blind_summarizer
from harness.simulation._context_strategies import BASELINE, STRATEGIES
from harness.simulation._pricing import Cost, default_prices, output_tokens, session_cost
from harness.simulation._request_replay import ENVIRONMENT, ReplayResult, SummarizerFor, replay
from harness.simulation._sessions import generate, unfinished, user_tools
from prompts import (
    PromptBuilder,
    ToolCatalog,
    fixed_tokens,
    get_mode,
    switch_mode,
)

DEFAULT_TURNS = 12
"""With the `real` shape, about 300 model calls: long enough to compact a dozen times."""
DEFAULT_SEED = 7
DEMO_PROFILE = "real"
"""The demo's session shape: the list written rarely, long work between (see `PROFILES`)."""
DEFAULT_WINDOW = 32_000
"""A small window, so a short demo compacts several times."""

PLAN_ATTEMPT = '{"todos": [{"content": "Implement the plan", "status": "in_progress"}]}'
"""The todo_write call the demo makes in Plan mode, to show the refusal."""

Progress = Callable[[str, int, int], None]
"""Called as (stage, done, total) while the demo runs."""

OURS = "this toolkit"
BASELINE_LABEL = "no compaction"
SMALL_CONTRAST = 0.05
"""A contrast whose design lost sight of unfinished tasks on fewer than this share of calls
is called small: the demo says so rather than let the table suggest more."""

CONTRASTS: dict[str, tuple[str, SummarizerFor | None]] = {
    "list in the messages": ("A", None),
    "content-blind summary": ("A", blind_summarizer),
}
"""The designs the demo sets beside this toolkit: (strategy, summarizer) by label."""


@dataclass
class DemoResult:
    """What the demo did and measured."""

    log: Path
    events: int
    panel: TodoPanel
    compactions: list[CompactionResult] = field(default_factory=list)
    plan_refusal: str | None = None
    unfinished: tuple[str, ...] = ()
    """Unfinished items of the latest list at the end of the session."""
    ours: ReplayResult | None = None
    baseline: ReplayResult | None = None
    contrasts: dict[str, ReplayResult] = field(default_factory=dict)
    """The same session under each of `CONTRASTS`, by label."""
    output_tokens: int = 0
    """Tokens the model generated over the session (the same under every design)."""
    profile: str = DEMO_PROFILE
    """The session's shape (a name of `harness.simulation.PROFILES`)."""

    def runs(self) -> dict[str, ReplayResult]:
        """Return every replay by label: this toolkit, the contrasts, then no compaction."""
        assert self.ours is not None  # run_demo always replays both
        assert self.baseline is not None
        return {OURS: self.ours, **self.contrasts, BASELINE_LABEL: self.baseline}

    def design_figures(self, result: ReplayResult) -> dict[str, Any]:
        """Return one design's figures: calls, tokens, cache hits, tasks in sight, costs."""
        return {
            "model_calls": len(result.records),
            "compactions": result.compactions,
            "summed_input_tokens": result.total_prompt_tokens,
            "last_request_tokens": result.records[-1].prompt_tokens if result.records else 0,
            "cache_hit_rates": {k: round(v, 4) for k, v in self.hit_rates(result).items()},
            "ideal_hit_rate": round(result.total_ideal / (result.total_prompt_tokens or 1), 4),
            "calls_checked": result.todo_checks,
            "calls_lost_sight": result.todo_checks - result.todo_held,
            "every_call": round(result.request_retention, 4),
            "kept_at_compactions": result.kept,
            "expected_at_compactions": result.expected,
            "cost_usd": {p: round(c.usd, 6) for p, c in self.costs(result).items()},
        }

    def contrast_figures(self) -> list[dict[str, Any]]:
        """Return, per contrast, what it lost against this toolkit and what it cost."""
        assert self.ours is not None
        ours = self.costs(self.ours)
        out = []
        for label, other in self.contrasts.items():
            lost = other.todo_checks - other.todo_held
            share = lost / other.todo_checks if other.todo_checks else 0.0
            theirs = self.costs(other)
            out.append(
                {
                    "design": label,
                    "calls_lost_sight": lost,
                    "calls_checked": other.todo_checks,
                    "share_lost": round(share, 4),
                    "small": share < SMALL_CONTRAST,
                    "kept_at_compactions": other.kept,
                    "expected_at_compactions": other.expected,
                    "extra_cost_of_ours": {
                        p: round(ours[p].usd / theirs[p].usd - 1, 4) if theirs[p].usd else 0.0
                        for p in ours
                    },
                }
            )
        return out

    def figures(self) -> dict[str, Any]:
        """Return every figure the demo prints, as plain data (what ``--json`` carries).

        ``designs`` is a list in the printed order: this toolkit, the contrasts, no compaction.
        """
        assert self.ours is not None
        return {
            "profile": self.profile,
            "events": self.events,
            "compactions": len(self.compactions),
            "unfinished": list(self.unfinished),
            "savings": round(self.savings, 4),
            "output_tokens": self.output_tokens,
            "designs": [
                {"design": label, **self.design_figures(r)} for label, r in self.runs().items()
            ],
            "contrasts": self.contrast_figures(),
            "small_contrast_below": SMALL_CONTRAST,
        }

    def costs(self, result: ReplayResult) -> dict[str, Cost]:
        """Return the session's cost under each provider's prices, by provider."""
        prompts = [r.prompt_tokens for r in result.records]
        return {
            name: session_cost(
                price,
                prompts,
                [r.hits[price.cache_model] for r in result.records],
                self.output_tokens,
            )
            for name, price in default_prices().providers.items()
        }

    @property
    def savings(self) -> float:
        """Share of summed input tokens saved against no compaction."""
        if not self.ours or not self.baseline or not self.baseline.total_prompt_tokens:
            return 0.0
        return 1 - self.ours.total_prompt_tokens / self.baseline.total_prompt_tokens

    def hit_rates(self, result: ReplayResult) -> dict[str, float]:
        """Cache-hit share of summed input tokens under each provider model."""
        total = result.total_prompt_tokens or 1
        models = result.records[0].hits if result.records else {}
        return {m: result.total_hits(m) / total for m in models}


def live_session(
    payloads: Sequence[EventData],
    log: Path,
    policy: CompactionPolicy,
    progress: Progress | None = None,
) -> DemoResult:
    """Write the session into a live log, compacting before model calls as the policy says."""
    result = DemoResult(log=log, events=0, panel=TodoPanel())
    mode = get_mode("agent")
    builder = PromptBuilder(ToolCatalog(user_tools()), environment=ENVIRONMENT)
    cap = policy.tool_output_tokens
    with Session(log, sync="batch", tool_output_cap=cap) as session, session.batch():
        prompt_mode = mode
        fixed = fixed_tokens(builder, prompt_mode, tokenizer=session.tokenizer)
        for i, payload in enumerate(payloads):
            if isinstance(payload, TurnStartData):
                session.append(payload)
                new = get_mode(payload.mode or "agent")
                # The default switch: the system prompt stays, a mode message is appended.
                prompt_mode = switch_mode(session, builder, prompt_mode, new, current=mode)
                mode = new
            elif isinstance(payload, Message) and payload.role == "assistant":
                done = maybe_compact(session, policy, fixed_tokens=fixed)
                if done is not None:
                    result.compactions.append(done)
                if not mode.todo_write_allowed and result.plan_refusal is None:
                    # The session refuses it by itself: the log says this turn is in Plan mode.
                    refused = session.todo_write(PLAN_ATTEMPT)
                    result.plan_refusal = refused.content
            if not isinstance(payload, TurnStartData):
                session.append(payload)
            if progress:
                progress("session", i + 1, len(payloads))
        result.events = session.applied_seq
        result.panel = session.todos
    return result


def run_demo(
    *,
    turns: int = DEFAULT_TURNS,
    seed: int = DEFAULT_SEED,
    window: int = DEFAULT_WINDOW,
    log: Path,
    progress: Progress | None = None,
    profile: str = DEMO_PROFILE,
) -> DemoResult:
    """Run the demo: the live session, then the replays for the figures.

    Raises:
        ValueError: `profile` names no session profile.
    """
    payloads = generate(turns=turns, seed=seed, profile=profile)
    policy = CompactionPolicy(window_tokens=window)
    result = live_session(payloads, log, policy, progress)
    result.profile = profile
    result.unfinished = tuple(t.content for t in unfinished(payloads))
    calls = sum(1 for p in payloads if isinstance(p, Message) and p.role == "assistant")

    def stage(name: str) -> Callable[[object], None]:
        count = [0]

        def tick(_: object) -> None:
            count[0] += 1
            if progress:
                progress(name, count[0], calls)

        return tick

    result.ours = replay(payloads, STRATEGIES["B"], policy=policy, on_request=stage("replay"))
    result.baseline = replay(
        payloads, STRATEGIES[BASELINE], policy=policy, on_request=stage("baseline")
    )
    for label, (strategy, summarizer) in CONTRASTS.items():
        result.contrasts[label] = replay(
            payloads,
            STRATEGIES[strategy],
            policy=policy,
            summarizer=summarizer,
            on_request=stage(label),
        )
    result.output_tokens = output_tokens(payloads, get_tokenizer())
    return result
