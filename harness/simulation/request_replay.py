"""The replayer: run a session request by request, as an agent loop would, and measure each call.

`replay(payloads, strategy)` appends the session's events to a fresh `compaction.Session` one by
one. Each assistant message marks a model call: just before it, the replayer compacts when the
policy says the whole request is due (`compaction.maybe_compact` with the system prompt and tool
catalog counted by `prompts.fixed_tokens`: every strategy and peer triggers on the same
whole-request count), has the prompt builder assemble the OpenAI-format
request for the current mode over the session's context view (`prompts.openai_request`),
serializes it to tokens, and feeds the tokens to every provider cache model. A session that ends
while the agent still owes an answer gets one last request: the call that would come next.

Canonical serialization (the same for every strategy and peer, so token counts compare; the
peers' scorer, `benchmarks.peers.metrics.serialize`, writes the same bytes): a request is the
tool catalog as one compact JSON array with sorted keys, then one compact sorted-key JSON line
per message (the system message first), each line ending in a newline. Lines are tokenized one
by one with the session's tokenizer (``o200k_base`` by default) and concatenated; since every
line ends in ``}`` and a newline, this gives the same tokens as encoding the whole text, and
each distinct line is encoded once.

Tools come first, then the system prompt, then the messages: the order in which Anthropic reads
a request for its cache (tools, system, messages). Anthropic's breakpoints are read from the
Anthropic request the builder produces for the same call (`prompts.anthropic_request`, through
`prompts.cache_breakpoints`), never assumed: a breakpoint on a system block ends at the system
line, one on a message ends at the line of the last message merged into it (see
`anthropic_offsets`). Today the builder writes two: the last stable system block and the rolling
one on the last message. A summarizer's own call is an OpenAI call the builder did not make: its
Anthropic figure takes the same two places (the end of its system line and of the request).

Per request the record holds the prompt tokens, the cache-hit tokens under each provider model,
the ideal hit, and whether a compaction happened just before it. The ideal is every token of
the request except the messages that were not in the previous request (the newly appended
suffix, and a new Checkpoint or mode message), or the exact longest prefix shared with any
earlier request when that is longer (a new message may begin like an old one: two Checkpoints
share their preamble); the first request's ideal is 0. So the ideal bounds every model's hit.

With `summarizer` (a function of the current request that returns a `compaction.Summarizer`,
e.g. `benchmarks.summary_cache.openai_summarizers`), each compaction is summarized by it; when
the summarizer made a model call (it has a ``last_body``, as `compaction.llm.OpenAISummarizer`
does), that call is serialized like any request, fed to the same cache models, and recorded in
`ReplayResult.summary_calls`, its ideal counted as for any request (the instruction and the
messages appended since the previous request are new).

Invariants: a replay is a pure function of its inputs (same payloads, strategy, policy and
tokenizer: same records, wall time aside); a hit never exceeds the prompt; the replay writes
only inside its own temporary folder.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction import (
    CheckpointRecorded,
    CompactionError,
    CompactionPolicy,
    Event,
    EventData,
    Message,
    Session,
    Summarizer,
    TodoItem,
    TodoWriteData,
    Tokenizer,
    ToolInputError,
    TurnStartData,
    get_tokenizer,
    maybe_compact,
)
from compaction.compactor import compaction_due
from compaction.events import TaskCreateData, TaskUpdateData
from compaction.tools import parse_todo_write
from harness.simulation.cache_models import (
    PROVIDER_MODELS,
    CacheModel,
    CacheSimulator,
    DeepSeekCache,
    pack,
)
from harness.simulation.context_strategies import (
    TASK_CREATE_NAMES,
    TASK_UPDATE_NAMES,
    TODO_TOOL,
    TODO_TOOL_NAMES,
    Strategy,
    created_task_id,
    recorded_todos,
    retained,
    update_args,
    visible_tasks,
    visible_todos,
)
from harness.simulation.sessions import user_tools
from prompts import (
    DEFAULT_MODE,
    CacheBreakpoint,
    Environment,
    Mode,
    PromptBuilder,
    ToolCatalog,
    anthropic_message_sources,
    anthropic_request,
    cache_breakpoints,
    dumps,
    fixed_tokens,
    get_mode,
    openai_message,
    openai_request,
    switch_mode,
)

ENVIRONMENT = Environment(date="2026-01-15", cwd="/home/dev/shop")
"""The environment block of every replay: fixed, so runs are reproducible."""


def _line(value: object) -> str:
    return dumps(value) + "\n"


def serialize(request: Mapping[str, Any]) -> list[str]:
    """Return the canonical lines of an OpenAI-format request: tools, then each message."""
    return [_line(list(request.get("tools") or ())), *map(_line, request["messages"])]


class SegmentTokens:
    """Token ids of segments, packed, computed once per distinct segment text."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._cache: dict[str, bytes] = {}

    def __call__(self, text: str) -> bytes:
        """Return the packed token ids of `text`."""
        got = self._cache.get(text)
        if got is None:
            got = self._cache[text] = pack(self.tokenizer.encode(text))
        return got


