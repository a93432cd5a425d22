"""A generated session of a single long turn: one request, then many tool rounds, some huge.

The real-loop benchmark (`benchmarks.replay.real_loop`) runs these beside the real transcripts:
one request followed by a single turn of tool rounds, where about one round in twelve returns a
log larger than the smaller window, and a todo list rewritten every twenty rounds that still has
unfinished items at the end.

Invariants: the same seed and rounds give the same events; every tool call is answered.
"""

from __future__ import annotations

import json
import random

from compaction import (
    EventData,
    FunctionCall,
    Message,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnStartData,
)

_TASKS = (
    "Map every caller of the legacy config loader",
    "Port the loader to the new settings API",
    "Update the migration script",
    "Run the full test suite and fix failures",
    "Write the changelog entry",
)


def long_turn(seed: int, rounds: int = 100) -> list[EventData]:
    """Return one request followed by a single turn of `rounds` tool rounds (seeded).

    Outputs are mostly a few hundred tokens; about one round in twelve returns a log of 10,000
    to 60,000 tokens, larger than the smaller window. The todo list is rewritten every twenty
    rounds and still has unfinished items at the end.
    """
    r = random.Random(seed)
    out: list[EventData] = [
        TurnStartData(mode="agent"),
        Message(role="user", content="Migrate the service from the legacy config loader."),
    ]
    done = 0
    for n in range(rounds):
        if n % 20 == 0:
            out.append(TodoWriteData(todos=_progress(done)))
            done = min(done + 1, len(_TASKS) - 1)
        calls = tuple(_call(r, n, i) for i in range(r.choice((1, 1, 2))))
        text = f"Step {n}: checking the next file." if r.random() < 0.3 else None
        out.append(Message(role="assistant", content=text, tool_calls=calls))
        for call in calls:
            out.append(Message(role="tool", tool_call_id=call.id, content=_output(r, n)))
    out.append(Message(role="assistant", content="Paused: the suite still has failures."))
    return out


def _progress(done: int) -> tuple[TodoItem, ...]:
    return tuple(
        TodoItem(
            content=task,
            status="completed" if i < done else "in_progress" if i == done else "pending",
        )
        for i, task in enumerate(_TASKS)
    )


def _call(r: random.Random, n: int, i: int) -> ToolCall:
    name = r.choice(("read_file", "grep", "bash"))
    args = {"path": f"src/svc/mod{r.randrange(40)}.py"} if name != "bash" else {"cmd": "pytest"}
    return ToolCall(id=f"r{n}c{i}", function=FunctionCall(name=name, arguments=json.dumps(args)))


def _output(r: random.Random, n: int) -> str:
    if r.random() < 1 / 12:
        lines = r.randrange(1_200, 7_000)
        return "".join(f"{n}:{i} DEBUG key=k{i % 97} value={i * 31}\n" for i in range(lines))
    lines = r.randrange(5, 80)
    return "".join(
        f"    def handler_{i}(self, cfg): return cfg.get('k{i}')\n" for i in range(lines)
    )


__all__ = ["long_turn"]
