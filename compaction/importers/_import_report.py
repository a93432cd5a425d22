"""What an import met: records read, events written, and everything skipped, by reason.

The report is filled while the importer streams; read it after the events are consumed.

Invariants: every record read is either turned into events or counted in `skipped` (by reason
or type); every broken line is listed with its number.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from compaction.stores.log_reader import BadLine


@dataclass
class RuleBreak:
    """A recorded todo list that today's `todo_write` rules would reject (imported anyway)."""

    seq: int
    """Seq of the `todo/write` event that records it."""
    violations: list[str]
    """What today's validation says about it, one line per problem."""


@dataclass
class ImportReport:
    """Counts and notes of one import."""

    path: str
    format: str = ""
    """The format read (after auto-detection)."""
    lines: int = 0
    """Physical lines of the file (0 for a one-document JSON file)."""
    records: int = 0
    """JSON records read (a line holding two glued objects counts two)."""
    events: int = 0
    """Events written."""
    events_by_type: Counter[str] = field(default_factory=Counter)
    turns: int = 0
    """`turn/start` events: real user requests."""
    tool_calls: int = 0
    """Tool calls written (each paired with one `tool` message)."""
    unanswered_calls: int = 0
    """Calls with no recorded result; each got a placeholder result so pairing holds."""
    orphan_results: int = 0
    """Results whose call was never seen (skipped: a result needs its call)."""
    todo_writes: int = 0
    """`todo/write` events written."""
    rule_breaking_lists: list[RuleBreak] = field(default_factory=list)
    """Recorded lists that break today's rules (two in progress, duplicates...)."""
    checkpoints: int = 0
    """The agent's own compactions, kept as `compaction/checkpoint` events."""
    handled: Counter[str] = field(default_factory=Counter)
    """Records turned into events, by kind (request, assistant, tool result, meta...)."""
    skipped: Counter[str] = field(default_factory=Counter)
    """Records or blocks not turned into events, by reason or record type."""
    broken_lines: list[BadLine] = field(default_factory=list)
    """Lines that are not JSON (skipped), with their numbers."""
    torn_line: int | None = None
    """A truncated last line (a writer cut off mid-line), skipped."""
    glued_lines: list[int] = field(default_factory=list)
    """Lines that held several JSON objects with no newline between them (all were read)."""
    largest_tool_output: int = 0
    """Characters of the longest tool result imported."""
    tokenizer: str = ""
    total_tokens: int = 0
    """Tokens of every message imported: the context had nothing been compacted."""
    context_tokens: int = 0
    """Tokens of the model's context at the end (after the recorded compactions)."""

    def skip(self, reason: str, n: int = 1) -> None:
        """Count `n` records or blocks skipped for `reason`."""
        self.skipped[reason] += n

    def as_dict(self) -> dict[str, Any]:
        """Return the report as plain JSON-ready data, keys sorted where order is free."""
        return {
            "path": self.path,
            "format": self.format,
            "lines": self.lines,
            "records": self.records,
            "events": self.events,
            "events_by_type": dict(sorted(self.events_by_type.items())),
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "unanswered_calls": self.unanswered_calls,
            "orphan_results": self.orphan_results,
            "todo_writes": self.todo_writes,
            "rule_breaking_lists": [
                {"seq": r.seq, "violations": r.violations} for r in self.rule_breaking_lists
            ],
            "checkpoints": self.checkpoints,
            "handled": dict(sorted(self.handled.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "broken_lines": [{"line": b.line, "reason": b.reason} for b in self.broken_lines],
            "torn_line": self.torn_line,
            "glued_lines": self.glued_lines,
            "largest_tool_output": self.largest_tool_output,
            "tokenizer": self.tokenizer,
            "total_tokens": self.total_tokens,
            "context_tokens": self.context_tokens,
        }