@dataclass(frozen=True)
class RequestRecord:
    """What one model call cost and what each cache would have served."""

    index: int
    """Position of the call in the session (from 0)."""
    turn: int
    """The user request it belongs to (from 0)."""
    mode: str
    """The mode the agent works in (the turn's mode)."""
    prompt_tokens: int
    """Tokens of the whole request (tools, system, messages)."""
    context_tokens: int
    """Tokens of the session's context view (messages only), as the policy sees them."""
    new_tokens: int
    """Tokens of the messages that were not in the previous request."""
    ideal: int
    """Cache-hit tokens if everything but the new messages were served."""
    hits: dict[str, int]
    """Cache-hit tokens under each provider model, by model name."""
    compacted: bool
    """A compaction happened just before this call."""
    fixed_tokens: int = 0
    """Tokens of the fixed prompt: the tool catalog and the system message."""
    checkpoint_tokens: int = 0
    """Tokens of the Checkpoint message in the request (0 without one): of what a compaction
    keeps, the summary; the rest of the messages is the verbatim tail."""
    latest_tool_kept: bool | None = None
    """The latest tool result of the session is in the request (whole or clipped); None before
    the first tool result."""

    @property
    def tail_tokens(self) -> int:
        """Tokens of the request's messages after the Checkpoint: what the model has verbatim."""
        return max(0, self.prompt_tokens - self.fixed_tokens - self.checkpoint_tokens)


@dataclass(frozen=True)
class SummaryCallRecord:
    """A summarizer's model call at a compaction, and what each cache would have served."""

    before: int
    """Index of the request that follows the compaction."""
    prompt_tokens: int
    """Tokens of the summary request (tools, system, messages, instruction)."""
    ideal: int
    """Cache-hit tokens if everything but the new messages were served: the instruction and what
    was appended since the previous request (as for `RequestRecord.ideal`)."""
    hits: dict[str, int]
    """Cache-hit tokens under each provider model, by model name."""


SummarizerFor = Callable[[dict[str, Any]], Summarizer]
"""Returns the summarizer of one compaction, given the request the model would receive now."""


