"""Peer metrics, computed in our process from a driver's recorded prompts.

A driver writes every model call's prompt (OpenAI chat messages plus tool specs). Here each prompt
is rebuilt as `compaction.Message` objects, serialized exactly as the replayer serializes our
strategies (`request_lines`: the tools, then one sorted-key JSON line per message), tokenized
line by line with the benchmark's tokenizer, and scored: prompt tokens per request, the prefix each
request shares with the one before, the final and summed input tokens, whether every unfinished
todo of the session is in the prompt at its latest status (at the end, and at every request),
and whether the user's first request is still there.

Invariants: scoring is a pure function of the record, the session and the tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchmarks.peers.retention import (
    owes_answer,
    task_truth,
    tasks_shown,
    todo_truth,
    todos_at_latest_status,
)
from benchmarks.replay.summary_pricing import RECORDED_SUMMARY_TOKENS
from compaction import Message, Tokenizer
from harness.simulation import (
    PROVIDER_MODELS,
    CacheModel,
    CacheSimulator,
    SegmentTokens,
    common_prefix,
)
from harness.simulation import serialize as replay_serialize
from prompts import openai_message

__all__ = [
    "DriverRecord",
    "PeerMetrics",
    "load_exchange_dict",
    "load_record",
    "owes_answer",
    "prompts",
    "request_lines",
    "score",
    "serialize",
    "task_truth",
    "tasks_shown",
    "to_message",
    "todo_truth",
    "todos_at_latest_status",
]

_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
_WIDTH = 4
"""Bytes per packed token id (`harness.simulation._cache_models.pack`)."""


class DriverRecord(BaseModel):
    """What a driver writes: the prompts of its model calls, deduplicated, and run facts."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    peer: str
    variant: str
    summarizer: str
    budget: int
    wall_time_s: float
    versions: dict[str, str]
    summary_calls: int
    summaries: list[dict[str, Any]] = []
    """Per summary call: ``{"messages": [key, ...], "tools": key, "after": n}``, the prompt sent
    to the summarizer model after ``n`` recorded model calls (older records have none)."""
    overruns: int = 0
    messages: dict[str, dict[str, Any]]
    """Each distinct message once, by key."""
    tools: dict[str, list[dict[str, Any]]]
    """Each distinct tool list once, by key."""
    requests: list[dict[str, Any]]
    """Per model call: ``{"messages": [key, ...], "tools": key, "overrun"?: true}``.

    An overrun call came after its turn's script ran out; it is not scored as a request, but the
    last call of all (overrun or not) is the context the session ends with.
    """


class PeerMetrics(BaseModel):
    """The scores of one peer run on one session."""

    model_config = ConfigDict(frozen=True)

    requests: int
    final_input_tokens: int
    summed_input_tokens: int
    peak_input_tokens: int
    prompt_tokens: list[int]
    """Input tokens of each request, in order."""
    fixed_prompt_tokens: list[int] = []
    """Tokens of each request's fixed prompt: the tool specs and the system message."""
    reused_prefix_tokens: list[int]
    """Tokens each request shares, from token 0, with the request before it (0 for the first)."""
    prefix_reuse_rate: float
    """Summed reused prefix tokens over summed input tokens (requests after the first)."""
    cache_hit_tokens: dict[str, list[int]]
    """Per provider cache model (`harness.simulation._cache_models`): tokens served, per request."""
    cache_hit_rate: dict[str, float]
    """Per provider cache model: summed hit tokens over summed input tokens."""
    rewrites: int
    """Requests that do not extend the request before them (a compaction or a trim)."""
    unfinished_total: int
    unfinished_at_latest_status: int
    """Unfinished todos found in the last todo list visible in the final prompt, same status."""
    unfinished_mentioned: int
    """Unfinished todos whose text appears anywhere in the final prompt."""
    todo_checks: int
    """Requests made while the latest todo list had unfinished items."""
    todo_retention_rate: float
    """Share of those requests whose prompt shows every unfinished item at its latest status."""
    task_checks: int = 0
    """Requests made while the session's shared task list had unfinished (pending, in
    progress) tasks (TaskCreate / TaskUpdate)."""
    task_retention_rate: float = 1.0
    """Share of those requests whose prompt shows every unfinished task (id) at its latest
    status (`tasks_shown`)."""
    first_request_kept: bool
    summary_calls: int
    wall_time_s: float
    summary_prompt_tokens: list[int] = []
    """Input tokens of each summary call's request (the span and the framework's prompt)."""
    summary_hit_tokens: dict[str, list[int]] = {}
    """Per provider cache model: tokens served per summary call, fed in order with the rest."""
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    """Summary calls times `benchmarks.replay.summary_pricing.RECORDED_SUMMARY_TOKENS`."""


