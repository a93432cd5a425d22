"""The replayer: run a session request by request, as an agent loop would, and measure each call.

`replay(payloads, strategy)` appends the session's events to a fresh `compaction.Session` one by
one. Each assistant message marks a model call (`replay_loop.ReplayLoop`): just before it, the
replayer compacts when the policy says the whole request is due, builds the request the agent
would send, serializes it to tokens (`serialization`: the canonical lines, the same for every
strategy and peer) and feeds the tokens to every provider cache model; what each call cost and
what each cache served is recorded (`replay_records`). A session that ends while the agent still
owes an answer gets one last request: the call that would come next.

With `summarizer` (a function of the current request that returns a `compaction.Summarizer`,
e.g. `benchmarks.replay.summary_cache.openai_summarizers`), each compaction is summarized by it;
when the summarizer made a model call (it has a ``last_body``, as `compaction.llm.OpenAISummarizer`
does), that call is serialized like any request, fed to the same cache models, and recorded in
`ReplayResult.summary_calls`, its ideal counted as for any request (the instruction and the
messages appended since the previous request are new).

Invariants: a replay is a pure function of its inputs (same payloads, strategy, policy and
tokenizer: same records, wall time aside); a hit never exceeds the prompt; the replay writes
only inside its own temporary folder.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compaction import (
    CheckpointRecorded,
    CompactionPolicy,
    Event,
    EventData,
    Message,
    Session,
    TodoWriteData,
    Tokenizer,
    TurnStartData,
    get_tokenizer,
)
from compaction.events import TaskCreateData, TaskUpdateData
from harness.simulation._cache_models import PROVIDER_MODELS, CacheModel
from harness.simulation._context_strategies import Strategy
from harness.simulation._replay_loop import ReplayLoop, SummarizerFor
from harness.simulation._replay_records import ReplayResult, RequestRecord, SummaryCallRecord
from harness.simulation._serialization import SegmentTokens, anthropic_offsets, serialize
from harness.simulation._sessions import user_tools
from prompts import Environment, PromptBuilder, ToolCatalog

__all__ = [
    "ENVIRONMENT",
    "ReplayResult",
    "RequestRecord",
    "SegmentTokens",
    "SummarizerFor",
    "SummaryCallRecord",
    "anthropic_offsets",
    "log_payloads",
    "replay",
    "serialize",
]

ENVIRONMENT = Environment(date="2026-01-15", cwd="/home/dev/shop")
"""The environment block of every replay: fixed, so runs are reproducible."""


def log_payloads(events: Iterable[Event]) -> list[EventData]:
    """Return the payloads of a recorded or imported session, for `replay`.

    Checkpoints are dropped: the replay compacts by its own policy. Pass the events of a log
    (`compaction.read_events`) or of a transcript import (`compaction.importers.load`).
    """
    return [e.data for e in events if not isinstance(e, CheckpointRecorded)]


def replay(
    payloads: Sequence[EventData],
    strategy: Strategy,
    *,
    policy: CompactionPolicy | None = None,
    tokenizer: Tokenizer | None = None,
    models: Iterable[CacheModel] = PROVIDER_MODELS,
    session_name: str = "session",
    workdir: Path | None = None,
    on_request: Callable[[RequestRecord], None] | None = None,
    summarizer: SummarizerFor | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> ReplayResult:
    """Replay a session's payloads under a strategy; return one record per model call.

    Args:
        payloads: the session's events in log order (generated, or read from a log).
        strategy: where the todo list lives, how modes switch, whether to compact.
        policy: when to compact (default `CompactionPolicy()`).
        tokenizer: serializes requests to tokens (default ``o200k_base``).
        models: the provider cache models to feed.
        session_name: names the session in the result.
        workdir: folder for the replay's log (default: a temporary folder, removed after).
        on_request: called with each record as it is made (progress bars).
        summarizer: makes each compaction's summarizer from the current request (default: the
            compactor's extractive summarizer); its model calls land in `summary_calls`.
        tools: the session's own tools, OpenAI function specs (default: the generated sessions'
            `user_tools`; a real transcript's replay passes the tools it calls).
    """
    tok = tokenizer or get_tokenizer()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        started = time.perf_counter()
        policy = policy or CompactionPolicy()
        session = Session(
            Path(tmp) / "replay.jsonl",
            tokenizer=tok,
            sync="batch",
            tool_output_cap=policy.tool_output_tokens if strategy.compaction else None,
        )
        loop = ReplayLoop(
            strategy=strategy,
            session=session,
            builder=PromptBuilder(
                ToolCatalog(tuple(tools) if tools is not None else user_tools()),
                strategy=strategy.tools,
                environment=ENVIRONMENT,
            ),
            policy=policy,
            tokens=SegmentTokens(tok),
            sims={m.name: m.simulator() for m in models},
            result=ReplayResult(strategy=strategy.name, session=session_name),
            summarizer_for=summarizer,
        )
        with session:
            _drive(loop, strategy.transform(payloads), on_request)
        loop.result.seconds = time.perf_counter() - started
        return loop.result


def _drive(
    loop: ReplayLoop,
    payloads: Iterable[EventData],
    on_request: Callable[[RequestRecord], None] | None,
) -> None:
    """Feed the payloads to the loop: a model call before each assistant message, one at the end."""
    last: EventData | None = None
    for p in payloads:
        if isinstance(p, TurnStartData):
            loop.start_turn(p)
            continue
        if isinstance(p, TodoWriteData):
            loop.truth = p.todos  # the log's own record wins over a call's arguments
        if isinstance(p, TaskCreateData | TaskUpdateData):
            loop.tasks[p.task.id] = p.task.status
        if isinstance(p, Message):
            if p.role == "assistant":
                loop.call()
                if on_request:
                    on_request(loop.result.records[-1])
            loop.observe(p)
        loop.session.append(p)
        last = p
    owes_answer = isinstance(last, Message) and last.role != "assistant"
    loop.call(record=owes_answer, final=True)