@dataclass
class ReplayResult:
    """A strategy's run over one session."""

    strategy: str
    session: str
    records: list[RequestRecord] = field(default_factory=list)
    compactions: int = 0
    compaction_failures: int = 0
    retention_checks: list[tuple[int, int, int]] = field(default_factory=list)
    """(request index, unfinished items expected, items visible at their latest status): at
    each request right after a compaction, and at the last request."""
    todo_checks: int = 0
    """Calls made while the latest todo list had unfinished items."""
    todo_held: int = 0
    """Of those, calls whose request shows every unfinished item at its latest status."""
    task_checks: int = 0
    """Calls made while the shared task list had unfinished (pending, in progress) tasks."""
    task_held: int = 0
    """Of those, calls whose request shows every unfinished task (id) at its latest status."""
    first_request_kept: bool = False
    """The user's first request is still in the last request, verbatim."""
    seconds: float = 0.0
    summary_calls: list[SummaryCallRecord] = field(default_factory=list)
    """The summarizer's model calls, when a `summarizer` drove the compactions."""

    @property
    def expected(self) -> int:
        """Unfinished items checked, over every retention check."""
        return sum(e for _, e, _ in self.retention_checks)

    @property
    def kept(self) -> int:
        """Unfinished items found at their latest status, over every check."""
        return sum(k for _, _, k in self.retention_checks)

    @property
    def retention(self) -> float:
        """Share of unfinished items kept (1.0 when nothing had to be kept)."""
        return self.kept / self.expected if self.expected else 1.0

    @property
    def request_retention(self) -> float:
        """Share of calls showing every unfinished item (1.0 when none had to)."""
        return self.todo_held / self.todo_checks if self.todo_checks else 1.0

    @property
    def task_retention(self) -> float:
        """Share of calls showing every unfinished shared task (1.0 when none had to)."""
        return self.task_held / self.task_checks if self.task_checks else 1.0

    @property
    def total_prompt_tokens(self) -> int:
        """Prompt tokens summed over every call: what the session paid for input."""
        return sum(r.prompt_tokens for r in self.records)

    def total_hits(self, model: str) -> int:
        """Cache-hit tokens summed over every call under one model."""
        return sum(r.hits[model] for r in self.records)

    @property
    def total_ideal(self) -> int:
        """Ideal cache-hit tokens summed over every call."""
        return sum(r.ideal for r in self.records)