def load_record(path: Path) -> DriverRecord:
    """Read a driver's output file."""
    return DriverRecord.model_validate_json(path.read_text(encoding="utf-8"))


def to_message(raw: Mapping[str, Any]) -> Message:
    """Rebuild a `Message` from an OpenAI chat dict, dropping fields the format does not have."""
    data = {k: raw[k] for k in _MESSAGE_KEYS if raw.get(k) is not None}
    if data.get("role") == "assistant" and data.get("content") == "" and data.get("tool_calls"):
        data["content"] = None
    if isinstance(data.get("content"), list):
        data["content"] = "".join(
            str(p.get("text", "")) for p in data["content"] if isinstance(p, dict)
        )
    if data.get("tool_calls"):
        data["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": c["function"]}
            for c in data["tool_calls"]
        ]
    if data.get("role") != "tool":
        data.pop("tool_call_id", None)
    return Message.model_validate(data)


def prompts(record: DriverRecord) -> list[tuple[list[Message], list[dict[str, Any]]]]:
    """Return each recorded model call (overruns included) as its messages and tool specs."""
    cache = {key: to_message(raw) for key, raw in record.messages.items()}
    return [
        ([cache[key] for key in request["messages"]], record.tools[request["tools"]])
        for request in record.requests
    ]


def request_lines(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return a request's canonical lines, as `harness.simulation.replay` writes our strategies'.

    The tool specs, then one sorted-key JSON line per message in `prompts.openai_message` form,
    every line ending in a newline (`harness.simulation._request_replay.serialize`).
    """
    return replay_serialize(
        {"tools": list(tools), "messages": [openai_message(m) for m in messages]}
    )


def serialize(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
    """Return a request's canonical text: its `request_lines` joined."""
    return "".join(request_lines(messages, tools))


@dataclass
class _Calls:
    """What scoring gathers call by call: sizes, shared prefixes, cache hits, todo checks."""

    segments: SegmentTokens
    sims: dict[str, CacheSimulator]
    hits: dict[str, list[int]] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    fixed: list[int] = field(default_factory=list)
    reused: list[int] = field(default_factory=list)
    rewrites: int = 0
    previous: bytes = b""
    checked: int = 0
    held: int = 0
    task_checked: int = 0
    task_held: int = 0
    summary_sizes: list[int] = field(default_factory=list)
    summary_hits: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hits = {name: [] for name in self.sims}
        self.summary_hits = {name: [] for name in self.sims}

    def add_summary(self, sent: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> None:
        """Feed one summary call (the request the design sent its summarizer) to the caches."""
        lines = [self.segments(line) for line in request_lines(sent, tools)]
        blob = b"".join(lines)
        stable = len(lines[0]) + (len(lines[1]) if sent and sent[0].role == "system" else 0)
        self.summary_sizes.append(len(blob) // _WIDTH)
        for name, sim in self.sims.items():
            self.summary_hits[name].append(sim.serve(blob, [stable // _WIDTH, len(blob) // _WIDTH]))

    def add(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        truth: Sequence[Mapping[str, str]],
        tasks: Mapping[str, str],
    ) -> None:
        """Score one request: its size, the prefix it shares, each cache's hit, todos, tasks."""
        if truth:
            self.checked += 1
            self.held += todos_at_latest_status(messages, truth)[0] == len(truth)
        if tasks:
            shown = tasks_shown(messages)
            self.task_checked += 1
            self.task_held += all(shown.get(k) == v for k, v in tasks.items())
        packed = [self.segments(line) for line in request_lines(messages, tools)]
        data = b"".join(packed)
        size = len(data) // _WIDTH
        previous = self.previous
        shared = common_prefix(previous, data) if previous else 0
        if previous and shared < len(previous) // _WIDTH:
            self.rewrites += 1
        self.sizes.append(size)
        self.reused.append(shared)
        stable = len(packed[0]) + (
            len(packed[1]) if messages and messages[0].role == "system" else 0
        )
        self.fixed.append(stable // _WIDTH)
        for name, sim in self.sims.items():
            self.hits[name].append(sim.serve(data, [stable // _WIDTH, size]))
        self.previous = data

    def metrics(
        self, record: DriverRecord, exchange: Mapping[str, Any], final: Sequence[Message]
    ) -> PeerMetrics:
        """Return the scores; `final` is the context the session ends with (the last call)."""
        sizes, hits, reused = self.sizes, self.hits, self.reused
        unfinished = list(exchange.get("unfinished") or ())
        kept, mentioned = todos_at_latest_status(final, unfinished)
        first = exchange.get("first_request") or ""
        later = sum(sizes[1:])
        return PeerMetrics(
            requests=len(sizes),
            final_input_tokens=sizes[-1] if sizes else 0,
            summed_input_tokens=sum(sizes),
            peak_input_tokens=max(sizes, default=0),
            prompt_tokens=sizes,
            fixed_prompt_tokens=self.fixed,
            reused_prefix_tokens=reused,
            prefix_reuse_rate=round(sum(reused) / later, 6) if later else 0.0,
            cache_hit_tokens=hits,
            cache_hit_rate={
                n: round(sum(h) / sum(sizes), 6) if sizes else 0.0 for n, h in hits.items()
            },
            rewrites=self.rewrites,
            unfinished_total=len(unfinished),
            unfinished_at_latest_status=kept,
            unfinished_mentioned=mentioned,
            todo_checks=self.checked,
            todo_retention_rate=_rate(self.held, self.checked),
            task_checks=self.task_checked,
            task_retention_rate=_rate(self.task_held, self.task_checked),
            first_request_kept=bool(first) and any(first in m.text() for m in final),
            summary_calls=record.summary_calls,
            wall_time_s=round(record.wall_time_s, 4),
            summary_prompt_tokens=self.summary_sizes,
            summary_hit_tokens=self.summary_hits,
            summary_input_tokens=sum(self.summary_sizes),
            summary_output_tokens=len(self.summary_sizes) * RECORDED_SUMMARY_TOKENS,
        )


def _rate(held: int, checked: int, *, empty: float = 1.0) -> float:
    """Share of checks that held (`empty` when nothing was checked), rounded to 6 digits."""
    return round(held / checked, 6) if checked else empty


def score(
    record: DriverRecord,
    exchange: Mapping[str, Any],
    tokenizer: Tokenizer,
    *,
    cache_models: Sequence[CacheModel] = PROVIDER_MODELS,
) -> PeerMetrics:
    """Score one driver record against its session (an exchange-format dict).

    Args:
        record: the driver's output.
        exchange: the session it replayed (its turns, ``first_request`` and ``unfinished``).
        tokenizer: the benchmark's tokenizer.
        cache_models: provider cache models fed every request in order, with Anthropic's
            breakpoints where our builder puts its own (`prompts.anthropic_request`): after
            the system line and on the last message (the end of the request).
    """
    calls = _Calls(SegmentTokens(tokenizer), {m.name: m.simulator() for m in cache_models})
    built = prompts(record)
    truths = todo_truth(exchange)
    open_tasks = task_truth(exchange)
    cache = {key: to_message(raw) for key, raw in record.messages.items()}
    pending = sorted(record.summaries, key=lambda c: int(c["after"]))

    def summaries_before(index: int) -> None:
        """Feed the summary calls made before recorded call `index` to the caches, in order."""
        while pending and int(pending[0]["after"]) <= index:
            call = pending.pop(0)
            calls.add_summary([cache[key] for key in call["messages"]], record.tools[call["tools"]])

    final = len(record.requests) - 1 if owes_answer(exchange) else -1
    for index, ((messages, tools), request) in enumerate(zip(built, record.requests, strict=True)):
        summaries_before(index)
        # The final call after a session that ends owing an answer is a request of ours too.
        if not request.get("overrun") or index == final:
            n = len(calls.sizes)
            calls.add(
                messages,
                tools,
                truths[n] if n < len(truths) else [],
                open_tasks[n] if n < len(open_tasks) else {},
            )
    summaries_before(len(record.requests))
    return calls.metrics(record, exchange, built[-1][0] if built else [])


def load_exchange_dict(path: Path) -> dict[str, Any]:
    """Read an exchange-format session file as plain JSON."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
