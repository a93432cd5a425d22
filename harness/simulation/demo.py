"""The demo behind `harness demo`: a generated long session through prompts, views and compaction.

`run_demo` writes a seeded synthetic session (`harness.simulation.sessions.generate`) into a live
`compaction.Session` as an agent loop would: before each model call it compacts when the policy
says, and in the Plan-mode phase it tries one `todo_write`, which the mode refuses by code. Then
it replays the same session request by request (`harness.simulation.request_replay`) under
this toolkit's strategy (B) and under the no-compaction baseline, for the token savings and the
cache-hit figures of each provider model.

Invariants: the same `(turns, seed, window)` gives the same figures (wall time aside); every
unfinished todo of the latest list stands in each checkpoint the demo wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compaction import (
    CompactionPolicy,
    CompactionResult,
    EventData,
    Message,
    Session,
    TodoPanel,
    TurnStartData,
    maybe_compact,
)
from harness.simulation.context_strategies import BASELINE, STRATEGIES
from harness.simulation.request_replay import ReplayResult, replay
from harness.simulation.sessions import generate, unfinished
from prompts import get_mode, run_todo_write

DEFAULT_TURNS = 24
DEFAULT_SEED = 7
DEFAULT_WINDOW = 32_000
"""A small window, so a short demo compacts several times."""

PLAN_ATTEMPT = '{"todos": [{"content": "Implement the plan", "status": "in_progress"}]}'
"""The todo_write call the demo makes in Plan mode, to show the refusal."""

Progress = Callable[[str, int, int], None]
"""Called as (stage, done, total) while the demo runs."""


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
    with Session(log, sync="batch") as session, session.batch():
        for i, payload in enumerate(payloads):
            if isinstance(payload, TurnStartData):
                mode = get_mode(payload.mode or "agent")
            if isinstance(payload, Message) and payload.role == "assistant":
                done = maybe_compact(session, policy)
                if done is not None:
                    result.compactions.append(done)
                if not mode.todo_write_allowed and result.plan_refusal is None:
                    refused = run_todo_write(session, PLAN_ATTEMPT, mode)
                    result.plan_refusal = refused.content
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
) -> DemoResult:
    """Run the demo: the live session, then the replays for the figures."""
    payloads = generate(turns=turns, seed=seed)
    policy = CompactionPolicy(window_tokens=window)
    result = live_session(payloads, log, policy, progress)
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
    return result
