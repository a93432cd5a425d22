"""Issue 25, case 3: the Agents SDK session never undoes clipping.

A huge tool output is kept whole in the log; the items `get_items` gives the model carry its
clipped form (head, note, tail), as every other context view does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from compaction import MessageAdded, Session
from harness.integrations.openai_agents import LogSession


def test_get_items_returns_the_clipped_output(tmp_path: Path) -> None:
    """A 400,000-character function output comes back clipped, and the log keeps it whole."""
    huge = "".join(f"line {i}: " + "z" * 30 + "\n" for i in range(10_000))
    items: list[Any] = [
        {"role": "user", "content": "Read the log"},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": huge},
    ]
    session = LogSession("s1", tmp_path / "s.jsonl")
    asyncio.run(session.add_items(items))
    got: list[dict[str, Any]] = [dict(i) for i in asyncio.run(session.get_items())]
    session.close()
    output = next(i for i in got if i.get("type") == "function_call_output")
    assert isinstance(output["output"], str)
    assert len(output["output"]) < len(huge) // 4
    assert output["output"].startswith("line 0: ")
    assert "harness log" in output["output"]  # the note says how to read the rest
    with Session(tmp_path / "s.jsonl") as log:
        whole = [
            e.data for e in log.events() if isinstance(e, MessageAdded) and e.data.role == "tool"
        ]
        assert whole[0].text() == huge
