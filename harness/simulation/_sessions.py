"""Seeded synthetic coding-agent sessions: the common input of every benchmark and peer.

A session is a list of event payloads (`compaction.EventData`) in log order, a pure function of
`(turns, seed)`: user requests; assistant text; tool calls with large outputs (file reads, test
logs, grep hits, diffs); `todo_write` rewrites that move items pending -> in_progress ->
completed, each recorded as the assistant's call, a `todo/write` event and the tool's one-line
result; a Plan-mode phase (a `turn/start` with ``mode="plan"`` in which the agent only reads and
then presents a plan, followed by an agent turn that carries the plan out); one request
interrupted by the user; and a last turn cut off mid-work, so that todos are unfinished at the
end.

`write_session` appends the payloads to a `compaction.Session` log. The words and tool outputs
come from `harness.simulation._session_text`; the exchange format for peers that run outside this
package is `harness.simulation._session_exchange`.

Sessions come in named shapes (`PROFILES`): ``stepwise`` (the original shape, kept byte for byte:
the list rewritten after every item, one action per item) and ``real`` (the default of the demo:
calibrated on the shared real transcripts, see ``benchmarks/README.md``: each item takes several
actions, the list is rewritten after an item only now and then, so long stretches of work pass
between two writes, and an occasional tool output is very large).

Invariants: the same `(turns, seed, profile)` gives the same payloads, byte for byte; every
`todo_write` call in a session passes `compaction.parse_todo_write`; every tool call is answered
by exactly one tool message right after its assistant message; no `todo_write` call is made in
Plan mode; the latest todo list at the end of a session holds at least one unfinished item.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from compaction import (
    EventData,
    FunctionCall,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    Tokenizer,
    ToolCall,
    TurnEndData,
    TurnStartData,
)
from compaction.tools import parse_todo_write, summary_line
from harness.simulation._session_profiles import (
    DEFAULT_PROFILE,
    STEPWISE,
    SessionProfile,
    get_profile,
)
from harness.simulation._session_text import (
    APPROVE,
    ERRORS,
    INTERRUPT,
    NARRATION,
    NOUNS,
    PACKAGES,
    PLAN_REQUEST,
    PLAN_STEPS,
    TEMPLATES,
    VERBS,
    Kind,
    code_line,
    source_file,
    test_log,
)


@dataclass(frozen=True)
class SessionSpec:
    """What to generate: a number of turns and a seed; everything else follows from them."""

    turns: int = 12
    """User requests in the session (at least 1)."""
    seed: int = 0
    """Seed of the random choices: same seed, same session."""

    def plan_turn(self) -> int | None:
        """Return the index of the Plan-mode turn (a third of the way in), if there is room."""
        return self.turns // 3 if self.turns >= 3 else None

    def interrupted_turn(self) -> int | None:
        """Return the index of the turn the user interrupts, if there is room."""
        return (2 * self.turns) // 3 if self.turns >= 6 else None


@dataclass
class _Builder:
    """Mutable state of one generation run."""

    spec: SessionSpec
    rng: random.Random
    profile: SessionProfile = STEPWISE
    out: list[EventData] = field(default_factory=list)
    turn: int = 0
    calls: int = 0
    edits: dict[str, int] = field(default_factory=dict)

    # --- primitives --------------------------------------------------------------------------

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.turn:03d}_{self.calls:03d}"

    def say(self, text: str) -> None:
        self.out.append(Message(role="assistant", content=text))

    def tools(self, calls: Sequence[tuple[str, dict[str, Any], str]], text: str | None) -> None:
        """One assistant message with one or more tool calls, then one result per call."""
        made = [
            ToolCall(id=self.call_id(), function=FunctionCall(name=n, arguments=_args(a)))
            for n, a, _ in calls
        ]
        self.out.append(Message(role="assistant", content=text, tool_calls=tuple(made)))
        for call, (_, _, result) in zip(made, calls, strict=True):
            self.out.append(Message(role="tool", tool_call_id=call.id, content=result))

    def write_todos(self, todos: Sequence[TodoItem], text: str | None = None) -> None:
        """The model's todo_write call, the `todo/write` event, then the one-line result."""
        args = {"todos": [t.model_dump() for t in todos]}
        items = parse_todo_write(args)
        call = ToolCall(
            id=self.call_id(), function=FunctionCall(name="todo_write", arguments=_args(args))
        )
        self.out.append(Message(role="assistant", content=text, tool_calls=(call,)))
        self.out.append(TodoWriteData(todos=items))
        self.out.append(Message(role="tool", tool_call_id=call.id, content=summary_line(items)))

    # --- content -----------------------------------------------------------------------------

    def path(self) -> str:
        pkg = self.rng.choice(PACKAGES)
        return f"src/{pkg}/{self.rng.choice(NOUNS)}.py"

    def words(self) -> dict[str, str]:
        r = self.rng
        noun = r.choice(NOUNS)
        return {
            "noun": noun,
            "flag": r.choice(("verbose", "dry-run", "json", "since", "limit", "color")),
            "cmd": r.choice(("export", "sync", "report", "import", "serve")),
            "adj": r.choice(("filtered", "paged", "machine-readable", "quieter")),
            "error": r.choice(ERRORS),
            "func": f"{r.choice(VERBS)}_{noun}",
            "path": f"src/{r.choice(PACKAGES)}/{noun}.py",
            "newpath": f"src/{r.choice(PACKAGES)}/{noun}_ops.py",
            "n": str(r.randint(3, 6)),
            "old": r.choice(("created", "owner", "ts", "kind")),
            "new": r.choice(("created_at", "owner_id", "timestamp", "category")),
        }

    def read_result(self, path: str) -> str:
        version = self.edits.get(path, 0)
        return source_file(self.spec.seed, path, version, self.rng.randint(40, 260))

    def test_log(self, failing: bool) -> str:
        return test_log(self.rng, failing)

    def grep_result(self, pattern: str) -> str:
        r = self.rng
        lines = []
        for _ in range(r.randint(6, 40)):
            lines.append(f"{self.path()}:{r.randint(1, 400)}:    {code_line(r, pattern)}")
        return "\n".join(lines)

    # --- actions -----------------------------------------------------------------------------

    def act(self, kind: Kind, item: str, words: dict[str, str], *, readonly: bool = False) -> None:
        """Do the work of one todo item (or one planning step): 1 to 3 model calls."""
        r = self.rng
        what = item[0].lower() + item[1:]
        text = r.choice(NARRATION).format(what=what) if r.random() < 0.6 else None
        if kind == "read" or (readonly and kind != "search"):
            paths = [words["path"], self.path()][: r.randint(1, 2)]
            calls = [("read_file", {"path": p}, self.read_result(p)) for p in paths]
            self.tools(calls, text)
        elif kind == "search":
            pat = words["func"] if r.random() < 0.5 else words["noun"]
            self.tools([("grep", {"pattern": pat}, self.grep_result(pat))], text)
            if r.random() < 0.5:
                p = words["path"]
                self.tools([("read_file", {"path": p}, self.read_result(p))], None)
        elif kind in ("edit", "docs"):
            p = "README.md" if kind == "docs" else words["path"]
            if r.random() < 0.5:
                self.tools([("read_file", {"path": p}, self.read_result(p))], text)
                text = None
            for _ in range(r.randint(1, 2)):
                self.tools([("edit_file", self.edit_args(r, p, words), f"Edited {p}.")], text)
                self.edits[p] = self.edits.get(p, 0) + 1
                text = None
        elif kind == "test":
            cmd = f"pytest -q tests/test_{words['noun']}.py"
            self.tools([("run_command", {"command": cmd}, self.test_log(failing=True))], text)
            fix = self.edit_args(r, words["path"], words)
            self.tools([("edit_file", fix, f"Edited {words['path']}.")], None)
            self.tools([("run_command", {"command": cmd}, self.test_log(failing=False))], None)
        else:
            cmd = r.choice(("ruff check .", "mypy src", "git status --short"))
            out = "\n".join(code_line(r, "ok") for _ in range(r.randint(3, 15)))
            self.tools([("run_command", {"command": cmd}, f"exit 0\n{out}")], text)

    def work(self, kind: Kind, item: str, words: dict[str, str]) -> None:
        """Do one item: the profile's exploratory actions, then the item's own action."""
        low, high = self.profile.extra_actions
        extra = self.rng.randint(low, high) if high else 0
        for _ in range(extra):
            if self.rng.random() < self.profile.huge_output_chance:
                p = self.path()
                big = source_file(self.spec.seed, p, -1, self.rng.randint(800, 1400))
                self.tools([("read_file", {"path": p}, big)], None)
            else:
                look: Kind = self.rng.choice(("read", "search", "run"))
                self.act(look, item, words)
        self.act(kind, item, words)

    def rewrites(self) -> bool:
        """Whether the agent rewrites its list after the item it just finished."""
        chance = self.profile.rewrite_chance
        return chance >= 1.0 or self.rng.random() < chance

    def edit_args(self, r: random.Random, path: str, words: dict[str, str]) -> dict[str, str]:
        old = code_line(r, words["func"])
        new = old + "\n" + code_line(r, words["noun"])
        return {"path": path, "old_text": old, "new_text": new}


