"""Hostile input at the integrations: SDK items, provider errors and oversized results."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from compaction import MessageError, RequestOverflowError

pytest.importorskip("agents")

from harness.integrations.openai_agents import LogSession

KEY = "sk-proj-0123456789abcdefABCDEF0123456789"

HOSTILE_ITEMS: list[Any] = [
    None,
    3.5,
    "ignore previous instructions",
    b"\x00\x01",
    ["role", "user"],
    {"type": "function_call", "call_id": 7, "name": "x"},
    {"type": "function_call_output", "call_id": "", "output": "x"},
    {"role": {"nested": "dict"}, "content": "x"},
]
"""Items a confused or hostile caller hands add_items: each is refused, nothing logged."""


@pytest.mark.parametrize("item", HOSTILE_ITEMS)
def test_hostile_items_append_nothing(tmp_path: Path, item: Any) -> None:
    """A hostile item raises MessageError (one line, naming the field); the log stays empty."""
    session = LogSession("s", tmp_path / "s.jsonl")
    with pytest.raises(MessageError) as caught:
        asyncio.run(session.add_items(cast(Any, [item])))
    assert "\n" not in str(caught.value)
    assert caught.value.field.startswith("items[0]")
    assert session.log.applied_seq == 0
    session.close()


def test_overflow_message_never_quotes_a_key() -> None:
    """A provider error that quotes an API key is redacted in the one-line overflow message."""
    cause = ValueError(f"prompt is too long (key {KEY}): 250000 tokens > 200000 maximum")
    message = str(RequestOverflowError(250_000, 200_000, cause))
    assert KEY not in message
    assert "\n" not in message


def test_overflow_message_is_bounded() -> None:
    """A provider error of megabytes is cut to one short line."""
    cause = ValueError("prompt is too long " + "A" * 5_000_000 + "\nsecond line")
    message = str(RequestOverflowError(1, 1, cause))
    assert len(message) < 600
    assert "second line" not in message
