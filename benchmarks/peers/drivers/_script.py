"""The session script a peer driver replays: its turns, their steps, and the queue handing them out.

Standard library only: it runs under each peer's own interpreter.

Invariants: a script is a pure function of the exchange file; the queue is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TODO_TOOL = "todo_write"
"""The name of the todo tool in a session script; each peer maps it to its own tool."""


@dataclass(frozen=True)
class Step:
    """One scripted assistant reply: text, tool calls, and the results those calls produce."""

    content: str
    tool_calls: tuple[dict[str, Any], ...]
    """Each call is ``{"id", "name", "arguments"}`` with `arguments` a JSON object."""
    results: dict[str, str]
    """Tool output by call id (the todo tool's result is the peer's own)."""


@dataclass(frozen=True)
class Turn:
    """One user request and the assistant steps that answer it."""

    user: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Script:
    """A whole session to replay: system prompt, tools, turns."""

    name: str
    system: str
    tools: tuple[dict[str, Any], ...]
    """Tool specs ``{"name", "description", "parameters"}`` other than the todo tool."""
    turns: tuple[Turn, ...]

    def results(self) -> dict[str, str]:
        """Return every scripted tool output by call id."""
        out: dict[str, str] = {}
        for turn in self.turns:
            for step in turn.steps:
                out.update(step.results)
        return out


def load_script(path: Path) -> Script:
    """Read a session exchange file (format in benchmarks/README.md) into a `Script`.

    Each turn's first user message is the request; each assistant message becomes one step,
    answered by the tool messages that follow it. The system prompt is ``meta.system``, else the
    recorded system messages (a real transcript's, e.g. SWE-agent's), joined: every design is
    sent the same one.
    """
    raw = json.loads(path.read_text(encoding="utf-8"))
    turns = [_turn(turn["messages"]) for turn in raw["turns"]]
    tools = tuple(
        {
            "name": spec["function"]["name"],
            "description": spec["function"].get("description") or "",
            "parameters": spec["function"].get("parameters") or {},
        }
        for spec in raw.get("tools") or ()
        if spec["function"]["name"] != TODO_TOOL
    )
    name = str(raw.get("meta", {}).get("name") or path.stem)
    recorded = [
        _text(m.get("content"))
        for turn in raw["turns"]
        for m in turn["messages"]
        if m["role"] == "system"
    ]
    system = str(raw.get("meta", {}).get("system") or "\n\n".join(recorded))
    return Script(name, system, tools, tuple(turns))


def _turn(messages: Sequence[dict[str, Any]]) -> Turn:
    user = ""
    steps: list[Step] = []
    for message in messages:
        role = message["role"]
        if role == "user" and not user and not steps:
            user = _text(message.get("content"))
        elif role == "assistant":
            calls = tuple(
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": json.loads(call["function"]["arguments"] or "{}"),
                }
                for call in message.get("tool_calls") or ()
            )
            steps.append(Step(_text(message.get("content")), calls, {}))
        elif role == "tool" and steps:
            steps[-1].results[str(message["tool_call_id"])] = _text(message.get("content"))
    return Turn(user, tuple(steps))


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


class StepQueue:
    """Hands out a turn's scripted steps one model call at a time."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._turn = -1
        self._next = 0
        self.overruns = 0
        """Model calls made after a turn's script ran out (answered with an empty reply)."""

    def start_turn(self, index: int) -> None:
        """Point the queue at turn `index`."""
        self._turn = index
        self._next = 0

    def remaining(self) -> int:
        """Return how many scripted steps of the current turn are still to be handed out.

        A recorded turn can go on past an assistant message without tool calls (Gemini CLI's
        "I misread the output" and then another call): a peer's loop ends its run there, so the
        driver runs the loop again, without a new user message, while steps remain.
        """
        return max(0, len(self._script.turns[self._turn].steps) - self._next)

    def pop(self) -> Step | None:
        """Return the next step of the current turn, or None once the turn's script ran out.

        A turn the user cut off ends on a tool result, so the peer's loop calls the model once
        more; that call is answered with an empty final reply and is not a request of the
        session.
        """
        steps = self._script.turns[self._turn].steps
        if self._next >= len(steps):
            self.overruns += 1
            return None
        step = steps[self._next]
        self._next += 1
        return step


def iter_calls(step: Step) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Yield ``(id, name, arguments)`` for each tool call of a step."""
    for call in step.tool_calls:
        yield call["id"], call["name"], call["arguments"]