def _args(obj: dict[str, Any]) -> str:
    """Serialize tool-call arguments the way models emit them: compact, key order kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _progress(items: Sequence[str], done: int, *, current: bool = True) -> tuple[TodoItem, ...]:
    """A list where the first `done` items are completed and the next one is in progress."""
    out = []
    for i, text in enumerate(items):
        if i < done:
            status: Literal["pending", "in_progress", "completed"] = "completed"
        elif i == done and current:
            status = "in_progress"
        else:
            status = "pending"
        out.append(TodoItem(content=text, status=status))
    return tuple(out)


def _agent_turn(
    b: _Builder,
    request: str,
    steps: Sequence[tuple[Kind, str]],
    words: dict[str, str],
    *,
    stop_after: int | None = None,
    mode: str = "agent",
    intro: str | None = None,
) -> None:
    items = [s.format(**words) for _, s in steps]
    b.out += [TurnStartData(mode=mode), Message(role="user", content=request)]
    b.write_todos(
        _progress(items, 0), intro or "I'll track this as a list and start on the first item."
    )
    for i, (kind, _) in enumerate(steps):
        b.work(kind, items[i], words)
        if stop_after is not None and i + 1 >= stop_after:
            if b.rewrites():
                b.write_todos(_progress(items, i + 1))
            return
        if i + 1 < len(items) and b.rewrites():
            b.write_todos(_progress(items, i + 1))
    b.write_todos(_progress(items, len(items)))
    b.say(
        f"Done: {len(items)} steps completed. "
        + b.rng.choice(
            ("All tests pass.", "The suite is green and the docs are updated.", "Ready for review.")
        )
    )
    b.out.append(TurnEndData())


def _plan_turns(b: _Builder) -> None:
    words = b.words()
    request = PLAN_REQUEST.format(**words)
    b.out += [TurnStartData(mode="plan"), Message(role="user", content=request)]
    looks: tuple[tuple[Kind, str], ...] = (
        ("read", "the list endpoint"),
        ("search", "the filters"),
        ("read", "the serializers"),
    )
    for kind, step in looks:
        b.act(kind, step, words, readonly=True)
    items = [s.format(**words) for _, s in PLAN_STEPS]
    plan = "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))
    b.say(f"Here is the plan. I have not changed any file.\n\n{plan}\n\nShall I go ahead?")
    b.out.append(TurnEndData())
    b.turn += 1
    _agent_turn(b, APPROVE, PLAN_STEPS, words, intro="Starting on the approved plan.")


def generate(
    turns: int = 12, seed: int = 0, profile: str | SessionProfile = DEFAULT_PROFILE
) -> list[EventData]:
    """Return the payloads of a synthetic session, in log order (a pure function of its args).

    Args:
        turns: user requests in the session (at least 1); the Plan phase counts as two.
        seed: seed of every random choice.
        profile: the session's shape, a name of `PROFILES` or a `SessionProfile`.

    Raises:
        ValueError: `turns` is below 1, or `profile` names no profile.
    """
    if turns < 1:
        raise ValueError(f"turns must be at least 1, not {turns}")
    spec = SessionSpec(turns=turns, seed=seed)
    b = _Builder(spec=spec, rng=random.Random(seed), profile=get_profile(profile))
    plan_at, cut_at = spec.plan_turn(), spec.interrupted_turn()
    while b.turn < turns:
        b.calls = 0
        last = b.turn == turns - 1
        if b.turn == plan_at and b.turn + 1 < turns - 1:
            _plan_turns(b)
        else:
            template, steps = b.rng.choice(TEMPLATES)
            words = b.words()
            request = template.format(**words)
            if b.turn == cut_at:
                request = INTERRUPT.format(request=request)
            stop = len(steps) // 2 if last else None
            if cut_at is not None and b.turn + 1 == cut_at:
                stop = 2
            _agent_turn(b, request, steps, words, stop_after=stop)
            if stop is not None and not last:
                b.out.append(TurnEndData(reason="interrupted"))
        b.turn += 1
    return b.out


def write_session(
    path: Path | str,
    turns: int = 12,
    seed: int = 0,
    *,
    tokenizer: Tokenizer | None = None,
    profile: str | SessionProfile = DEFAULT_PROFILE,
) -> Session:
    """Generate a session and append it to a new log at `path`; return the open `Session`.

    Raises:
        FileExistsError: `path` exists already (a generated session never extends a log).
    """
    target = Path(path)
    if target.exists():
        raise FileExistsError(f"{target} exists; choose a new path for the generated session")
    session = Session(target, tokenizer=tokenizer, sync="batch")
    with session.batch():
        session.append_many(generate(turns, seed, profile))
    return session


@cache
def user_tools() -> tuple[dict[str, Any], ...]:
    """Return the OpenAI function definitions of the session's tools (besides `todo_write`)."""
    text = resources.files("harness.simulation").joinpath("data", "tools.json").read_text("utf-8")
    tools: list[dict[str, Any]] = json.loads(text)
    return tuple(tools)


def final_todos(payloads: Sequence[EventData]) -> tuple[TodoItem, ...]:
    """Return the latest todo list of a session (empty when it never wrote one)."""
    for p in reversed(payloads):
        if isinstance(p, TodoWriteData):
            return p.todos
    return ()


def unfinished(payloads: Sequence[EventData]) -> tuple[TodoItem, ...]:
    """Return the items of the latest todo list that are not completed."""
    return tuple(t for t in final_todos(payloads) if t.status != "completed")
