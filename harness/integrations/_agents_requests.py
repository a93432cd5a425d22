"""The size of one model request as the Agents SDK adapter counts it, before it is sent.

The fixed part is the instructions and the tool specs (function tools and handoffs); the input is
the items, each counted as the message it maps to (an item of no known shape by its JSON).
`RequestSize.total` is in the provider's tokens once the log has learned its token scale.

Invariants: counting appends nothing; the same request and log give the same size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.run_config import CallModelData

from compaction import MessageError, Session, count_message
from compaction.views import scaled_tokens
from harness.integrations._agents_items import message_of
from harness.integrations._agents_tools import tool_specs


@dataclass(frozen=True)
class RequestSize:
    """One model request as counted before it was sent."""

    fixed: int
    """Instructions and tool specs, in counted tokens."""
    input: int
    """The input items, in counted tokens."""
    scale: float | None = None
    """The log's token scale when it was counted (None: not known yet)."""

    @property
    def total(self) -> int:
        """The whole request in the provider's tokens (counted ones while the scale is unknown)."""
        return scaled_tokens(self.fixed + self.input, self.scale)


def measure_request(
    session: Session, instructions: str | None, tools: Sequence[Any], items: Sequence[object]
) -> RequestSize:
    """Count a request's fixed part (instructions, tool specs) and its input items."""
    tok = session.tokenizer
    fixed = tok.count(instructions or "")
    specs = tool_specs(list(tools))
    fixed += tok.count(json.dumps(specs, sort_keys=True)) if specs else 0
    counted = 0
    for item in items:
        try:
            counted += count_message(tok, message_of(item))
        except MessageError:
            counted += tok.count(json.dumps(item, default=str))
    return RequestSize(fixed, counted, session.token_scale)


def agent_tools(data: CallModelData[Any]) -> list[Any]:
    """The tools the agent sends (its function tools and handoffs), best effort."""
    agent = data.agent
    tools: list[Any] = list(getattr(agent, "tools", []) or [])
    return tools + list(getattr(agent, "handoffs", []) or [])


__all__ = ["RequestSize", "agent_tools", "measure_request"]