@dataclass
class _Loop:
    """State of one replay."""

    strategy: Strategy
    session: Session
    builder: PromptBuilder
    policy: CompactionPolicy
    tokens: SegmentTokens
    sims: dict[str, CacheSimulator]
    result: ReplayResult
    prompt_mode: Mode | None = None
    run_mode: Mode | None = None
    turn: int = -1
    truth: tuple[TodoItem, ...] = ()
    seen: frozenset[str] = frozenset()
    """Message lines of the previous request."""
    first_request: str | None = None
    converted: dict[int, tuple[Message, dict[str, Any]]] = field(default_factory=dict)
    exact: CacheSimulator = field(default_factory=lambda: DeepSeekCache(unit=1).simulator())
    """Longest token prefix shared with any earlier request, unrounded."""
    summarizer_for: SummarizerFor | None = None
    last_tool: str | None = None
    """Call id of the latest tool result appended."""
    tasks: dict[str, str] = field(default_factory=dict)
    """The shared task list's truth, id -> status: from the task events, or (A) the calls."""
    task_calls: set[str] = field(default_factory=set)
    """Ids of the task-create calls not answered yet."""
    fixed: dict[tuple[str, str | None], int] = field(default_factory=dict)
    """Fixed request tokens by (prompt mode, system suffix), counted once each."""

    def start_turn(self, data: TurnStartData) -> None:
        new = get_mode(data.mode or DEFAULT_MODE)
        self.session.append(data)
        self.turn += 1
        if self.prompt_mode is None or self.run_mode is None:
            self.prompt_mode = self.run_mode = new
            return
        if new != self.run_mode:
            self.prompt_mode = switch_mode(
                self.session,
                self.builder,
                self.prompt_mode,
                new,
                how=self.strategy.switch,
                current=self.run_mode,
            )
        self.run_mode = new

    def observe(self, message: Message) -> None:
        """Track the latest todo list from the calls (A records no todo/write events)."""
        if message.role == "user" and self.first_request is None:
            self.first_request = message.text()
        if message.role == "tool" and message.tool_call_id:
            self.last_tool = message.tool_call_id
            if message.tool_call_id in self.task_calls:
                self.task_calls.discard(message.tool_call_id)
                created = created_task_id(message.text())
                if created:
                    self.tasks[created] = "pending"
        for call in message.tool_calls or ():
            if call.function.name == TODO_TOOL:
                with contextlib.suppress(ToolInputError):
                    self.truth = parse_todo_write(call.function.arguments, allow_parallel=True)
            elif call.function.name in TASK_CREATE_NAMES:
                self.task_calls.add(call.id)
            elif call.function.name in TASK_UPDATE_NAMES:
                update = update_args(call.function.arguments)
                if update:
                    self.tasks[update[0]] = update[1]
            elif call.function.name in TODO_TOOL_NAMES:
                # Another agent's list tool (Claude Code's TodoWrite in an imported session):
                # its items carry more fields than ours, so read content and status alone.
                self.truth = recorded_todos(call.function.arguments) or self.truth

    def fixed_tokens(self) -> int:
        """Tokens of the system prompt (with the strategy's suffix) and the tool catalog."""
        assert self.prompt_mode is not None
        suffix = self.strategy.system_suffix(self.session.latest_todos)
        key = (self.prompt_mode.name, suffix)
        got = self.fixed.get(key)
        if got is None:
            got = self.fixed[key] = fixed_tokens(
                self.builder,
                self.prompt_mode,
                tokenizer=self.session.tokenizer,
                system_suffix=suffix,
            )
        return got

    def compact(self) -> bool:
        """Compact when the whole request (fixed part + context) reaches the policy's trigger."""
        if not self.strategy.compaction:
            return False
        summarizer = None
        fixed = self.fixed_tokens()
        if self.summarizer_for and compaction_due(self.session, self.policy, fixed):
            # maybe_compact's own check: in provider tokens once usage reports taught the scale
            summarizer = self.summarizer_for(self.request())
        try:
            found = maybe_compact(
                self.session, self.policy, summarizer=summarizer, fixed_tokens=fixed
            )
            done = found is not None
        except CompactionError:
            self.result.compaction_failures += 1
            return False
        finally:
            self.summary_call(summarizer)
        self.result.compactions += done
        return done

    def summary_call(self, summarizer: Summarizer | None) -> None:
        """Feed a summarizer's model call, if it made one, to the caches; record it."""
        body = getattr(summarizer, "last_body", None)
        if not body:
            return
        lines = serialize(body)
        packed = [self.tokens(s) for s in lines]
        data = b"".join(packed)
        prompt = len(data) // 4
        stable_end = (len(packed[0]) + len(packed[1])) // 4
        new = sum(len(p) for s, p in zip(lines[2:], packed[2:], strict=True) if s not in self.seen)
        hits = {name: sim.serve(data, [stable_end, prompt]) for name, sim in self.sims.items()}
        exact = self.exact.serve(data)
        self.result.summary_calls.append(
            SummaryCallRecord(
                before=len(self.result.records),
                prompt_tokens=prompt,
                ideal=max(prompt - new // 4, exact),
                hits=hits,
            )
        )

    def message(self, message: Message) -> dict[str, Any]:
        """Return the builder's OpenAI form of a message, converted once per message."""
        got = self.converted.get(id(message))
        if got is None or got[0] is not message:
            got = self.converted[id(message)] = (message, openai_message(message))
        return got[1]

    def request(self, *, messages: bool = True) -> dict[str, Any]:
        """Return the request `openai_request` builds now, plus the strategy's system suffix.

        The system message and tools come from `openai_request` itself; the messages are the
        context view's, converted with the same `openai_message` (once per message: they are
        immutable), which is what `openai_request` does with them. ``messages=False`` leaves
        the context out: the fixed part alone.
        """
        assert self.prompt_mode is not None
        req = openai_request(self.builder, self.prompt_mode, None)
        if messages:
            req["messages"] += [self.message(m) for m in self.session.context.as_messages()]
        suffix = self.strategy.system_suffix(self.session.latest_todos)
        if suffix:
            req["messages"][0] = {**req["messages"][0]}
            req["messages"][0]["content"] = f"{req['messages'][0]['content']}\n\n{suffix}"
        return req

    def call(self, *, record: bool = True, final: bool = False) -> None:
        """Make one model call (or, with ``record=False``, only look at the context)."""
        compacted = self.compact() if record else False
        req = self.request()
        lines = serialize(req)
        packed = [self.tokens(s) for s in lines]
        index = len(self.result.records)
        expected = [t for t in self.truth if t.status != "completed"]
        visible = visible_todos(req["messages"])
        if expected and record:
            self.result.todo_checks += 1
            self.result.todo_held += retained(expected, visible) == len(expected)
        open_tasks = {k: v for k, v in self.tasks.items() if v in ("pending", "in_progress")}
        if open_tasks and record:
            seen = visible_tasks(req["messages"])
            self.result.task_checks += 1
            self.result.task_held += all(seen.get(k) == v for k, v in open_tasks.items())
        if compacted or final:
            self.result.retention_checks.append(
                (index if record else index - 1, len(expected), retained(expected, visible))
            )
        if final:
            first = self.first_request
            self.result.first_request_kept = first is not None and any(
                first in str(m.get("content") or "") for m in req["messages"]
            )
        if record:
            self.record(index, lines, packed, compacted)

    def breakpoints(self, packed: list[bytes]) -> list[int]:
        """Return the token offsets of the breakpoints of the builder's Anthropic request."""
        assert self.prompt_mode is not None
        window = self.session.context
        request = anthropic_request(self.builder, self.prompt_mode, window)
        conversation = window.as_messages()[len(window.system) :]
        return anthropic_offsets(
            cache_breakpoints(request),
            anthropic_message_sources(conversation),
            [len(p) // 4 for p in packed],
            system_lines=1 + len(window.system),
        )

    def record(self, index: int, lines: list[str], packed: list[bytes], compacted: bool) -> None:
        data = b"".join(packed)
        prompt = len(data) // 4
        stable_end = (len(packed[0]) + len(packed[1])) // 4  # the tools line, the system line
        new = sum(len(p) for s, p in zip(lines[2:], packed[2:], strict=True) if s not in self.seen)
        window = self.session.context
        # Lines: the tools, the builder's system message, the log's system messages, then the
        # Checkpoint when there is one.
        checkpoint = len(packed[2 + len(window.system)]) if window.checkpoint is not None else 0
        marks = self.breakpoints(packed) if "anthropic" in self.sims else []
        kept = None
        if self.last_tool is not None:
            kept = any(m.tool_call_id == self.last_tool for m in window.messages)
        hits = {name: sim.serve(data, marks) for name, sim in self.sims.items()}
        exact = self.exact.serve(data)
        self.result.records.append(
            RequestRecord(
                index=index,
                turn=self.turn,
                mode=self.run_mode.name if self.run_mode else DEFAULT_MODE,
                prompt_tokens=prompt,
                context_tokens=self.session.context_tokens,
                new_tokens=new // 4,
                ideal=0 if index == 0 else max(prompt - new // 4, exact),
                hits=hits,
                compacted=compacted,
                fixed_tokens=stable_end,
                checkpoint_tokens=checkpoint // 4,
                latest_tool_kept=kept,
            )
        )
        self.seen = frozenset(lines[2:])


def anthropic_offsets(
    breakpoints: Sequence[CacheBreakpoint],
    sources: Sequence[int],
    line_tokens: Sequence[int],
    *,
    system_lines: int,
) -> list[int]:
    """Map an Anthropic request's breakpoints to token offsets in the canonical serialization.

    The serialization's lines are the tools, `system_lines` system lines (the built prompt, then
    the log's system messages), then one line per conversation message. A breakpoint on a tool
    ends at the tools line; one on a system block at the end of the system lines (a block cannot
    be placed inside a line); one on Anthropic message ``k`` at the line of the last message
    merged into it (``sources[k]``, from `prompts.anthropic_message_sources`).
    """
    ends: list[int] = []
    total = 0
    for n in line_tokens:
        total += n
        ends.append(total)
    offsets: set[int] = set()
    for mark in breakpoints:
        if mark.section == "tools":
            offsets.add(ends[0])
        elif mark.section == "system":
            offsets.add(ends[system_lines])
        else:
            offsets.add(ends[1 + system_lines + sources[mark.index]])
    return sorted(offsets)


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
        loop = _Loop(
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
    loop: _Loop,
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
