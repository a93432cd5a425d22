"""What a replay measures: one record per model call, one per summarizer call, and the run's totals.

Invariants: a record is a plain value (frozen); a hit never exceeds the prompt tokens; the
totals of a `ReplayResult` are sums over its records, computed on read.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
