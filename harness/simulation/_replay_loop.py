"""One replay's loop: a model call per assistant message, compacting first when the policy says so.

Before each call the loop compacts when the whole request is due (`compaction.maybe_compact`
with the system prompt and tool catalog counted by `prompts.fixed_tokens`: every strategy and
peer triggers on the same whole-request count), has the prompt builder assemble the OpenAI-format
request for the current mode over the session's context view (`prompts.openai_request`),
serializes it (`harness.simulation._serialization`), and feeds the tokens to every provider cache
model. It tracks the truth a request is checked against: the latest todo list and the shared
task list, from the log's events or, when a strategy records none, from the calls.

Per request the record holds the prompt tokens, the cache-hit tokens under each provider model,
the ideal hit, and whether a compaction happened just before it. The ideal is every token of
the request except the messages that were not in the previous request (the newly appended
suffix, and a new Checkpoint or mode message), or the exact longest prefix shared with any
earlier request when that is longer (a new message may begin like an old one: two Checkpoints
share their preamble); the first request's ideal is 0. So the ideal bounds every model's hit.
A summarizer's own call is an OpenAI call the builder did not make: its Anthropic figure takes
two places (the end of its system line and of the request).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compaction import (
    CompactionError,
    CompactionPolicy,
    Message,
    Session,
    Summarizer,
    TodoItem,
    ToolInputError,
    TurnStartData,
    compaction_due,
    maybe_compact,
)
from compaction.tools import parse_todo_write
from harness.simulation._cache_models import CacheSimulator, DeepSeekCache
from harness.simulation._context_strategies import (
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
from harness.simulation._replay_records import ReplayResult, RequestRecord, SummaryCallRecord
from harness.simulation._serialization import SegmentTokens, anthropic_offsets, serialize
from prompts import (
    DEFAULT_MODE,
    Mode,
    PromptBuilder,
    anthropic_message_sources,
    anthropic_request,
    cache_breakpoints,
    fixed_tokens,
    get_mode,
    openai_message,
    openai_request,
    switch_mode,
)

SummarizerFor = Callable[[dict[str, Any]], Summarizer]
"""Returns the summarizer of one compaction, given the request the model would receive now."""


@dataclass
class ReplayLoop:
    """State of one replay: the session, the builder, the caches fed, and the truth tracked."""

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
        """Append a turn's start; switch the prompt's mode as the strategy says when it changes."""
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
        """Feed one request's tokens to every cache and append its record."""
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
